"""The test twin of the compiled engine: the Python node loop that grew tables before it.

Until the tables engine (issue 16), trees with categorical features, missing values or feature
costs grew here: a node is a pair of arrays (its rows in increasing order and their weights),
the node queue is Python, the work per node is one compiled search over the features' codes
(level codes, ranks of values, or bins), summarised per code (sums per code, then cut).
:mod:`treelearn.engine` grows the same trees by another route (presorted lists or histograms,
rows grouped by node, sums in scan order), so the tests compare the two node for node.

(Changes since: C4.5's comparison of fractional weights with ``min_samples_leaf`` allows 1e-9
of rounding, as the engine does, otherwise the order of summation decides. The scans that were
the engine's own code copied are restated naively: a cut's children summed from scratch
(:func:`scan_order`), absolute deviations from a weighted median of each child's rows
(:func:`abs_cost`, no heaps), and NumPy's stable sort for the order of levels.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from treelearn._tree import MISSING_FRACTIONAL, TREE_LEAF, TREE_UNDEFINED, Tree
from treelearn.engine.binning import Binner
from treelearn.engine.config import EPSILON, X_DTYPE, njit
from treelearn.engine.criteria import (
    ABSOLUTE_ERROR,
    CHI2,
    ENTROPY,
    GAIN_RATIO,
    GINI,
    LN2,
    MISCLASSIFICATION,
    SQUARED_ERROR,
    node_impurity,
    split_proxy,
)
from treelearn.engine.nodes import heap_pop, heap_push
from treelearn.engine.random import rand_int


@njit
def weighted_median(ys: np.ndarray, ws: np.ndarray) -> float:
    """Weighted median, scikit-learn's convention: the mean of the two middle values on a tie."""
    order = np.argsort(ys, kind="mergesort")
    total = 0.0
    for i in range(ys.shape[0]):
        total += ws[i]
    half = total / 2.0
    cum = 0.0
    for k in range(ys.shape[0]):
        cum += ws[order[k]]
        if cum >= half:
            if cum == half and k + 1 < ys.shape[0]:
                return (ys[order[k]] + ys[order[k + 1]]) / 2.0
            return ys[order[k]]
    return ys[order[ys.shape[0] - 1]]


MISSING_LEARN, MISSING_C45, MISSING_IMPUTE = 0, 1, 2
COST_NONE, COST_TAN, COST_NUNEZ = 0, 1, 2
#: Categorical binary splits try every subset up to this many levels where ordering is not exact.
EXHAUSTIVE_MAX_LEVELS = 10
#: Codes are summarised with a dense table when the feature has at most this many codes per row
#: of the node; otherwise the node's codes are sorted.
DENSE_RATIO = 4
C45_SLACK = 1.0 - 1e-9


@njit
def stable_order(keys):
    """Indices that sort ``keys``, ties in index order (NumPy's stable sort)."""
    return np.argsort(keys, kind="mergesort")


@njit
def summarize(codes_f, n_codes, rows, rw, ycls, yreg, S, crit):
    """Statistics per code present at the node, ascending, and of the missing rows.

    Returns ``(ucode, ustats, uw, un, mstats, mw, mn)``.
    """
    m = rows.shape[0]
    mstats = np.zeros(S)
    mw = 0.0
    mn = 0
    is_reg = crit >= SQUARED_ERROR
    if n_codes <= DENSE_RATIO * m + 16:
        dstats = np.zeros((n_codes, S))
        dw = np.zeros(n_codes)
        dn = np.zeros(n_codes, dtype=np.int64)
        for i in range(m):
            r = rows[i]
            c = codes_f[r]
            wt = rw[i]
            if c < 0:
                _add(mstats, r, wt, ycls, yreg, crit)
                mw += wt
                mn += 1
            else:
                # written out: even an inlined call per row costs ~70 ns here (measured)
                if is_reg:
                    y = yreg[r]
                    dstats[c, 0] += wt * y
                    dstats[c, 1] += wt * y * y
                else:
                    dstats[c, ycls[r]] += wt
                dw[c] += wt
                dn[c] += 1
        u = 0
        for c in range(n_codes):
            if dn[c] > 0:
                u += 1
        ucode = np.empty(u, dtype=np.int64)
        ustats = np.empty((u, S))
        uw = np.empty(u)
        un = np.empty(u, dtype=np.int64)
        j = 0
        for c in range(n_codes):
            if dn[c] > 0:
                ucode[j] = c
                for k in range(S):
                    ustats[j, k] = dstats[c, k]
                uw[j] = dw[c]
                un[j] = dn[c]
                j += 1
        return ucode, ustats, uw, un, mstats, mw, mn
    node_codes = np.empty(m)
    for i in range(m):
        node_codes[i] = codes_f[rows[i]]
    order = stable_order(node_codes)
    u = 0
    prev = -2
    for i in range(m):
        c = int(node_codes[order[i]])
        if c >= 0 and c != prev:
            u += 1
        prev = c
    ucode = np.empty(u, dtype=np.int64)
    ustats = np.zeros((u, S))
    uw = np.zeros(u)
    un = np.zeros(u, dtype=np.int64)
    j = -1
    prev = -2
    for i in range(m):
        k = order[i]
        c = int(node_codes[k])
        r = rows[k]
        wt = rw[k]
        if c < 0:
            _add(mstats, r, wt, ycls, yreg, crit)
            mw += wt
            mn += 1
            continue
        if c != prev:
            j += 1
            ucode[j] = c
            prev = c
        if is_reg:
            y = yreg[r]
            ustats[j, 0] += wt * y
            ustats[j, 1] += wt * y * y
        else:
            ustats[j, ycls[r]] += wt
        uw[j] += wt
        un[j] += 1
    return ucode, ustats, uw, un, mstats, mw, mn


@njit(inline="always")
def _add(stats, r, wt, ycls, yreg, crit):
    if crit >= SQUARED_ERROR:
        y = yreg[r]
        stats[0] += wt * y
        stats[1] += wt * y * y
    else:
        stats[ycls[r]] += wt


@njit
def node_summary(rows, rw, ycls, yreg, S, crit):
    """Statistics vector and weight of a node's rows."""
    stats = np.zeros(S)
    w = 0.0
    is_reg = crit >= SQUARED_ERROR
    for i in range(rows.shape[0]):
        r = rows[i]
        wt = rw[i]
        if is_reg:
            y = yreg[r]
            stats[0] += wt * y
            stats[1] += wt * y * y
        else:
            stats[ycls[r]] += wt
        w += wt
    return stats, w


