"""Split search on a feature's per-level summary: categorical subsets and branches, bin cuts.

Both splitters reduce a feature at a node to a *summary*: for every code present at the node
(a categorical level, or a bin of the histogram splitter), in increasing order, its statistics
(class weights, or ``[sum w y, sum w y^2]``), weight and row count; and the same three for the
node's rows whose value is missing. This module finds the best split of such a summary:

numeric (bins)
    binary cuts between consecutive codes (:func:`scan_order` in code order);
categorical, binary
    the best subset of levels: levels ordered by class-1 share (two classes) or mean
    (regression) and cut like a numeric feature, which is exact for the concave impurities
    (gini, entropy, misclassification, squared error; Breiman et al. 1984, Theorem 4.5). For
    more classes, and for gain ratio and chi-square, every subset is tried when a node has at
    most :data:`EXHAUSTIVE_MAX_LEVELS` levels; with more, the best cut over one ordering per
    class (levels by that class's share), a heuristic;
categorical, multiway
    one branch per level present (ID3/C4.5), valid when at least two branches hold
    ``min_samples_leaf`` rows (C4.5's rule; smaller branches are allowed).

Regularisation of many-level features (binary and multiway; off when ``min_count=1`` and
``smooth=0``):

* levels with fewer than ``min_count`` rows at the node are *pooled* into one group that is
  ordered, cut and routed as one level (for multiway: one "other" branch);
* orderings use the m-estimate ``(sum_k + m p_k) / (w + m)`` of each level's class share (or
  mean), with ``m = smooth`` and ``p_k`` the node's share (mean): a level seen a few times
  moves towards the middle of the order instead of an end (LightGBM's ``cat_smooth`` and
  scikit-learn's histogram boosting do the same).

Missing values, by mode (the ``missing`` parameter):

``learn`` (0)
    numeric: every cut with the missing rows sent right, then "known values left, missing
    right", then every cut with them left (scikit-learn's order); categorical: the missing rows
    are one more level (ordered and cut, subset-searched or, for multiway, joined to the
    branch that scores best). A node without missing values sends later ones to the branch
    with more rows (scikit-learn's rule).
``c45`` (1)
    the split is chosen on the rows with a known value (``min_samples_leaf`` is compared with
    their weights too, C4.5's fractional counts); its score is the known rows' gain times their
    weight share ``F``, gain ratio's split information counts the unknowns as one more subset
    (Quinlan 1993, ch. 3); the grower sends missing rows down every branch.
``impute`` (2)
    missing rows join the node's weighted median code (numeric) or most frequent level
    (categorical) and follow that code at prediction time.
``m5`` (3)
    as ``c45``, with M5′'s standard deviation reduction as the score (:func:`known_gain`,
    ``KNOWN_M5``); the grower then routes the missing rows by their target
    (:mod:`treelearn.engine.target_route`).

Scores: outside ``c45`` splits of one feature are compared by the criterion's proxy
(:func:`treelearn.engine.criteria.split_proxy`, extended to k children). The "real" score (the
impurity decrease, in bits for entropy; gain ratio; chi-square), with ``F`` under ``c45``, is
returned when asked, for feature costs, C4.5's average-gain rule and the statistical
selection of :mod:`treelearn.engine.selection`.

Workspace arrays (``ws``, ``iw``) are allocated once per fit: these kernels run per feature
and node, and an allocation costs as much as scanning a small node.
"""

from __future__ import annotations

import math

import numpy as np

from . import criteria as crt
from .config import noref, tiny
from .criteria import monotone_ok, node_impurity, split_proxy, weighted_sd

MISSING_LEARN, MISSING_C45, MISSING_IMPUTE, MISSING_M5 = 0, 1, 2, 3
#: How a search scores splits with unknown values (the ``c45`` arguments): not at all, by
#: C4.5's known-value gain, or by M5′'s standard deviation reduction.
KNOWN_OFF, KNOWN_C45, KNOWN_M5 = 0, 1, 2
KIND_NUMERIC, KIND_SUBSET, KIND_MULTIWAY = 0, 1, 2
#: Binary splits of a categorical feature try every subset up to this many levels where
#: ordering is not exact.
EXHAUSTIVE_MAX_LEVELS = 10
#: C4.5 compares fractional weights with ``min_samples_leaf``; a weight that is the minimum up
#: to rounding (1e-9 relative) passes, so that the order of summation cannot decide.
C45_SLACK = 1.0 - 1e-9

# Slots of the result vector ``out`` (float64) every search fills.
R_SCORE, R_REAL, R_GAIN, R_KIND, R_NB, R_MB, R_LO, R_HI, R_TRIES, R_SPLITINFO = range(10)
# Numeric cuts of the exact splitter also fill these.
R_THR, R_NLEFT, R_WLEFT = 10, 11, 12
N_RES = 13


