"""The node search, once: scikit-learn's feature draw, one search per drawn feature, and the
winner by the criterion, by feature costs, by C4.5's rules or by the smallest p-value.

Every layout but the ranked one searches a node this way; what differs is how one feature
is searched (presorted lists :mod:`.layouts.presorted`, histograms :mod:`.layouts.bins`, the
bucketed non-zeros of sparse rows :mod:`.layouts.sparse`) and what the layout's search reads
(``X``: the presorted lists ``(V, I, C, R, W)``, the row buffers, the node's histogram and
the bin layout, or a node's non-zeros by feature). :func:`node_search` compiles a copy of
:func:`search_node` per layout whose globals hold the layout's steps, as
:func:`treelearn.engine.builder.layout` does for the node loops (see the notes there: a copy
shares the function's code, Numba caches it under its own name, and the compiled search
calls its layout's steps directly).
A layout's steps, as the search calls them:

* ``feature_search(X, cfg, work, f, lo, hi, wn, crit, imp, params, rand_thr,
  need_real, absolute)``: feature ``f``'s best split into ``work.out`` (the ``R_*``
  slots), its level map into ``work.fmap``; returns whether the feature is usable (not
  constant at the node);
* ``random_cut(X, f, lo, hi, rng)``: ``(usable, threshold)``, scikit-learn's random
  splitter's constant check and one threshold drawn (called only when ``params.random``);
* ``log_pvalue(X, cfg, work, f, lo, hi, wn, crit)``: the feature's log p-value of
  independence (``selection="test"`` and ``"screened"``, :mod:`treelearn.engine.selection`);
* ``keep(X, cfg, work, f)``: the feature's split kept as the best so far
  (:func:`treelearn.engine.levels.keep_best`).

The search's scratch ``work`` is a :data:`Work` record and a layout's settings ``cfg`` a
:data:`Config` record (named tuples: Numba reads a field by name at no cost, and the kernels
name what they read instead of counting positions).
"""

from __future__ import annotations

import math
import sys
from collections import namedtuple

import numpy as np

from . import criteria as crt
from . import levels as lvl
from .builder import check_steps, copy_function, unbound
from .config import driver, noref, tiny
from .random import draw_finish, draw_next, draw_result, draw_start
from .selection import adjusted_log_pvalue

COST_NONE, COST_TAN, COST_NUNEZ = 0, 1, 2
SELECT_CRITERION, SELECT_TEST, SELECT_SCREENED = 0, 1, 2
#: C4.5's Epsilon: a test's gain must reach the average gain less this, and its split
#: information exceed it (Quinlan's code, build.c).
C45_EPSILON = 1e-3

# Columns of the per-feature results kept for the node-level choice (C4.5's rules, tests);
# F_THR: the random splitter's threshold drawn for the feature, searched again if it wins.
F_FEAT, F_SCORE, F_GAIN, F_INFO, F_LOGP, F_OK, F_THR = range(7)
N_FRES = 7

#: The search's scratch (:func:`treelearn.engine.fit.search_work` makes one per fit):
#:
#: * ``st``, ``ws``, ``iw``: the level scans' workspace (:func:`treelearn.engine.levels.workspace`);
#: * ``nstats``: the node's statistics; ``fmap``/``out``: a feature's level map and best split
#:   (the ``R_*`` slots of :mod:`treelearn.engine.levels`); ``best_map``/``best``/``best_left``:
#:   the node's winner, its level map and left statistics;
#: * ``fres``: the features' results for the node-level rules (``F_*`` columns);
#: * ``draw``, ``perm``, ``const_feats``, ``rng``: the feature draw (:mod:`.random`);
#: * ``afs``, ``ajs``: the absolute-error search's scratch (:mod:`.abserr`);
#: * ``order``, ``mask``: the histogram category search's level order and subset mask (empty
#:   for the other layouts);
#: * ``mono``, ``bounds``: each feature's monotonic constraint (-1, 0, 1; zeros without
#:   constraints; for classifiers on the first class's fraction) and the open node's bounds
#:   (``T_LOWER``, ``T_UPPER`` of :mod:`.nodes`), which a split on a constrained feature
#:   must respect (:func:`treelearn.engine.nodes.monotone_ok`).
Work = namedtuple("Work", ("st", "ws", "iw", "nstats", "fmap", "best_map", "out", "best",
                           "best_left", "fres", "draw", "perm", "const_feats", "rng", "afs",
                           "ajs", "order", "mask", "mono", "bounds"))

#: A layout's settings per feature: ``is_cat``; ``n_search``, the values a feature's search
#: scans (category codes; bins for histograms); ``category``, the category search's settings
#: or None when no column is categorical; ``extras``,
#: :func:`treelearn.engine.fit.fit_extras` (None: no node-level rule, cost, fractional case
#: or M5 routing; their code is then not compiled).
Config = namedtuple("Config", ("is_cat", "n_search", "category", "extras"))


@noref
def cost_score(g, cost, cost_mode, cost_w):
    """Feature-cost adjusted score of a gain ``g``: Tan & Schlimmer's ``g**2 / cost`` or
    Nunez's ``(2**g - 1) / (cost + 1)**w``."""
    if cost_mode == COST_TAN:
        return g * g / cost
    return (2.0 ** g - 1.0) / (cost + 1.0) ** cost_w