@njit
def proxy_k(stats, w, k, crit, pimp):
    """:func:`split_proxy` of a split into the first ``k`` rows of ``stats`` (equal to it, with
    the same floating-point operations, for ``k == 2``)."""
    if k == 2:
        return split_proxy(stats[0], stats[1], w[0], w[1], crit, pimp)
    if crit == SQUARED_ERROR:
        s = 0.0
        for c in range(k):
            s += stats[c, 0] * stats[c, 0] / w[c]
        return s
    if crit == GAIN_RATIO or crit == CHI2:
        return real_score(stats, w, k, crit, pimp)
    if crit == MISCLASSIFICATION:
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


@njit
def real_score(stats, w, k, crit, pimp):
    """Impurity decrease ``pimp - sum_c (w_c / W) imp_c`` of a split into the first ``k`` rows
    of ``stats``; for gain ratio that over the split information, for chi-square Pearson's
    statistic of the children x classes table."""
    W = 0.0
    for c in range(k):
        W += w[c]
    if crit == CHI2:
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
    if crit == GAIN_RATIO:
        si = 0.0
        for c in range(k):
            if w[c] > 0.0:
                p = w[c] / W
                si -= p * math.log(p) / LN2
        if si <= 0.0:
            return -np.inf
        return gain / si
    return gain


@njit
def c45_score(stats, w, k, crit, mw):
    """C4.5's score with unknown values: the known rows' gain times their weight share ``F``;
    gain ratio divides by the split information with the unknowns as one more subset."""
    W = 0.0
    tot = np.zeros(stats.shape[1])
    for c in range(k):
        W += w[c]
        for j in range(stats.shape[1]):
            tot[j] += stats[c, j]
    F = W / (W + mw)
    if crit == GAIN_RATIO:
        gain = F * real_score(stats, w, k, ENTROPY, node_impurity(tot, W, ENTROPY))
        si = 0.0
        for c in range(k):
            if w[c] > 0.0:
                p = w[c] / (W + mw)
                si -= p * math.log(p) / LN2
        if mw > 0.0:
            p = mw / (W + mw)
            si -= p * math.log(p) / LN2
        if si <= 0.0:
            return -np.inf
        return gain / si
    return F * real_score(stats, w, k, crit, node_impurity(tot, W, crit))


@njit
def _cut_pair(ustats, uw, order, j, u, mstats, mw, miss_left, miss_right, pair, pw):
    """Children of the cut after position ``j`` of ``order`` (missing rows added as told)."""
    S = ustats.shape[1]
    for s in range(S):
        pair[0, s] = 0.0
        pair[1, s] = 0.0
    pw[0] = 0.0
    pw[1] = 0.0
    for q in range(u):
        side = 0 if q <= j else 1
        c = order[q]
        for s in range(S):
            pair[side, s] += ustats[c, s]
        pw[side] += uw[c]
    if miss_left:
        for s in range(S):
            pair[0, s] += mstats[s]
        pw[0] += mw
    if miss_right:
        for s in range(S):
            pair[1, s] += mstats[s]
        pw[1] += mw


@njit
def scan_order(order, u, ustats, uw, un, mstats, mw, mn, learn_missing, crit, pimp, min_leaf,
               min_wleaf, c45):
    """Best cut of codes taken in ``order`` (numeric: ascending; categorical: by the ordering),
    by brute force: every candidate's children summed from scratch and scored.

    The candidates, in scikit-learn's order: with ``learn_missing`` the missing rows go right
    (every cut, then "all known left, missing right"), then left (every cut); else every cut
    with no missing rows. A candidate is valid when both children hold ``min_leaf`` rows,
    ``min_wleaf`` weight and some weight (under ``c45`` also ``min_leaf`` of weight, with
    C4.5's slack); the first best score wins. Returns ``(score, j, miss_left)``: the left
    child holds ``order[:j + 1]``; ``j == u - 1`` is the missing-alone split. ``score ==
    -inf`` when no cut is valid. (A child's sums start from the missing rows and add the
    codes in order, the right child is the parent minus the left, as in the engine, so that
    equal candidates round equally.)
    """
    S = ustats.shape[1]
    total = np.zeros(S)
    wtot = 0.0
    ntot = 0
    for q in range(u):
        for s in range(S):
            total[s] += ustats[order[q], s]
        wtot += uw[order[q]]
        ntot += un[order[q]]
    if learn_missing:
        for s in range(S):
            total[s] += mstats[s]
        wtot += mw
        ntot += mn
    pair = np.empty((2, S))
    pw = np.empty(2)
    best = -np.inf
    best_j = -1
    best_ml = False
    for p in range(2 if learn_missing else 1):
        ml = p == 1
        for j in range(u if (learn_missing and not ml and mn > 0) else u - 1):
            for s in range(S):
                pair[0, s] = mstats[s] if ml else 0.0
            wl = mw if ml else 0.0
            nl = mn if ml else 0
            for q in range(j + 1):
                for s in range(S):
                    pair[0, s] += ustats[order[q], s]
                wl += uw[order[q]]
                nl += un[order[q]]
            for s in range(S):
                pair[1, s] = total[s] - pair[0, s]
            wr = wtot - wl
            nr = ntot - nl
            if c45 and (wl < min_leaf * C45_SLACK or wr < min_leaf * C45_SLACK):
                continue
            if min(nl, nr) < min_leaf or min(wl, wr) < min_wleaf or min(wl, wr) <= 0.0:
                continue
            pw[0] = wl
            pw[1] = wr
            if c45:
                sc = c45_score(pair, pw, 2, crit, mw)
            else:
                sc = split_proxy(pair[0], pair[1], wl, wr, crit, pimp)
            if sc > best:
                best = sc
                best_j = j
                best_ml = ml
    return best, best_j, best_ml


KIND_NUMERIC, KIND_SUBSET, KIND_MULTIWAY = 0, 1, 2


