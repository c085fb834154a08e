"""Level-wise growth from histograms: the kernels of a data-parallel fit (:mod:`treelearn.dask`).

The local histogram grower (:mod:`treelearn.engine.layouts.bins`) owns all rows; a data-parallel
fit owns them in partitions and grows a tree one level at a time, with three kinds of work:

1. per partition, :func:`partition_histograms`: the histograms of some of the level's nodes
   from the partition's rows (each partition keeps its rows grouped by node, a range per
   node, as the local grower does);
2. once per level, on the summed histograms, :func:`split_node` per node: its values,
   the stopping rules and the best split, with the local grower's own search
   (:func:`treelearn.engine.layouts.bins.search_node_hist`, so the same histogram gives the same
   split), and the children's statistics from the split feature's histogram; for a small
   node, :func:`split_node_rows` from the node's rows, which the partitions sent instead of
   histograms (each drawn feature's histogram built from them as the local grower does);
3. per partition, :func:`partition_level`: the rows moved into their children's ranges
   (:func:`treelearn.engine.hist.mark_rows` and :func:`~treelearn.engine.hist.move_rows`).

Histograms are flat ``(n_bins_total, H)`` arrays as in :mod:`treelearn.engine.hist`; a
regression histogram always carries the squared targets, because a node's impurity is read
from its histogram here (the local grower reads it from the rows).

Results per node of :func:`split_node` (float64 ``res``, one row per node, ``L_*`` slots) and
the level map of categorical splits (``fmap``, one row per node, indexed by bin).
"""

from __future__ import annotations

import numpy as np

from . import levels as lvl
from .config import EPSILON, njit
from .criteria import node_impurity, two_way_decrease
from .hist import (
    branch_of_bin,
    clear_bins,
    hist_feature_rows,
    hist_rows,
    mark_rows,
    mask_order,
    move_rows,
)
from .layouts.bins import search_node_hist
from .nodes import splittable

# Slots of a node's result row.
(L_FOUND, L_WEIGHT, L_COUNT, L_IMPURITY, L_FEATURE, L_KIND, L_NB, L_MB, L_LO_BIN, L_THR,
 L_IMPROVEMENT, L_NCONST, L_SEEN) = range(13)
N_L = 13


@njit
def partition_histograms(B, C, R, W, lo, hi, hoff, fcol, fwide, n_cols):
    """``out[j]`` = the histogram of rows ``[lo[j], hi[j])`` (``n_cols`` columns; regression
    histograms with squared targets)."""
    out = np.zeros((lo.shape[0], hoff[-1], n_cols))
    for j in range(lo.shape[0]):
        if hi[j] > lo[j]:
            hist_rows(B, C, R, W, lo[j], hi[j], out[j], hoff, fcol, fwide, 1.0, C is None)
    return out


@njit
def hist_node_stats(hist, hoff, n_stats, classification, weighted, stats):
    """A node's statistics (class weights, or ``[sum w y, sum w y^2]``) from its histogram
    (feature 0's bins, the missing bin included) into ``stats``; returns ``(weight, rows)``."""
    H = hist.shape[1]
    for k in range(n_stats):
        stats[k] = 0.0
    wn = 0.0
    cnt = 0.0
    for r in range(hoff[0], hoff[1]):
        if classification:
            for k in range(n_stats):
                stats[k] += hist[r, k]
                wn += hist[r, k]
        else:
            wn += hist[r, 0]
            stats[0] += hist[r, 1]
            stats[1] += hist[r, 2]
        if weighted:
            cnt += hist[r, H - 1]
    if not weighted:
        cnt = wn
    return wn, np.int64(cnt + 0.5)


@njit
def child_stats(hist, f, hoff, nbins, kind, lo_bin, mb, fmap, k, n_stats, classification,
                weighted, cstats, cw, cn):
    """Each branch's statistics, weight and rows (``cstats[b]``, ``cw[b]``, ``cn[b]``) of a
    node's split from the split feature's histogram."""
    H = hist.shape[1]
    nb = nbins[f]
    for b in range(k):
        cw[b] = 0.0
        cn[b] = 0.0
        for q in range(n_stats):
            cstats[b, q] = 0.0
    for j in range(nb + 1):
        r = hoff[f] + j
        b = branch_of_bin(j, nb, kind, lo_bin, mb, fmap)
        if b < 0:
            continue
        wt = 0.0
        if classification:
            for q in range(n_stats):
                cstats[b, q] += hist[r, q]
                wt += hist[r, q]
        else:
            wt = hist[r, 0]
            cstats[b, 0] += hist[r, 1]
            cstats[b, 1] += hist[r, 2]
        cw[b] += wt
        cn[b] += hist[r, H - 1] if weighted else wt


