"""The presorted lists' node steps (the exact splitter), for numeric data and tables alike.

The builder's loops (:mod:`treelearn.engine.builder`) with these steps (:data:`Exact`) grow
every dense tree of ``splitter="best"`` or ``"random"``: numeric features, categorical ones
(binary subsets or one branch per level), missing values in the three modes, C4.5's
fractional cases, feature costs, C4.5's average-gain rule and threshold penalty, the
statistical feature selection. Numeric data is simply a table without categorical features or
holes: the same code runs, and the per-node checks for the rest cost nothing measurable (the
tests compare it node for node with scikit-learn).

Per node (:func:`_process`): the node's statistics from its entries (list 0), its impurity and
value, the stopping rules, the best split (:func:`search_node`: :mod:`treelearn.engine.search`
with this layout's steps, scikit-learn's feature draw, one search per feature, the winner by
the criterion, by C4.5's rules or by the smallest p-value), the partition of every list
(:mod:`treelearn.engine.exact`), and the weighted impurity decrease, which must reach
``min_impurity_decrease``.

The builder hands control back to Python after about ``params.chunk`` units of work
(rows times features), with its whole state in arrays: the pending nodes (stack or heap) and
the node table. :func:`treelearn.engine.fit._grow` calls it until it reports that it is done,
so a Ctrl-C is acted on between chunks, and a fit never holds the interpreter for long.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

import numpy as np
from numba import types
from numba.extending import overload

from .. import compiling, fit
from .. import levels as lvl
from .. import nodes as nd
from ..abserr import abs_node, search_feature_abs
from ..builder import (
    NEED_ARENA,
    layout,
    never_hands_over,
    no_slot,
    no_slots,
    nothing_to_release,
)
from ..columns import in_sorted_order, presort
from ..config import EPSILON, FEATURE_THRESHOLD, if_present, njit, noref, tiny
from ..criteria import ABSOLUTE_ERROR, SQUARED_ERROR, node_impurity, two_way_decrease
from ..exact import (
    fractional_shares,
    mark_branches,
    partition_fractional,
    partition_multi,
    partition_two,
    range_stats,
    search_levels,
    search_numeric,
    tail_missing,
)
from ..fit import GrowParams
from ..levels import keep_best
from ..nodes import open_bounds, split_bounds, splittable, store_split, store_values
from ..random import (
    random_threshold,
)
from ..scratch import Scratch
from ..search import Config, node_search
from ..selection import feature_log_pvalue
from ..target_route import route_entries

if TYPE_CHECKING:  # the engine builds trees; Tree itself sits above it
    from ..._tree import Tree


@tiny
def _feature_search(data, cfg, work, f, lo, hi, wn, crit, imp, params, rand_thr,
                    need_real, absolute):
    """One feature's best split at the node (exact or absolute-error search): the
    ``feature_search`` step of :mod:`treelearn.engine.search`."""
    V, I, C, R, W = data
    st, ws, iw, nstats, fmap, out = work.st, work.ws, work.iw, work.nstats, work.fmap, work.out
    is_cat, n_codes = cfg.is_cat, cfg.n_search
    mode = params.mode
    if absolute is not None:
        return search_feature_abs(V, R, W, f, lo, hi, is_cat[f], n_codes[f], imp, mode,
                                  params.multiway != 0, params.min_leaf,
                                  params.min_weight_leaf, fmap, out, work.afs,
                                  work.ajs)
    nm = tail_missing(V, f, lo, hi)
    if not is_cat[f]:
        return search_numeric(V, C, R, W, f, lo, hi, nm, st, ws, nstats, wn, crit, imp, mode,
                              params.min_leaf, params.min_weight_leaf, rand_thr,
                              need_real, out, cfg.extras, work.mono[f], work.bounds)
    return _levels_opt(cfg.category, V, C, R, W, f, lo, hi, nm, n_codes[f], st, ws, iw, crit, imp,
                       mode, params.multiway != 0, params.min_leaf,
                       params.min_weight_leaf, need_real, params.min_count,
                       params.smooth, fmap, out)


def _levels_opt(levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap,
                out):
    # Run as such only with NUMBA_DISABLE_JIT; compiled kernels use the overload below.
    return search_levels(V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                         multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap, out)


@overload(_levels_opt)
def _levels_opt_impl(levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                     multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap, out):
    # ``levels`` (``cfg.category``) is None when no column is categorical: the
    # category search (levels.py, about a third of a first fit's compile time: 118 s -> 80 s
    # on 5,000 x 10 numbers, empty cache) is then not compiled at all. A runtime test would
    # not do: Numba types and compiles both branches of an ``if``.
    if isinstance(levels, types.NoneType):
        return (lambda levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp,
                mode, multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap,
                out: False)
    return (lambda levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
            multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap, out:
            search_levels(V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                          multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap,
                          out))



@tiny
def _random_cut(data, f, lo, hi, rng):
    """scikit-learn's random splitter: the constant check, then one threshold drawn
    (``(usable, threshold)``)."""
    V = data[0]  # data = (V, I, C, R, W), the presorted lists
    hk = hi - tail_missing(V, f, lo, hi)
    if hk == lo or V[f, hk - 1] <= V[f, lo] + FEATURE_THRESHOLD:
        return False, np.nan
    return True, random_threshold(V[f, lo], V[f, hk - 1], rng)


@tiny
def _log_pvalue(data, cfg, work, f, lo, hi, wn, crit):
    """The feature's log p-value of independence at the node, from its sorted entries."""
    V, I, C, R, W = data
    return feature_log_pvalue(V, C, R, W, f, lo, hi, cfg.is_cat[f], work.nstats, wn, crit,
                              work.st, work.ws, work.iw)