@njit
def _with_missing_level(ucode, ustats, uw, un, mstats, mw, mn):
    """The summary with the missing rows appended as one more entry (code -1)."""
    u = ucode.shape[0]
    c2 = np.empty(u + 1, dtype=np.int64)
    s2 = np.empty((u + 1, ustats.shape[1]))
    w2 = np.empty(u + 1)
    n2 = np.empty(u + 1, dtype=np.int64)
    S = ustats.shape[1]
    for e in range(u):
        c2[e] = ucode[e]
        for k in range(S):
            s2[e, k] = ustats[e, k]
        w2[e] = uw[e]
        n2[e] = un[e]
    c2[u] = -1
    for k in range(S):
        s2[u, k] = mstats[k]
    w2[u] = mw
    n2[u] = mn
    return c2, s2, w2, n2


@njit
def _impute_entry(ucode, uw, categorical):
    """Entry taking the missing values under ``impute``: most frequent level (categorical) or
    weighted median code (numeric)."""
    if categorical:
        return int(np.argmax(uw))  # the first of the heaviest levels
    reached = np.flatnonzero(np.cumsum(uw) >= 0.5 * _sum(uw))
    return int(reached[0]) if reached.shape[0] else ucode.shape[0] - 1


@njit
def _subset_exhaustive(e_stats, e_w, e_n, crit, pimp, min_leaf, min_wleaf, c45, mw):
    """Best two-way partition of the entries, every subset tried (the last entry stays right).
    Returns ``(score, mask)`` with bit ``e`` set for entries sent left."""
    E = e_w.shape[0]
    S = e_stats.shape[1]
    pair = np.empty((2, S))
    pw = np.empty(2)
    best = -np.inf
    best_mask = 0
    for mask in range(1, 1 << (E - 1)):
        for s in range(S):
            pair[0, s] = 0.0
            pair[1, s] = 0.0
        pw[0] = 0.0
        pw[1] = 0.0
        nl = 0
        nr = 0
        for e in range(E):
            side = 0 if (mask >> e) & 1 else 1
            for s in range(S):
                pair[side, s] += e_stats[e, s]
            pw[side] += e_w[e]
            if side == 0:
                nl += e_n[e]
            else:
                nr += e_n[e]
        if nl < min_leaf or nr < min_leaf or pw[0] < min_wleaf or pw[1] < min_wleaf:
            continue
        if c45 and (pw[0] < min_leaf * C45_SLACK or pw[1] < min_leaf * C45_SLACK):
            continue
        if pw[0] <= 0.0 or pw[1] <= 0.0:
            continue
        if c45:
            sc = c45_score(pair, pw, 2, crit, mw)
        else:
            sc = split_proxy(pair[0], pair[1], pw[0], pw[1], crit, pimp)
        if sc > best:
            best = sc
            best_mask = mask
    return best, best_mask


@njit
def _order_by(e_stats, e_w, j):
    keys = np.empty(e_w.shape[0])
    for e in range(e_w.shape[0]):
        keys[e] = e_stats[e, j] / e_w[e]
    return stable_order(keys)


@njit
def search_feature(codes_f, n_codes, categorical, rows, rw, ycls, yreg, S, crit, pimp,
                   mode, multiway, min_leaf, min_wleaf, need_real, fmap):
    """Best split of one feature at a node.

    Returns ``(score, real, kind, n_branches, miss_branch, cut_lo, cut_hi, usable)``;
    ``score == -inf`` when the feature has no valid split; ``usable`` is False when the
    feature is constant at the node (it then does not count towards ``max_features``).
    Numeric splits are described by the codes on both sides of the cut (``cut_hi == -1``:
    known values left, missing right); categorical ones by ``fmap[code]`` = branch (``-1`` for
    codes absent at the node). ``miss_branch == -1`` sends missing values down every branch.
    """
    ucode, ustats, uw, un, mstats, mw, mn = summarize(codes_f, n_codes, rows, rw, ycls, yreg,
                                                      S, crit)
    u = ucode.shape[0]
    c45 = mode == MISSING_C45
    learn_missing = mode == MISSING_LEARN and mn > 0
    none = (-np.inf, -np.inf, 0, 0, -2, -1, -1, False)
    if u == 0 or (u == 1 and not learn_missing):
        return none
    imp_e = -1
    if mode == MISSING_IMPUTE and mn > 0:
        imp_e = _impute_entry(ucode, uw, categorical)
        for s in range(S):
            ustats[imp_e, s] += mstats[s]
        uw[imp_e] += mw
        un[imp_e] += mn
        mw = 0.0
        mn = 0
    mw_c45 = mw if c45 else 0.0
    pair = np.empty((2, S))
    pw = np.empty(2)
    if not categorical:
        order = np.arange(u)
        sc, j, ml = scan_order(order, u, ustats, uw, un, mstats, mw, mn, learn_missing, crit,
                               pimp, min_leaf, min_wleaf, c45)
        if sc == -np.inf:
            return (sc, sc, 0, 0, -2, -1, -1, True)
        # Missing rows: every branch (C4.5), the side learnt, the imputed entry's side, else
        # the side with more rows, missing ones counted on the right.
        n_left = _sum_n(un[:j + 1])
        larger = 0 if n_left > mn + _sum_n(un) - n_left else 1
        mb = -1 if c45 else ((0 if ml else 1) if learn_missing
                             else ((0 if imp_e <= j else 1) if imp_e >= 0 else larger))
        real = sc
        if need_real and not c45:
            _cut_pair(ustats, uw, order, j, u, mstats, mw, ml and learn_missing,
                      learn_missing and not ml, pair, pw)
            real = real_score(pair, pw, 2, crit, pimp)
        cut_hi = ucode[j + 1] if j + 1 < u else -1
        return (sc, real, KIND_NUMERIC, 2, mb, ucode[j], cut_hi, True)
    # Categorical: the missing rows are one more entry under "learn".
    if learn_missing:
        ucode, ustats, uw, un = _with_missing_level(ucode, ustats, uw, un, mstats, mw, mn)
        mstats = np.zeros(S)
        mw = 0.0
        mn = 0
    E = ucode.shape[0]
    for c in range(n_codes):
        fmap[c] = -1
    if multiway:
        return _multiway(ucode, ustats, uw, un, E, learn_missing, imp_e, crit, pimp, c45,
                         mw_c45, min_leaf, min_wleaf, need_real, fmap)
    classification = crit < SQUARED_ERROR
    concave = crit == GINI or crit == ENTROPY or crit == MISCLASSIFICATION \
        or crit == SQUARED_ERROR
    empty = np.zeros(S)
    if concave and (not classification or S == 2):
        order = _order_by(ustats, uw, 0 if not classification else 1)
        sc, j, _ = scan_order(order, E, ustats, uw, un, empty, mw_c45, 0, False, crit, pimp,
                              min_leaf, min_wleaf, c45)
        left_entries = order[:j + 1]
    elif E <= EXHAUSTIVE_MAX_LEVELS:
        sc, mask = _subset_exhaustive(ustats, uw, un, crit, pimp, min_leaf, min_wleaf, c45,
                                      mw_c45)
        cnt = 0
        for e in range(E):
            if (mask >> e) & 1:
                cnt += 1
        left_entries = np.empty(cnt, dtype=np.int64)
        cnt = 0
        for e in range(E):
            if (mask >> e) & 1:
                left_entries[cnt] = e
                cnt += 1
    else:
        sc = -np.inf
        left_entries = np.zeros(0, dtype=np.int64)
        for cls in range(S):
            order = _order_by(ustats, uw, cls)
            s1, j1, _ = scan_order(order, E, ustats, uw, un, empty, mw_c45, 0, False, crit,
                                   pimp, min_leaf, min_wleaf, c45)
            if s1 > sc:
                sc = s1
                left_entries = np.empty(j1 + 1, dtype=np.int64)
                for q in range(j1 + 1):
                    left_entries[q] = order[q]
    if sc == -np.inf:
        return (sc, sc, 0, 0, -2, -1, -1, True)
    side = np.ones(E, dtype=np.int64)
    for q in range(left_entries.shape[0]):
        side[left_entries[q]] = 0
    mb = -1 if c45 else -2
    for e in range(E):
        if ucode[e] >= 0:
            fmap[ucode[e]] = side[e]
        else:
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
    real = sc
    if need_real and not c45:
        for s in range(S):
            pair[0, s] = 0.0
            pair[1, s] = 0.0
        pw[0] = 0.0
        pw[1] = 0.0
        for e in range(E):
            for s in range(S):
                pair[side[e], s] += ustats[e, s]
            pw[side[e]] += uw[e]
        real = real_score(pair, pw, 2, crit, pimp)
    return (sc, real, KIND_SUBSET, 2, mb, -1, -1, True)