@tiny
def keep_best(best, out, f, best_left, st, n_left, best_map, fmap, n_map):
    """Feature ``f``'s search result ``out`` becomes the node's best so far (every layout's
    node search): ``best`` with the feature in its score slot, the first ``n_left`` left-child
    statistics of the workspace row ``SR_BEST`` in ``best_left``, and the level map of a
    categorical winner (``n_map`` levels) in ``best_map``."""
    for q in range(N_RES):
        best[q] = out[q]
    best[R_SCORE] = f
    for k in range(n_left):
        best_left[k] = st[SR_BEST, k]
    if out[R_KIND] != KIND_NUMERIC:
        for c in range(n_map):
            best_map[c] = fmap[c]


@noref
def real_score(stats, w, k, crit, pimp):
    """Impurity decrease ``pimp - sum_c (w_c / W) imp_c`` of a split into the first ``k`` rows
    of ``stats``; for gain ratio that over the split information, for chi-square Pearson's
    statistic of the children x classes table."""
    W = 0.0
    for c in range(k):
        W += w[c]
    if crit == crt.CHI2:
        chi = 0.0
        for j in range(stats.shape[1]):
            nj = 0.0
            for c in range(k):
                nj += stats[c, j]
            if nj > 0.0:
                for c in range(k):
                    e = w[c] * nj / W
                    if e > 0.0:
                        chi += (stats[c, j] - e) * (stats[c, j] - e) / e
        return chi
    gain = pimp
    for c in range(k):
        if w[c] > 0.0:
            gain -= (w[c] / W) * node_impurity(stats[c], w[c], crit)
    if crit == crt.GAIN_RATIO:
        si = split_info(w, k, 0.0)
        if si <= 0.0:
            return -np.inf
        return gain / si
    return gain


@noref
def split_info(w, k, mw):
    """C4.5's split information of subsets of weights ``w[:k]`` (and ``mw`` unknowns)."""
    W = mw
    for c in range(k):
        W += w[c]
    si = 0.0
    for c in range(k):
        if w[c] > 0.0:
            p = w[c] / W
            si -= p * math.log(p) / crt.LN2
    if mw > 0.0:
        p = mw / W
        si -= p * math.log(p) / crt.LN2
    return si


@tiny
def _spread(variance, crit):
    """The standard deviation for SDR (whose node impurity is the variance), else the
    impurity itself."""
    if crit == crt.SDR:
        return math.sqrt(variance) if variance > 0.0 else 0.0
    return variance


@tiny
def known_mode(mode):
    """The scoring of unknown values (``KNOWN_*``) of a missing-value mode."""
    if mode == MISSING_C45:
        return np.int64(KNOWN_C45)
    if mode == MISSING_M5:
        return np.int64(KNOWN_M5)
    return np.int64(KNOWN_OFF)


@noref
def known_gain(stats, w, k, crit, mw, tot, c45, pimp):
    """The gain of a split with unknown values, times the known rows' weight share
    ``F = W_known / (W_known + mw)``. ``c45 == KNOWN_C45``: C4.5's, the known rows' impurity
    decrease (Quinlan 1993, ch. 3). ``KNOWN_M5``: M5′'s standard deviation reduction as
    Witten & Frank print it (*Data Mining*, 6.5), ``sd(T) - sum_c (w_c / W) sd(T_c)`` with
    ``T`` all the node's rows (``pimp`` their variance) and ``W`` their weight, unknowns
    included (for squared error the same with variances).
    ``tot`` is scratch of the statistics' width."""
    if c45 == KNOWN_M5:
        W = mw
        for c in range(k):
            W += w[c]
        g = _spread(pimp, crit)
        for c in range(k):
            if w[c] > 0.0:
                g -= (w[c] / W) * _spread(node_impurity(stats[c], w[c], crit), crit)
        return ((W - mw) / W) * g
    W = 0.0
    for j in range(stats.shape[1]):
        tot[j] = 0.0
    for c in range(k):
        W += w[c]
        for j in range(stats.shape[1]):
            tot[j] += stats[c, j]
    base = crt.ENTROPY if crit == crt.GAIN_RATIO else crit
    return (W / (W + mw)) * real_score(stats, w, k, base, node_impurity(tot, W, base))


@noref
def c45_score(stats, w, k, crit, mw, tot, c45, pimp):
    """C4.5's score with unknown values: :func:`known_gain`; gain ratio divides it by the split
    information with the unknowns as one more subset."""
    g = known_gain(stats, w, k, crit, mw, tot, c45, pimp)
    if crit != crt.GAIN_RATIO:
        return g
    si = split_info(w, k, mw)
    if si <= 0.0:
        return -np.inf
    return g / si


