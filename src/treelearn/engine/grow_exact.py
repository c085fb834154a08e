"""The compiled node loop of the exact splitter, for numeric data and tables alike.

One loop grows every dense tree of ``splitter="best"`` or ``"random"``: numeric features,
categorical ones (binary subsets or one branch per level), missing values in the three modes,
C4.5's fractional cases, feature costs, C4.5's average-gain rule and threshold penalty, the
statistical feature selection. Numeric data is simply a table without categorical features or
holes: the same code runs, and the per-node checks for the rest cost nothing measurable (the
tests compare it node for node with scikit-learn).

Per node (:func:`_process`): the node's statistics from its entries (list 0), its impurity and
value, the stopping rules, the best split (:func:`search_node`: scikit-learn's feature draw,
one search per feature, the winner by the criterion, by C4.5's rules or by the smallest
p-value), the partition of every list (:mod:`treelearn.engine.exact`), and the weighted
impurity decrease, which must reach ``min_impurity_decrease``.

The loop hands control back to Python after about ``iparams[P_CHUNK]`` units of work (rows
times features), with its whole state in arrays: the pending nodes (stack or heap) and the
node table. :func:`treelearn.engine.fit.grow` calls it until it reports that it is done, so a
Ctrl-C is acted on between chunks, and a fit never holds the interpreter for long.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from . import criteria as crt
from . import levels as lvl
from . import nodes as nd
from .abserr import abs_node, search_feature_abs
from .config import EPSILON, FEATURE_THRESHOLD, driver, njit, noref, tiny
from .criteria import impurity_improvement, node_impurity
from .exact import (
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
from .levels import keep_best
from .nodes import (
    grow_rows,
    grow_vector,
    heap_pop,
    heap_push,
    lacks_room,
    make_leaf,
    new_node,
    pend_node,
    pop_node,
    push,
    splittable,
    store_cats,
    store_split,
    store_values,
)
from .random import (
    draw_finish,
    draw_next,
    draw_result,
    draw_start,
    random_threshold,
)
from .selection import adjusted_log_pvalue, feature_log_pvalue
from .target_route import route_entries

COST_NONE, COST_TAN, COST_NUNEZ = 0, 1, 2
SELECT_CRITERION, SELECT_TEST = 0, 1
#: C4.5's Epsilon: a test's gain must reach the average gain less this, and its split
#: information exceed it (Quinlan's code, build.c).
C45_EPSILON = 1e-3

# Columns of the per-feature results kept for the node-level choice (C4.5's rules, tests).
F_FEAT, F_SCORE, F_GAIN, F_INFO, F_LOGP, F_OK = range(6)
N_FRES = 6


@noref
def cost_score(g, cost, cost_mode, cost_w):
    """Feature-cost adjusted score of a gain ``g``: Tan & Schlimmer's ``g**2 / cost`` or
    Nunez's ``(2**g - 1) / (cost + 1)**w``."""
    if cost_mode == COST_TAN:
        return g * g / cost
    return (2.0 ** g - 1.0) / (cost + 1.0) ** cost_w


@tiny
def _feature_search(data, f, lo, hi, cfg, st, ws, iw, nstats, wn, crit, imp, iparams,
                    fparams, rand_thr, need_real, fmap, out, absolute, afs, ajs):
    """One feature's best split at the node (exact or absolute-error search)."""
    V, I, C, R, W = data
    is_cat, n_codes = cfg[0], cfg[1]
    mode = iparams[nd.P_MODE]
    if absolute is not None:
        return search_feature_abs(V, R, W, f, lo, hi, is_cat[f], n_codes[f], imp, mode,
                                  iparams[nd.P_MULTIWAY] != 0, iparams[nd.P_MIN_LEAF],
                                  fparams[nd.P_MIN_WEIGHT_LEAF], fmap, out, afs, ajs)
    nm = tail_missing(V, f, lo, hi)
    if not is_cat[f]:
        return search_numeric(V, C, R, W, f, lo, hi, nm, st, ws, nstats, wn, crit, imp, mode,
                              iparams[nd.P_MIN_LEAF], fparams[nd.P_MIN_WEIGHT_LEAF], rand_thr,
                              need_real, out, cfg[3])
    return _levels_opt(cfg[2], V, C, R, W, f, lo, hi, nm, n_codes[f], st, ws, iw, crit, imp,
                       mode, iparams[nd.P_MULTIWAY] != 0, iparams[nd.P_MIN_LEAF],
                       fparams[nd.P_MIN_WEIGHT_LEAF], need_real, iparams[nd.P_MIN_COUNT],
                       fparams[nd.P_SMOOTH], fmap, out)