@njit
def _sum_n(un):
    t = 0
    for e in range(un.shape[0]):
        t += un[e]
    return t


@njit
def _multiway(ucode, ustats, uw, un, E, learn_missing, imp_e, crit, pimp, c45, mw_c45,
              min_leaf, min_wleaf, need_real, fmap):
    """One branch per level present (the missing entry, under "learn", joins the best one)."""
    S = ustats.shape[1]
    k = E - 1 if learn_missing else E
    none = (-np.inf, -np.inf, 0, 0, -2, -1, -1, True)
    if k < 2:
        return none
    st = np.empty((k, S))
    wk = np.empty(k)
    nk = np.empty(k, dtype=np.int64)
    best = -np.inf
    best_mb = -1
    n_try = k if learn_missing else 1
    for t in range(n_try):
        for b in range(k):
            for s in range(S):
                st[b, s] = ustats[b, s]
            wk[b] = uw[b]
            nk[b] = un[b]
        if learn_missing:
            for s in range(S):
                st[t, s] += ustats[E - 1, s]
            wk[t] += uw[E - 1]
            nk[t] += un[E - 1]
        big = 0
        for b in range(k):
            if nk[b] >= min_leaf and wk[b] >= min_wleaf and (
                    not c45 or wk[b] >= min_leaf * C45_SLACK):
                big += 1
        if big < 2:
            continue
        if c45:
            sc = c45_score(st, wk, k, crit, mw_c45)
        else:
            sc = proxy_k(st, wk, k, crit, pimp)
        if sc > best:
            best = sc
            best_mb = t
    if best == -np.inf:
        return none
    for b in range(k):
        fmap[ucode[b]] = b
    if c45:
        mb = -1
    elif learn_missing:
        mb = best_mb
    elif imp_e >= 0:
        mb = imp_e
    else:
        mb = 0
        for b in range(1, k):
            if un[b] > un[mb]:
                mb = b
    real = best
    if need_real and not c45:
        for b in range(k):
            for s in range(S):
                st[b, s] = ustats[b, s]
            wk[b] = uw[b]
        if learn_missing:
            for s in range(S):
                st[best_mb, s] += ustats[E - 1, s]
            wk[best_mb] += uw[E - 1]
        real = real_score(st, wk, k, crit, pimp)
    return (best, real, KIND_MULTIWAY, k, mb, -1, -1, True)


@njit
def cost_score(g, cost, cost_mode, cost_w):
    """Feature-cost adjusted score of a gain ``g``: Tan & Schlimmer's ``g**2 / cost`` or
    Nunez's ``(2**g - 1) / (cost + 1)**w``."""
    if cost_mode == COST_TAN:
        return g * g / cost
    return (2.0 ** g - 1.0) / (cost + 1.0) ** cost_w


@njit
def search_node(codes, n_codes, is_cat, perm, const_feats, n_known, rng, max_features, rows, rw,
                ycls, yreg, S, crit, pimp, mode, multiway, min_leaf, min_wleaf, costs, cost_mode,
                cost_w, fmap, best_map):
    """Best split of a node.

    Features are visited in scikit-learn's order: its Fisher-Yates draw from ``rng`` over
    ``perm`` (kept across nodes), where features constant at the node (every value missing, or
    one value and none missing) are skipped and recorded in ``const_feats``, and the draw stops
    after ``max_features`` visits (constant ones included, as scikit-learn counts them) unless
    only constants were seen; ``n_known`` constants are inherited from the parent. So ties
    between features are broken as scikit-learn breaks them. Returns ``(feature, kind,
    n_branches, miss_branch, cut_lo, cut_hi, score, n_constants)`` with ``feature == -1`` when
    no split is valid; a categorical winner's level map is in ``best_map``.
    """
    need_real = cost_mode != COST_NONE
    best = -np.inf
    bf, bkind, bnb, bmb, blo, bhi = -1, 0, 0, -2, -1, -1
    n_features = perm.shape[0]
    f_i = n_features
    n_visited = 0
    n_found = 0
    n_drawn = 0
    n_total = n_known
    while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn):
        n_visited += 1
        f_j = rand_int(n_drawn, f_i - n_found, rng)
        if f_j < n_known:
            perm[n_drawn], perm[f_j] = perm[f_j], perm[n_drawn]
            n_drawn += 1
            continue
        f_j += n_found
        f = perm[f_j]
        sc, real, kind, nb, mb, lo, hi, usable = search_feature(
            codes[f], n_codes[f], is_cat[f], rows, rw, ycls, yreg, S, crit, pimp, mode,
            multiway, min_leaf, min_wleaf, need_real, fmap)
        if not usable:
            perm[f_j], perm[n_total] = perm[n_total], perm[f_j]
            n_found += 1
            n_total += 1
            continue
        f_i -= 1
        perm[f_i], perm[f_j] = perm[f_j], perm[f_i]
        if sc == -np.inf:
            continue
        if need_real:
            sc = cost_score(max(real, 0.0), costs[f], cost_mode, cost_w)
        if sc > best:
            best = sc
            bf, bkind, bnb, bmb, blo, bhi = f, kind, nb, mb, lo, hi
            if kind != KIND_NUMERIC:
                for c in range(n_codes[f]):
                    best_map[c] = fmap[c]
    for q in range(n_known):
        perm[q] = const_feats[q]
    for q in range(n_known, n_total):
        const_feats[q] = perm[q]
    return bf, bkind, bnb, bmb, blo, bhi, best, n_total