@noref
def proxy_k(stats, w, k, crit, pimp):
    """:func:`split_proxy` of a split into the first ``k`` rows of ``stats`` (equal to it, with
    the same floating-point operations, for ``k == 2``)."""
    if k == 2:
        return split_proxy(stats[0], stats[1], w[0], w[1], crit, pimp)
    if crit == crt.SQUARED_ERROR:
        s = 0.0
        for c in range(k):
            s += stats[c, 0] * stats[c, 0] / w[c]
        return s
    if crit == crt.SDR:
        s = 0.0
        for c in range(k):
            s -= weighted_sd(stats[c, 0], stats[c, 1], w[c])
        return s
    if crit == crt.GAIN_RATIO or crit == crt.CHI2:
        return real_score(stats, w, k, crit, pimp)
    if crit == crt.MISCLASSIFICATION:
        s = 0.0
        for c in range(k):
            mx = 0.0
            for j in range(stats.shape[1]):
                mx = max(mx, stats[c, j])
            s += mx - w[c]
        return s
    s = 0.0
    for c in range(k - 1, -1, -1):
        s -= w[c] * node_impurity(stats[c], w[c], crit)
    return s


@noref
def stable_order(keys, n, out, tmp):
    """``out[:n]`` = indices sorting ``keys[:n]`` (float64), ties in index order: a bottom-up
    merge sort of plain loops (NumPy's argsort inside a kernel adds seconds of compilation);
    ``tmp`` is scratch of length ``n``."""
    a = out
    b = tmp
    for i in range(n):
        a[i] = i
    width = 1
    swapped = False
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if keys[a[j]] < keys[a[i]]:
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < hi:
                b[k] = a[j]
                j += 1
                k += 1
            lo = hi
        a, b = b, a
        swapped = not swapped
        width *= 2
    if swapped:
        for i in range(n):
            out[i] = a[i]


# ------------------------------------------------------------------------------------------------
# The workspace of one fit: a float matrix and an int matrix whose rows are the scratch vectors
# below (each of the width of the largest summary), and a small stats matrix.

W_KEYS, W_UW, W_PW, W_WK, W_RES, N_WROWS = 0, 1, 2, 3, 4, 5
I_ORDER, I_TMP, I_UN, I_SIDE, I_SAVE, I_UCODE, I_POOL, N_IROWS = 0, 1, 2, 3, 4, 5, 6, 7
# Rows of the stats workspace ``st`` (shape (N_SROWS + E, S)): fixed vectors, then the
# per-entry statistics of a summary from row SR_ENTRIES on.
SR_LEFT, SR_RIGHT, SR_TOTAL, SR_MISS, SR_PAIR, SR_TOT2, SR_BEST = 0, 1, 2, 3, 4, 6, 7
SR_ENTRIES = 8