@tiny
def _keep_best(data, cfg, work, f):
    """The feature's split (``out``) kept as the node's best, with its left statistics."""
    keep_best(work.best, work.out, f, work.best_left, work.st, work.nstats.shape[0],
              work.best_map, work.fmap, cfg.n_search[f])


search_node = node_search("search_node", feature_search=_feature_search, random_cut=_random_cut,
                          log_pvalue=_log_pvalue, keep=_keep_best)


@noref
def open_node(data, tf, tv, node, lo, hi, crit, nstats, absolute, afs, ajs):
    """The node's statistics, weight, impurity and value from its entries (list 0)."""
    V, I, C, R, W = data
    wn = range_stats(nstats.reshape(1, -1), np.int64(0), C, R, W, np.int64(0), lo, hi)
    if absolute is None:
        return wn, store_values(tf, tv, node, nstats, wn, crit)
    imp, med = abs_node(R, W, np.int64(0), lo, hi, wn, afs, ajs)
    tv[node, 0] = med
    tf[node, nd.T_IMPURITY] = imp
    tf[node, nd.T_WEIGHT] = wn
    return wn, imp


@noref
def _child_impurity(data, lo, hi, crit, scratch, absolute, afs, ajs):
    """Weight and impurity of a child range (list 0)."""
    V, I, C, R, W = data
    wc = range_stats(scratch.reshape(1, -1), np.int64(0), C, R, W, np.int64(0), lo, hi)
    if absolute is not None:
        imp, _ = abs_node(R, W, np.int64(0), lo, hi, wc, afs, ajs)
        return wc, imp
    return wc, node_impurity(scratch, wc, crit)


@noref
def _leaf_children(counts, nstats, left, classification, depth, params):
    """Whether both children of a two-way numeric split will be leaves whatever their rows'
    order: too deep or too few rows (:func:`treelearn.engine.nodes.may_split`, the depth
    rule of every layout), or, for classification, a single class with weight (its impurity
    is then exactly zero). Conservative: a child that might split makes it False."""
    for b in range(2):
        if not nd.may_split(counts[b], depth + 1, params):
            continue
        if not classification:
            return False
        present = 0
        for q in range(nstats.shape[0]):
            x = left[q] if b == 0 else nstats[q] - left[q]
            if x > 0.0:
                present += 1
        if present > 1:
            return False
    return True