# -- absolute error: costs need the rows themselves, not summary statistics ----------------------


@njit
def abs_cost(ys, ws):
    """``min_m sum w |y - m|`` of the given rows, as printed: the deviations from a weighted
    median (every weighted median minimises the sum)."""
    if ys.shape[0] == 0:
        return 0.0
    m = weighted_median(ys, ws)
    t = 0.0
    for i in range(ys.shape[0]):
        t += ws[i] * abs(ys[i] - m)
    return t


@njit
def _sum(a):
    """Sum in order. ``ndarray.sum`` is a loop in order when compiled but NumPy's pairwise
    summation in plain Python (the coverage pass), and C4.5's fractional weights make exact
    ties between features that the two roundings decide differently."""
    t = 0.0
    for x in a:
        t += x
    return t


@njit
def _concat(a, b):
    out = np.empty(a.shape[0] + b.shape[0])
    out[:a.shape[0]] = a
    out[a.shape[0]:] = b
    return out


@njit
def search_feature_abs(codes_f, n_codes, categorical, rows, rw, yreg, pimp, mode, multiway,
                       min_leaf, min_wleaf, need_real, fmap):
    """:func:`search_feature` for ``absolute_error``: children are scored by their minimal
    absolute deviation. The engine gets every cut's costs from prefix sums over two heaps
    (:func:`treelearn.engine.abserr.prefix_abs_cost`); here each candidate's children are
    costed from scratch, as the definition reads. Categorical levels are ordered by their
    weighted median (a heuristic: Breiman's ordering theorem is for squared error)."""
    m = rows.shape[0]
    c = np.empty(m, dtype=np.int64)
    ys = np.empty(m)
    ws = np.empty(m)
    for i in range(m):
        c[i] = codes_f[rows[i]]
        ys[i] = yreg[rows[i]]
        ws[i] = rw[i]
    none = (-np.inf, -np.inf, 0, 0, -2, -1, -1, False)
    n_miss = 0
    for i in range(m):
        if c[i] < 0:
            n_miss += 1
    if n_miss == m:
        return none
    imp_code = -1
    if mode == MISSING_IMPUTE and n_miss > 0:
        kw = np.zeros(n_codes)
        for i in range(m):
            if c[i] >= 0:
                kw[c[i]] += ws[i]
        if categorical:
            imp_code = int(np.argmax(kw))
        else:  # the first present code where the running weight reaches half
            imp_code = int(np.flatnonzero((np.cumsum(kw) >= 0.5 * _sum(kw)) & (kw > 0.0))[0])
        for i in range(m):
            if c[i] < 0:
                c[i] = imp_code
        n_miss = 0
    c45 = mode == MISSING_C45
    learn_missing = mode == MISSING_LEARN and n_miss > 0
    miss = np.flatnonzero(c < 0)
    mw_arr = ws[miss]
    mw = _sum(mw_arr)
    known = np.flatnonzero(c >= 0)
    kc = c[known]
    ucode = np.unique(kc)
    u = ucode.shape[0]
    if u == 1 and not learn_missing:
        return none
    W = _sum(ws)
    # Entries: the codes present (ascending), plus the missing rows as one entry for
    # categorical features under "learn".
    extra = 1 if (categorical and learn_missing) else 0
    E = u + extra
    entry_of = np.searchsorted(ucode, kc)
    by_entry = known[np.argsort(entry_of, kind="mergesort")]
    e_rows = [miss[:0]]
    e_rows.pop()
    start = 0
    counts = np.bincount(entry_of, minlength=u)
    for e in range(u):
        e_rows.append(by_entry[start:start + counts[e]])
        start += counts[e]
    if extra:
        e_rows.append(miss)
    if multiway and categorical:
        return _multiway_abs(ucode, e_rows, ys, ws, learn_missing, imp_code, c45, mw, W, pimp,
                             min_leaf, min_wleaf, need_real, fmap, n_codes)
    order = np.arange(E)
    if categorical:
        med = np.empty(E)
        for e in range(E):
            med[e] = weighted_median(ys[e_rows[e]], ws[e_rows[e]])
        order = np.argsort(med, kind="mergesort")
    # the rows the cuts divide: those of the entries (the missing ones too where they are an
    # entry); numeric missing rows under "learn" join the side tried
    in_entries = np.zeros(m, dtype=np.bool_)
    for e in range(E):
        in_entries[e_rows[e]] = True
    num_learn = learn_missing and not categorical
    wk = _sum(ws[in_entries])
    kimp = abs_cost(ys[in_entries], ws[in_entries]) / wk
    best = -np.inf
    best_j = -1
    best_ml = False
    for p in range(2 if num_learn else 1):
        ml = p == 1
        for j in range(E if (num_learn and not ml) else E - 1):
            left = np.zeros(m, dtype=np.bool_)
            for q in range(j + 1):
                left[e_rows[order[q]]] = True
            right = in_entries & ~left
            if num_learn:
                if ml:
                    left[miss] = True
                else:
                    right[miss] = True
            nl = int(left.sum())
            nr = int(right.sum())
            wl = _sum(ws[left])
            wr = _sum(ws[right])
            if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
                continue
            if nl == 0 or nr == 0 or (c45 and (wl < min_leaf * C45_SLACK
                                               or wr < min_leaf * C45_SLACK)):
                continue
            cost = abs_cost(ys[left], ws[left]) + abs_cost(ys[right], ws[right])
            sc = (wk / (wk + mw)) * (kimp - cost / wk) if c45 else -cost
            if sc > best:
                best = sc
                best_j = j
                best_ml = ml
    if best == -np.inf:
        return (best, best, 0, 0, -2, -1, -1, True)
    K = int(in_entries.sum())
    cut = 0
    for q in range(best_j + 1):
        cut += e_rows[order[q]].shape[0]
    real = best if c45 else pimp + best / W
    side = np.ones(E, dtype=np.int64)
    for q in range(best_j + 1):
        side[order[q]] = 0
    if not categorical:
        if c45:
            mb = -1
        elif num_learn:
            mb = 0 if best_ml else 1
        elif imp_code >= 0:
            mb = 0 if imp_code <= ucode[best_j] else 1
        else:
            mb = 0 if cut > K - cut else 1
        hi = ucode[best_j + 1] if best_j + 1 < u else -1
        return (best, real, KIND_NUMERIC, 2, mb, ucode[best_j], hi, True)
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
        mb = 0 if cut > K - cut else 1
    return (best, real, KIND_SUBSET, 2, mb, -1, -1, True)


