"""Absolute error (median leaves): node costs and split search from the rows themselves.

The absolute deviation of a child is not a function of summary statistics, so this search
gathers the node's rows of a feature (codes, targets, weights) and scores cuts by exact prefix
and suffix costs (:func:`prefix_abs_cost`: two heaps give the weighted median of every prefix
and its deviation in O(n log n)). A numeric feature's codes are the ranks of its distinct
values at the node (exact splitter) or its bins (histogram splitter); categorical levels are
ordered by their weighted median (a heuristic: Breiman's ordering theorem is for squared
error). Missing values follow the modes of :mod:`treelearn.engine.levels`.

Everything works in scratch arrays allocated once per fit (``fs``: float rows, ``js``: int
rows, see :func:`scratch`), so these kernels can run inside the growers' allocation-free node
loop. Only fits with ``criterion="absolute_error"`` compile them (the growers take an
``absolute`` argument that is None otherwise).
"""

from __future__ import annotations

import numpy as np

from . import levels as lvl
from .config import FEATURE_THRESHOLD, noref
from .levels import stable_order

# float scratch rows: the search's input (gathered targets and weights), a numeric feature's
# group values, and the search's own rows
(F_IY, F_IW, F_GLO, F_GHI, F_SY, F_SW, F_PL, F_PR, F_PLM, F_PRM, F_KEY, F_WSZ, F_H0, F_H1,
 F_H2, F_H3, F_T0, F_GY, F_GW, F_RY, F_RW, F_MED) = range(22)
N_FROWS = 22
# int scratch rows: the input codes, then the search's rows
J_IC, J_SEQ, J_CNT, J_UCODE, J_ORDER, J_TMP, J_STARTS, J_MISS = range(8)
N_JROWS = 8