def _levels_opt(levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap,
                out):
    # Run as such only with NUMBA_DISABLE_JIT; compiled kernels use the overload below.
    return search_levels(V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                         multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap, out)


@overload(_levels_opt)
def _levels_opt_impl(levels, V, C, R, W, f, lo, hi, nm, n_codes, st, ws, iw, crit, pimp, mode,
                     multiway, min_leaf, min_wleaf, need_real, min_count, smooth, fmap, out):
    # ``levels`` (the third member of ``cfg``) is None when no column is categorical: the
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


@noref
@driver
def search_node(data, cfg, costs, lo, hi, nconst, wn, imp, crit, iparams, fparams, work,
                absolute, extras):
    """Best split of the node ``[lo, hi)``; returns ``(found, n_constants)`` with the winner
    in ``best`` (R_* slots), its level map in ``best_map`` and left statistics in
    ``best_left``.

    Features are examined in scikit-learn's order (:mod:`treelearn.engine.random`). The
    winner: the largest score (proxy, or with feature costs the cost-adjusted gain), the
    first on ties; with C4.5's average-gain rule the largest gain ratio among features whose
    gain is at least the average; with ``selection="test"`` the smallest p-value
    (:mod:`treelearn.engine.selection`), the cut then chosen by the criterion.
    ``extras`` (``cfg[3]``, :func:`treelearn.engine.fit.fit_extras`) None: none of these
    rules or costs, and their code is not compiled.
    """
    V, I, C, R, W = data
    (st, ws, iw, nstats, fmap, best_map, out, best, best_left, fres, draw, perm, const_feats,
     rng, afs, ajs) = work
    is_cat, n_codes = cfg[0], cfg[1]
    n_features = perm.shape[0]
    cost_mode = iparams[nd.P_COST_MODE]
    select_test = iparams[nd.P_SELECTION] == SELECT_TEST
    avg_gain = iparams[nd.P_AVERAGE_GAIN] != 0
    penalty = iparams[nd.P_PENALTY] != 0
    rules = avg_gain or penalty or select_test
    need_real = cost_mode != COST_NONE or rules
    random_split = iparams[nd.P_RANDOM] != 0
    S = nstats.shape[0]
    draw_start(draw, n_features, nconst)
    m = 0
    best_score = -np.inf
    found = False
    while True:
        f = draw_next(draw, perm, rng, iparams[nd.P_MAX_FEATURES])
        if f < 0:
            break
        rand_thr = np.nan
        if random_split:
            # scikit-learn's random splitter: the constant check, then one threshold drawn
            hk = hi - tail_missing(V, f, lo, hi)
            if hk == lo or V[f, hk - 1] <= V[f, lo] + FEATURE_THRESHOLD:
                draw_result(draw, perm, np.bool_(False))
                continue
            rand_thr = random_threshold(V[f, lo], V[f, hk - 1], rng)
        fcrit = crt.ENTROPY if penalty and crit == crt.GAIN_RATIO and not is_cat[f] else crit
        usable = _feature_search(data, f, lo, hi, cfg, st, ws, iw, nstats, wn, fcrit, imp,
                                 iparams, fparams, rand_thr, need_real, fmap, out, absolute,
                                 afs, ajs)
        draw_result(draw, perm, usable)
        if not usable or out[lvl.R_SCORE] == -np.inf:
            continue
        if extras is not None and rules:
            note_candidate(fres, m, f, out, penalty, crit, wn)
            if select_test:
                fres[m, F_LOGP] = feature_log_pvalue(V, C, R, W, f, lo, hi, is_cat[f],
                                                     nstats, wn, crit, st, ws, iw)
            m += 1
            continue
        sc = out[lvl.R_SCORE]
        if extras is not None and cost_mode != COST_NONE:
            sc = cost_score(max(out[lvl.R_REAL], 0.0), costs[f], cost_mode,
                            fparams[nd.P_COST_WEIGHT])
        if sc > best_score:
            best_score = sc
            found = True
            keep_best(best, out, f, best_left, st, S, best_map, fmap, n_codes[f])
    n_total = draw_finish(draw, perm, const_feats)
    if extras is None or not rules:
        return found, n_total
    # Node-level choice among the features' best tests.
    winner = _choose(fres, np.int64(m), avg_gain, select_test, wn, fparams, crit)
    if winner < 0:
        return False, n_total
    f = int(fres[winner, F_FEAT])
    # Search the winner again for its level map and left statistics (its results were
    # overwritten by the features examined after it).
    fcrit = crt.ENTROPY if penalty and crit == crt.GAIN_RATIO and not is_cat[f] else crit
    _feature_search(data, f, lo, hi, cfg, st, ws, iw, nstats, wn, fcrit, imp, iparams, fparams,
                    rand_thr, np.bool_(True), fmap, out, absolute, afs, ajs)
    keep_best(best, out, f, best_left, st, S, best_map, fmap, n_codes[f])
    return True, n_total