@tiny
def note_candidate(fres, m, f, out, penalty, crit, wn):
    """Feature ``f``'s best test (``out``) as candidate ``m`` of the node-level rules
    (:func:`choose`; every dense layout's node search): its score, gain and split
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
def choose(fres, m, avg_gain, select, wn, params, crit):
    """The winning row of ``fres[:m]`` under C4.5's rules or the statistical selection
    (``select``: a ``SELECT_*`` code); -1 when no feature qualifies."""
    if m == 0:
        return -1
    if select == SELECT_SCREENED:
        # the criterion's best among the features the test finds associated at the node
        # (p below params.screen); none: the smallest p-value, as "test"
        log_screen = math.log(params.screen) if params.screen > 0.0 else -np.inf
        best = -1
        best_sc = -np.inf
        for j in range(m):
            if (fres[j, F_OK] > 0.0 and fres[j, F_LOGP] < log_screen
                    and fres[j, F_SCORE] > best_sc):
                best_sc = fres[j, F_SCORE]
                best = j
        if best >= 0:
            return best
    if select != SELECT_CRITERION:
        best = -1
        best_p = np.inf
        for j in range(m):
            if fres[j, F_OK] > 0.0 and fres[j, F_LOGP] < best_p:
                best_p = fres[j, F_LOGP]
                best = j
        if best >= 0 and params.alpha < 1.0:
            n_ok = 0
            for j in range(m):
                if fres[j, F_OK] > 0.0:
                    n_ok += 1
            if adjusted_log_pvalue(best_p, np.int64(n_ok)) > math.log(params.alpha):
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


def search_node(X, cfg, costs, lo, hi, nconst, wn, imp, crit, params, work,
                absolute, extras):
    """Best split of the node ``[lo, hi)``; returns ``(found, n_constants)`` with the winner
    in ``work.best`` (R_* slots), its level map in ``work.best_map`` and left statistics in
    ``work.best_left`` (:data:`Work`).

    Features are examined in scikit-learn's order (:mod:`treelearn.engine.random`). The
    winner: the largest score (proxy, or with feature costs the cost-adjusted gain), the
    first on ties; with C4.5's average-gain rule the largest gain ratio among features whose
    gain is at least the average; with ``selection="test"`` the smallest p-value
    (:mod:`treelearn.engine.selection`), the cut then chosen by the criterion; with
    ``"screened"`` the largest score among the features whose p-value is below
    ``params.screen``, else the smallest p-value.
    ``extras`` (:func:`treelearn.engine.fit.fit_extras`) None: none of these rules or costs,
    and their code is not compiled. It is an argument of its own, though ``cfg.extras``
    holds the same value, because Numba drops a branch on ``x is None`` at compile time only
    when ``x`` is an argument typed None, not a field of a tuple.
    """
    out = work.out
    fres = work.fres
    draw = work.draw
    perm = work.perm
    rng = work.rng
    is_cat = cfg.is_cat
    n_features = perm.shape[0]
    cost_mode = params.cost_mode
    select = params.selection
    select_test = select != SELECT_CRITERION  # p-values wanted
    avg_gain = params.average_gain != 0
    penalty = params.penalty != 0
    rules = avg_gain or penalty or select_test
    need_real = cost_mode != COST_NONE or rules
    random_split = params.random != 0
    draw_start(draw, n_features, nconst)
    m = 0
    best_score = -np.inf
    found = False
    rand_thr = np.nan
    while True:
        f = draw_next(draw, perm, rng, params.max_features)
        if f < 0:
            break
        if random_split:
            usable, rand_thr = random_cut(X, f, lo, hi, rng)
            if not usable:
                draw_result(draw, perm, np.bool_(False))
                continue
        fcrit = crt.ENTROPY if penalty and crit == crt.GAIN_RATIO and not is_cat[f] else crit
        usable = feature_search(X, cfg, work, f, lo, hi, wn, fcrit, imp, params,
                                rand_thr, need_real, absolute)
        draw_result(draw, perm, usable)
        if not usable or out[lvl.R_SCORE] == -np.inf:
            continue
        if extras is not None and rules:
            note_candidate(fres, m, f, out, penalty, crit, wn)
            fres[m, F_THR] = rand_thr
            if select_test:
                fres[m, F_LOGP] = log_pvalue(X, cfg, work, f, lo, hi, wn, crit)
            m += 1
            continue
        sc = out[lvl.R_SCORE]
        if extras is not None and cost_mode != COST_NONE:
            sc = cost_score(max(out[lvl.R_REAL], 0.0), costs[f], cost_mode,
                            params.cost_weight)
        if sc > best_score:
            best_score = sc
            found = True
            keep(X, cfg, work, f)
    n_total = draw_finish(draw, perm, work.const_feats)
    if extras is None or not rules:
        return found, n_total
    # Node-level choice among the features' best tests.
    winner = choose(fres, np.int64(m), avg_gain, select, wn, params, crit)
    if winner < 0:
        return False, n_total
    f = int(fres[winner, F_FEAT])
    # Search the winner again for its level map and left statistics (its results were
    # overwritten by the features examined after it), at its own random threshold.
    fcrit = crt.ENTROPY if penalty and crit == crt.GAIN_RATIO and not is_cat[f] else crit
    feature_search(X, cfg, work, f, lo, hi, wn, fcrit, imp, params,
                   fres[winner, F_THR], np.bool_(True), absolute)
    keep(X, cfg, work, f)
    return True, n_total


# The names the search calls a layout's steps by; node_search() binds them in each copy.
feature_search = random_cut = log_pvalue = keep = unbound

#: The steps a layout supplies (see the module notes).
STEPS = ("feature_search", "random_cut", "log_pvalue", "keep")


def node_search(name: str, **steps):
    """The node search compiled for a layout's ``steps`` (see :data:`STEPS`), named ``name``
    in the caller's module (where the background compiler finds it by name): a copy of
    :func:`search_node` whose globals hold the steps, compiled without reference counting
    and as a :func:`~treelearn.engine.config.driver`."""
    check_steps(f"node search {name}", steps, STEPS)
    module = sys._getframe(1).f_globals["__name__"]
    return noref(driver(copy_function(search_node, globals() | steps, name, module)))