def scratch(n_rows: int, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch of an absolute-error fit: nodes of up to ``n_rows`` rows, features of up to
    ``n_codes`` codes."""
    width = max(int(n_rows), int(n_codes)) + 2
    return np.zeros((N_FROWS, width)), np.zeros((N_JROWS, width), dtype=np.int64)


@noref
def _heap_push(hv, hw, size, v, wt):
    """Push onto a max-heap held in (hv, hw); return the new size."""
    i = size
    hv[i] = v
    hw[i] = wt
    while i > 0:
        p = (i - 1) // 2
        if hv[p] >= hv[i]:
            break
        hv[p], hv[i] = hv[i], hv[p]
        hw[p], hw[i] = hw[i], hw[p]
        i = p
    return size + 1


@noref
def _heap_pop(hv, hw, size):
    """Pop the maximum of a max-heap; return (value, weight, new size)."""
    v = hv[0]
    wt = hw[0]
    size -= 1
    hv[0] = hv[size]
    hw[0] = hw[size]
    i = 0
    while True:
        lft = 2 * i + 1
        if lft >= size:
            break
        c = lft
        if lft + 1 < size and hv[lft + 1] > hv[lft]:
            c = lft + 1
        if hv[c] <= hv[i]:
            break
        hv[c], hv[i] = hv[i], hv[c]
        hw[c], hw[i] = hw[i], hw[c]
        i = c
    return v, wt, size


@noref
def prefix_abs_cost(ys, ws, n, out, fs):
    """``out[i]`` = min over m of ``sum_{j<i} w_j |y_j - m|`` for i = 0..n, in O(n log n).

    Two heaps (scratch rows of ``fs``) hold the lower and upper halves by weight; the top of
    the lower one is a weighted median of the prefix, and the absolute deviation follows from
    the heaps' weight and sums.
    """
    lv = fs[F_H0]
    lw = fs[F_H1]
    uv = fs[F_H2]  # upper half stored negated, so it is also a max-heap
    uw = fs[F_H3]
    nl = 0
    nu = 0
    wl = 0.0
    sl = 0.0
    wu = 0.0
    su = 0.0
    total = 0.0
    out[0] = 0.0
    for i in range(n):
        y = ys[i]
        wt = ws[i]
        total += wt
        if nl == 0 or y <= lv[0]:
            nl = _heap_push(lv, lw, nl, y, wt)
            wl += wt
            sl += wt * y
        else:
            nu = _heap_push(uv, uw, nu, -y, wt)
            wu += wt
            su += wt * y
        half = total / 2.0
        while wl < half and nu > 0:
            v, vw, nu = _heap_pop(uv, uw, nu)
            wu -= vw
            su -= vw * (-v)
            nl = _heap_push(lv, lw, nl, -v, vw)
            wl += vw
            sl += vw * (-v)
        while nl > 1 and wl - lw[0] >= half:
            v, vw, nl = _heap_pop(lv, lw, nl)
            wl -= vw
            sl -= vw * v
            nu = _heap_push(uv, uw, nu, -v, vw)
            wu += vw
            su += vw * v
        m = lv[0]
        c = m * wl - sl + su - m * wu
        out[i + 1] = c if c > 0.0 else 0.0


@noref
def abs_cost(ys, ws, n, fs):
    """``min_m sum w |y - m|`` of the first ``n`` rows."""
    out = fs[F_T0]
    prefix_abs_cost(ys, ws, n, out, fs)
    return out[n]


@noref
def weighted_median(ys, ws, n, fs, js):
    """Weighted median of the first ``n`` values, scikit-learn's convention: the mean of the
    two middle values on a tie."""
    keys = fs[F_KEY]
    for i in range(n):
        keys[i] = ys[i]
    order = js[J_ORDER]
    stable_order(keys, n, order, js[J_TMP])
    total = 0.0
    for i in range(n):
        total += ws[i]
    half = total / 2.0
    cum = 0.0
    for k in range(n):
        cum += ws[order[k]]
        if cum >= half:
            if cum == half and k + 1 < n:
                return (ys[order[k]] + ys[order[k + 1]]) / 2.0
            return ys[order[k]]
    return ys[order[n - 1]]


@noref
def _gather(src_y, src_w, idx, a, b, dy, dw):
    """``dy[:b-a] = src_y[idx[a:b]]`` (and weights)."""
    for q in range(b - a):
        r = idx[a + q]
        dy[q] = src_y[r]
        dw[q] = src_w[r]


@noref
def search_codes_abs(c, ys, ws, m, n_codes, categorical, pimp, mode, multiway, min_leaf,
                     min_wleaf, fmap, fs, js):
    """The best absolute-error split of ``m`` rows with codes ``c`` (``-1``: missing; the
    array is modified), targets ``ys`` and weights ``ws``.

    Returns ``(score, real, kind, n_branches, miss_branch, cut_lo, cut_hi, usable)`` like
    the other searches (numeric cuts by the codes either side, ``cut_hi == -1``: known left,
    missing right; categorical level maps in ``fmap``).
    """
    none_s = -np.inf
    n_miss = 0
    W = 0.0
    for i in range(m):
        W += ws[i]
        if c[i] < 0:
            n_miss += 1
    if n_miss == m:
        return none_s, none_s, 0, 0, -2, -1, -1, False
    cnt = js[J_CNT]
    imp_code = -1
    if mode == lvl.MISSING_IMPUTE and n_miss > 0:
        kw = fs[F_KEY]
        for code in range(n_codes):
            kw[code] = 0.0
        for i in range(m):
            if c[i] >= 0:
                kw[c[i]] += ws[i]
        if categorical:
            imp_code = 0
            for code in range(1, n_codes):
                if kw[code] > kw[imp_code]:
                    imp_code = code
        else:
            half = 0.0
            for code in range(n_codes):
                half += kw[code]
            half *= 0.5
            acc = 0.0
            for code in range(n_codes):
                acc += kw[code]
                if acc >= half and kw[code] > 0.0:
                    imp_code = code
                    break
        for i in range(m):
            if c[i] < 0:
                c[i] = imp_code
        n_miss = 0
    c45 = mode == lvl.MISSING_C45
    learn_missing = mode == lvl.MISSING_LEARN and n_miss > 0
    # Codes present (ascending) and rows grouped by code (a stable counting sort).
    for code in range(n_codes + 1):
        cnt[code] = 0
    mwt = 0.0
    for i in range(m):
        if c[i] >= 0:
            cnt[c[i] + 1] += 1
        else:
            mwt += ws[i]
    ucode = js[J_UCODE]
    u = 0
    for code in range(n_codes):
        if cnt[code + 1] > 0:
            ucode[u] = code
            u += 1
    if u == 1 and not learn_missing:
        return none_s, none_s, 0, 0, -2, -1, -1, False
    for code in range(n_codes):
        cnt[code + 1] += cnt[code]
    seq = js[J_SEQ]
    miss = js[J_MISS]
    nm = 0
    # cnt[code] is now the start of code's group; fill stably
    for i in range(m):
        if c[i] >= 0:
            seq[cnt[c[i]]] = i
            cnt[c[i]] += 1
        else:
            miss[nm] = i
            nm += 1
    # entry e's rows are seq[starts[e]:starts[e+1]]; starts from the group ends
    starts = js[J_STARTS]
    starts[0] = 0
    for e in range(u):
        starts[e + 1] = cnt[ucode[e]]
    extra = 1 if (categorical and learn_missing) else 0
    E = u + extra
    if multiway and categorical:
        return _multiway_abs(ucode, u, seq, starts, miss, nm, ys, ws, learn_missing, imp_code,
                             c45, mwt, W, pimp, min_leaf, min_wleaf, fmap, n_codes, fs, js)
    order = js[J_ORDER]
    sizes_w = fs[F_WSZ]
    if categorical:
        # Entries ordered by their weighted median (the missing entry last under "learn").
        med = fs[F_MED]
        gy = fs[F_GY]
        gw = fs[F_GW]
        for e in range(E):
            if e < u:
                a = starts[e]
                b = starts[e + 1]
                _gather(ys, ws, seq, a, b, gy, gw)
                med[e] = weighted_median(gy, gw, b - a, fs, js)
            else:
                _gather(ys, ws, miss, np.int64(0), nm, gy, gw)
                med[e] = weighted_median(gy, gw, nm, fs, js)
        stable_order(med, E, order, js[J_TMP])
    else:
        for e in range(E):
            order[e] = e
    sy = fs[F_SY]
    sw = fs[F_SW]
    sizes = js[J_CNT]
    pos = 0
    for q in range(E):
        e = order[q]
        wsum = 0.0
        if e < u:
            for t in range(starts[e], starts[e + 1]):
                r = seq[t]
                sy[pos] = ys[r]
                sw[pos] = ws[r]
                wsum += ws[r]
                pos += 1
            sizes[q] = starts[e + 1] - starts[e]
        else:
            for t in range(nm):
                r = miss[t]
                sy[pos] = ys[r]
                sw[pos] = ws[r]
                wsum += ws[r]
                pos += 1
            sizes[q] = nm
        sizes_w[q] = wsum
    Kt = pos  # rows in the sequence (K, plus the missing ones when they are an entry)
    num_learn = learn_missing and not categorical
    pl = fs[F_PL]
    pr = fs[F_PR]
    prefix_abs_cost(sy, sw, Kt, pl, fs)
    ry = fs[F_RY]
    rw = fs[F_RW]
    for i in range(Kt):
        ry[i] = sy[Kt - 1 - i]
        rw[i] = sw[Kt - 1 - i]
    prefix_abs_cost(ry, rw, Kt, pr, fs)
    pl_m = fs[F_PLM]
    pr_m = fs[F_PRM]
    if num_learn:
        # missing rows first, then the reversed sequence / the sequence
        cy = fs[F_GY]
        cw = fs[F_GW]
        for t in range(nm):
            cy[t] = ys[miss[t]]
            cw[t] = ws[miss[t]]
        for i in range(Kt):
            cy[nm + i] = ry[i]
            cw[nm + i] = rw[i]
        prefix_abs_cost(cy, cw, nm + Kt, pr_m, fs)
        for i in range(Kt):
            cy[nm + i] = sy[i]
            cw[nm + i] = sw[i]
        prefix_abs_cost(cy, cw, nm + Kt, pl_m, fs)
    wk = 0.0
    for i in range(Kt):
        wk += sw[i]
    kimp = pl[Kt] / wk
    best = -np.inf
    best_j = -1
    best_ml = False
    n_pass = 2 if num_learn else 1
    for p in range(n_pass):
        ml = p == 1
        pos = 0
        wpos = 0.0
        last = E if (num_learn and not ml) else E - 1
        for j in range(last):
            pos += sizes[j]
            wpos += sizes_w[j]
            nl = pos + (nm if (num_learn and ml) else 0)
            nr = Kt - pos + (nm if (num_learn and not ml) else 0)
            wl = wpos + (mwt if (num_learn and ml) else 0.0)
            wr = wk - wpos + (mwt if (num_learn and not ml) else 0.0)
            if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
                continue
            if nl == 0 or nr == 0 or (c45 and (wl < min_leaf * lvl.C45_SLACK
                                               or wr < min_leaf * lvl.C45_SLACK)):
                continue
            if num_learn and ml:
                cl = pl_m[nm + pos]
                cr = pr[Kt - pos]
            elif num_learn:
                cl = pl[pos]
                cr = pr_m[nm + Kt - pos]
            else:
                cl = pl[pos]
                cr = pr[Kt - pos]
            if c45:
                sc = (wk / (wk + mwt)) * (kimp - (cl + cr) / wk)
            else:
                sc = -(cl + cr)
            if sc > best:
                best = sc
                best_j = j
                best_ml = ml
    if best == -np.inf:
        return best, best, 0, 0, -2, -1, -1, True
    cut = 0
    for q in range(best_j + 1):
        cut += sizes[q]
    real = best if c45 else pimp + best / W
    if not categorical:
        if c45:
            mb = -1
        elif num_learn:
            mb = 0 if best_ml else 1
        elif imp_code >= 0:
            mb = 0 if imp_code <= ucode[best_j] else 1
        else:
            mb = 0 if cut > Kt - cut else 1
        hi = ucode[best_j + 1] if best_j + 1 < u else -1
        return best, real, lvl.KIND_NUMERIC, 2, mb, ucode[best_j], hi, True
    side = js[J_SEQ]  # free now
    for e in range(E):
        side[e] = 1
    for q in range(best_j + 1):
        side[order[q]] = 0
    for code in range(n_codes):
        fmap[code] = -1
    for e in range(u):
        fmap[ucode[e]] = side[e]
    if c45:
        mb = -1
    elif extra:
        mb = side[E - 1]
    elif imp_code >= 0:
        mb = fmap[imp_code]
    else:
        mb = 0 if cut > Kt - cut else 1
    return best, real, lvl.KIND_SUBSET, 2, mb, -1, -1, True


@noref
def _multiway_abs(ucode, u, seq, starts, miss, nm, ys, ws, learn_missing, imp_code, c45, mw,
                  W, pimp, min_leaf, min_wleaf, fmap, n_codes, fs, js):
    """One branch per level present (the missing rows, under "learn", join the best one)."""
    k = u
    if k < 2:
        return -np.inf, -np.inf, 0, 0, -2, -1, -1, True
    cost = fs[F_PLM]
    wk = fs[F_PRM]
    nk = js[J_ORDER]
    gy = fs[F_GY]
    gw = fs[F_GW]
    wknown = 0.0
    for b in range(k):
        a = starts[b]
        e = starts[b + 1]
        _gather(ys, ws, seq, a, e, gy, gw)
        cost[b] = abs_cost(gy, gw, e - a, fs)
        s = 0.0
        for q in range(e - a):
            s += gw[q]
        wk[b] = s
        nk[b] = e - a
        wknown += s
    best = -np.inf
    best_t = -1
    n_try = k if learn_missing else 1
    for t in range(n_try):
        total = 0.0
        big = 0
        for b in range(k):
            cb = cost[b]
            wb = wk[b]
            nb = nk[b]
            if learn_missing and b == t:
                a = starts[b]
                e = starts[b + 1]
                _gather(ys, ws, seq, a, e, gy, gw)
                for q in range(nm):
                    gy[e - a + q] = ys[miss[q]]
                    gw[e - a + q] = ws[miss[q]]
                cb = abs_cost(gy, gw, e - a + nm, fs)
                wb += mw
                nb += nm
            total += cb
            if nb >= min_leaf and wb >= min_wleaf and (not c45 or wb >= min_leaf * lvl.C45_SLACK):
                big += 1
        if big < 2:
            continue
        if c45:
            _gather(ys, ws, seq, np.int64(0), starts[k], gy, gw)
            kimp = abs_cost(gy, gw, starts[k], fs) / wknown
            sc = (wknown / (wknown + mw)) * (kimp - total / wknown)
        else:
            sc = -total
        if sc > best:
            best = sc
            best_t = t
    if best == -np.inf:
        return best, best, 0, 0, -2, -1, -1, True
    for code in range(n_codes):
        fmap[code] = -1
    for b in range(k):
        fmap[ucode[b]] = b
    if c45:
        mb = -1
    elif learn_missing:
        mb = best_t
    elif imp_code >= 0:
        mb = fmap[imp_code]
    else:
        mb = 0
        for b in range(1, k):
            if nk[b] > nk[mb]:
                mb = b
    real = best if c45 else pimp + best / W
    return best, real, lvl.KIND_MULTIWAY, k, mb, -1, -1, True


@noref
def abs_node(R, W, f, lo, hi, wn, fs, js):
    """Absolute-error impurity (mean absolute deviation from the weighted median) and the
    weighted median of entries ``[lo, hi)`` of list ``f``."""
    m = hi - lo
    ys = fs[F_IY]
    yw = fs[F_IW]
    for i in range(m):
        ys[i] = R[f, lo + i]
        yw[i] = 1.0 if W is None else W[f, lo + i]
    imp = abs_cost(ys, yw, m, fs) / wn
    return imp, weighted_median(ys, yw, m, fs, js)


@noref
def abs_rows(R, W, lo, hi, wn, fs, js):
    """:func:`abs_node` for rows ``[lo, hi)`` of the histogram splitter's buffers."""
    m = hi - lo
    ys = fs[F_IY]
    yw = fs[F_IW]
    for i in range(m):
        ys[i] = R[lo + i]
        yw[i] = 1.0 if W is None else W[lo + i]
    imp = abs_cost(ys, yw, m, fs) / wn
    return imp, weighted_median(ys, yw, m, fs, js)


@noref
def _write_result(sc, real, kind, nb, mb, clo, chi, out):
    out[lvl.R_SCORE] = sc
    out[lvl.R_REAL] = real
    out[lvl.R_GAIN] = real
    out[lvl.R_KIND] = kind
    out[lvl.R_NB] = nb
    out[lvl.R_MB] = mb
    out[lvl.R_LO] = clo
    out[lvl.R_HI] = chi
    out[lvl.R_TRIES] = 0.0
    out[lvl.R_SPLITINFO] = 0.0
    out[lvl.R_NLEFT] = 0.0
    out[lvl.R_WLEFT] = 0.0


@noref
def search_feature_abs(V, R, W, f, lo, hi, categorical, n_codes, pimp, mode, multiway, min_leaf,
                       min_wleaf, fmap, out, fs, js):
    """Best absolute-error split of feature ``f`` at the node ``[lo, hi)`` of the exact
    splitter's lists: the entries are gathered with codes (level codes, or for a numeric
    feature the index of its distinct value in the node, values more than 1e-7 apart as
    scikit-learn tells them apart; -1 missing) and searched by :func:`search_codes_abs`.
    Fills ``out`` like :func:`treelearn.engine.exact.search_feature` (``R_THR``: the float64
    midpoint of the float32 values either side of the cut); returns False for a constant
    feature."""
    m = hi - lo
    g = -1
    prev = np.float32(0.0)
    codes = js[J_IC]
    ys = fs[F_IY]
    yw = fs[F_IW]
    glo = fs[F_GLO]
    ghi = fs[F_GHI]
    for i in range(m):
        x = V[f, lo + i]
        ys[i] = R[f, lo + i]
        yw[i] = 1.0 if W is None else W[f, lo + i]
        if np.isnan(x):
            codes[i] = -1
        elif categorical:
            codes[i] = int(x)
        else:
            if g < 0 or x > prev + FEATURE_THRESHOLD:
                g += 1
                glo[g] = x
            ghi[g] = x
            prev = x
            codes[i] = g
    width = n_codes if categorical else max(g + 1, 1)
    sc, real, kind, nb, mb, clo, chi, usable = search_codes_abs(
        codes, ys, yw, m, width, categorical, pimp, mode, multiway, min_leaf, min_wleaf, fmap,
        fs, js)
    _write_result(sc, real, kind, nb, mb, clo, chi, out)
    if kind == lvl.KIND_NUMERIC and sc > -np.inf:
        if chi < 0:
            out[lvl.R_THR] = np.inf
        else:
            a = np.float64(np.float32(ghi[clo]))
            b = np.float64(np.float32(glo[chi]))
            thr = a / 2.0 + b / 2.0
            if thr == b or np.isinf(thr):
                thr = a
            out[lvl.R_THR] = thr
    return usable


@noref
def search_rows_abs(B, R, W, lo, hi, col, wide, nb, categorical, n_codes, pimp, mode,
                    multiway, min_leaf, min_wleaf, fmap, out, fs, js, edges, f):
    """:func:`search_feature_abs` for the histogram splitter: codes are the rows' bins
    (``nb``: the missing bin) of a feature stored at column ``col``; numeric thresholds are
    the upper edges of the bins left of the cut."""
    m = hi - lo
    codes = js[J_IC]
    ys = fs[F_IY]
    yw = fs[F_IW]
    for i in range(m):
        b = np.int64(B[lo + i, col])
        if wide:
            b += np.int64(B[lo + i, col + 1]) << 8
        codes[i] = -1 if b >= nb else b
        ys[i] = R[lo + i]
        yw[i] = 1.0 if W is None else W[lo + i]
    width = n_codes if categorical else nb
    sc, real, kind, nbr, mb, clo, chi, usable = search_codes_abs(
        codes, ys, yw, m, width, categorical, pimp, mode, multiway, min_leaf, min_wleaf, fmap,
        fs, js)
    _write_result(sc, real, kind, nbr, mb, clo, chi, out)
    if kind == lvl.KIND_NUMERIC and sc > -np.inf:
        out[lvl.R_THR] = np.inf if chi < 0 else np.float64(edges[f, clo])
    return usable