def workspace(width: int, n_stats: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scratch of a fit whose summaries have at most ``width`` entries (levels or bins, with
    the missing entry): ``(ws, iw, st)``. The stats workspace holds twice the widest summary
    (entries, then the branches of a multiway split)."""
    width = max(int(width), 2) + 2
    return (np.zeros((N_WROWS, width)), np.zeros((N_IROWS, width), dtype=np.int64),
            np.zeros((SR_ENTRIES + 2 * width, n_stats)))


@tiny
def _add_row(st, dst, src):
    for s in range(st.shape[1]):
        st[dst, s] += st[src, s]


@tiny
def _copy_row(st, dst, src):
    for s in range(st.shape[1]):
        st[dst, s] = st[src, s]


@tiny
def _zero_row(st, dst):
    for s in range(st.shape[1]):
        st[dst, s] = 0.0


@noref
def scan_order(st, ws, iw, u, mw, mn, learn_missing, crit, pimp, min_leaf, min_wleaf, c45,
               out, extras, cst, lower, upper):
    """Best cut of the summary entries ``0..u-1`` taken in the order ``iw[I_ORDER]``.

    Entry ``e`` has statistics ``st[SR_ENTRIES + e]``, weight ``ws[W_UW, e]`` and count
    ``iw[I_UN, e]``; the missing rows ``st[SR_MISS]``, ``mw`` and ``mn``. With
    ``learn_missing`` the missing rows go right (every cut, then "all known left, missing
    right"), then left (every cut), scikit-learn's order. Under ``c45`` the score is C4.5's
    (:func:`c45_score` with ``mw`` unknown) and the children must also weigh ``min_leaf``;
    ``extras`` None (:func:`treelearn.engine.fit.fit_extras`: never under ``c45``) leaves
    C4.5's scoring uncompiled.

    Writes ``out[0]`` the score (-inf: no valid cut), ``out[1]`` the cut ``j`` (the left side
    holds ``order[:j + 1]``; ``j == u - 1`` is the missing-alone split), ``out[2]`` 1 if the
    missing rows go left, ``out[3]`` the number of valid cuts. ``cst`` not 0: a monotonic
    constraint (a numeric feature's entries in increasing order), the node's bounds
    ``[lower, upper]`` (:func:`treelearn.engine.nodes.monotone_ok`).
    """
    S = st.shape[1]
    order = iw[I_ORDER]
    uw = ws[W_UW]
    un = iw[I_UN]
    pw = ws[W_PW]
    _zero_row(st, SR_TOTAL)
    wtot = 0.0
    ntot = 0
    for q in range(u):
        c = order[q]
        _add_row(st, SR_TOTAL, SR_ENTRIES + c)
        wtot += uw[c]
        ntot += un[c]
    if learn_missing:
        _add_row(st, SR_TOTAL, SR_MISS)
    best = -np.inf
    best_j = -1
    best_ml = 0
    tries = 0
    n_pass = 2 if learn_missing else 1
    for p in range(n_pass):
        ml = p == 1
        if ml:
            _copy_row(st, SR_LEFT, SR_MISS)
        else:
            _zero_row(st, SR_LEFT)
        wl = mw if ml else 0.0
        nl = mn if ml else 0
        last = u if (learn_missing and not ml) else u - 1
        for j in range(last):
            c = order[j]
            _add_row(st, SR_LEFT, SR_ENTRIES + c)
            wl += uw[c]
            nl += un[c]
            if j == u - 1 and mn == 0:
                break
            wr = wtot + (mw if learn_missing else 0.0) - wl
            nr = ntot + (mn if learn_missing else 0) - nl
            if c45 == KNOWN_C45 and (wl < min_leaf * C45_SLACK or wr < min_leaf * C45_SLACK):
                continue
            if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
                continue
            if wl <= 0.0 or wr <= 0.0:
                continue
            tries += 1
            for s in range(S):
                st[SR_RIGHT, s] = st[SR_TOTAL, s] - st[SR_LEFT, s]
            if extras is not None and c45:
                for s in range(S):
                    st[SR_PAIR, s] = st[SR_LEFT, s]
                    st[SR_PAIR + 1, s] = st[SR_RIGHT, s]
                pw[0] = wl
                pw[1] = wr
                sc = c45_score(st[SR_PAIR:SR_PAIR + 2], pw, np.int64(2), crit, mw, st[SR_TOT2],
                               c45, pimp)
            else:
                sc = split_proxy(st[SR_LEFT], st[SR_RIGHT], wl, wr, crit, pimp)
            if sc > best and (cst == 0 or monotone_ok(cst, lower, upper, st[SR_LEFT, 0], wl,
                                                      st[SR_RIGHT, 0], wr)):
                best = sc
                best_j = j
                best_ml = 1 if ml else 0
    out[0] = best
    out[1] = best_j
    out[2] = best_ml
    out[3] = tries


@tiny
def _side_sums(st, ws, iw, E):
    """The statistics (rows ``SR_PAIR``, ``SR_PAIR + 1``) and weights (``ws[W_PW][:2]``,
    returned) of the two sides of the split in ``iw[I_SIDE, :E]`` (0 left, 1 right)."""
    S = st.shape[1]
    side = iw[I_SIDE]
    pw = ws[W_PW]
    _zero_row(st, SR_PAIR)
    _zero_row(st, SR_PAIR + 1)
    pw[0] = 0.0
    pw[1] = 0.0
    for e in range(E):
        for s in range(S):
            st[SR_PAIR + side[e], s] += st[SR_ENTRIES + e, s]
        pw[side[e]] += ws[W_UW, e]
    return pw


@noref
def _subset_exhaustive(st, ws, iw, E, crit, pimp, min_leaf, min_wleaf, c45, mw):
    """Best two-way partition of the entries, every subset tried (the last entry stays right).
    Leaves the winner in ``iw[I_SIDE]``; returns its score."""
    S = st.shape[1]
    side = iw[I_SIDE]
    pw = ws[W_PW]
    un = iw[I_UN]
    best = -np.inf
    best_mask = 0
    for mask in range(1, 1 << (E - 1)):
        _zero_row(st, SR_PAIR)
        _zero_row(st, SR_PAIR + 1)
        pw[0] = 0.0
        pw[1] = 0.0
        nl = 0
        nr = 0
        for e in range(E):
            sd = 0 if (mask >> e) & 1 else 1
            for s in range(S):
                st[SR_PAIR + sd, s] += st[SR_ENTRIES + e, s]
            pw[sd] += ws[W_UW, e]
            if sd == 0:
                nl += un[e]
            else:
                nr += un[e]
        if nl < min_leaf or nr < min_leaf or pw[0] < min_wleaf or pw[1] < min_wleaf:
            continue
        if c45 == KNOWN_C45 and (pw[0] < min_leaf * C45_SLACK
                                 or pw[1] < min_leaf * C45_SLACK):
            continue
        if pw[0] <= 0.0 or pw[1] <= 0.0:
            continue
        if c45:
            sc = c45_score(st[SR_PAIR:SR_PAIR + 2], pw, np.int64(2), crit, mw, st[SR_TOT2], c45,
                           pimp)
        else:
            sc = split_proxy(st[SR_PAIR], st[SR_PAIR + 1], pw[0], pw[1], crit, pimp)
        if sc > best:
            best = sc
            best_mask = mask
    for e in range(E):
        side[e] = 0 if (best_mask >> e) & 1 else 1
    return best


@noref
def _order_by(st, ws, iw, E, j, smooth):
    """``iw[I_ORDER, :E]`` = the entries by (smoothed) share of statistic ``j``."""
    keys = ws[W_KEYS]
    if smooth > 0.0:
        tot = 0.0
        wt = 0.0
        for e in range(E):
            tot += st[SR_ENTRIES + e, j]
            wt += ws[W_UW, e]
        prior = tot / wt if wt > 0.0 else 0.0
        for e in range(E):
            keys[e] = (st[SR_ENTRIES + e, j] + smooth * prior) / (ws[W_UW, e] + smooth)
    else:
        for e in range(E):
            keys[e] = st[SR_ENTRIES + e, j] / ws[W_UW, e]
    stable_order(keys, E, iw[I_ORDER], iw[I_TMP])


@noref
def _pool_rare(st, ws, iw, E, keep_last, min_count):
    """Merge the entries with fewer than ``min_count`` rows into one (the last entry stays
    apart when ``keep_last``: the missing level under "learn"). ``iw[I_POOL, e]`` receives
    the new index of old entry ``e``; returns the new number of entries."""
    un = iw[I_UN]
    pool = iw[I_POOL]
    ucode = iw[I_UCODE]
    n_rare = 0
    limit = E - 1 if keep_last else E
    for e in range(limit):
        if un[e] < min_count:
            n_rare += 1
    if n_rare <= 1:
        for e in range(E):
            pool[e] = e
        return E
    # Kept entries first (in order), then the pool, then the kept last entry.
    k = 0
    for e in range(limit):
        if un[e] >= min_count:
            pool[e] = k
            k += 1
    p = k
    for e in range(limit):
        if un[e] < min_count:
            pool[e] = p
    if keep_last:
        pool[E - 1] = p + 1
    new_e = p + 2 if keep_last else p + 1
    # Move statistics to their new rows (new index <= old index for kept entries, so a forward
    # pass is safe); the pool row accumulates into a scratch row first.
    S = st.shape[1]
    _zero_row(st, SR_TOT2)
    pw_sum = 0.0
    pn_sum = 0
    for e in range(limit):
        if un[e] < min_count:
            _add_row(st, SR_TOT2, SR_ENTRIES + e)
            pw_sum += ws[W_UW, e]
            pn_sum += un[e]
    last_w = ws[W_UW, E - 1]
    last_n = un[E - 1]
    last_code = ucode[E - 1]
    if keep_last:
        for s in range(S):
            st[SR_LEFT, s] = st[SR_ENTRIES + E - 1, s]
    for e in range(limit):
        if un[e] >= min_count:
            t = pool[e]
            _copy_row(st, SR_ENTRIES + t, SR_ENTRIES + e)
            ws[W_UW, t] = ws[W_UW, e]
            un[t] = un[e]
            ucode[t] = ucode[e]
    _copy_row(st, SR_ENTRIES + p, SR_TOT2)
    ws[W_UW, p] = pw_sum
    un[p] = pn_sum
    ucode[p] = -2  # the pool
    if keep_last:
        _copy_row(st, SR_ENTRIES + p + 1, SR_LEFT)
        ws[W_UW, p + 1] = last_w
        un[p + 1] = last_n
        ucode[p + 1] = last_code
    return new_e


@noref
def search_summary(st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway, min_leaf,
                   min_wleaf, need_real, min_count, smooth, fmap, n_codes, out):
    """Best split of a feature from its summary (see the module docstring).

    The summary: ``u`` entries with codes ``iw[I_UCODE]`` (increasing), statistics
    ``st[SR_ENTRIES + e]``, weights ``ws[W_UW]``, counts ``iw[I_UN]``; missing rows
    ``st[SR_MISS]``, ``mw``, ``mn``. The summary is consumed (entries are merged in place).

    Fills ``out`` (slots ``R_*``): score (-inf: no valid split), real score and gain when
    ``need_real``, kind, number of branches, missing branch (-1: every branch), and for
    numeric cuts the codes either side of the cut (``R_HI == -1``: known values left, missing
    right). For categorical splits ``fmap[code]`` receives the branch of every level code
    (``-1``: absent at the node). Returns False when the feature is constant at the node (it
    then does not count towards ``max_features``).
    """
    if not categorical:
        return search_summary_numeric(st, ws, iw, u, mw, mn, crit, pimp, mode, min_leaf,
                                      min_wleaf, need_real, out, np.bool_(True), np.int64(0),
                                      -np.inf, np.inf)
    return search_summary_levels(st, ws, iw, u, mw, mn, crit, pimp, mode, multiway, min_leaf,
                                  min_wleaf, need_real, min_count, smooth, fmap, n_codes, out)


@noref
def _summary_start(st, ws, iw, u, mw, mn, categorical, mode, out):
    """Common start of a summary search: clears ``out`` and, under ``impute``, moves the
    missing rows to their entry. Returns (searchable, imputed entry or -1, missing weight,
    missing count) after imputation."""
    out[R_SCORE] = -np.inf
    out[R_REAL] = -np.inf
    out[R_GAIN] = -np.inf
    out[R_TRIES] = 0.0
    out[R_SPLITINFO] = 0.0
    learn_missing = mode == MISSING_LEARN and mn > 0
    if u == 0 or (u == 1 and not learn_missing):
        return False, -1, mw, mn
    imp_e = -1
    if mode == MISSING_IMPUTE and mn > 0:
        imp_e = _impute_entry(ws, u, categorical)
        _add_row(st, SR_ENTRIES + imp_e, SR_MISS)
        ws[W_UW, imp_e] += mw
        iw[I_UN, imp_e] += mn
        mw = 0.0
        mn = 0
    return True, imp_e, mw, mn


@noref
def search_summary_numeric(st, ws, iw, u, mw, mn, crit, pimp, mode, min_leaf, min_wleaf,
                           need_real, out, extras, cst, lower, upper):
    """:func:`search_summary` for a numeric feature: the best cut between consecutive
    entries. Compiled alone where no column is categorical, so that such fits do not compile
    the category search (see ``engine/config.py`` on compile time), and with ``extras`` None
    (:func:`treelearn.engine.fit.fit_extras`: no C4.5 scoring, no real scores asked) without
    C4.5's scoring either."""
    ok, imp_e, mw, mn = _summary_start(st, ws, iw, u, mw, mn, False, mode, out)
    if not ok:
        return False
    order = iw[I_ORDER]
    for e in range(u):
        order[e] = e
    # (computed after imputation, which empties the missing rows only outside "learn")
    learn_missing = mode == MISSING_LEARN and mn > 0
    c45 = known_mode(mode)
    res = ws[W_RES]
    scan_order(st, ws, iw, u, mw, mn, learn_missing, crit, pimp, min_leaf, min_wleaf, c45,
               res, extras, cst, lower, upper)
    sc = res[0]
    j = int(res[1])
    ml = res[2] > 0.0
    out[R_TRIES] = res[3]
    if sc == -np.inf:
        return True
    if c45:
        mb = -1
    elif learn_missing:
        mb = 0 if ml else 1
    elif imp_e >= 0:
        mb = 0 if imp_e <= j else 1
    else:
        un = iw[I_UN]
        nl = 0
        nt = 0
        for q in range(u):
            nt += un[q]
            if q <= j:
                nl += un[q]
        mb = 0 if nl > mn + nt - nl else 1
    side = iw[I_SIDE]
    for e in range(u):
        side[e] = 0 if e <= j else 1
    out[R_SCORE] = sc
    out[R_KIND] = KIND_NUMERIC
    out[R_NB] = 2
    out[R_MB] = mb
    ucode = iw[I_UCODE]
    out[R_LO] = ucode[j]
    out[R_HI] = ucode[j + 1] if j + 1 < u else -1
    if extras is not None and need_real:
        _real_two(st, ws, iw, u, crit, pimp, c45, mw if c45 else 0.0, learn_missing, ml, mw,
                  out)
    return True


@noref
def search_summary_levels(st, ws, iw, u, mw, mn, crit, pimp, mode, multiway, min_leaf,
                           min_wleaf, need_real, min_count, smooth, fmap, n_codes, out):
    """:func:`search_summary` for a categorical feature: binary subsets or a multiway split,
    after pooling rare levels."""
    ok, imp_e, mw, mn = _summary_start(st, ws, iw, u, mw, mn, True, mode, out)
    if not ok:
        return False
    learn_missing = mode == MISSING_LEARN and mn > 0
    c45 = known_mode(mode)
    mw_c45 = mw if c45 else 0.0
    un = iw[I_UN]
    uw = ws[W_UW]
    ucode = iw[I_UCODE]
    # Categorical: the missing rows are one more entry under "learn".
    saved = iw[I_SAVE]
    for e in range(u):
        saved[e] = ucode[e]
    E = u
    if learn_missing:
        _copy_row(st, SR_ENTRIES + E, SR_MISS)
        uw[E] = mw
        un[E] = mn
        ucode[E] = -1
        E += 1
        mw = 0.0
        mn = 0
    pool = iw[I_POOL]
    if min_count > 1:
        E = _pool_rare(st, ws, iw, E, learn_missing, min_count)
        if E == 1:
            # Every level is rare here: the pooled feature cannot split this node.
            for c in range(n_codes):
                fmap[c] = -1
            return True
    else:
        for e in range(E):
            pool[e] = e
    if imp_e >= 0:
        imp_e = pool[imp_e]
    if multiway:
        ok = _multiway(st, ws, iw, E, learn_missing, imp_e, crit, pimp, c45, mw_c45, min_leaf,
                       min_wleaf, need_real, out)
    else:
        ok = _binary_subset(st, ws, iw, E, learn_missing, imp_e, crit, pimp, c45, mw_c45,
                            min_leaf, min_wleaf, need_real, smooth, out)
    if not ok:
        return True
    # Level codes -> branches: entries map old entries to (possibly pooled) new ones.
    side = iw[I_SIDE]
    for c in range(n_codes):
        fmap[c] = -1
    for e in range(u):
        fmap[saved[e]] = side[pool[e]]
    return True


@noref
def _impute_entry(ws, u, categorical):
    """Entry taking the missing values under ``impute``: most frequent level (categorical) or
    weighted median code (numeric)."""
    uw = ws[W_UW]
    if categorical:
        best = 0
        for e in range(1, u):
            if uw[e] > uw[best]:
                best = e
        return best
    total = 0.0
    for e in range(u):
        total += uw[e]
    acc = 0.0
    for e in range(u):
        acc += uw[e]
        if acc >= 0.5 * total:
            return e
    return u - 1


@noref
def _real_two(st, ws, iw, E, crit, pimp, c45, mw_c45, learn_missing, ml, mw, out):
    """Real score, gain and split information of the binary split in ``iw[I_SIDE, :E]``
    (plus the missing rows on side ``0 if ml else 1`` under "learn")."""
    pw = _side_sums(st, ws, iw, E)
    if learn_missing:
        m = 0 if ml else 1
        _add_row(st, SR_PAIR + m, SR_MISS)
        pw[m] += mw
    _real_pair(st, ws, crit, pimp, c45, mw_c45, out)


@noref
def _real_pair(st, ws, crit, pimp, c45, mw_c45, out):
    pw = ws[W_PW]
    pair = st[SR_PAIR:SR_PAIR + 2]
    if c45:
        g = known_gain(pair, pw, np.int64(2), crit, mw_c45, st[SR_TOT2], c45, pimp)
        out[R_GAIN] = g
        out[R_SPLITINFO] = split_info(pw, np.int64(2), mw_c45)
        out[R_REAL] = c45_score(pair, pw, np.int64(2), crit, mw_c45, st[SR_TOT2], c45, pimp)
    else:
        base = crt.ENTROPY if crit == crt.GAIN_RATIO else crit
        out[R_GAIN] = real_score(pair, pw, np.int64(2), base, pimp) if crit != crt.CHI2 else \
            real_score(pair, pw, np.int64(2), np.int64(crt.ENTROPY), pimp)
        out[R_SPLITINFO] = split_info(pw, np.int64(2), 0.0)
        out[R_REAL] = real_score(pair, pw, np.int64(2), crit, pimp)


@tiny
def _left_prefix(iw, E, j):
    """Sides (``iw[I_SIDE, :E]``) of the cut after position ``j`` of the order
    ``iw[I_ORDER]``: its first ``j + 1`` entries left (0), the others right (1)."""
    side = iw[I_SIDE]
    order = iw[I_ORDER]
    for e in range(E):
        side[e] = 1
    for q in range(j + 1):
        side[order[q]] = 0


@noref
def _binary_subset(st, ws, iw, E, learn_missing, imp_e, crit, pimp, c45, mw_c45, min_leaf,
                   min_wleaf, need_real, smooth, out):
    """Best subset of the ``E`` entries going left; sides in ``iw[I_SIDE]``."""
    S = st.shape[1]
    side = iw[I_SIDE]
    un = iw[I_UN]
    ucode = iw[I_UCODE]
    classification = crit < crt.SQUARED_ERROR
    # SDR too: M5' orders a nominal attribute's levels by mean target (Wang & Witten 1997)
    concave = crit == crt.GINI or crit == crt.ENTROPY or crit == crt.MISCLASSIFICATION \
        or crit == crt.SQUARED_ERROR or crit == crt.SDR
    res = ws[W_RES]
    if E < 2:
        return False
    _zero_row(st, SR_MISS)
    if concave and (not classification or S == 2):
        _order_by(st, ws, iw, E, 0 if not classification else 1, smooth)
        scan_order(st, ws, iw, E, mw_c45, np.int64(0), np.bool_(False), crit, pimp, min_leaf,
                   min_wleaf, c45, res, np.bool_(True), np.int64(0), -np.inf, np.inf)
        sc = res[0]
        _left_prefix(iw, E, int(res[1]))
    elif E <= EXHAUSTIVE_MAX_LEVELS:
        sc = _subset_exhaustive(st, ws, iw, E, crit, pimp, min_leaf, min_wleaf, c45, mw_c45)
    else:
        sc = -np.inf
        for cls in range(S):
            _order_by(st, ws, iw, E, cls, smooth)
            scan_order(st, ws, iw, E, mw_c45, np.int64(0), np.bool_(False), crit, pimp,
                       min_leaf, min_wleaf, c45, res, np.bool_(True), np.int64(0), -np.inf,
                       np.inf)
            if res[0] > sc:
                sc = res[0]
                _left_prefix(iw, E, int(res[1]))
    if sc == -np.inf:
        return False
    mb = -1 if c45 else -2
    for e in range(E):
        if ucode[e] == -1:
            mb = side[e]
    if imp_e >= 0:
        mb = side[imp_e]
    if mb == -2:
        # No missing value here: the larger side (rows), scikit-learn's rule.
        nl = 0
        nt = 0
        for e in range(E):
            nt += un[e]
            if side[e] == 0:
                nl += un[e]
        mb = 0 if nl > nt - nl else 1
    out[R_SCORE] = sc
    out[R_KIND] = KIND_SUBSET
    out[R_NB] = 2
    out[R_MB] = mb
    out[R_LO] = -1
    out[R_HI] = -1
    if need_real:
        _real_two(st, ws, iw, E, crit, pimp, c45, mw_c45, np.bool_(False), np.bool_(False), 0.0,
                  out)
    return True


@tiny
def _branches(st, uw, wk, base, k, E, learn_missing, t):
    """The ``k`` branches of a multiway split, one per entry, in rows ``base ...`` of ``st``
    with their weights in ``wk``; under "learn" the missing entry (the last) joins branch
    ``t``."""
    for b in range(k):
        _copy_row(st, base + b, SR_ENTRIES + b)
        wk[b] = uw[b]
    if learn_missing:
        _add_row(st, base + t, SR_ENTRIES + E - 1)
        wk[t] += uw[E - 1]


@noref
def _multiway(st, ws, iw, E, learn_missing, imp_e, crit, pimp, c45, mw_c45, min_leaf,
              min_wleaf, need_real, out):
    """One branch per entry (the missing entry, under "learn", joins the best one); branch of
    entry ``e`` in ``iw[I_SIDE, e]``."""
    k = E - 1 if learn_missing else E
    if k < 2:
        return False
    un = iw[I_UN]
    uw = ws[W_UW]
    side = iw[I_SIDE]
    wk = ws[W_WK]
    # Branch statistics live after the entries in the stats workspace.
    base = SR_ENTRIES + E
    best = -np.inf
    best_mb = -1
    n_try = k if learn_missing else 1
    for t in range(n_try):
        _branches(st, uw, wk, base, k, E, learn_missing, t)
        big = 0
        for b in range(k):
            nb = un[b] + (un[E - 1] if learn_missing and b == t else 0)
            if nb >= min_leaf and wk[b] >= min_wleaf and (c45 != KNOWN_C45
                                                                 or wk[b] >= min_leaf * C45_SLACK):
                big += 1
        if big < 2:
            continue
        if c45:
            sc = c45_score(st[base:base + k], wk, k, crit, mw_c45, st[SR_TOT2], c45, pimp)
        else:
            sc = proxy_k(st[base:base + k], wk, k, crit, pimp)
        if sc > best:
            best = sc
            best_mb = t
    if best == -np.inf:
        return False
    for b in range(k):
        side[b] = b
    if c45:
        mb = -1
    elif learn_missing:
        mb = best_mb
        side[E - 1] = best_mb
    elif imp_e >= 0:
        mb = imp_e
    else:
        mb = 0
        for b in range(1, k):
            if un[b] > un[mb]:
                mb = b
    out[R_SCORE] = best
    out[R_KIND] = KIND_MULTIWAY
    out[R_NB] = k
    out[R_MB] = mb
    out[R_LO] = -1
    out[R_HI] = -1
    if need_real:
        _branches(st, uw, wk, base, k, E, learn_missing, best_mb)
        if c45:
            out[R_GAIN] = known_gain(st[base:base + k], wk, k, crit, mw_c45, st[SR_TOT2], c45, pimp)
            out[R_SPLITINFO] = split_info(wk, k, mw_c45)
            out[R_REAL] = c45_score(st[base:base + k], wk, k, crit, mw_c45, st[SR_TOT2], c45, pimp)
        else:
            g = crt.ENTROPY if crit == crt.GAIN_RATIO or crit == crt.CHI2 else crit
            out[R_GAIN] = real_score(st[base:base + k], wk, k, g, pimp)
            out[R_SPLITINFO] = split_info(wk, k, 0.0)
            out[R_REAL] = real_score(st[base:base + k], wk, k, crit, pimp)
    return True


def subset_kernels(values: dict) -> list[tuple]:
    """The scans of a category's best subset (:func:`_binary_subset`: by ordered shares, all
    subsets, the real score), with the signatures a node search calls them with, given the
    grower's parameters by name (``values``: ``work``, ``crit``), for
    :func:`treelearn.engine.compiling.signatures_beside`. A first fit on a table reaches them 4-7 s
    into its compilation, deep in the category search, time enough for a background
    process to cache them (about 3 s of that compilation)."""
    from .._compiling import signature

    work = values["work"]
    flag = np.bool_(False)
    given = values | {"st": work.st, "ws": work.ws, "iw": work.iw,
                      "out": work.out, "mn": np.int64(0), "learn_missing": flag, "c45": np.int64(0),
                      "ml": flag, "extras": np.bool_(True)}
    scalars = dict.fromkeys(("u", "E", "min_leaf", "cst"), "int64") | dict.fromkeys(
        ("mw", "mw_c45", "pimp", "min_wleaf", "lower", "upper"), "float64")
    return [(scan_order, signature(scan_order, given | {"out": work.ws[W_RES]}, scalars)),
            (_subset_exhaustive, signature(_subset_exhaustive, given, scalars)),
            (_real_two, signature(_real_two, given, scalars))]
