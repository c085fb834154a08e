"""The search for an oblique split ``w . x <= t`` at one node: cut scans and coordinate moves.

Kernels, each a step of Murthy, Kasif & Salzberg's OC1 (JAIR 2, 1994), which makes
Breiman et al.'s linear-combination search (CART, 1984, section 5.2.2) exact:

* :func:`best_cut`: the best threshold of one projection ``z = w . x`` of the node's rows
  (sort, then one scan of the class counts or target sums, as for a single feature);
* :func:`best_coefficient`: OC1's deterministic perturbation of one weight ``w_m``, with the
  others and ``t`` fixed. A row ``j`` is on the ``<=`` side when
  ``V_j - w_m x_jm + a x_jm <= 0`` (``V_j = w . x_j - t``), i.e. ``a <= U_j`` for
  ``x_jm > 0`` and ``a >= U_j`` for ``x_jm < 0``, with ``U_j = (w_m x_jm - V_j) / x_jm``; so
  sweeping ``a`` upwards over the sorted ``U_j`` moves one row from one side to the other at
  each ``U_j``, and every partition reachable by changing ``w_m`` is scored in one scan;
* :func:`best_projection`: the best of many sparse random projections (SPORF's split,
  Tomita et al. 2020, the oblique forests' search); at large nodes each candidate is scored
  on equal-width bins of its values in one pass (:func:`bin_scan`) instead of a sort, and
  only the winner's threshold is found exactly;
* :func:`search_node`: the node's search: the best split on one feature among the
  candidates, then (``max_cycles > 0``) OC1's cycles of perturbation from it and from each
  given start direction (random sparse directions drawn by the caller), keeping the best.

Scores are the weighted impurity of the children, ``sum_c w_c I(c)`` (lower is better):
Gini ``w_c - sum_k n_ck^2 / w_c``, entropy ``-sum_k n_ck log2(n_ck / w_c)``, squared error
``S2_c - S1_c^2 / w_c``. A projection is computed exactly as the tree routes a row
(:func:`treelearn._tree.apply_oblique`): terms in increasing feature order, skipping zero
weights, summed left to right in float64 from the float32 ``x``; so the rows a fitted split
sends left are the ones prediction sends left.

Why kernels that allocate (``njit``, not ``noref``): the node search runs once per node
from a Python loop (:mod:`treelearn.oblique`), sorts and holds per-node buffers; its work
(sorts of the node's rows, ``cycles x features`` of them) dwarfs the reference counting the
per-node kernels of the axis-aligned engine avoid.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit

#: Criterion codes of this module (the same numbers as :mod:`.criteria`'s).
GINI = 0
ENTROPY = 1
SQUARED_ERROR = 5
#: A move must lower the score by more than this fraction of the node's weight times its
#: impurity scale to be taken (floating-point noise is not an improvement).
REL_TOL = 1e-12


@njit
def _side_score(s, wc, K, crit):
    """Weighted impurity ``w_c I(c)`` of one side from its statistics ``s``."""
    if wc <= 0.0:
        return 0.0
    if crit == SQUARED_ERROR:
        return s[1] - s[0] * s[0] / wc
    out = 0.0
    if crit == GINI:
        out = wc
        for k in range(K):
            out -= s[k] * s[k] / wc
        return out
    for k in range(K):
        if s[k] > 0.0:
            out -= s[k] * math.log2(s[k] / wc)
    return out


@njit
def _row_stats(j, y, yreg, w, K, crit, out):
    """Statistics of row ``j`` (its weight in its class, or ``w y`` and ``w y^2``)."""
    for k in range(out.shape[0]):
        out[k] = 0.0
    if crit == SQUARED_ERROR:
        out[0] = w[j] * yreg[j]
        out[1] = w[j] * yreg[j] * yreg[j]
    else:
        out[y[j]] = w[j]


@njit
def project(X, rows, weight, out):
    """``out[i] = sum_f weight[f] * X[rows[i], f]`` over the nonzero weights in increasing
    ``f``, summed left to right in float64 (the tree's routing sum)."""
    p = weight.shape[0]
    for i in range(rows.shape[0]):
        r = rows[i]
        s = 0.0
        for f in range(p):
            if weight[f] != 0.0:
                s += weight[f] * np.float64(X[r, f])
        out[i] = s


@njit
def best_cut(z, rows, y, yreg, w, K, crit, min_leaf, min_wleaf):
    """Best threshold of the projection ``z`` (one value per row of ``rows``).

    Returns ``(score, threshold)``: the least ``sum_c w_c I(c)`` over thresholds between two
    distinct consecutive values leaving at least ``min_leaf`` rows and ``min_wleaf`` weight
    on each side, and the midpoint taken there (in float64, at most the larger value's
    predecessor side: ``z_lo <= t < z_hi``). ``(inf, nan)`` when no threshold qualifies.
    """
    n = rows.shape[0]
    S = K if crit != SQUARED_ERROR else 2
    stats = np.empty((n, S))
    wn = np.empty(n)
    node_stats(rows, y, yreg, w, K, crit, stats, wn)
    return cut_scan(z, stats, wn, K, crit, min_leaf, min_wleaf)


@njit
def node_stats(rows, y, yreg, w, K, crit, stats, wn):
    """Each node row's statistics (``stats[i]``) and weight (``wn[i]``), gathered once for
    the many scans of one node."""
    for i in range(rows.shape[0]):
        j = rows[i]
        _row_stats(j, y, yreg, w, K, crit, stats[i])
        wn[i] = w[j]


@njit
def cut_scan(z, stats, wn, K, crit, min_leaf, min_wleaf):
    """:func:`best_cut` from the node rows' gathered statistics (:func:`node_stats`). Rows
    of equal ``z`` are never split apart, so their order after the sort does not matter
    (the unstable sort is the faster)."""
    n = z.shape[0]
    S = stats.shape[1]
    order = np.argsort(z)
    total = np.zeros(S)
    wt = 0.0
    for i in range(n):
        for k in range(S):
            total[k] += stats[i, k]
        wt += wn[i]
    left = np.zeros(S)
    right = np.zeros(S)
    wl = 0.0
    best = np.inf
    thr = np.nan
    for q in range(n - 1):
        i = order[q]
        for k in range(S):
            left[k] += stats[i, k]
        wl += wn[i]
        lo = z[i]
        hi = z[order[q + 1]]
        if not lo < hi:
            continue
        if q + 1 < min_leaf or n - q - 1 < min_leaf:
            continue
        wr = wt - wl
        if wl < min_wleaf or wr < min_wleaf:
            continue
        for k in range(S):
            right[k] = total[k] - left[k]
        sc = _side_score(left, wl, K, crit) + _side_score(right, wr, K, crit)
        if sc < best:
            best = sc
            t = lo / 2.0 + hi / 2.0
            if not (lo <= t < hi):
                t = lo
            thr = t
    return best, thr


#: A node of at least this many rows scores each candidate projection on
#: ``min(BINS, rows // 4)`` equal-width bins of its values (:func:`bin_scan`, one pass)
#: instead of sorting them; the winner's threshold is then found exactly (:func:`cut_scan`).
#: Measured (2026-12-05, 100-tree forests, p**2 projections, three seeds, 3,000-4,000 rows):
#: held-out accuracy alike from 64 to 1,024 rows (rotated-gauss 0.735-0.738, parity
#: 0.994-0.995, sparse-diagonal 0.991-0.992, magic 0.861-0.864, eeg 0.917-0.918) while the
#: fit took 1.5-2.8 times less at 64 (magic 6.9 s at 1,024, 3.4 s at 256, 2.4 s at 64).
BIN_ROWS = 64
BINS = 256



@njit
def bin_scan(z, stats, wn, K, crit, min_leaf, min_wleaf, hs, hw, hn):
    """The least children's score over the cuts between ``B = len(hw)`` equal-width bins of
    ``z`` (value ``z_i`` in bin ``floor((z_i - lo) * (B / (hi - lo)))`` for the least and
    largest values ``lo``, ``hi``; ``hi`` in the last bin), each side
    with at least ``min_leaf`` rows and ``min_wleaf`` weight; ``inf`` when none qualifies.
    Equal values share a bin, so a cut never separates them. ``hs``, ``hw``, ``hn``: the
    bins' statistics, weights and counts (scratch, overwritten)."""
    m = z.shape[0]
    B = hw.shape[0]
    S = stats.shape[1]
    lo = np.inf
    hi = -np.inf
    for i in range(m):
        if z[i] < lo:
            lo = z[i]
        if z[i] > hi:
            hi = z[i]
    if not lo < hi:
        return np.inf
    for b in range(B):
        hw[b] = 0.0
        hn[b] = 0
        for k in range(S):
            hs[b, k] = 0.0
    f = B / (hi - lo)
    for i in range(m):
        b = int((z[i] - lo) * f)
        if b >= B:
            b = B - 1
        for k in range(S):
            hs[b, k] += stats[i, k]
        hw[b] += wn[i]
        hn[b] += 1
    total = np.zeros(S)
    wt = 0.0
    for b in range(B):
        for k in range(S):
            total[k] += hs[b, k]
        wt += hw[b]
    left = np.zeros(S)
    right = np.zeros(S)
    wl = 0.0
    nl = 0
    best = np.inf
    for b in range(B - 1):
        if hn[b] == 0:
            continue  # the same cut as after the last bin holding rows
        for k in range(S):
            left[k] += hs[b, k]
        wl += hw[b]
        nl += hn[b]
        if nl < min_leaf or m - nl < min_leaf or nl == m:
            continue
        wr = wt - wl
        if wl < min_wleaf or wr < min_wleaf:
            continue
        for k in range(S):
            right[k] = total[k] - left[k]
        sc = _side_score(left, wl, K, crit) + _side_score(right, wr, K, crit)
        if sc < best:
            best = sc
    return best


@njit
def _better(sc, best, tol):
    """Whether a projection's score beats the best so far by more than ``tol`` (rounding:
    projections giving one partition, in either order of the rows, have one score that the
    scan sums in different orders; such ties go to the first drawn)."""
    if best == np.inf:
        return sc < np.inf
    return sc < best - tol


@njit
def best_projection(X, rows, ptr, pfeat, pweight, y, yreg, w, K, crit, min_leaf, min_wleaf,
                    tol):
    """The best of the sparse projections ``k`` with terms ``ptr[k]:ptr[k + 1]`` of
    ``(pfeat, pweight)`` (features increasing): ``k`` of the least score, the first of those
    within ``tol`` of it (``-1`` when none qualifies), with its exact :func:`cut_scan` score
    and threshold. Nodes of :data:`BIN_ROWS` rows or more score the candidates by
    :func:`bin_scan`."""
    n = rows.shape[0]
    S = K if crit != SQUARED_ERROR else 2
    stats = np.empty((n, S))
    wn = np.empty(n)
    node_stats(rows, y, yreg, w, K, crit, stats, wn)
    z = np.empty(n)
    hs = np.empty((BINS, S))
    hw = np.empty(BINS)
    hn = np.empty(BINS, dtype=np.int64)
    binned = n >= BIN_ROWS
    best = np.inf
    best_k = -1
    for k in range(ptr.shape[0] - 1):
        for i in range(n):
            r = rows[i]
            s = 0.0
            for t in range(ptr[k], ptr[k + 1]):
                s += pweight[t] * np.float64(X[r, pfeat[t]])
            z[i] = s
        if binned:
            nb = min(BINS, n // 4)
            sc = bin_scan(z, stats, wn, K, crit, min_leaf, min_wleaf, hs[:nb], hw[:nb],
                          hn[:nb])
        else:
            sc, _t = cut_scan(z, stats, wn, K, crit, min_leaf, min_wleaf)
        if _better(sc, best, tol):
            best = sc
            best_k = k
    if best_k < 0:
        return best, np.nan, best_k
    # the winner's exact cut
    for i in range(n):
        r = rows[i]
        s = 0.0
        for t in range(ptr[best_k], ptr[best_k + 1]):
            s += pweight[t] * np.float64(X[r, pfeat[t]])
        z[i] = s
    sc, thr = cut_scan(z, stats, wn, K, crit, min_leaf, min_wleaf)
    return sc, thr, best_k


@njit
def best_coefficient(X, rows, weight, thr, m, y, yreg, w, K, crit, min_leaf, min_wleaf):
    """OC1's best value of ``weight[m]`` with the other weights and ``thr`` fixed.

    Returns ``(score, a)``: the least children's score over every partition reachable by
    changing ``weight[m]`` (each at least ``min_leaf`` rows and ``min_wleaf`` weight a
    side), and a value ``a`` giving it (the midpoint of the two ``U_j`` around it, or one
    unit beyond the first or last); ``(inf, nan)`` when none qualifies.
    """
    n = rows.shape[0]
    S = K if crit != SQUARED_ERROR else 2
    v = np.empty(n)
    project(X, rows, weight, v)
    u = np.empty(n)
    sign = np.zeros(n, dtype=np.int8)
    # at a = -inf: rows with x_m > 0 are on the left (a <= U), rows with x_m < 0 on the
    # right; rows with x_m == 0 (or missing) stay where they are
    left = np.zeros(S)
    right = np.zeros(S)
    rs = np.zeros(S)
    wl = 0.0
    wr = 0.0
    nl = 0
    nr = 0
    k_move = 0
    for i in range(n):
        j = rows[i]
        x = np.float64(X[j, m])
        _row_stats(j, y, yreg, w, K, crit, rs)
        vj = v[i] - thr
        if x > 0.0:
            sign[i] = 1
            u[i] = (weight[m] * x - vj) / x
            k_move += 1
        elif x < 0.0:
            sign[i] = -1
            u[i] = (weight[m] * x - vj) / x
            k_move += 1
        else:
            u[i] = np.inf
        on_left = x > 0.0 or (x == 0.0 and vj <= 0.0)
        if on_left:
            for k in range(S):
                left[k] += rs[k]
            wl += w[j]
            nl += 1
        else:
            for k in range(S):
                right[k] += rs[k]
            wr += w[j]
            nr += 1
    best = np.inf
    best_a = np.nan
    if k_move == 0:
        return best, best_a
    order = np.argsort(u, kind="mergesort")
    # the partition before any move (a below every U_j)
    if nl >= min_leaf and nr >= min_leaf and wl >= min_wleaf and wr >= min_wleaf:
        best = _side_score(left, wl, K, crit) + _side_score(right, wr, K, crit)
        best_a = u[order[0]] - max(1.0, abs(u[order[0]]))
    for q in range(k_move):
        i = order[q]
        j = rows[i]
        _row_stats(j, y, yreg, w, K, crit, rs)
        if sign[i] > 0:  # leaves the left side as a passes U_j
            for k in range(S):
                left[k] -= rs[k]
                right[k] += rs[k]
            wl -= w[j]
            wr += w[j]
            nl -= 1
            nr += 1
        else:  # joins the left side
            for k in range(S):
                left[k] += rs[k]
                right[k] -= rs[k]
            wl += w[j]
            wr -= w[j]
            nl += 1
            nr -= 1
        lo = u[i]
        if q + 1 < k_move:
            hi = u[order[q + 1]]
            if not lo < hi:
                continue
            a = lo / 2.0 + hi / 2.0
        else:
            a = lo + max(1.0, abs(lo))
        if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
            continue
        sc = _side_score(left, wl, K, crit) + _side_score(right, wr, K, crit)
        if sc < best:
            best = sc
            best_a = a
    return best, best_a


@njit
def refine(X, rows, weight, score, thr, feats, y, yreg, w, K, crit, min_leaf, min_wleaf,
           max_cycles, tol):
    """OC1's cycles of perturbation of ``weight`` (changed in place) over the features
    ``feats`` in order, each move taken only when it lowers the score by more than ``tol``,
    with the threshold re-chosen after each; at most ``max_cycles`` cycles, fewer when a
    cycle moves nothing. Returns ``(score, threshold)`` of the final ``weight``."""
    z = np.empty(rows.shape[0])
    for _ in range(max_cycles):
        moved = False
        for q in range(feats.shape[0]):
            m = feats[q]
            sc, a = best_coefficient(X, rows, weight, thr, m, y, yreg, w, K, crit, min_leaf,
                                     min_wleaf)
            if not sc < score - tol:
                continue
            old = weight[m]
            weight[m] = a
            project(X, rows, weight, z)
            sc2, t2 = best_cut(z, rows, y, yreg, w, K, crit, min_leaf, min_wleaf)
            if sc2 < score - tol:
                score = sc2
                thr = t2
                moved = True
            else:
                weight[m] = old
        if not moved:
            break
    return score, thr


@njit
def search_node(X, rows, feats, starts, y, yreg, w, K, crit, min_leaf, min_wleaf, max_cycles,
                tol, out_weight):
    """The best split of the node holding ``rows`` (see the module docstring).

    ``feats``: candidate features (increasing); ``starts``: start directions (one per row,
    length ``n_features``, zero outside ``feats``) refined like the best single-feature split.
    Writes the chosen weights to ``out_weight`` (one nonzero: a split on one feature, weight
    1) and returns ``(score, threshold, n_terms)``; score ``inf`` when nothing qualifies.
    """
    n = rows.shape[0]
    p = X.shape[1]
    z = np.empty(n)
    best = np.inf
    best_thr = np.nan
    best_f = -1
    for q in range(feats.shape[0]):
        f = feats[q]
        for i in range(n):
            z[i] = np.float64(X[rows[i], f])
        sc, t = best_cut(z, rows, y, yreg, w, K, crit, min_leaf, min_wleaf)
        if sc < best:
            best = sc
            best_thr = t
            best_f = f
    for f in range(p):
        out_weight[f] = 0.0
    n_terms = 0
    if best_f >= 0:
        out_weight[best_f] = 1.0
        n_terms = 1
    if max_cycles <= 0:
        return best, best_thr, n_terms
    cur = np.zeros(p)
    n_starts = starts.shape[0] + (1 if best_f >= 0 else 0)
    for s in range(n_starts):
        if s == 0 and best_f >= 0:
            for f in range(p):
                cur[f] = 0.0
            cur[best_f] = 1.0
            sc, t = best, best_thr
        else:
            r = s - 1 if best_f >= 0 else s
            for f in range(p):
                cur[f] = starts[r, f]
            project(X, rows, cur, z)
            sc, t = best_cut(z, rows, y, yreg, w, K, crit, min_leaf, min_wleaf)
            if not sc < np.inf:
                continue
        sc, t = refine(X, rows, cur, sc, t, feats, y, yreg, w, K, crit, min_leaf, min_wleaf,
                       max_cycles, tol)
        if sc < best - tol:
            best = sc
            best_thr = t
            n_terms = 0
            for f in range(p):
                out_weight[f] = cur[f]
                if cur[f] != 0.0:
                    n_terms += 1
    return best, best_thr, n_terms


# -- SPORF's tree, grown in one compiled loop ---------------------------------------------------

#: ``ctl`` of :func:`grow_projections`: nodes made, stack height, terms stored, status,
#: and the random generator's state (SplitMix64, as a signed 64-bit pattern).
C_NODES, C_TOP, C_TERMS, C_STATUS, C_RNG = 0, 1, 2, 3, 4
#: Statuses: the tree is done; the chunk's budget of rows is spent (call again); the node
#: table or the term table must grow first (the node on top of the stack is not started).
ST_DONE, ST_BUDGET, ST_NODES, ST_TERMS = 0, 1, 2, 3
#: ``ip`` of :func:`grow_projections`.
I_MAX_DEPTH, I_MIN_SPLIT, I_MIN_LEAF, I_MAX_FEATURES, I_N_PROJ, I_BUDGET = range(6)
#: ``fp`` of :func:`grow_projections`.
F_MIN_WLEAF, F_MIN_DECREASE, F_W_TOTAL, F_DENSITY, F_PURE = range(5)

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit
def next_uniform(ctl):
    """The next uniform number in [0, 1) of the SplitMix64 sequence kept in ``ctl[C_RNG]``
    (Steele, Lea & Flood 2014): state += golden gamma; output = the state mixed; its top 53
    bits over 2**53."""
    s = np.uint64(ctl[C_RNG]) + _GOLD
    ctl[C_RNG] = np.int64(s)
    z = s
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit
def node_impurity(st, wt, K, crit):
    """A node's stored impurity from its statistics: Gini, entropy in bits, or the weighted
    variance (summed in class order)."""
    if crit == SQUARED_ERROR:
        mean = st[0] / wt
        v = st[1] / wt - mean * mean
        return v if v > 0.0 else 0.0
    out = 0.0
    if crit == GINI:
        s = 0.0
        for k in range(K):
            q = st[k] / wt
            s += q * q
        return 1.0 - s
    for k in range(K):
        if st[k] > 0.0:
            q = st[k] / wt
            out -= q * math.log2(q)
    return out


@njit
def draw_features(ctl, p, m, pool):
    """``pool[:m]``: ``m`` of the ``p`` features, drawn without replacement (the first ``m``
    steps of a Fisher-Yates shuffle, one uniform each) and sorted; all when ``m >= p``."""
    for f in range(p):
        pool[f] = f
    if m >= p:
        return p
    for i in range(m):
        j = i + int(next_uniform(ctl) * (p - i))
        if j >= p:
            j = p - 1
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    pool[:m].sort()
    return m


@njit
def draw_projection(ctl, pool, m, density, scale, out_f, out_w):
    """One sparse projection over ``pool[:m]``: each feature in turn is taken when a uniform
    falls below ``density / m``; none taken: one feature at ``floor(u m)``; then a uniform per
    term gives its sign (below 0.5: -1), weight sign over the feature's ``scale``. Returns
    the number of terms (features increasing)."""
    prob = density / m
    if prob > 1.0:
        prob = 1.0
    t = 0
    for q in range(m):
        if next_uniform(ctl) < prob:
            out_f[t] = pool[q]
            t += 1
    if t == 0:
        q = int(next_uniform(ctl) * m)
        if q >= m:
            q = m - 1
        out_f[0] = pool[q]
        t = 1
    for q in range(t):
        sign = -1.0 if next_uniform(ctl) < 0.5 else 1.0
        out_w[q] = sign / scale[out_f[q]]
    return t


@njit
def _sum_stats(rows, lo, hi, y, yreg, w, K, crit, st):
    for k in range(st.shape[0]):
        st[k] = 0.0
    wt = 0.0
    for i in range(lo, hi):
        j = rows[i]
        if crit == SQUARED_ERROR:
            st[0] += w[j] * yreg[j]
            st[1] += w[j] * yreg[j] * yreg[j]
        else:
            st[y[j]] += w[j]
        wt += w[j]
    return wt


@njit
def _open_node(node, rows, lo, hi, y, yreg, w, K, crit, nsamp, wsamp, impurity, value, st):
    wt = _sum_stats(rows, lo, hi, y, yreg, w, K, crit, st)
    nsamp[node] = hi - lo
    wsamp[node] = wt
    impurity[node] = node_impurity(st, wt, K, crit)
    if crit == SQUARED_ERROR:
        value[node, 0] = st[0] / wt
    else:
        for k in range(K):
            value[node, k] = st[k] / wt


@njit
def _project_rows(X, rows, lo, hi, feats, weights, t, z):
    for i in range(lo, hi):
        r = rows[i]
        s = 0.0
        for q in range(t):
            s += weights[q] * np.float64(X[r, feats[q]])
        z[i - lo] = s


@njit
def grow_projections(X, y, yreg, w, rows, K, crit, ip, fp, scale, stack, left, right, feature,
                     threshold, impurity, nsamp, wsamp, value, tstart, tfeat, tweight, ctl):
    """SPORF's tree (:func:`best_projection` at every node), depth-first, left child first,
    in chunks: returns after ``ip[I_BUDGET]`` rows of nodes searched, or when the node or
    term table lacks room (``ctl[C_STATUS]``); the caller grows the tables and calls again.

    ``rows`` (the tree's row ids) is partitioned in place, a node holding
    ``rows[lo:hi]``; ``stack`` rows are ``(node, lo, hi, depth)``. Node ``i``'s oblique terms
    are ``tfeat/tweight[tstart[i]:]``, as many as ``tstart[i + 1] - tstart[i]`` would say if
    nodes were stored in order; they are stored in the order nodes are split, so the count is
    kept in ``tstart`` itself as ``(start, count)`` pairs: ``tstart[i, 0]``, ``tstart[i, 1]``
    (count 0: a split on ``feature[i]``). A node is
    split when it is deeper than ``ip[I_MAX_DEPTH]`` allows not, has ``ip[I_MIN_SPLIT]``
    rows, twice ``ip[I_MIN_LEAF]`` and ``2 fp[F_MIN_WLEAF]`` weight, an impurity above
    ``fp[F_PURE]``, and its best projection's decrease
    ``(w I - sum_c w_c I_c) / fp[F_W_TOTAL]`` reaches ``fp[F_MIN_DECREASE]``. The best of
    ``ip[I_N_PROJ]`` projections (drawn by :func:`draw_projection` over the
    ``ip[I_MAX_FEATURES]`` features of :func:`draw_features`, one random stream in
    ``ctl[C_RNG]``; scored by :func:`bin_scan` at nodes of :data:`BIN_ROWS` rows or more,
    else by :func:`cut_scan`) is scaled to unit length with its largest weight positive and its
    threshold chosen again on the scaled sum; a projection of one term becomes a split on
    that feature."""
    p = X.shape[1]
    S = K if crit != SQUARED_ERROR else 2
    min_leaf = ip[I_MIN_LEAF]
    min_wleaf = fp[F_MIN_WLEAF]
    n_proj = ip[I_N_PROJ]
    st = np.zeros(S)
    pool = np.empty(p, dtype=np.int64)
    pf = np.empty(p, dtype=np.int64)
    pw = np.empty(p)
    bf = np.empty(p, dtype=np.int64)
    bw = np.empty(p)
    n_rows = rows.shape[0]
    z = np.empty(n_rows)
    stats = np.empty((n_rows, S))
    wn = np.empty(n_rows)
    hs = np.empty((BINS, S))
    hw = np.empty(BINS)
    hn = np.empty(BINS, dtype=np.int64)
    spent = 0
    ctl[C_STATUS] = ST_DONE
    while ctl[C_TOP] > 0:
        if ctl[C_NODES] + 2 > left.shape[0]:
            ctl[C_STATUS] = ST_NODES
            return
        if ctl[C_TERMS] + p > tfeat.shape[0]:
            ctl[C_STATUS] = ST_TERMS
            return
        if spent >= ip[I_BUDGET]:
            ctl[C_STATUS] = ST_BUDGET
            return
        top = ctl[C_TOP] - 1
        node = stack[top, 0]
        lo = stack[top, 1]
        hi = stack[top, 2]
        depth = stack[top, 3]
        ctl[C_TOP] = top
        m = hi - lo
        wt = wsamp[node]
        imp = impurity[node]
        if depth >= ip[I_MAX_DEPTH] or m < ip[I_MIN_SPLIT] or m < 2 * min_leaf \
                or wt < 2.0 * min_wleaf or imp <= fp[F_PURE]:
            continue
        spent += m
        for i in range(lo, hi):
            j = rows[i]
            _row_stats(j, y, yreg, w, K, crit, stats[i - lo])
            wn[i - lo] = w[j]
        n_feats = draw_features(ctl, p, ip[I_MAX_FEATURES], pool)
        tol = fp[F_PURE] * wt * imp  # scores within it of the best are ties
        best = np.inf
        bt = 0
        binned = m >= BIN_ROWS
        for _ in range(n_proj):
            t = draw_projection(ctl, pool, n_feats, fp[F_DENSITY], scale, pf, pw)
            _project_rows(X, rows, lo, hi, pf, pw, t, z)
            if binned:
                nb = min(BINS, m // 4)
                sc = bin_scan(z[:m], stats[:m], wn[:m], K, crit, min_leaf, min_wleaf, hs[:nb],
                              hw[:nb], hn[:nb])
            else:
                sc, _thr = cut_scan(z[:m], stats[:m], wn[:m], K, crit, min_leaf, min_wleaf)
            if _better(sc, best, tol):
                best = sc
                bt = t
                for q in range(t):
                    bf[q] = pf[q]
                    bw[q] = pw[q]
        if not best < np.inf:
            continue
        if bt == 1:
            bw[0] = 1.0
        else:
            norm = 0.0
            big = 0
            for q in range(bt):
                norm += bw[q] * bw[q]
                if abs(bw[q]) > abs(bw[big]):
                    big = q
            norm = math.sqrt(norm)
            flip = -1.0 if bw[big] < 0.0 else 1.0
            for q in range(bt):
                bw[q] = flip * bw[q] / norm
        _project_rows(X, rows, lo, hi, bf, bw, bt, z)
        sc, thr = cut_scan(z[:m], stats[:m], wn[:m], K, crit, min_leaf, min_wleaf)
        if not sc < np.inf or (wt * imp - sc) / fp[F_W_TOTAL] < fp[F_MIN_DECREASE] - 1e-12:
            continue
        # partition rows[lo:hi] by z <= thr (z is in the rows' current order)
        a = lo
        for i in range(lo, hi):
            if z[i - lo] <= thr:
                r = rows[i]
                zi = z[i - lo]
                rows[i] = rows[a]
                z[i - lo] = z[a - lo]
                rows[a] = r
                z[a - lo] = zi
                a += 1
        kid = ctl[C_NODES]
        ctl[C_NODES] = kid + 2
        left[node] = kid
        right[node] = kid + 1
        big = 0
        for q in range(bt):
            if abs(bw[q]) > abs(bw[big]):
                big = q
        feature[node] = bf[big]
        threshold[node] = thr
        if bt > 1:
            c = ctl[C_TERMS]
            for q in range(bt):
                tfeat[c + q] = bf[q]
                tweight[c + q] = bw[q]
            tstart[node, 0] = c
            tstart[node, 1] = bt
            ctl[C_TERMS] = c + bt
        for c in range(2):
            child = kid + c
            left[child] = -1
            right[child] = -1
            feature[child] = -2
            threshold[child] = -2.0
            tstart[child, 0] = 0
            tstart[child, 1] = 0
            _open_node(child, rows, lo if c == 0 else a, a if c == 0 else hi, y, yreg, w, K,
                       crit, nsamp, wsamp, impurity, value, st)
        # the right child below the left: the left is searched first
        stack[ctl[C_TOP], 0] = kid + 1
        stack[ctl[C_TOP], 1] = a
        stack[ctl[C_TOP], 2] = hi
        stack[ctl[C_TOP], 3] = depth + 1
        stack[ctl[C_TOP] + 1, 0] = kid
        stack[ctl[C_TOP] + 1, 1] = lo
        stack[ctl[C_TOP] + 1, 2] = a
        stack[ctl[C_TOP] + 1, 3] = depth + 1
        ctl[C_TOP] += 2