@tiny
def note_candidate(fres, m, f, out, penalty, crit, wn):
    """Feature ``f``'s best test (``out``) as candidate ``m`` of the node-level rules
    (:func:`_choose`; every dense layout's node search): its score, gain and split
    information, and whether it may win."""
    fres[m, F_FEAT] = f
    fres[m, F_SCORE] = out[lvl.R_REAL]
    fres[m, F_GAIN] = out[lvl.R_GAIN]
    fres[m, F_INFO] = out[lvl.R_SPLITINFO]
    fres[m, F_OK] = 1.0
    if penalty and out[lvl.R_KIND] == lvl.KIND_NUMERIC and out[lvl.R_TRIES] > 0:
        # Release 8: a threshold test pays log2(cuts tried) / cases for its choice.
        fres[m, F_GAIN] -= math.log(out[lvl.R_TRIES]) / math.log(2.0) / wn
        if fres[m, F_GAIN] <= 0.0:
            fres[m, F_OK] = 0.0
        if crit == crt.GAIN_RATIO:
            fres[m, F_SCORE] = fres[m, F_GAIN] / out[lvl.R_SPLITINFO] \
                if out[lvl.R_SPLITINFO] > 0.0 else -np.inf
        else:
            fres[m, F_SCORE] = fres[m, F_GAIN]


@noref
def _choose(fres, m, avg_gain, select_test, wn, fparams, crit):
    """The winning row of ``fres[:m]`` under C4.5's rules or the statistical selection;
    -1 when no feature qualifies."""
    if m == 0:
        return -1
    if select_test:
        best = -1
        best_p = np.inf
        for j in range(m):
            if fres[j, F_OK] > 0.0 and fres[j, F_LOGP] < best_p:
                best_p = fres[j, F_LOGP]
                best = j
        if best >= 0 and fparams[nd.P_ALPHA] < 1.0:
            n_ok = 0
            for j in range(m):
                if fres[j, F_OK] > 0.0:
                    n_ok += 1
            if adjusted_log_pvalue(best_p, np.int64(n_ok)) > math.log(fparams[nd.P_ALPHA]):
                return -1
        return best
    threshold = -np.inf
    if avg_gain:
        tot = 0.0
        n = 0
        for j in range(m):
            if fres[j, F_OK] > 0.0:
                tot += fres[j, F_GAIN]
                n += 1
        if n == 0:
            return -1
        threshold = tot / n - C45_EPSILON
    best = -1
    best_sc = -np.inf
    for j in range(m):
        if fres[j, F_OK] <= 0.0 or fres[j, F_GAIN] < threshold:
            continue
        if avg_gain and crit == crt.GAIN_RATIO and fres[j, F_INFO] <= C45_EPSILON:
            continue
        if fres[j, F_SCORE] > best_sc:
            best_sc = fres[j, F_SCORE]
            best = j
    return best


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


#: :func:`split_node`'s answer when the arena is too small (the needed size is in ``gs``).
NEED_ARENA = -1