@noref
def split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit, params,
               work, kid_lo, kid_hi, absolute, depth, levels, extras):
    """Partition the node's entries by its best split (in ``work``); record the split in the
    table and the children's ranges in ``kid_lo``/``kid_hi``. Returns ``(k, arena_top)``:
    ``k == 0`` when the split is refused (its impurity decrease is too small; the node stays
    a leaf and the order of its entries no longer matters), :data:`NEED_ARENA` when a
    fractional split needs more room than the lists have (``gs[G_NEED]``). ``levels`` and
    ``extras`` (``cfg.category``, ``cfg.extras``) None: no categorical split, no fractional
    cases and no M5 routing can occur, and their code is not compiled."""
    V, I, C, R, W = data
    best, best_map, best_left, nstats = work.best, work.best_map, work.best_left, work.nstats
    bmap, counts, starts, shares, cstats, tv_, ti_, tc_, tr_, tw_ = buffers
    f = int(best[lvl.R_SCORE])
    kind = int(best[lvl.R_KIND])
    k = int(best[lvl.R_NB])
    mb = int(best[lvl.R_MB])
    thr = best[lvl.R_THR] if kind == lvl.KIND_NUMERIC else -2.0
    n_all = mark_branches(V, I, f, lo, hi, kind, thr, mb, best_map, bmap, counts, k)
    nm = tail_missing(V, f, lo, hi)
    routed = params.mode == lvl.MISSING_M5
    if extras is not None and routed and n_all > 0:
        # M5′: the missing entries go where their target fits (treelearn.engine.target_route)
        route_entries(I, R, W, f, lo, hi, bmap, counts, k, shares)
        n_all = 0
    fractional = n_all > 0
    starts[0] = 0
    for b in range(k):
        starts[b + 1] = starts[b] + counts[b] + n_all
    if extras is not None and fractional:
        total = starts[k]
        need = arena_top + total
        if need > V.shape[1]:
            gs[nd.G_NEED] = need
            return NEED_ARENA, arena_top
        fractional_shares(W, f, lo, hi, bmap, I, k, shares)
        partition_fractional(V, I, C, R, W, lo, hi, bmap, starts, shares, k, arena_top,
                             kid_lo)
        base = arena_top
        arena_top = need
    else:
        if k == 2:
            # The split feature's list is in place when its missing values (the tail) go
            # right: left is the prefix of values at most the threshold.
            own = f if kind == lvl.KIND_NUMERIC and (nm == 0 or mb == 1) else -1
            # Children that will be leaves read list 0 only (their statistics).
            only = 0 if kind == lvl.KIND_NUMERIC and absolute is None and _leaf_children(
                counts, nstats, best_left, C is not None, depth, params) else -1
            partition_two(V, I, C, R, W, lo, hi, bmap, tv_, ti_, tc_, tr_, tw_, own, only)
        elif levels is not None:
            partition_multi(V, I, C, R, W, lo, hi, bmap, starts, k, kid_lo, tv_, ti_, tc_,
                            tr_, tw_)
        base = lo
    for b in range(k):
        kid_lo[b] = base + starts[b]
        kid_hi[b] = base + starts[b + 1]
    # Weighted impurity decrease (scikit-learn's definition, over all children).
    # (under M5′'s routing the best cut's statistics are the known entries' only)
    if (levels is None and extras is None and absolute is None) or (
            kind == lvl.KIND_NUMERIC and not fractional and absolute is None
            and not (routed and nm > 0)):
        improvement = two_way_decrease(nstats, best_left, cstats, best[lvl.R_WLEFT], wn, imp,
                                       crit, params.total_weight)
    else:
        dec = imp
        for b in range(k - 1, -1, -1):
            wc, ic = _child_impurity(data, kid_lo[b], kid_hi[b], crit, cstats, absolute,
                                     work.afs, work.ajs)
            dec -= (wc / wn) * ic
        improvement = (wn / params.total_weight) * dec
    if improvement + EPSILON < params.min_impurity_decrease:
        return 0, arena_top - starts[k] if fractional else arena_top
    # M5′: prediction's branch comes from the node's average value, set after growth
    store_split(ti, tf, node, f, k, kind, 0 if routed else mb, nm > 0, thr, improvement)
    if k == 2 and kind == lvl.KIND_NUMERIC:
        split_bounds(ti, tf, node, work.mono[f], best_left[0], best[lvl.R_WLEFT], nstats[0], wn)
    return k, arena_top


@tiny
def open_and_search(data, cfg, costs, tf, tv, node, lo, hi, depth, nconst, crit, params, work,
                    absolute):
    """Open a node and search its best split. Returns ``(found, n_constants, wn, impurity)``."""
    wn, imp = open_node(data, tf, tv, node, lo, hi, crit, work.nstats, absolute, work.afs,
                        work.ajs)
    open_bounds(work.bounds, tf, node)
    if not splittable(hi - lo, wn, imp, depth, params, EPSILON):
        return False, nconst, wn, imp
    found, n_total = search_node(data, cfg, costs, lo, hi, nconst, wn, imp, crit, params,
                                 work, absolute, cfg.extras)
    return found, n_total, wn, imp


@njit
def _grow_lists(V, I, C, R, W, need):
    """The sorted lists with room for ``need`` entries (the arena of fractional splits)."""
    cap = max(need, 2 * V.shape[1])
    V2 = _widen(V, cap)
    I2 = _widen(I, cap)
    return V2, I2, _widen_opt(C, cap), _widen_opt(R, cap), _widen_opt(W, cap)


