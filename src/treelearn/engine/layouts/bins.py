"""The compiled node loop of the histogram splitter, for numeric data and tables alike.

The same loop as :mod:`treelearn.engine.layouts.presorted` (scikit-learn's feature draw and growth
orders, the same stopping rules, missing-value modes, categorical splits, C4.5's rules and the
statistical selection; a multiway split makes ``k`` children), on the data layout of
:mod:`treelearn.engine.hist`: rows grouped by node in two buffers, per-node histograms.

Histograms live in a pool of slots bounded by a memory budget (:data:`HIST_POOL_BYTES`):

* a node that has none builds it from its rows; a *small* node (fewer rows x features than
  the histogram has bins), and every node of a tree that draws at most a third of the
  features (a forest), builds the histogram of each feature it draws, as it draws it, in a
  slot kept clean, marking the bins its rows fill in a bitmap, searches those bins and clears
  them again, so that its cost stays proportional to its rows (most nodes of a deep tree are
  small); a numeric feature without missing values at the node is searched straight from
  its histogram (:func:`treelearn.engine.hist.scan_hist_two`, ``scan_hist_classes``);
* after a split, the child with the most rows inherits the parent's histogram minus its
  siblings': each sibling that will need one of its own is built from its rows into a new slot
  and subtracted; a small sibling's rows are subtracted one by one instead;
* a child waits on the stack (or heap) with its histogram only while two slots stay free;
  otherwise it rebuilds it when its turn comes, so the pool never runs dry;
* C4.5's fractional splits put rows into several children: their children build their own.

Large nodes build histograms and move rows on all threads (compiled only for fits large enough
to use them). Every other node goes through :func:`_process_serial`, the same kernels compiled
without reference counting, which the threaded ones need: counting the references of the
fifty-odd arrays a node's kernels take was a third of a fully grown tree's fit. The depth-first
loop itself is such a kernel (:func:`treelearn.engine.builder.run_depth_first`): it hands back
to its counting caller whatever allocates (tables to grow, a large node's threads, larger
buffers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba
import numpy as np
from numba import types
from numba.extending import overload

from .. import compiling, fit
from .. import criteria as crt
from .. import levels as lvl
from .. import nodes as nd
from ..abserr import abs_rows, search_rows_abs
from ..binning import table_layout
from ..builder import NEED_ARENA, layout
from ..config import EPSILON, PARALLEL_MIN_WORK, driver, if_present, njit, noref, tiny
from ..criteria import ABSOLUTE_ERROR, SDR, SQUARED_ERROR, node_impurity, two_way_decrease
from ..fit import GrowParams
from ..hist import (
    RowBuffers,
    clear_bins,
    clear_rows,
    hist_feature_rows,
    hist_node,
    hist_node_parallel,
    hist_rows,
    mark_rows,
    mask_order,
    move_rows,
    move_rows_parallel,
    rows_stats,
    scan_hist_classes,
    scan_hist_two,
    shares_of,
    subtract,
    summarize_hist,
)
from ..levels import keep_best, search_summary, search_summary_numeric
from ..nodes import (
    open_bounds,
    pend_node,
    pop_node,
    split_bounds,
    splittable,
    store_split,
    store_values,
)
from ..scratch import Scratch
from ..search import Config, node_search
from ..selection import rows_log_pvalue
from ..target_route import route_rows

if TYPE_CHECKING:  # the engine builds trees; Tree itself sits above it
    from ..._tree import Tree

#: Memory the histogram pool may take (pages are touched only as slots are used).
HIST_POOL_BYTES = 64 * 2**20


# -- the pool of histogram slots -------------------------------------------------------------


@noref
def _take(free, nfree):
    if nfree[0] == 0:
        return -1
    nfree[0] -= 1
    return free[nfree[0]]


@noref
def _release(free, nfree, slot):
    if slot >= 0:
        free[nfree[0]] = slot
        nfree[0] += 1


@noref
def _keep(free, nfree, slot):
    """A waiting node keeps its histogram only if two slots stay free (the working reserve)."""
    if slot >= 0 and nfree[0] < 2:
        _release(free, nfree, slot)
        return -1
    return slot


@noref
def _small(n, p, pool):
    """Whether a node of ``n`` rows is small: building its histogram from its rows (and
    clearing it again) costs less than zeroing or subtracting a whole histogram."""
    return n * p < pool.shape[1]


#: A node searches histograms of the features it draws only, built from its rows, when it
#: draws at most one in this many features (a forest's ``sqrt``): building every feature's
#: histogram for subtraction costs more than the few it searches, at every node size
#: (forest of 1M x 28, 2 threads: 0.58 s per tree, 0.67 s with full histograms above 8192
#: rows, 0.76 s with full histograms wherever the node is not small).
DRAWN_FRACTION = 3


@noref
def _per_feature(n, p, pool, params):
    """Whether a node of ``n`` rows builds the histogram of each feature it draws as it
    draws it (small nodes, and nodes that draw few of many features) rather than the
    histogram of all features."""
    return _small(n, p, pool) or DRAWN_FRACTION * params.max_features <= p


@tiny
def _side(bufs, d):
    """The row buffers of parity ``d``: (bins, class codes, targets, weights, uint64 view).

    Inlined into every caller, so that it counts references exactly when its caller does:
    Numba keeps one compiled version per argument types whatever the caller's flags, and the
    same node kernels run both with reference counting (large nodes, whose threaded kernels
    allocate) and without (:func:`_process_serial`)."""
    if d == 0:
        return bufs.B0, bufs.C0, bufs.R0, bufs.W0, bufs.V0
    return bufs.B1, bufs.C1, bufs.R1, bufs.W1, bufs.V1


@njit
def _build(bufs, d, lo, hi, hist, lay, sq, priv):
    """``hist`` = the histogram of rows ``[lo, hi)`` of buffer ``d`` (on all threads for large
    nodes when ``priv`` is given)."""
    B, C, R, W, _ = _side(bufs, d)
    hoff, nbins, fcol, fwide = lay
    if priv is not None:
        if (hi - lo) * (hoff.shape[0] - 1) >= PARALLEL_MIN_WORK and hi - lo >= 2 * hist.shape[0]:
            hist_node_parallel(B, C, R, W, lo, hi, hist, priv, hoff, fcol, fwide, sq)
            return
    hist_node(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sq)


@njit
def _node_hist(bufs, d, lo, hi, pool, free, nfree, lay, sq, priv):
    """The histogram of a node that has none: returns its slot (the clean slot, the pool's
    last, for a small node or when the pool is exhausted: the caller clears it)."""
    hoff, nbins, fcol, fwide = lay
    p = hoff.shape[0] - 1
    clean = pool.shape[0] - 1
    slot = -1
    if not _small(hi - lo, p, pool):
        slot = _take(free, nfree)
    if slot < 0:
        B, C, R, W, _ = _side(bufs, d)
        hist_rows(B, C, R, W, lo, hi, pool[clean], hoff, fcol, fwide, 1.0, sq)
        return clean
    _build(bufs, d, lo, hi, pool[slot], lay, sq, priv)
    return slot


@noref
def _clear(bufs, d, lo, hi, pool, lay):
    B, C, R, W, _ = _side(bufs, d)
    hoff, nbins, fcol, fwide = lay
    clear_rows(B, lo, hi, pool[pool.shape[0] - 1], hoff, fcol, fwide)


@njit
def children_hists(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq, priv,
                   kid_slot, n_parent):
    """Histograms of the children (rows in buffer ``d``) from the parent's in ``slot``: the
    child with the most rows among those that ``need`` one inherits the parent's minus its
    siblings' (each built into a new slot if it needs one and is not small, else its rows
    subtracted); the others get theirs later. Writes ``kid_slot`` (-1: none).

    A split with fractional rows (C4.5: a row in every child, ``n_parent`` rows in all) gives
    no histogram by subtraction: the weights would subtract (the shares sum to one) but the
    row counts would not, so every child builds its own."""
    hoff, nbins, fcol, fwide = lay
    p = hoff.shape[0] - 1
    n_kids = 0
    for b in range(k):
        kid_slot[b] = -1
        n_kids += kid_hi[b] - kid_lo[b]
    if n_kids != n_parent:
        _release(free, nfree, slot)
        return
    big = -1
    for b in range(k):
        if need[b] and (big < 0 or kid_hi[b] - kid_lo[b] > kid_hi[big] - kid_lo[big]):
            big = b
    if slot < 0 or big < 0:
        _release(free, nfree, slot)
        return
    B, C, R, W, _ = _side(bufs, d)
    for b in range(k):
        if b == big:
            continue
        lo = kid_lo[b]
        hi = kid_hi[b]
        t = -1
        if need[b] and not _small(hi - lo, p, pool):
            t = _take(free, nfree)
        if t >= 0:
            _build(bufs, d, lo, hi, pool[t], lay, sq, priv)
            subtract(pool[slot], pool[t])
            kid_slot[b] = _keep(free, nfree, t)
        else:
            hist_rows(B, C, R, W, lo, hi, pool[slot], hoff, fcol, fwide, -1.0, sq)
    kid_slot[big] = _keep(free, nfree, slot)


# -- search ----------------------------------------------------------------------------------


@tiny
def _bin_empty(hist, r, classification, weighted):
    """Whether histogram row ``r`` (a feature's missing bin) holds no row."""
    H = hist.shape[1]
    if weighted:
        return hist[r, H - 1] <= 0.0
    if classification:
        wt = 0.0
        for k in range(H):
            wt += hist[r, k]
        return wt <= 0.0
    return hist[r, 0] <= 0.0


@tiny
def _feature_search(X, cfg, work, f, lo, hi, wn, crit, imp, params, rand_thr,
                    need_real, absolute):
    """One feature's best split at the node from its histogram (or, for absolute error, from
    its rows): the ``feature_search`` step of :mod:`treelearn.engine.search`. ``X`` is
    ``(bufs, d, hist, n_small, lay, edges, classification, weighted, sq)``: the row buffers
    and their parity, the node's histogram (with ``n_small``, built here feature by
    feature), the bin layout and edges, and the histogram's kind."""
    bufs, d, hist, n_small, lay, edges, classification, weighted, sq = X
    st, ws, iw, fmap, out, order, mask = (work.st, work.ws, work.iw, work.fmap, work.out,
                                          work.order, work.mask)
    hoff, nbins, fcol, fwide = lay
    is_cat, n_codes = cfg.is_cat, cfg.n_search
    mode = params.mode
    nb = nbins[f]
    if absolute is not None:
        B, C, R, W, _ = _side(bufs, d)
        return search_rows_abs(B, R, W, lo, hi, fcol[f], fwide[f] != 0, nb, is_cat[f],
                               n_codes[f], imp, mode, params.multiway != 0,
                               params.min_leaf, params.min_weight_leaf, fmap, out,
                               work.afs, work.ajs, edges, f)
    n_order = -1
    B, C, R, W, _ = _side(bufs, d)
    if n_small:
        # the histogram is built for the feature under search only, with a bitmap of the
        # bins its rows fill, and those bins are cleared again once searched (the clean slot)
        hist_feature_rows(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sq, f, mask)
        n_order = mask_order(mask, nb + 1, order)
    # C4.5's and M5′'s scores of unknown values are not the fast scans' proxies
    known = mode == lvl.MISSING_C45 or mode == lvl.MISSING_M5
    plain = not is_cat[f] and not need_real and not known
    two = plain and st.shape[1] == 2 and (crit == crt.GINI or crit == crt.ENTROPY
                                          or crit == crt.SQUARED_ERROR or crit == crt.SDR)
    classes = plain and classification and (crit == crt.GINI or crit == crt.ENTROPY
                                             or crit == crt.MISCLASSIFICATION)
    if (two or classes) and _bin_empty(hist, hoff[f] + nb, classification, weighted):
        # the common cases, scanned straight from the histogram
        if two:
            usable = scan_hist_two(hist, f, hoff, nbins, classification, weighted, crit,
                                   params.min_leaf, params.min_weight_leaf, order,
                                   n_order, out, work.mono[f], work.bounds[0], work.bounds[1])
        else:
            usable = scan_hist_classes(hist, f, hoff, nbins, weighted, crit,
                                       params.min_leaf, params.min_weight_leaf,
                                       order, n_order, st, out)
        if n_small:
            clear_bins(hist, hoff[f], order, n_order)
        if out[lvl.R_SCORE] > -np.inf:
            out[lvl.R_THR] = (np.inf if out[lvl.R_HI] < 0
                              else np.float64(edges[f, int(out[lvl.R_LO])]))
        return usable
    u, mw, mn = summarize_hist(hist, f, hoff, nbins, classification, weighted, st, ws, iw,
                               order, n_order)
    if n_small:
        clear_bins(hist, hoff[f], order, n_order)
    if work.mono[f] != 0:  # a constrained numeric feature (constraints on categories refused)
        usable = search_summary_numeric(st, ws, iw, u, mw, mn, crit, imp, mode,
                                        params.min_leaf, params.min_weight_leaf,
                                        need_real, out, cfg.extras, work.mono[f],
                                        work.bounds[0], work.bounds[1])
        if out[lvl.R_SCORE] > -np.inf:
            out[lvl.R_THR] = (np.inf if out[lvl.R_HI] < 0
                              else np.float64(edges[f, int(out[lvl.R_LO])]))
        return usable
    usable = _summary_opt(cfg.category, st, ws, iw, u, mw, mn, is_cat[f], crit, imp, mode,
                          params.multiway != 0, params.min_leaf,
                          params.min_weight_leaf, need_real, params.min_count,
                          params.smooth, fmap, n_codes[f], out, cfg.extras)
    if out[lvl.R_SCORE] > -np.inf and out[lvl.R_KIND] == lvl.KIND_NUMERIC:
        out[lvl.R_THR] = np.inf if out[lvl.R_HI] < 0 else np.float64(edges[f, int(out[lvl.R_LO])])
    return usable


def _summary_opt(levels, st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
                 min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes, out, extras):
    # Run as such only with NUMBA_DISABLE_JIT; compiled kernels use the overload below.
    return search_summary(st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
                          min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes, out)


@overload(_summary_opt)
def _summary_opt_impl(levels, st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
                      min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes, out,
                      extras):
    # ``levels`` (``cfg.category``) is None when no column is categorical: only the numeric summary
    # search is compiled (first hist fit on 5,000 x 10 numbers, empty cache: see config.py),
    # as in ``presorted._levels_opt``.
    if isinstance(levels, types.NoneType):
        return (lambda levels, st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
                min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes, out, extras:
                search_summary_numeric(st, ws, iw, u, mw, mn, crit, pimp, mode, min_leaf,
                                       min_wleaf, need_real, out, extras, np.int64(0),
                                       -np.inf, np.inf))
    return (lambda levels, st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
            min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes, out, extras:
            search_summary(st, ws, iw, u, mw, mn, categorical, crit, pimp, mode, multiway,
                           min_leaf, min_wleaf, need_real, min_count, smooth, fmap, n_codes,
                           out))


@tiny
def _no_random_cut(X, f, lo, hi, rng):
    """Histograms have no random splitter: every feature is searched over its bins."""
    return True, np.nan


@tiny
def _log_pvalue(X, cfg, work, f, lo, hi, wn, crit):
    """The feature's log p-value of independence at the node, from its rows."""
    bufs, d, hist, n_small, lay, edges, classification, weighted, sq = X
    hoff, nbins, fcol, fwide = lay
    B, C, R, W, _ = _side(bufs, d)
    return rows_log_pvalue(B, C, R, W, lo, hi, fcol[f], fwide[f] != 0, nbins[f], cfg.is_cat[f],
                           work.nstats, wn, work.st, work.ws, work.iw)


@tiny
def _keep_best(X, cfg, work, f):
    """The feature's split (``out``) kept as the node's best (the children's statistics
    come from the histogram: no left statistics kept)."""
    keep_best(work.best, work.out, f, work.best_left, work.st, np.int64(0), work.best_map,
              work.fmap, cfg.n_search[f])


#: The node search over histograms (:mod:`treelearn.engine.search`); its ``X``: see
#: :func:`_feature_search`.
search_node_hist = node_search("search_node_hist", feature_search=_feature_search,
                               random_cut=_no_random_cut, log_pvalue=_log_pvalue,
                               keep=_keep_best)


# -- one node --------------------------------------------------------------------------------


@noref
def open_rows(bufs, d, tf, tv, node, lo, hi, crit, nstats, absolute, afs, ajs):
    """The node's statistics, weight, impurity and value from its rows."""
    B, C, R, W, _ = _side(bufs, d)
    wn = rows_stats(C, R, W, lo, hi, nstats)
    if absolute is None:
        return wn, store_values(tf, tv, node, nstats, wn, crit)
    imp, med = abs_rows(R, W, lo, hi, wn, afs, ajs)
    tv[node, 0] = med
    tf[node, nd.T_IMPURITY] = imp
    tf[node, nd.T_WEIGHT] = wn
    return wn, imp


@njit
def split_rows(bufs, d, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit, params,
               work, buffers, lay, kid_lo, kid_hi, absolute, tcounts, extras):
    """Move the node's rows (buffer ``d``) into its children's ranges of the other buffer by
    its best split; record the split. Returns ``(k, arena_top)`` like
    :func:`treelearn.engine.layouts.presorted.split_node` (``extras`` None: no fractional rows or
    M5 routing, not compiled)."""
    best, best_map, cstats = work.best, work.best_map, work.best_left
    bmark, counts, starts, shares, pos = buffers
    hoff, nbins, fcol, fwide = lay
    f = int(best[lvl.R_SCORE])
    kind = int(best[lvl.R_KIND])
    k = int(best[lvl.R_NB])
    mb = int(best[lvl.R_MB])
    lo_bin = int(best[lvl.R_LO])
    thr = best[lvl.R_THR] if kind == lvl.KIND_NUMERIC else -2.0
    Bs, Cs, Rs, Ws, Vs = _side(bufs, d)
    Bd, Cd, Rd, Wd, Vd = _side(bufs, 1 - d)
    nb = nbins[f]
    n_all = mark_rows(Bs, lo, hi, fcol[f], fwide[f] != 0, nb, kind, lo_bin, mb, best_map, bmark,
                      counts, k)
    seen = counts[k] > 0
    routed = params.mode == lvl.MISSING_M5
    if extras is not None and routed and n_all > 0:
        # M5′: the missing rows go where their target fits (treelearn.engine.target_route)
        route_rows(Rs, Ws, lo, hi, bmark, counts, k, shares)
        n_all = 0
    fractional = n_all > 0
    starts[0] = 0
    for b in range(k):
        starts[b + 1] = starts[b] + counts[b] + n_all
    base = lo
    if extras is not None and fractional:
        need = arena_top + starts[k]
        if need > Bs.shape[0]:
            gs[nd.G_NEED] = need
            return NEED_ARENA, arena_top
        shares_of(Ws, lo, hi, bmark, k, shares)
        base = arena_top
        arena_top = need
    for b in range(k):
        pos[b] = base + starts[b]
    if not _move_parallel(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, counts, k, tcounts,
                          fractional, base, starts):
        move_rows(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, pos, shares, k)
    for b in range(k):
        kid_lo[b] = base + starts[b]
        kid_hi[b] = base + starts[b + 1]
    # Weighted impurity decrease (scikit-learn's definition, over all children). Two-way
    # splits use the exact splitter's formula and its right = parent - left, so that a
    # split of zero improvement rounds the same way in both splitters.
    wl = 0.0
    left0 = 0.0
    if k == 2 and n_all == 0 and absolute is None:
        wl = rows_stats(Cd, Rd, Wd, kid_lo[0], kid_hi[0], cstats)
        left0 = cstats[0]
        improvement = two_way_decrease(work.nstats, cstats, cstats, wl, wn, imp, crit,
                                       params.total_weight)
    else:
        dec = imp
        for b in range(k - 1, -1, -1):
            wc = rows_stats(Cd, Rd, Wd, kid_lo[b], kid_hi[b], cstats)
            if absolute is not None:
                ic, _ = abs_rows(Rd, Wd, kid_lo[b], kid_hi[b], wc, work.afs, work.ajs)
            else:
                ic = node_impurity(cstats, wc, crit)
            dec -= (wc / wn) * ic
        improvement = (wn / params.total_weight) * dec
    if improvement + EPSILON < params.min_impurity_decrease:
        return 0, arena_top - starts[k] if fractional else arena_top
    # M5′: prediction's branch comes from the node's average value, set after growth
    store_split(ti, tf, node, f, k, kind, 0 if routed else mb, seen, thr, improvement)
    if wl > 0.0 and kind == lvl.KIND_NUMERIC:
        split_bounds(ti, tf, node, work.mono[f], left0, wl, work.nstats[0], wn)
    return k, arena_top


@njit
def _move_parallel(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, counts, k, tcounts,
                   fractional, base, starts):
    """Move a large node's rows on all threads; False (nothing done) for other nodes.
    ``tcounts is None`` (the serial kernels) prunes the threaded call at compile time."""
    if tcounts is not None:
        if not fractional and (hi - lo) * Vs.shape[1] >= 4 * PARALLEL_MIN_WORK:
            for b in range(k):
                counts[b] = base + starts[b]
            move_rows_parallel(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, counts, k,
                               tcounts)
            return True
    return False


@njit
def _grow_bufs(bufs, need):
    """The row buffers (:data:`~treelearn.engine.hist.RowBuffers`) with room for ``need``
    rows (the arena of fractional splits)."""
    cap = max(need, 2 * bufs.B0.shape[0])
    nB0 = _rows2(bufs.B0, cap)
    nB1 = _rows2(bufs.B1, cap)
    return RowBuffers(nB0, nB1, _rows1_opt(bufs.C0, cap), _rows1_opt(bufs.C1, cap),
                      _rows1_opt(bufs.R0, cap), _rows1_opt(bufs.R1, cap),
                      _rows1_opt(bufs.W0, cap), _rows1_opt(bufs.W1, cap),
                      nB0.view(np.uint64), nB1.view(np.uint64))


@njit
def _rows2(a, cap):
    out = np.empty((cap, a.shape[1]), dtype=a.dtype)
    for i in range(a.shape[0]):
        for c in range(a.shape[1]):
            out[i, c] = a[i, c]
    return out


@njit
def _rows1(a, cap):
    out = np.empty(cap, dtype=a.dtype)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


_rows1_opt = if_present(_rows1)


@njit
@driver
def _process(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool, free,
             nfree, priv, tcounts, lay, edges, cfg, costs, crit, params, work,
             buffers, kid_lo, kid_hi, absolute, classification, weighted, sq):
    """Open, search and split one node. Returns ``(k, n_constants, arena_top, slot)``
    (``k == 0``: a leaf; :data:`NEED_ARENA`: the row buffers must grow first, see
    :func:`_step`; ``slot``: the node's histogram, kept for its children)."""
    wn, imp = open_rows(bufs, d, tf, tv, node, lo, hi, crit, work.nstats, absolute, work.afs,
                        work.ajs)
    open_bounds(work.bounds, tf, node)
    if not splittable(hi - lo, wn, imp, depth, params, EPSILON):
        _release(free, nfree, slot)
        return 0, nconst, arena_top, -1
    hoff = lay.hoff
    p = hoff.shape[0] - 1
    clean = pool.shape[0] - 1
    n_small = False
    if absolute is None and slot < 0:
        if _per_feature(hi - lo, p, pool, params):
            # built feature by feature as the search draws them (see _feature_search)
            slot = clean
            n_small = True
        else:
            slot = _node_hist(bufs, d, lo, hi, pool, free, nfree, lay, sq, priv)
    found, n_total = search_node_hist(
        (bufs, d, pool[max(slot, 0)], n_small, lay, edges, classification, weighted, sq), cfg,
        costs, lo, hi, nconst, wn, imp, crit, params, work, absolute, cfg.extras)
    if slot == clean:
        if not n_small:
            _clear(bufs, d, lo, hi, pool, lay)
        slot = -1
    if not found:
        _release(free, nfree, slot)
        return 0, n_total, arena_top, -1
    k, arena_top = split_rows(bufs, d, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit,
                              params, work, buffers, lay, kid_lo, kid_hi, absolute,
                              tcounts, cfg.extras)
    if k == 0:
        _release(free, nfree, slot)
        return 0, n_total, arena_top, -1
    return k, n_total, arena_top, slot


@noref
@driver
def _process_serial(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool,
                    free, nfree, lay, edges, cfg, costs, crit, params, work, buffers,
                    kid_lo, kid_hi, absolute, classification, weighted, sq):
    """:func:`_process` on one thread, without reference counting: most nodes are small,
    and counting the references of the arrays every kernel takes from its argument tuples
    was a third of a fully grown tree's fit."""
    return _process(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool,
                    free, nfree, None, None, lay, edges, cfg, costs, crit, params,
                    work, buffers, kid_lo, kid_hi, absolute, classification, weighted, sq)


@njit
@driver
def _step(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool, free,
          nfree, priv, tcounts, lay, edges, cfg, costs, crit, params, work, buffers,
          kid_lo, kid_hi, absolute, classification, weighted, sq, p):
    """Open, search and split one node: on all threads when it is large (and the fit has
    the threads' buffers), else :func:`_process_serial`. Returns ``(bufs, k, n_constants,
    arena_top, slot)``; ``bufs`` grows when a fractional split needs more room.

    Best-first growth calls it; the depth-first loop has it written out, as a kernel compiled
    with reference counting increments every array it is given (members of tuples included)
    on entry and decrements them on exit, about fifty here, on every node."""
    # Nested tests: ``tcounts is None`` must prune the threaded branch at compile time, so
    # that the serial kernels are never compiled with reference counting for the same types.
    large = False
    if tcounts is not None:
        large = (hi - lo) * p >= PARALLEL_MIN_WORK
    if large:
        k, n_total, arena_top2, slot2 = _process_large(
            bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool, free,
            nfree, priv, tcounts, lay, edges, cfg, costs, crit, params, work,
            buffers, kid_lo, kid_hi, absolute, classification, weighted, sq)
    else:
        k, n_total, arena_top2, slot2 = _process_serial(
            bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool, free,
            nfree, lay, edges, cfg, costs, crit, params, work, buffers, kid_lo,
            kid_hi, absolute, classification, weighted, sq)
    if k == NEED_ARENA:
        bufs, k, arena_top2, slot2 = _split_again(
            bufs, d, ti, tf, gs, node, lo, hi, arena_top, crit, params, work, buffers,
            lay, kid_lo, kid_hi, absolute, tcounts, free, nfree, slot2, cfg.extras)
    return bufs, k, n_total, arena_top2, slot2


@njit
def _split_again(bufs, d, ti, tf, gs, node, lo, hi, arena_top, crit, params, work,
                 buffers, lay, kid_lo, kid_hi, absolute, tcounts, free, nfree, slot, extras):
    """Grow the row buffers to the size a fractional split asked for and split the node
    again. Returns ``(bufs, k, arena_top, slot)``. Never called without ``extras`` (no
    fractional split then): the test prunes the rest at compile time."""
    if extras is None:
        return bufs, np.int64(0), arena_top, slot
    bufs = _grow_bufs(bufs, gs[nd.G_NEED])
    k, arena_top = split_rows(bufs, d, ti, tf, gs, node, lo, hi, arena_top, tf[node, nd.T_WEIGHT],
                              tf[node, nd.T_IMPURITY], crit, params, work, buffers, lay,
                              kid_lo, kid_hi, absolute, tcounts, extras)
    if k == 0:
        _release(free, nfree, slot)
        slot = -1
    return bufs, k, arena_top, slot


@njit
@driver
def _process_large(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top, pool,
                   free, nfree, priv, tcounts, lay, edges, cfg, costs, crit, params,
                   work, buffers, kid_lo, kid_hi, absolute, classification, weighted, sq):
    """:func:`_process` with the threads' buffers; never called without them (the test
    prunes the call, at compile time, in fits that have none)."""
    if tcounts is not None:
        return _process(bufs, d, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top,
                        pool, free, nfree, priv, tcounts, lay, edges, cfg, costs, crit, params,
                        work, buffers, kid_lo, kid_hi, absolute, classification,
                        weighted, sq)
    return 0, nconst, arena_top, slot


@njit
@driver
def _children_large(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq, priv,
                    kid_slot, n_parent):
    """:func:`children_hists` on all threads (see :func:`_process_large`)."""
    if priv is not None:
        children_hists(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq, priv,
                       kid_slot, n_parent)


@noref
@driver
def _children_serial(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq,
                     kid_slot, n_parent, absolute):
    """:func:`children_hists` of a small parent: one thread, no reference counting. (Absolute
    error searches rows, not histograms: its children carry none.)"""
    if absolute is not None:
        for b in range(k):
            kid_slot[b] = -1
        return
    children_hists(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq, None,
                   kid_slot, n_parent)


@tiny
def _children(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq, priv,
              kid_slot, n_parent, p, absolute):
    """:func:`children_hists`, on all threads for a large parent (a fit with the threads'
    buffers ``priv`` has histograms: not absolute error)."""
    large = False
    if priv is not None:
        large = n_parent * p >= PARALLEL_MIN_WORK
    if large:
        _children_large(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq,
                        priv, kid_slot, n_parent)
    else:
        _children_serial(bufs, d, slot, k, kid_lo, kid_hi, need, pool, free, nfree, lay, sq,
                         kid_slot, n_parent, absolute)


# -- the bins as a layout of the builder (treelearn.engine.builder) -----------------------------

@tiny
def _needs(L, ti, k, depth):
    """Which children of a ``k``-way split at ``depth`` may split (``L.need``)."""
    for b in range(k):
        L.need[b] = nd.may_split(L.kid_hi[b] - L.kid_lo[b], depth + 1, L.params)


@tiny
def _process_node(L, data, ti, tf, tv, gs, node, lo, hi, depth, nconst, arena_top, slot):
    """Open, search and split a node on one thread: ``(k, n_total, arena_top, slot)``."""
    return _process_serial(data, depth & 1, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot,
                           arena_top, L.pool, L.free, L.nfree, L.lay, L.edges, L.cfg, L.costs,
                           L.crit, L.params, L.work, L.buffers, L.kid_lo, L.kid_hi,
                           L.absolute, L.classification, L.weighted, L.sq)


@tiny
def _kids_serial(L, data, ti, node, k, depth, slot):
    """The children's histograms, on one thread (their rows sit in the other buffer)."""
    _needs(L, ti, k, depth)
    _children_serial(data, 1 - (depth & 1), slot, k, L.kid_lo, L.kid_hi, L.need, L.pool,
                     L.free, L.nfree, L.lay, L.sq, L.kid_slot, ti[node, nd.N_NSAMP], L.absolute)


@tiny
def _kids_any(L, data, ti, node, k, depth, slot):
    """The children's histograms, on all threads for a large parent."""
    _needs(L, ti, k, depth)
    _children(data, 1 - (depth & 1), slot, k, L.kid_lo, L.kid_hi, L.need, L.pool, L.free,
              L.nfree, L.lay, L.sq, L.priv, L.kid_slot, ti[node, nd.N_NSAMP],
              L.n_levels.shape[0], L.absolute)


@tiny
def _large_on_top(L, stack, gs):
    """Whether the node on top of the stack is large enough for all threads (a fit with the
    threads' buffers only)."""
    if L.tcounts is None:
        return False
    top = gs[nd.G_TOP] - 1
    return (stack[top, nd.S_HI] - stack[top, nd.S_LO]) * L.charge >= PARALLEL_MIN_WORK


@njit
@driver
def _resume_node(L, tcounts, data, ti, tf, tv, gs, stack, status):
    """What the runner handed back: a large node on top of the stack, processed on all
    threads, or a node whose fractional split needs larger row buffers. Returns ``(data,
    node, k, depth, n_total, arena_top, slot)``. A fit without the threads' buffers
    (``tcounts`` None) never hands over a large node: the test prunes the threaded kernel
    at compile time (it cost a small fit's first run 0.7 s)."""
    k = 0
    node = 0
    depth = 0
    n_total = 0
    arena_top2 = 0
    slot = -1
    if tcounts is not None:
        if status == nd.RUN_LARGE:
            node, lo, hi, depth, nconst, arena_top, slot = pop_node(ti, tf, gs, stack,
                                                                    L.charge)
            k, n_total, arena_top2, slot = _process_large(
                data, depth & 1, ti, tf, tv, gs, node, lo, hi, depth, nconst, slot, arena_top,
                L.pool, L.free, L.nfree, L.priv, tcounts, L.lay, L.edges, L.cfg, L.costs,
                L.crit, L.params, L.work, L.buffers, L.kid_lo, L.kid_hi,
                L.absolute, L.classification, L.weighted, L.sq)
            if k == NEED_ARENA:
                pend_node(gs, node, lo, hi, depth, arena_top, slot, n_total)
                status = nd.RUN_ARENA
    if status == nd.RUN_ARENA:
        node = gs[nd.G_PNODE]
        depth = gs[nd.G_PDEPTH]
        n_total = gs[nd.G_PTOTAL]
        data, k, arena_top2, slot = _split_again(
            data, depth & 1, ti, tf, gs, node, gs[nd.G_PLO], gs[nd.G_PHI], gs[nd.G_PARENA],
            L.crit, L.params, L.work, L.buffers, L.lay, L.kid_lo, L.kid_hi,
            L.absolute, tcounts, L.free, L.nfree, gs[nd.G_PSLOT], L.cfg.extras)
    return data, node, k, depth, n_total, arena_top2, slot


@tiny
def _resume(L, data, ti, tf, tv, gs, stack, status):
    return _resume_node(L, L.tcounts, data, ti, tf, tv, gs, stack, status)


@tiny
def _step_node(L, data, ti, tf, tv, gs, node, lo, hi, depth, slot, arena_top):
    """Open, search and split a node of best-first growth (on all threads when large; the
    row buffers may grow)."""
    data, k, _, arena_top, slot = _step(
        data, depth & 1, ti, tf, tv, gs, node, lo, hi, depth, np.int64(0), slot, arena_top,
        L.pool, L.free, L.nfree, L.priv, L.tcounts, L.lay, L.edges, L.cfg, L.costs, L.crit,
        L.params, L.work, L.buffers, L.kid_lo, L.kid_hi, L.absolute,
        L.classification, L.weighted, L.sq, L.n_levels.shape[0])
    return data, k, arena_top, slot


@tiny
def _keep_slot(L, slot):
    return _keep(L.free, L.nfree, slot)


@tiny
def _release_slot(L, slot):
    _release(L.free, L.nfree, slot)


#: The bins (``data``: the row buffers of :func:`grow_binned`) as a
#: layout: ``cfg = (is_cat, bins per feature, levels per feature, category search,
#: extras)``; ``need`` which children may split; ``priv``/``tcounts`` the threads' buffers
#: (None: one thread).
Hist = layout("Hist", ("lay", "edges", "cfg", "costs", "pool", "free", "nfree", "priv",
                       "tcounts", "crit", "buffers", "need", "absolute",
                       "classification", "weighted", "sq"),
              process=_process_node, children=_kids_serial, children_any=_kids_any,
              hand_over=_large_on_top, resume=_resume, step=_step_node, keep=_keep_slot,
              release=_release_slot)


def _search_kernels(values: dict) -> list[tuple]:
    """The kernels of one feature's search from its histogram (:func:`_feature_search`),
    with the parameters a node search gives them, in the order the grower types them. It
    reaches them several seconds into its compilation (after the node loops, the node's
    statistics and histograms), time enough for a background process to cache them."""
    work = values["work"]
    bufs = values["bufs"]
    given = values | values["lay"]._asdict() | {
        "hist": values["pool"][0], "B": bufs.B0, "C": bufs.C0,
        "R": bufs.R0, "W": bufs.W0} | work._asdict() | {
        "need_real": np.bool_(False), "categorical": np.bool_(False),
        "multiway": np.bool_(False)}
    summary = search_summary_numeric if values["cfg"].category is None else search_summary
    kernels = [hist_feature_rows, mask_order, scan_hist_two, scan_hist_classes,
               summarize_hist, summary]
    return [(kernel, given) for kernel in kernels]


def later_kernels(values: dict) -> list[tuple]:
    """The kernels the growers type after the node search, with the signatures they call
    them with, given their arguments, node tables and frontier by parameter name
    (``values``: a ``stack`` for depth-first growth), for
    :func:`treelearn.engine.compiling.signatures_beside`, in the order a background process should
    compile them to be ready in time: the feature search's scans (:func:`_search_kernels`;
    typed inside the node search, but seconds after the grower starts); the split; in a fit
    with the threads' buffers (``tcounts``) the threaded steps, which the growers type last
    (17 s of a large fit's 63 s on an empty cache); the children's histograms, the tables
    grown and a fractional split's retry."""
    from ..._compiling import signature
    from ..builder import fields
    from ..builder import later_kernels as builder_kernels

    values = fields(values)
    values |= {"extras": values["cfg"].extras, "bufs": values["data"]}
    # first the feature search's scans (absolute error searches the rows instead)
    kernels = _search_kernels(values) if values["absolute"] is None else []
    # a node's split on one thread (the serial path's, also in a fit with threads)
    kernels += [(split_rows, values | {"tcounts": None})]
    if values["tcounts"] is not None:
        kernels += [(_process_large, values), (_children_large, values)]
    kernels.append((_children_serial, values))
    scalars = nd.SCALAR_TYPES | dict.fromkeys(
        ("f", "n_order", "n_bits", "u", "mn", "mode", "min_leaf", "min_count", "n_codes",
         "status", "cst"), "int64") | dict.fromkeys(
        ("mw", "pimp", "min_wleaf", "smooth", "lower", "upper"), "float64")
    jobs = [(kernel, signature(kernel, given, scalars)) for kernel, given in kernels]
    if "stack" in values:  # depth-first growth
        jobs += builder_kernels(values) + [(kernel, signature(kernel, values, scalars))
                                           for kernel in (_resume_node, _split_again)]
    return jobs

# -- growing a tree in this layout, from Python (the driver: treelearn.engine.fit) ----------

def grow_hist(X: np.ndarray, binner, is_cat: np.ndarray, n_levels: np.ndarray,
              ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree with the histogram splitter on a dense float32 table (categorical columns
    as level codes, NaN for missing values) with a fitted ``binner`` for its numeric
    columns; rows of zero weight must be removed."""
    binned = table_layout(X, binner, is_cat, n_levels) + (binner._table,)
    return grow_binned(binned, is_cat, n_levels, ycls, yreg, w, prm,
                       has_missing=bool(np.isnan(X).any()))


def grow_binned(binned: tuple, is_cat: np.ndarray, n_levels: np.ndarray, ycls: np.ndarray,
                yreg: np.ndarray, w: np.ndarray, prm: GrowParams, has_missing: bool,
                parallel: bool = True, scratch: Scratch | None = None) -> Tree:
    """:func:`grow_hist` from the binned rows: ``binned = (bins, layout, luts, lutoff,
    edges)``, :func:`~treelearn.engine.binning.table_layout` of the rows plus the binner's
    edge table (a forest bins once and grows each tree on its rows of the bin matrix;
    ``bins`` is partitioned in place). ``has_missing``: whether the rows hold a NaN;
    ``parallel=False`` keeps each node on one thread (trees grown side by side); ``scratch``:
    an ensemble's per-thread node tables."""
    bins, lay, luts, lutoff, edges = binned
    n = bins.shape[0]
    p = is_cat.shape[0]
    crit = prm.crit
    S = prm.n_stats
    absolute = crit == ABSOLUTE_ERROR
    is_reg = crit >= SQUARED_ERROR
    hoff, nbins, fcol, fwide = lay
    fractional = prm.missing == lvl.MISSING_C45 and has_missing
    weighted = fractional or absolute or not bool(np.all(w == 1.0))
    C0 = None if is_reg else np.ascontiguousarray(ycls, dtype=np.int32).copy()
    R0 = np.ascontiguousarray(yreg, dtype=np.float64).copy() if is_reg else None
    W0 = np.ascontiguousarray(w, dtype=np.float64).copy() if weighted else None
    B1 = np.empty_like(bins)
    bufs = RowBuffers(bins, B1, C0, None if C0 is None else np.empty_like(C0), R0,
                      None if R0 is None else np.empty_like(R0), W0,
                      None if W0 is None else np.empty_like(W0), bins.view(np.uint64),
                      B1.view(np.uint64))
    # sums of squares: for SDR's standard deviations, and for the scores that need a node's
    # variance (costs, tests, C4.5's choices)
    need_sq = is_reg and (prm.crit == SDR or prm.cost_mode != 0 or prm.selection != 0
                          or prm.average_gain or prm.threshold_penalty)
    H = (2 + int(need_sq) if is_reg else S) + int(weighted)
    btot = int(hoff[-1])
    slot_bytes = btot * H * 8
    if prm.max_leaf_nodes > 0:
        wanted = prm.max_leaf_nodes + 2
    else:
        wanted = min(prm.max_depth, 10**6) + 3
    n_slots = max(4, min(wanted, HIST_POOL_BYTES // max(slot_bytes, 1)))
    if absolute:
        n_slots = 1
    pool = np.empty((n_slots + 1, btot, H))
    pool[n_slots] = 0.0  # the clean slot of small nodes
    free = np.arange(n_slots)[::-1].copy()
    nfree = np.array([n_slots], dtype=np.int64)
    T = numba.config.NUMBA_NUM_THREADS
    large = parallel and T >= 2 and n * p >= 4 * PARALLEL_MIN_WORK
    kmax = int(max(int(nbins.max()) if p else 1, 2)) + 2
    priv = np.empty((T, btot, H)) if large and not absolute else None
    tcounts = np.empty((T, kmax + 1), dtype=np.int64) if large else None
    n_search = nbins.astype(np.int64)
    levels = np.where(is_cat, np.maximum(n_levels, 1), 1).astype(np.int64)
    cfg = Config(is_cat=is_cat.astype(np.bool_), n_search=n_search,
                 category=fit.category_search(is_cat), extras=fit.fit_extras(prm))
    costs = prm.costs if prm.costs is not None else np.ones(p)
    width = kmax
    work = fit.search_work(n, p, S, width, prm.seed, absolute, hist=True, mono=prm.monotonic)
    buffers = (np.zeros(n, dtype=np.int64), np.zeros(kmax + 1, dtype=np.int64),
               np.zeros(kmax + 1, dtype=np.int64), np.zeros(2 * kmax), np.zeros(kmax,
                                                                            dtype=np.int64))
    kid_lo = np.zeros(kmax, dtype=np.int64)
    kid_hi = np.zeros(kmax, dtype=np.int64)
    kid_slot = np.zeros(kmax, dtype=np.int64)
    need = np.zeros(kmax, dtype=np.bool_)
    params = prm.scalars(float(w.sum()))
    L = Hist(params=params, kid_lo=kid_lo, kid_hi=kid_hi, kid_slot=kid_slot, work=work,
             n_levels=levels, luts=luts, lutoff=lutoff, charge=np.int64(p), lay=lay,
             edges=edges, cfg=cfg, costs=costs, pool=pool, free=free, nfree=nfree, priv=priv,
             tcounts=tcounts, crit=np.int64(crit), buffers=buffers, need=need,
             absolute=np.zeros(0) if absolute else None, classification=not is_reg,
             weighted=weighted, sq=need_sq)
    args = {"L": L, "data": bufs}
    top = Hist.grow_best_first if prm.max_leaf_nodes > 0 else Hist.grow_depth_first
    with compiling.signatures_beside(top, args, lambda: fit.loop_frame(args, prm, True),
                           lambda v: later_kernels(v) + fit.assembly_kernels(v)):
        return fit.drive(args, prm, n, p, scratch)


__all__ = ["HIST_POOL_BYTES", "Hist", "grow_binned", "grow_hist"]