@njit
def rows_node_stats(C, R, W, lo, hi, n_stats, stats):
    """A node's statistics (as :func:`hist_node_stats`) from its rows ``[lo, hi)``; returns
    ``(weight, rows)``."""
    for k in range(n_stats):
        stats[k] = 0.0
    wn = 0.0
    for i in range(lo, hi):
        x = 1.0 if W is None else W[i]
        wn += x
        if C is not None:
            stats[C[i]] += x
        if R is not None:
            stats[0] += x * R[i]
            stats[1] += x * R[i] * R[i]
    return wn, np.int64(hi - lo)


@njit
def _node_start(nstats, wn, n, depth, nconst, crit, params, classification, res,
                values):
    """A node's values and result row from its statistics; returns its impurity, or -1.0
    when the stopping rules keep it a leaf."""
    S = nstats.shape[0]
    imp = node_impurity(nstats, wn, crit)
    if classification:
        for q in range(S):
            values[q] = nstats[q] / wn
    else:
        values[0] = nstats[0] / wn
    res[L_FOUND] = 0.0
    res[L_WEIGHT] = wn
    res[L_COUNT] = n
    res[L_IMPURITY] = imp
    res[L_SEEN] = 0.0
    res[L_NCONST] = nconst
    if not splittable(n, wn, imp, depth, params, EPSILON):
        return -1.0
    return imp


@njit
def _node_finish(hist, nstats, wn, imp, lay, crit, params, work, classification, weighted,
                 res, fmap_out, cstats, cw, cn):
    """The found split into ``res`` and ``fmap_out``, its children's statistics from the
    split feature's part of ``hist``, unless the impurity decrease is below the minimum."""
    hoff, nbins, fcol, fwide = lay
    S = nstats.shape[0]
    best, best_map = work.best, work.best_map
    f = int(best[lvl.R_SCORE])
    kind = int(best[lvl.R_KIND])
    k = int(best[lvl.R_NB])
    mb = int(best[lvl.R_MB])
    lo_bin = int(best[lvl.R_LO])
    nb = nbins[f]
    for c in range(nb):
        fmap_out[c] = best_map[c] if kind != lvl.KIND_NUMERIC else -1
    child_stats(hist, f, hoff, nbins, kind, lo_bin, mb, best_map, k, S, classification,
                weighted, cstats, cw, cn)
    # weighted impurity decrease, scikit-learn's definition (two-way: right = parent - left)
    if k == 2:
        improvement = two_way_decrease(nstats, cstats[0], cstats[1], cw[0], wn, imp, crit,
                                       params.total_weight)
    else:
        dec = imp
        for b in range(k - 1, -1, -1):
            dec -= (cw[b] / wn) * node_impurity(cstats[b], cw[b], crit)
        improvement = (wn / params.total_weight) * dec
    if improvement + EPSILON < params.min_impurity_decrease:
        return
    r_miss = hoff[f] + nb
    miss = 0.0  # weight of the node's rows whose split value is missing
    if classification:
        for q in range(S):
            miss += hist[r_miss, q]
    else:
        miss = hist[r_miss, 0]
    res[L_FOUND] = 1.0
    res[L_FEATURE] = f
    res[L_KIND] = kind
    res[L_NB] = k
    res[L_MB] = mb
    res[L_LO_BIN] = lo_bin
    res[L_THR] = best[lvl.R_THR] if kind == lvl.KIND_NUMERIC else -2.0
    res[L_IMPROVEMENT] = improvement
    res[L_SEEN] = 1.0 if miss > 0.0 else 0.0


@njit
def split_node(hist, depth, nconst, lay, edges, cfg, costs, crit, params, work,
               classification, weighted, bufs, res, fmap_out, values, cstats, cw, cn):
    """One open node of a level: its values (``values``: class fractions or the mean), the
    stopping rules, and the best split (``res``, ``fmap_out``) with its children's statistics
    in ``cstats``, ``cw``, ``cn``. ``bufs`` are the local grower's row buffers, empty: the
    search reads histograms only."""
    hoff = lay.hoff
    nstats = work.nstats
    wn, n = hist_node_stats(hist, hoff, nstats.shape[0], classification, weighted, nstats)
    imp = _node_start(nstats, wn, n, depth, nconst, crit, params, classification,
                      res, values)
    if imp < 0.0:
        return
    found, n_total = search_node_hist(
        (bufs, 0, hist, False, lay, edges, classification, weighted, True), cfg, costs, 0, 0,
        nconst, wn, imp, crit, params, work, None, cfg.extras)
    res[L_NCONST] = n_total
    if found:
        _node_finish(hist, nstats, wn, imp, lay, crit, params, work, classification,
                     weighted, res, fmap_out, cstats, cw, cn)