@njit
def _multiway_abs(ucode, e_rows, ys, ws, learn_missing, imp_code, c45, mw, W, pimp, min_leaf,
                  min_wleaf, need_real, fmap, n_codes):
    k = len(e_rows) - 1 if learn_missing else len(e_rows)
    none = (-np.inf, -np.inf, 0, 0, -2, -1, -1, True)
    if k < 2:
        return none
    cost = np.empty(k)
    wk = np.empty(k)
    nk = np.empty(k, dtype=np.int64)
    for b in range(k):
        r = e_rows[b]
        cost[b] = abs_cost(ys[r], ws[r])
        wk[b] = _sum(ws[r])
        nk[b] = r.shape[0]
    wknown = _sum(wk)
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
                r = np.concatenate((e_rows[b], e_rows[k]))
                cb = abs_cost(ys[r], ws[r])
                wb += _sum(ws[e_rows[k]])
                nb += e_rows[k].shape[0]
            total += cb
            if nb >= min_leaf and wb >= min_wleaf and (not c45 or wb >= min_leaf * C45_SLACK):
                big += 1
        if big < 2:
            continue
        if c45:
            nall = 0
            for b in range(k):
                nall += e_rows[b].shape[0]
            allk = np.empty(nall, dtype=np.int64)
            q = 0
            for b in range(k):
                allk[q:q + e_rows[b].shape[0]] = e_rows[b]
                q += e_rows[b].shape[0]
            kimp = abs_cost(ys[allk], ws[allk]) / wknown
            sc = (wknown / (wknown + mw)) * (kimp - total / wknown)
        else:
            sc = -total
        if sc > best:
            best = sc
            best_t = t
    if best == -np.inf:
        return none
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
        mb = int(np.argmax(nk))
    real = best if c45 else pimp + best / W
    return (best, real, KIND_MULTIWAY, k, mb, -1, -1, True)


@njit
def search_node_abs(codes, n_codes, is_cat, perm, const_feats, n_known, rng, max_features, rows, rw,
                ycls, yreg, S, crit, pimp, mode, multiway, min_leaf, min_wleaf, costs, cost_mode,
                cost_w, fmap, best_map):
    """:func:`search_node` for ``absolute_error`` (same draw, same result layout). A kernel of
    its own, not a branch in :func:`search_node`: Numba compiles every branch, and the
    absolute-error search would add ~20 s to the first fit of every other criterion."""
    need_real = cost_mode != COST_NONE
    best = -np.inf
    bf, bkind, bnb, bmb, blo, bhi = -1, 0, 0, -2, -1, -1
    n_features = perm.shape[0]
    f_i = n_features
    n_visited = 0
    n_found = 0
    n_drawn = 0
    n_total = n_known
    while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn):
        n_visited += 1
        f_j = rand_int(n_drawn, f_i - n_found, rng)
        if f_j < n_known:
            perm[n_drawn], perm[f_j] = perm[f_j], perm[n_drawn]
            n_drawn += 1
            continue
        f_j += n_found
        f = perm[f_j]
        sc, real, kind, nb, mb, lo, hi, usable = search_feature_abs(
            codes[f], n_codes[f], is_cat[f], rows, rw, yreg, pimp, mode, multiway,
            min_leaf, min_wleaf, need_real, fmap)
        if not usable:
            perm[f_j], perm[n_total] = perm[n_total], perm[f_j]
            n_found += 1
            n_total += 1
            continue
        f_i -= 1
        perm[f_i], perm[f_j] = perm[f_j], perm[f_i]
        if sc == -np.inf:
            continue
        if need_real:
            sc = cost_score(max(real, 0.0), costs[f], cost_mode, cost_w)
        if sc > best:
            best = sc
            bf, bkind, bnb, bmb, blo, bhi = f, kind, nb, mb, lo, hi
            if kind != KIND_NUMERIC:
                for c in range(n_codes[f]):
                    best_map[c] = fmap[c]
    for q in range(n_known):
        perm[q] = const_feats[q]
    for q in range(n_known, n_total):
        const_feats[q] = perm[q]
    return bf, bkind, bnb, bmb, blo, bhi, best, n_total


@dataclass
class Codes:
    """Integer codes of every feature (``codes[f, row]``, -1 missing) and how to turn a cut
    between two codes of a numeric feature into a threshold."""

    codes: np.ndarray
    n_codes: np.ndarray
    is_cat: np.ndarray
    values: list = field(default_factory=list)  # exact: sorted distinct values per feature
    table: np.ndarray | None = None  # hist: the binner's upper bin edges

    def threshold(self, f: int, lo: int, hi: int) -> float:
        if hi < 0:
            return np.inf  # known values left, missing right (scikit-learn's threshold)
        if self.table is not None:
            return float(self.table[f, lo])
        a = np.float64(self.values[f][lo])
        b = np.float64(self.values[f][hi])
        thr = a / 2.0 + b / 2.0
        if thr == b or np.isinf(thr):
            thr = a
        return float(thr)