@njit
def _widen(a, cap):
    out = np.empty((a.shape[0], cap), dtype=a.dtype)
    for f in range(a.shape[0]):
        for i in range(a.shape[1]):
            out[f, i] = a[f, i]
    return out


_widen_opt = if_present(_widen)


@njit
def _split(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit, params, work,
           kid_lo, kid_hi, absolute, depth, levels, extras):
    """:func:`split_node`, growing the lists when a fractional split needs more room."""
    k, arena_top = split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp,
                              crit, params, work, kid_lo, kid_hi, absolute, depth,
                              levels, extras)
    if extras is not None and k == NEED_ARENA:
        V, I, C, R, W = data
        data = _grow_lists(V, I, C, R, W, gs[nd.G_NEED])
        k, arena_top = split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn,
                                  imp, crit, params, work, kid_lo, kid_hi, absolute, depth,
                                  levels, extras)
    return data, k, arena_top


# -- the presorted lists as a layout of the builder (treelearn.engine.builder) ---------------

@tiny
def _process(L, data, ti, tf, tv, gs, node, lo, hi, depth, nconst, arena_top, slot):
    """Open, search and split a node on one thread: ``(k, n_total, arena_top, slot)``."""
    found, n_total, wn, imp = open_and_search(data, L.cfg, L.costs, tf, tv, node, lo, hi,
                                              depth, nconst, L.crit, L.params,
                                              L.work, L.absolute)
    if not found:
        return np.int64(0), n_total, arena_top, slot
    k, arena_top2 = split_node(data, L.buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp,
                               L.crit, L.params, L.work, L.kid_lo, L.kid_hi, L.absolute,
                               depth, L.cfg.category, L.cfg.extras)
    return k, n_total, arena_top2, slot


@tiny
def _resume(L, data, ti, tf, tv, gs, stack, status):
    """The node the runner left (``RUN_ARENA``): its fractional split, with larger lists."""
    node = gs[nd.G_PNODE]
    depth = gs[nd.G_PDEPTH]
    data, k, arena_top = _split(data, L.buffers, ti, tf, gs, node, gs[nd.G_PLO], gs[nd.G_PHI],
                                gs[nd.G_PARENA], tf[node, nd.T_WEIGHT], tf[node, nd.T_IMPURITY],
                                L.crit, L.params, L.work, L.kid_lo, L.kid_hi, L.absolute, depth,
                                L.cfg.category, L.cfg.extras)
    return data, node, k, depth, gs[nd.G_PTOTAL], arena_top, gs[nd.G_PSLOT]


@tiny
def _step(L, data, ti, tf, tv, gs, node, lo, hi, depth, slot, arena_top):
    """Open, search and split a node of best-first growth (the lists may grow)."""
    k = np.int64(0)
    found, _, wn, imp = open_and_search(data, L.cfg, L.costs, tf, tv, node, lo, hi, depth,
                                        np.int64(0), L.crit, L.params, L.work,
                                        L.absolute)
    if found:
        data, k, arena_top = _split(data, L.buffers, ti, tf, gs, node, lo, hi, arena_top, wn,
                                    imp, L.crit, L.params, L.work, L.kid_lo, L.kid_hi,
                                    L.absolute, depth, L.cfg.category, L.cfg.extras)
    return data, k, arena_top, slot


#: The presorted lists (``data = (V, I, C, R, W)``, grown for C4.5's fractional cases) as a
#: layout: ``cfg`` a :data:`~treelearn.engine.search.Config` whose ``n_search`` and
#: ``n_levels`` are the category codes per feature.
Exact = layout("Exact", ("cfg", "costs", "buffers", "crit", "absolute"),
               process=_process, children=no_slots, children_any=no_slots,
               hand_over=never_hands_over, resume=_resume, step=_step, keep=no_slot,
               release=nothing_to_release)


def later_kernels(values: dict) -> list[tuple]:
    """The kernels the builder's depth-first growth of this layout types after its node
    search (the split, the children pushed, the tables and lists grown), with the signatures
    it calls them with, given its parameters by name (``values``), for
    :func:`treelearn.engine.compiling.signatures_beside`. (Not the numeric search, as the ranked
    grower's list has it: this grower reaches it too soon, 3 s into its compilation, and the
    background process then compiled the split too late: first fits 7-13% slower.)"""
    from ..._compiling import signature
    from ..builder import fields
    from ..builder import later_kernels as builder_kernels
    from ..nodes import SCALAR_TYPES

    values = fields(values)
    cfg = values["cfg"]
    values |= {"n_codes": cfg.n_search, "levels": cfg.category, "extras": cfg.extras}
    # a table's category search: first its subset scans (lvl.subset_kernels)
    jobs = lvl.subset_kernels(values) if cfg.category is not None else []
    return [*jobs, (split_node, signature(split_node, values, SCALAR_TYPES)),
            *builder_kernels(values), (_split, signature(_split, values, SCALAR_TYPES))]