@njit
def split_node_rows(bufs, lo, hi, scratch, depth, nconst, lay, edges, cfg, costs, crit,
                    params, work, classification, weighted, res, fmap_out, values,
                    cstats, cw, cn):
    """:func:`split_node` for a small node from its rows ``[lo, hi)`` of ``bufs`` (the local
    grower's small-node search: each drawn feature's histogram built from the rows into
    ``scratch``, zero before and after, and searched). The same split as :func:`split_node`
    on the rows' histogram, with statistics summed row by row."""
    hoff, nbins, fcol, fwide = lay
    B, C, R, W = bufs.B0, bufs.C0, bufs.R0, bufs.W0
    nstats = work.nstats
    wn, n = rows_node_stats(C, R, W, lo, hi, nstats.shape[0], nstats)
    imp = _node_start(nstats, wn, n, depth, nconst, crit, params, classification,
                      res, values)
    if imp < 0.0:
        return
    found, n_total = search_node_hist(
        (bufs, 0, scratch, True, lay, edges, classification, weighted, True), cfg, costs, lo,
        hi, nconst, wn, imp, crit, params, work, None, cfg.extras)
    res[L_NCONST] = n_total
    if not found:
        return
    f = int(work.best[lvl.R_SCORE])
    mask, order = work.mask, work.order
    hist_feature_rows(B, C, R, W, lo, hi, scratch, hoff, fcol, fwide, True, f, mask)
    n_order = mask_order(mask, nbins[f] + 1, order)
    _node_finish(scratch, nstats, wn, imp, lay, crit, params, work, classification, weighted,
                 res, fmap_out, cstats, cw, cn)
    clear_bins(scratch, hoff[f], order, n_order)


@njit
def partition_level(B, C, R, W, V, lo, hi, splits, fmaps, lay):
    """Move every split node's rows (``[lo[j], hi[j])`` of the buffers) into its children's
    ranges of new buffers, stably, branch after branch; rows of nodes that do not split are
    dropped. ``splits[j]``: ``(k, feature, kind, lo_bin, mb)``, ``k == 0`` for a node that
    does not split. Returns the new buffers and each child's ``[lo, hi)`` (children of node
    ``j`` in order, nodes in order)."""
    hoff, nbins, fcol, fwide = lay
    m = lo.shape[0]
    total = 0
    n_kids = 0
    for j in range(m):
        if splits[j, 0] > 0:
            total += hi[j] - lo[j]
            n_kids += splits[j, 0]
    Bd = np.empty((total, B.shape[1]), dtype=B.dtype)
    Vd = Bd.view(np.uint64)
    Cd = None if C is None else np.empty(total, dtype=C.dtype)
    Rd = None if R is None else np.empty(total, dtype=R.dtype)
    Wd = None if W is None else np.empty(total, dtype=W.dtype)
    kid_lo = np.empty(n_kids, dtype=np.int64)
    kid_hi = np.empty(n_kids, dtype=np.int64)
    bmark = np.empty(max(B.shape[0], 1), dtype=np.int64)
    base = 0
    q = 0
    for j in range(m):
        k = splits[j, 0]
        if k == 0:
            continue
        f = splits[j, 1]
        counts = np.zeros(k + 1, dtype=np.int64)
        mark_rows(B, lo[j], hi[j], fcol[f], fwide[f] != 0, nbins[f], splits[j, 2],
                  splits[j, 3], splits[j, 4], fmaps[j], bmark, counts, k)
        pos = np.empty(k, dtype=np.int64)
        start = base
        for b in range(k):
            pos[b] = start
            kid_lo[q + b] = start
            start += counts[b]
            kid_hi[q + b] = start
        move_rows(V, Vd, C, Cd, R, Rd, W, Wd, lo[j], hi[j], bmark, pos, np.zeros(k), k)
        base += hi[j] - lo[j]
        q += k
    return Bd, Cd, Rd, Wd, kid_lo, kid_hi


__all__ = ["partition_histograms", "split_node", "split_node_rows", "partition_level",
           "hist_node_stats", "rows_node_stats", "child_stats", "N_L"]