def prepare_codes(X: np.ndarray, is_cat: np.ndarray, n_levels: np.ndarray,
                  binner: Binner | None) -> Codes:
    """Codes of a float32 table (categorical columns hold level codes, NaN = missing)."""
    n, p = X.shape
    codes = np.empty((p, n), dtype=np.int32)
    n_codes = np.zeros(p, dtype=np.int64)
    values: list = [None] * p
    table = None
    if binner is not None:
        bins = binner.transform(X)
        table = binner._table
    for f in range(p):
        col = X[:, f]
        known = ~np.isnan(col)
        if is_cat[f]:
            codes[f] = np.where(known, np.nan_to_num(col, nan=-1.0), -1).astype(np.int32)
            n_codes[f] = max(int(n_levels[f]), 1)
        elif binner is not None:
            b = bins[:, f].astype(np.int32)
            b[b == binner.missing_bin] = -1
            codes[f] = b
            n_codes[f] = int(binner.n_bins_[f])
        else:
            vals = np.unique((col[known] + np.float32(0.0)).astype(X_DTYPE))
            values[f] = vals
            c = np.full(n, -1, dtype=np.int32)
            c[known] = np.searchsorted(vals, col[known]).astype(np.int32)
            codes[f] = c
            n_codes[f] = max(vals.shape[0], 1)
    return Codes(codes, n_codes, is_cat.astype(np.bool_), values, table)


@dataclass
class GeneralParams:
    """What the general grower needs besides the data (resolved by the estimator)."""

    crit: int
    n_stats: int
    n_values: int
    n_classes: int
    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    max_features: int
    max_leaf_nodes: int
    min_impurity_decrease: float
    seed: int
    missing: int
    multiway: bool
    costs: np.ndarray
    cost_mode: int
    cost_weight: float


@dataclass
class _Node:
    rows: np.ndarray
    rw: np.ndarray
    depth: int
    parent: int
    branch: int
    stats: np.ndarray = None
    weight: float = 0.0
    impurity: float = 0.0
    split: tuple | None = None  # (feature, kind, n_branches, miss_branch, lo, hi, map)
    children: list | None = None  # [(rows, rw), ...] of the split
    improvement: float = -np.inf
    n_constants: int = 0  # features known constant here (scikit-learn's draw bookkeeping)


class _Table:
    """The node table being built."""

    def __init__(self):
        self.cols: dict[str, list] = {k: [] for k in (
            "feature", "threshold", "impurity", "n", "w", "value", "missing", "cat", "kids")}

    def add(self, node: _Node, value: np.ndarray) -> int:
        c = self.cols
        i = len(c["feature"])
        c["feature"].append(TREE_UNDEFINED)
        c["threshold"].append(float(TREE_UNDEFINED))
        c["impurity"].append(node.impurity)
        c["n"].append(node.rows.shape[0])
        c["w"].append(node.weight)
        c["value"].append(value)
        c["missing"].append(TREE_UNDEFINED)
        c["cat"].append(None)
        c["kids"].append([])
        return i