@noref
def _leaf_children(counts, nstats, left, classification, depth, iparams):
    """Whether both children of a two-way numeric split will be leaves whatever their rows'
    order: too deep or too few rows (:func:`treelearn.engine.nodes.splittable`'s exact
    tests), or, for classification, a single class with weight (its impurity is then exactly
    zero). Conservative: a child that might split makes it False."""
    if depth + 1 >= iparams[nd.P_MAX_DEPTH]:
        return True
    for b in range(2):
        n = counts[b]
        if n < iparams[nd.P_MIN_SPLIT] or n < 2 * iparams[nd.P_MIN_LEAF]:
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
def split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit, fparams,
               work, kid_lo, kid_hi, absolute, depth, iparams, levels, extras):
    """Partition the node's entries by its best split (in ``work``); record the split in the
    table and the children's ranges in ``kid_lo``/``kid_hi``. Returns ``(k, arena_top)``:
    ``k == 0`` when the split is refused (its impurity decrease is too small; the node stays
    a leaf and the order of its entries no longer matters), :data:`NEED_ARENA` when a
    fractional split needs more room than the lists have (``gs[G_NEED]``). ``levels`` and
    ``extras`` (``cfg[2]``, ``cfg[3]``) None: no categorical split, no fractional cases and
    no M5 routing can occur, and their code is not compiled."""
    V, I, C, R, W = data
    best = work[7]
    best_map = work[5]
    best_left = work[8]
    nstats = work[3]
    afs = work[14]
    ajs = work[15]
    bmap, counts, starts, shares, cstats, tv_, ti_, tc_, tr_, tw_ = buffers
    f = int(best[lvl.R_SCORE])
    kind = int(best[lvl.R_KIND])
    k = int(best[lvl.R_NB])
    mb = int(best[lvl.R_MB])
    thr = best[lvl.R_THR] if kind == lvl.KIND_NUMERIC else -2.0
    S = nstats.shape[0]
    n_all = mark_branches(V, I, f, lo, hi, kind, thr, mb, best_map, bmap, counts, k)
    nm = tail_missing(V, f, lo, hi)
    routed = iparams[nd.P_MODE] == lvl.MISSING_M5
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
                counts, nstats, best_left, C is not None, depth, iparams) else -1
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
        wl = best[lvl.R_WLEFT]
        wr = wn - wl
        for q in range(S):
            cstats[q] = nstats[q] - best_left[q]
        imp_l = node_impurity(best_left, wl, crit)
        imp_r = node_impurity(cstats, wr, crit)
        improvement = impurity_improvement(fparams[nd.P_TOTAL_WEIGHT], wn, imp, wl, imp_l, wr,
                                           imp_r)
    else:
        dec = imp
        for b in range(k - 1, -1, -1):
            wc, ic = _child_impurity(data, kid_lo[b], kid_hi[b], crit, cstats, absolute, afs,
                                     ajs)
            dec -= (wc / wn) * ic
        improvement = (wn / fparams[nd.P_TOTAL_WEIGHT]) * dec
    if improvement + EPSILON < fparams[nd.P_MIN_IMPURITY_DECREASE]:
        return 0, arena_top - starts[k] if fractional else arena_top
    # M5′: prediction's branch comes from the node's average value, set after growth
    store_split(ti, tf, node, f, k, kind, 0 if routed else mb, nm > 0, thr, improvement)
    return k, arena_top


@tiny
def open_and_search(data, cfg, costs, tf, tv, node, lo, hi, depth, nconst, crit, iparams,
                    fparams, work, absolute):
    """Open a node and search its best split. Returns ``(found, n_constants, wn, impurity)``."""
    nstats = work[3]
    wn, imp = open_node(data, tf, tv, node, lo, hi, crit, nstats, absolute, work[14],
                        work[15])
    if not splittable(hi - lo, wn, imp, depth, iparams, fparams, EPSILON):
        return False, nconst, wn, imp
    found, n_total = search_node(data, cfg, costs, lo, hi, nconst, wn, imp, crit, iparams,
                                 fparams, work, absolute, cfg[3])
    return found, n_total, wn, imp


@njit
def _grow_lists(V, I, C, R, W, need):
    """The sorted lists with room for ``need`` entries (the arena of fractional splits)."""
    cap = max(need, 2 * V.shape[1])
    V2 = _widen(V, cap)
    I2 = _widen(I, cap)
    return V2, I2, _widen_opt(C, cap), _widen_opt(R, cap), _widen_opt(W, cap)


def _widen_opt(a, cap):  # pragma: no cover - replaced by the overload below in kernels
    return None if a is None else _widen(a, cap)


@overload(_widen_opt)
def _widen_opt_impl(a, cap):
    # Typed per argument: an absent list stays ``None`` (not Optional), so the grower keeps
    # one signature; ``None if a is None else ...`` in a kernel would make every list
    # Optional and compile the whole search chain a second time.
    if isinstance(a, types.NoneType):
        return lambda a, cap: None
    return lambda a, cap: _widen(a, cap)