# -- growing a tree in this layout, from Python (the driver: treelearn.engine.fit) ----------

def grow_exact(X: np.ndarray, is_cat: np.ndarray, n_levels: np.ndarray, ycls: np.ndarray,
               yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree with the exact (or random) splitter on a dense float32 table (categorical
    columns as level codes, NaN for missing values); rows of zero weight must be removed.
    Always the presorted lists: whether a tree grows on ranks instead is decided by
    :func:`treelearn.engine.build.grow`, the engine's one choice of layout."""
    return grow_presorted(presort(X), is_cat, n_levels, ycls, yreg, w, prm)


def grow_presorted(sorted_: tuple[np.ndarray, np.ndarray], is_cat: np.ndarray,
                   n_levels: np.ndarray, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray,
                   prm: GrowParams, parallel: bool = True,
                   scratch: Scratch | None = None) -> Tree:
    """:func:`grow_exact` from the presorted lists ``(sval, sidx)`` of the rows (from
    :func:`~treelearn.engine.columns.presort`, or
    :func:`~treelearn.engine.columns.subset_sorted` of a shared presort: a forest sorts
    once); ``parallel=False``: trees grown side by side, one thread each; ``scratch``: an
    ensemble's per-thread node tables."""
    sval, sidx = sorted_
    p, n = sval.shape
    crit = prm.crit
    S = prm.n_stats
    absolute = crit == ABSOLUTE_ERROR
    is_reg = crit >= SQUARED_ERROR
    fractional = prm.missing == lvl.MISSING_C45 and bool(np.isnan(sval[:, -1]).any())
    C = None if is_reg else in_sorted_order(sidx, ycls, parallel)
    R = in_sorted_order(sidx, yreg, parallel) if is_reg else None
    weighted = fractional or not bool(np.all(w == 1.0))
    W = in_sorted_order(sidx, w, parallel) if weighted else None
    data = (sval, sidx, C, R, W)
    n_codes = np.maximum(n_levels.astype(np.int64), 1)
    width = int(max(int(n_codes.max()) if p else 1, 2)) + 2
    cfg = Config(is_cat=is_cat.astype(np.bool_), n_search=n_codes,
                 category=fit.category_search(is_cat), extras=fit.fit_extras(prm))
    costs = prm.costs if prm.costs is not None else np.ones(p)
    kmax = width + 1
    buffers = (np.zeros(n, dtype=np.int32), np.zeros(kmax + 1, dtype=np.int64),
               np.zeros(kmax + 1, dtype=np.int64), np.zeros(2 * kmax), np.zeros(S),
               np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int32),
               np.empty(n if C is not None else 0, dtype=np.int32),
               np.empty(n if R is not None else 0), np.empty(n if W is not None else 0))
    work = fit.search_work(n, p, S, width, prm.seed, absolute, mono=prm.monotonic)
    kid_lo = np.zeros(kmax, dtype=np.int64)
    kid_hi = np.zeros(kmax, dtype=np.int64)
    # A cell of a table (levels, C4.5's fractional cases) costs ~10x a numeric one: smaller
    # chunks keep Ctrl-C as quick (measured: 1M-row C4.5 table, 1.9 s to stop, now 0.5 s).
    table = bool(is_cat.any()) or fractional
    params = prm.scalars(float(w.sum()), fit.CHUNK_WORK // 8 if table else None)
    L = Exact(params=params, kid_lo=kid_lo, kid_hi=kid_hi, kid_slot=np.zeros(kmax, np.int64),
              work=work, n_levels=n_codes, luts=np.zeros(0, np.int64),
              lutoff=np.zeros(p + 1, np.int64), charge=np.int64(p), cfg=cfg, costs=costs,
              buffers=buffers, crit=np.int64(crit),
              absolute=np.zeros(0) if absolute else None)
    args = {"L": L, "data": data}
    # the late kernels are derived for depth-first growth only
    beside = (nullcontext() if prm.max_leaf_nodes > 0 else
              compiling.signatures_beside(Exact.grow_depth_first, args,
                                          lambda: fit.loop_frame(args, prm, False),
                                          lambda v: later_kernels(v) + fit.assembly_kernels(v)))
    with beside:
        return fit.drive(args, prm, n, p, scratch)