class GeneralGrower:
    """Grow one tree on :class:`Codes` (see module docstring)."""

    def __init__(self, codes: Codes, ycls, yreg, w, prm: GeneralParams):
        self.c = codes
        self.ycls = ycls if ycls.size else np.zeros(1, dtype=np.int32)
        self.yreg = yreg if yreg.size else np.zeros(1)
        self.w = w
        self.prm = prm
        self.total_weight = float(w.sum())
        p = codes.codes.shape[0]
        self.p = p
        width = int(codes.n_codes.max()) if p else 1
        self.fmap = np.full(width, -1, dtype=np.int64)
        self.best_map = np.full(width, -1, dtype=np.int64)
        self.rng = np.array([prm.seed], dtype=np.int64)
        self.perm = np.arange(p, dtype=np.int64)
        self.const_feats = np.arange(p, dtype=np.int64)
        self.table = _Table()

    # -- one node ----------------------------------------------------------------------------
    def _impurity(self, rows, rw, stats, weight) -> float:
        if self.prm.crit == ABSOLUTE_ERROR:
            return float(abs_cost(self.yreg[rows], rw)) / weight
        return float(node_impurity(stats, weight, self.prm.crit))

    def _summarize(self, node: _Node) -> None:
        prm = self.prm
        node.stats, node.weight = node_summary(node.rows, node.rw, self.ycls, self.yreg,
                                               prm.n_stats, prm.crit)
        node.impurity = self._impurity(node.rows, node.rw, node.stats, node.weight)

    def _value(self, node: _Node) -> np.ndarray:
        if self.prm.crit == ABSOLUTE_ERROR:
            return np.array([weighted_median(self.yreg[node.rows], node.rw)])
        if self.prm.crit >= SQUARED_ERROR:
            return np.array([node.stats[0] / node.weight])
        return node.stats / node.weight

    def _search(self, node: _Node) -> None:
        """Find the node's split and its children; leave ``split`` None for a leaf."""
        prm = self.prm
        n = node.rows.shape[0]
        if (node.depth >= prm.max_depth or n < prm.min_samples_split
                or node.weight < 2.0 * prm.min_weight_leaf or node.impurity <= EPSILON):
            return
        if prm.missing == 1 and \
                node.weight < 2.0 * prm.min_samples_leaf * C45_SLACK * (1.0 - 1e-12):
            return  # no C4.5 test has two branches of min_samples_leaf in weight
        c = self.c
        kernel = search_node_abs if prm.crit == ABSOLUTE_ERROR else search_node
        f, kind, nb, mb, lo, hi, _, node.n_constants = kernel(
            c.codes, c.n_codes, c.is_cat, self.perm, self.const_feats, node.n_constants,
            self.rng, prm.max_features, node.rows, node.rw, self.ycls, self.yreg, prm.n_stats,
            prm.crit, node.impurity, prm.missing, prm.multiway, prm.min_samples_leaf,
            prm.min_weight_leaf, prm.costs, prm.cost_mode, prm.cost_weight, self.fmap,
            self.best_map)
        if f < 0:
            return
        codes_f = c.codes[f][node.rows]
        if kind == KIND_NUMERIC:
            branch = np.where(codes_f <= lo, 0, 1) if hi >= 0 else np.zeros(n, dtype=np.int64)
            cmap = None
        else:
            cmap = self.best_map[:c.n_codes[f]].copy()
            branch = cmap[np.maximum(codes_f, 0)]
        missing = codes_f < 0
        branch = np.where(missing, -1, branch)
        children = []
        fractional = mb == MISSING_FRACTIONAL and missing.any()
        if not fractional and mb >= 0:
            branch = np.where(missing, mb, branch)
        # Rows grouped by branch with one stable sort (a mask per branch would cost
        # branches x rows on a multiway split); rows stay in increasing order in each child.
        sel = np.flatnonzero(branch >= 0)
        order = sel[np.argsort(branch[sel], kind="stable")]
        bounds = np.concatenate([[0], np.cumsum(np.bincount(branch[sel], minlength=nb))])
        if fractional:
            known_w = np.bincount(branch[sel], weights=node.rw[sel], minlength=nb)
            shares = known_w / known_w.sum()
            midx = np.flatnonzero(missing)
        for b in range(nb):
            idx = order[bounds[b]:bounds[b + 1]]
            if fractional:
                idx = np.sort(np.concatenate([idx, midx]))
                rw = np.where(missing[idx], node.rw[idx] * shares[b], node.rw[idx])
                keep = rw > 0.0
                children.append((node.rows[idx][keep], rw[keep]))
            else:
                children.append((node.rows[idx], node.rw[idx]))
        if any(r.shape[0] == 0 for r, _ in children):
            return  # cannot happen for a valid split; a guard against an empty child
        # Impurity decrease, scikit-learn's weighted definition, over all children.
        dec = node.impurity
        kids = []
        for r, rw in children:
            stats, wc = node_summary(r, rw, self.ycls, self.yreg, prm.n_stats, prm.crit)
            kids.append(((wc / node.weight), self._impurity(r, rw, stats, wc)))
        for share, imp in reversed(kids):
            dec -= share * imp
        improvement = (node.weight / self.total_weight) * dec
        if improvement + EPSILON < prm.min_impurity_decrease:
            return
        thr = c.threshold(f, lo, hi) if kind == KIND_NUMERIC else float(TREE_UNDEFINED)
        node.split = (f, thr, nb, mb, cmap)
        node.children = children
        node.improvement = improvement

    def _emit(self, node: _Node) -> int:
        i = self.table.add(node, self._value(node))
        if node.parent >= 0:
            self.table.cols["kids"][node.parent].append(i)
        return i

    def _set_split(self, i: int, node: _Node) -> None:
        f, thr, nb, mb, cmap = node.split
        cols = self.table.cols
        cols["feature"][i] = f
        cols["threshold"][i] = thr
        cols["missing"][i] = mb
        cols["cat"][i] = cmap

    def _child_nodes(self, node: _Node, parent_id: int) -> list[_Node]:
        return [_Node(r, rw, node.depth + 1, parent_id, b, n_constants=node.n_constants)
                for b, (r, rw) in enumerate(node.children)]

    # -- growth --------------------------------------------------------------------------------
    def grow(self) -> Tree:
        n = self.w.shape[0]
        root = _Node(np.arange(n, dtype=np.int64), self.w.astype(np.float64), 0, -1, 0)
        if self.prm.max_leaf_nodes > 0:
            self._best_first(root)
        else:
            self._depth_first(root)
        return self._tree()

    def _depth_first(self, root: _Node) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            self._summarize(node)
            self._search(node)
            i = self._emit(node)
            if node.split is None:
                continue
            self._set_split(i, node)
            kids = self._child_nodes(node, i)
            node.children = None
            stack.extend(reversed(kids))

    def _best_first(self, root: _Node) -> None:
        # scikit-learn's best-first builder: libstdc++'s heap on the improvement (so nodes with
        # equal improvements come out in its order) and no inherited constant features.
        self._summarize(root)
        self._search(root)
        heap = np.empty(16, dtype=np.int64)
        keys = np.full(16, -np.inf)
        waiting: dict[int, _Node] = {}
        hsize = 0

        def push(node: _Node, i: int) -> None:
            nonlocal heap, keys, hsize
            if node.split is None:
                return
            if i >= keys.shape[0] or hsize >= heap.shape[0]:
                size = 2 * max(i + 1, hsize + 1)
                keys = np.concatenate([keys, np.full(size - keys.shape[0], -np.inf)])
                heap = np.concatenate([heap, np.empty(size - heap.shape[0], dtype=np.int64)])
            keys[i] = node.improvement
            waiting[i] = node
            hsize = heap_push(heap, hsize, keys, i)

        push(root, self._emit(root))
        leaves = 1
        limit = self.prm.max_leaf_nodes
        while hsize > 0:
            i, hsize = heap_pop(heap, hsize, keys)
            node = waiting.pop(int(i))
            nb = node.split[2]
            if leaves + nb - 1 > limit:
                continue
            leaves += nb - 1
            self._set_split(int(i), node)
            kids = self._child_nodes(node, int(i))
            node.children = None
            for kid in kids:
                kid.n_constants = 0
                self._summarize(kid)
                self._search(kid)
            for kid in kids:
                push(kid, self._emit(kid))

    def _tree(self) -> Tree:
        cols = self.table.cols
        nodes = len(cols["feature"])
        kids = cols["kids"]
        nb = np.array([len(k) for k in kids], dtype=np.intp)
        ptr = np.zeros(nodes + 1, dtype=np.intp)
        ptr[1:] = np.cumsum(nb)
        child = np.array([c for k in kids for c in k], dtype=np.intp)
        first = np.array([k[0] if k else TREE_LEAF for k in kids], dtype=np.intp)
        last = np.array([k[-1] if k else TREE_LEAF for k in kids], dtype=np.intp)
        ncat = np.array([0 if m is None else m.shape[0] for m in cols["cat"]], dtype=np.intp)
        cptr = np.zeros(nodes + 1, dtype=np.intp)
        cptr[1:] = np.cumsum(ncat)
        cats = [m for m in cols["cat"] if m is not None]
        cat = np.concatenate(cats) if cats else np.zeros(0, dtype=np.intp)
        # A numeric node whose rows had no missing value under "learn" keeps the rule chosen
        # by the search (larger child); under "c45" every internal node is fractional.
        return Tree(
            self.p, [self.prm.n_classes], first, last, cols["feature"], cols["threshold"],
            cols["impurity"], cols["n"], cols["w"], np.asarray(cols["value"]),
            branch_ptr=ptr, branch_child=child, cat_ptr=cptr, cat_branch=cat,
            missing_branch=cols["missing"],
        )


def build_general(codes: Codes, ycls, yreg, w, prm: GeneralParams) -> Tree:
    """Grow a tree with the general engine (see module docstring)."""
    return GeneralGrower(codes, ycls, yreg, w, prm).grow()