@njit
def _widen(a, cap):
    out = np.empty((a.shape[0], cap), dtype=a.dtype)
    for f in range(a.shape[0]):
        for i in range(a.shape[1]):
            out[f, i] = a[f, i]
    return out


@njit
def _split(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp, crit, fparams, work,
           kid_lo, kid_hi, absolute, depth, iparams, levels, extras):
    """:func:`split_node`, growing the lists when a fractional split needs more room."""
    k, arena_top = split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn, imp,
                              crit, fparams, work, kid_lo, kid_hi, absolute, depth, iparams,
                              levels, extras)
    if extras is not None and k == NEED_ARENA:
        V, I, C, R, W = data
        data = _grow_lists(V, I, C, R, W, gs[nd.G_NEED])
        k, arena_top = split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn,
                                  imp, crit, fparams, work, kid_lo, kid_hi, absolute, depth,
                                  iparams, levels, extras)
    return data, k, arena_top


@njit
def _room(ti, tf, tv, cats, gs, extra_nodes, n_codes_max):
    """The node table and level-map store with room for ``extra_nodes`` more nodes and one
    more level map."""
    need = gs[nd.G_NODES] + extra_nodes
    if need > ti.shape[0]:
        ti = grow_rows(ti, need)
        tf = grow_rows(tf, need)
        tv = grow_rows(tv, need)
    if gs[nd.G_CATS] + n_codes_max > cats.shape[0]:
        cats = grow_vector(cats, gs[nd.G_CATS] + n_codes_max)
    return ti, tf, tv, cats


@njit
def room_depth_first(ti, tf, tv, cats, stack, gs, codes_max, kmax):
    """The node table, level-map store and stack with room for one more node and its
    ``kmax`` children (see :func:`treelearn.engine.nodes.lacks_room`)."""
    if gs[nd.G_NODES] + 1 > ti.shape[0] or gs[nd.G_CATS] + codes_max > cats.shape[0]:
        ti, tf, tv, cats = _room(ti, tf, tv, cats, gs, np.int64(1), codes_max)
    if gs[nd.G_TOP] + kmax > stack.shape[0]:
        stack = grow_rows(stack, gs[nd.G_TOP] + kmax)
    return ti, tf, tv, cats, stack


@noref
@driver
def _kids_of_exact(ti, tf, cats, stack, gs, node, k, depth, n_total, arena_top, kid_lo,
                   kid_hi, work, n_codes, lut):
    """After a node's split into ``k`` branches (0: a leaf): its level map stored and its
    children pushed (first branch on top)."""
    if k == 0:
        make_leaf(ti, tf, node)
        return
    if ti[node, nd.N_KIND] != lvl.KIND_NUMERIC:
        store_cats(cats, gs, ti, node, work[5], n_codes[ti[node, nd.N_FEATURE]], lut)
    for b in range(k - 1, -1, -1):
        push(stack, gs, kid_lo[b], kid_hi[b], depth + 1, node, b, n_total, arena_top, np.int64(-1))


@noref
@driver
def _run_depth_first(data, cfg, costs, buffers, ti, tf, tv, cats, stack, gs, crit, iparams,
                     fparams, work, kid_lo, kid_hi, absolute, lut):
    """The depth-first node loop compiled without reference counting (see
    :func:`treelearn.engine.grow_hist._run_depth_first`): returns a ``RUN_*`` code when the
    chunk's work is done, the stack is empty, or its caller must grow the tables
    (``RUN_ROOM``) or the lists for a fractional split (``RUN_ARENA``, node in ``G_P*``)."""
    n_codes = cfg[1]
    p = n_codes.shape[0]
    kmax = kid_lo.shape[0]
    codes_max = work[5].shape[0]
    while gs[nd.G_TOP] > 0:
        if gs[nd.G_BUDGET] <= 0:
            return nd.RUN_BUDGET
        if lacks_room(ti, cats, stack, gs, codes_max, kmax):
            return nd.RUN_ROOM
        node, lo, hi, depth, nconst, arena_top, _ = pop_node(ti, tf, gs, stack, p)
        found, n_total, wn, imp = open_and_search(data, cfg, costs, tf, tv, node, lo, hi,
                                                  depth, nconst, crit, iparams, fparams, work,
                                                  absolute)
        if not found:
            continue
        k, arena_top2 = split_node(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn,
                                   imp, crit, fparams, work, kid_lo, kid_hi, absolute, depth,
                                   iparams, cfg[2], cfg[3])
        if k == NEED_ARENA:
            pend_node(gs, node, lo, hi, depth, arena_top, np.int64(-1), n_total)
            return nd.RUN_ARENA
        _kids_of_exact(ti, tf, cats, stack, gs, node, k, depth, n_total, arena_top2, kid_lo,
                       kid_hi, work, n_codes, lut)
    return nd.RUN_DONE


@njit
@driver
def grow_depth_first(data, cfg, costs, buffers, ti, tf, tv, cats, stack, gs, crit, iparams,
                     fparams, work, kid_lo, kid_hi, absolute):
    """Depth-first growth (preorder numbering), until the stack is empty or the chunk's work
    is done: :func:`_run_depth_first` and what it hands back. Returns the arrays that may
    have been reallocated."""
    gs[nd.G_BUDGET] = iparams[nd.P_CHUNK]
    n_codes = cfg[1]
    kmax = kid_lo.shape[0]
    codes_max = work[5].shape[0]
    lut = np.zeros(0, dtype=np.int64)
    while True:
        status = _run_depth_first(data, cfg, costs, buffers, ti, tf, tv, cats, stack, gs, crit,
                                  iparams, fparams, work, kid_lo, kid_hi, absolute, lut)
        if status == nd.RUN_DONE or status == nd.RUN_BUDGET:
            break
        if status == nd.RUN_ROOM:
            ti, tf, tv, cats, stack = room_depth_first(ti, tf, tv, cats, stack, gs, codes_max,
                                                       kmax)
            continue
        node = gs[nd.G_PNODE]
        depth = gs[nd.G_PDEPTH]
        data, k, arena_top = _split(data, buffers, ti, tf, gs, node, gs[nd.G_PLO], gs[nd.G_PHI],
                                    gs[nd.G_PARENA], tf[node, nd.T_WEIGHT], tf[node, nd.T_IMPURITY],
                                    crit, fparams, work, kid_lo, kid_hi, absolute, depth,
                                    iparams, cfg[2], cfg[3])
        _kids_of_exact(ti, tf, cats, stack, gs, node, k, depth, gs[nd.G_PTOTAL], arena_top,
                       kid_lo, kid_hi, work, n_codes, lut)
    if gs[nd.G_TOP] == 0:
        gs[nd.G_DONE] = 1
    return data, ti, tf, tv, cats, stack


def later_kernels(values: dict) -> list[tuple]:
    """The kernels :func:`grow_depth_first` types after its node search (the split, the
    children pushed, the tables and lists grown), with the signatures it calls them with,
    given its arguments by parameter name (``values``), for
    :func:`treelearn._compiling.signatures_beside`. (Not the numeric search, as the ranked
    grower's list has it: this grower reaches it too soon, 3 s into its compilation, and the
    background process then compiled the split too late: first fits 7-13% slower.)"""
    from .._compiling import signature

    cfg = values["cfg"]
    values = values | {"n_codes": cfg[1], "levels": cfg[2], "extras": cfg[3],
                       "lut": np.zeros(0, dtype=np.int64)}
    # a table's category search: first its subset scans (lvl.subset_kernels)
    jobs = lvl.subset_kernels(values) if cfg[2] is not None else []
    return jobs + [(kernel, signature(kernel, values))
                   for kernel in (split_node, _kids_of_exact, room_depth_first, _split)]


def numeric_search(values: dict, V: np.ndarray, CRW: tuple) -> tuple:
    """:func:`search_numeric` with the signature a node search calls it with, given the
    grower's parameters by name (``values``, with ``extras``), the sorted values ``V`` and
    ``CRW = (C, R, W)`` as the search passes them (for the ranked grower's
    ``later_kernels``)."""
    from .._compiling import signature

    work = values["work"]
    given = values | dict(zip(("C", "R", "W"), CRW, strict=True)) | {
        "V": V, "st": work[0], "ws": work[1], "stats": work[3], "out": work[6],
        "need_real": np.bool_(False)}
    scalars = nd.SCALAR_TYPES | dict.fromkeys(("f", "nm", "mode", "min_leaf"), "int64") | \
        dict.fromkeys(("pimp", "min_wleaf", "rand_thr"), "float64")
    return search_numeric, signature(search_numeric, given, scalars)


@njit
@driver
def grow_best_first(data, cfg, costs, buffers, ti, tf, tv, cats, kids, heap, gs, crit, iparams,
                    fparams, work, kid_lo, kid_hi, absolute):
    """Best-first growth up to ``max_leaf_nodes`` leaves (a multiway split adds ``k - 1``),
    until the heap is empty or the chunk's work is done. A node is searched and partitioned
    when it is created (scikit-learn's frontier holds nodes with their best split); its
    children's ranges wait in ``kids`` until it is expanded."""
    budget = iparams[nd.P_CHUNK]
    limit = iparams[nd.P_MAX_LEAF_NODES]
    kmax = kid_lo.shape[0]
    codes_max = work[5].shape[0]
    if gs[nd.G_NODES] == 0:
        z = np.int64(0)  # not the literal 0: see treelearn.engine.config
        ti, tf, tv, cats = _room(ti, tf, tv, cats, gs, z + 1, codes_max)
        node = new_node(ti, tf, gs, z - 1, z, z, z, gs[nd.G_ARENA], z)
        data, cats, kids, heap = _open_best_first(
            data, cfg, costs, buffers, ti, tf, tv, cats, kids, heap, gs, node, z, gs[nd.G_ARENA], z,
            crit, iparams, fparams, work, kid_lo, kid_hi, absolute)
        gs[nd.G_LEAVES] = 1
    while gs[nd.G_HEAP] > 0 and budget > 0:
        node, size = heap_pop(heap, gs[nd.G_HEAP], tf[:, nd.T_IMPROVEMENT])
        gs[nd.G_HEAP] = size
        k = ti[node, nd.N_NB]
        if k == 0:
            continue
        if gs[nd.G_LEAVES] + k - 1 > limit:
            make_leaf(ti, tf, node)
            continue
        gs[nd.G_LEAVES] += k - 1
        off = ti[node, nd.N_KIDS]
        depth = ti[node, nd.N_DEPTH]
        ti, tf, tv, cats = _room(ti, tf, tv, cats, gs, k, codes_max * k)
        for b in range(k):
            lo = kids[off + b, 0]
            hi = kids[off + b, 1]
            budget -= (hi - lo) * cfg[1].shape[0] + 64
            child = new_node(ti, tf, gs, node, b, depth + 1, lo, hi, np.int64(0))
            data, cats, kids, heap = _open_best_first(
                data, cfg, costs, buffers, ti, tf, tv, cats, kids, heap, gs, child, lo, hi,
                depth + 1, crit, iparams, fparams, work, kid_lo, kid_hi, absolute)
    if gs[nd.G_HEAP] == 0:
        gs[nd.G_DONE] = 1
    _ = kmax
    return data, ti, tf, tv, cats, kids, heap


@njit
@driver
def _open_best_first(data, cfg, costs, buffers, ti, tf, tv, cats, kids, heap, gs, node, lo, hi,
                     depth, crit, iparams, fparams, work, kid_lo, kid_hi, absolute):
    """Open, search and split a new node of best-first growth and put it on the heap (leaves
    too, with improvement 0, as scikit-learn's frontier holds them)."""
    arena_top = gs[nd.G_ARENA]
    k = 0
    found, _, wn, imp = open_and_search(data, cfg, costs, tf, tv, node, lo, hi, depth, np.int64(0),
                                        crit, iparams, fparams, work, absolute)
    if found:
        data, k, arena_top = _split(data, buffers, ti, tf, gs, node, lo, hi, arena_top, wn,
                                    imp, crit, fparams, work, kid_lo, kid_hi, absolute, depth,
                                    iparams, cfg[2], cfg[3])
    gs[nd.G_ARENA] = arena_top
    if k == 0:
        make_leaf(ti, tf, node)
        tf[node, nd.T_IMPROVEMENT] = 0.0
    else:
        if ti[node, nd.N_KIND] != lvl.KIND_NUMERIC:
            store_cats(cats, gs, ti, node, work[5], cfg[1][ti[node, nd.N_FEATURE]],
                       np.zeros(0, dtype=np.int64))
        off = gs[nd.G_KIDS]
        kids = grow_rows(kids, off + k)
        for b in range(k):
            kids[off + b, 0] = kid_lo[b]
            kids[off + b, 1] = kid_hi[b]
        ti[node, nd.N_KIDS] = off
        gs[nd.G_KIDS] = off + k
    heap = grow_vector(heap, gs[nd.G_HEAP] + 1)
    gs[nd.G_HEAP] = heap_push(heap, gs[nd.G_HEAP], tf[:, nd.T_IMPROVEMENT], node)
    return data, cats, kids, heap
