"""Driving a fit from Python: the node tables, the chunked calls of the builder, assembly.

Each layout (:mod:`.layouts`) prepares what its node steps read and allocates every work
array once, as the layout's named tuple (``L``) beside its ``data``; one driver,
:func:`drive`, adds the node tables and the frontier (stack or heap) and calls the builder's
loop (:mod:`.builder`) until it reports that it is done. Each call does at most
:data:`CHUNK_WORK` entries of work (rows x features), so control is back in Python several
times a second: a Ctrl-C stops the fit there (:func:`treelearn._interrupt.check`; nothing is
left half-built). :func:`assemble` turns the node table into a
:class:`treelearn._tree.Tree`. (The loop is called with keyword arguments: a call per chunk,
so the dispatcher's folding of names costs nothing measurable.) This module imports no
layout: the layouts import it (and read its tunables, :data:`CHUNK_WORK`, through the
module, so a test may change them).

Numeric data and tables share one engine: the same node table (:mod:`.nodes`), feature draw
(:mod:`.random`), stopping rules, and search of a per-level or per-bin summary
(:mod:`.levels`; a numeric feature is the special case of an ordered summary without
missing entries). Two dense layouts remain because each wins where the other loses
(``benchmarks/bench_realshaped.py``, 2-core machine): presorted lists scan a feature of a
small node in O(rows) without building anything (fully grown trees: exact 1.0-2.9x
scikit-learn, hist 0.7-2.7x), while histograms cost O(bins) per feature whatever the rows,
with subtraction for one child (depth 10 on 327k-350k rows: hist 4.0-6.3x scikit-learn,
exact 2.7-2.8x). Sparse input and the forests' shared ranking are layouts of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._interrupt import check as check_interrupt
from .._tree import Tree
from . import levels as lvl
from . import nodes as nd
from .abserr import scratch as abs_scratch
from .levels import workspace
from .random import N_DRAW
from .scratch import Scratch, flat_array
from .search import N_FRES, Work
from .selection import SCREEN_ALPHA

#: Work per call of the compiled loop (rows x features): ~0.1 s on one core.
CHUNK_WORK = 20_000_000


@dataclass(frozen=True)
class GrowParams:
    """Everything a grower needs besides the data (resolved by the estimator)."""

    crit: int
    n_stats: int
    n_values: int
    n_classes: int
    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    max_features: int
    max_leaf_nodes: int  # 0: depth-first
    min_impurity_decrease: float
    seed: int
    random_split: bool = False
    missing: int = 0
    multiway: bool = False
    costs: np.ndarray | None = None
    cost_mode: int = 0
    cost_weight: float = 1.0
    min_count: int = 1
    smooth: float = 0.0
    selection: int = 0
    alpha: float = 1.0
    screen: float = SCREEN_ALPHA
    average_gain: bool = False
    threshold_penalty: bool = False
    min_impurity_split: float = 0.0
    #: per feature -1, 0 or 1: the monotonic constraint on the node values the engine keeps
    #: (the mean, or for two classes the first class's fraction: a classifier's constraint
    #: on the second class's probability enters with its sign flipped); None: none
    monotonic: np.ndarray | None = None

    @property
    def criterion_only(self) -> bool:
        """Whether each node's split is simply the criterion's best: no feature costs, no
        C4.5 rules (average gain, threshold penalty), no statistical selection."""
        return (self.costs is None and self.selection == 0 and not self.average_gain
                and not self.threshold_penalty)

    def scalars(self, total_weight: float, chunk: int | None = None) -> nd.Scalars:
        """The parameters the compiled loops read (:data:`treelearn.engine.nodes.Scalars`),
        typed as they read them (``chunk``: work per call, default :data:`CHUNK_WORK` as it
        is at the call)."""
        values = dict(
            max_depth=self.max_depth, min_split=self.min_samples_split,
            min_leaf=self.min_samples_leaf, max_features=self.max_features,
            max_leaf_nodes=self.max_leaf_nodes, random=self.random_split, seed=self.seed,
            mode=self.missing, multiway=self.multiway, cost_mode=self.cost_mode,
            min_count=self.min_count, selection=self.selection,
            average_gain=self.average_gain, penalty=self.threshold_penalty,
            chunk=CHUNK_WORK if chunk is None else chunk,
            min_weight_leaf=self.min_weight_leaf,
            min_impurity_decrease=self.min_impurity_decrease, total_weight=total_weight,
            cost_weight=self.cost_weight, smooth=self.smooth, alpha=self.alpha,
            min_impurity=self.min_impurity_split, screen=self.screen)
        # one Numba type whatever Python or NumPy scalars the estimator resolved
        return nd.Scalars(**{k: np.int64(v) if k in nd.INT_SCALARS else np.float64(v)
                             for k, v in values.items()})


def search_work(n: int, p: int, S: int, width: int, seed: int, absolute: bool,
          hist: bool = False, mono: np.ndarray | None = None) -> Work:
    """The search's scratch (:data:`treelearn.engine.search.Work`) for ``n`` rows, ``p``
    features, ``S`` statistics and splits of up to ``width`` values; ``hist``: with the
    histogram category search's order and mask; ``mono``: the features' monotonic
    constraints as the engine reads them (:attr:`GrowParams.monotonic`)."""
    ws, iw, st = workspace(width, S)
    afs, ajs = abs_scratch(n if absolute else 0, width if absolute else 0)
    return Work(st=st, ws=ws, iw=iw, nstats=np.zeros(S), fmap=np.zeros(width, dtype=np.int64),
                best_map=np.zeros(width, dtype=np.int64), out=np.zeros(lvl.N_RES),
                best=np.zeros(lvl.N_RES), best_left=np.zeros(S), fres=np.zeros((p, N_FRES)),
                draw=np.zeros(N_DRAW, dtype=np.int64), perm=np.arange(p),
                const_feats=np.zeros(p, dtype=np.int64), rng=np.array([seed], dtype=np.int64),
                afs=afs, ajs=ajs, order=np.zeros(width if hist else 0, dtype=np.int64),
                mask=np.zeros((width + 63) // 64 + 1 if hist else 0, dtype=np.uint64),
                mono=np.zeros(p, dtype=np.int64) if mono is None else
                np.ascontiguousarray(mono, dtype=np.int64),
                bounds=np.array([-np.inf, np.inf]))


#: The most memory the node tables reserve before a fit (bytes; untouched pages cost nothing).
TABLE_RESERVE = 256 << 20


def table_rows(prm: GrowParams, n: int) -> int:
    """The node tables' first size for a tree on ``n`` rows: the most nodes a binary tree of
    these stopping rules can have (``2 leaves - 1``; multiway splits may need more, and the
    loop grows the tables then), within :data:`TABLE_RESERVE`.

    Why not start small and double (as before, measured 2026-11-28): a fully grown tree of a
    forest on diamonds (68k nodes) doubled its tables eleven times, and the kernel cleared
    twice the final tables' pages, 11% of a 100-tree forest's time in ``clear_page_erms``.
    ``np.empty`` reserves address space only: the pages a tree never reaches are never
    touched."""
    leaves = max(1, n // max(1, prm.min_samples_leaf))
    if prm.max_leaf_nodes > 0:
        leaves = min(leaves, prm.max_leaf_nodes)
    if prm.max_depth < 62:
        leaves = min(leaves, 1 << prm.max_depth)
    row_bytes = 8 * (nd.N_ICOLS + nd.N_FCOLS + prm.n_values + 1)
    return int(max(64, min(2 * leaves - 1, TABLE_RESERVE // row_bytes)))


#: The arrays of a node table, with their trailing shape and dtype (``tv``: ``n_values``).
_TABLE = {"ti": ((nd.N_ICOLS,), np.int64), "tf": ((nd.N_FCOLS,), np.float64),
          "tv": (None, np.float64), "cats": ((), np.int64)}


def _node_table(prm: GrowParams, n: int, scratch: Scratch | None = None) -> dict:
    """Empty node tables ``ti``/``tf``/``tv`` of :func:`table_rows` rows (grown by the loop as
    needed), the level-map store ``cats`` and the growth state ``gs`` (the arena of fractional
    entries starts after the ``n`` rows), by the names of the builder's parameters; taken
    from ``scratch`` (an ensemble's earlier tree on this thread) where it has them."""
    gs = np.zeros(nd.N_GSTATE, dtype=np.int64)
    gs[nd.G_ARENA] = n
    rows = table_rows(prm, n)
    out = {}
    for name, (tail, dtype) in _TABLE.items():
        shape = (64,) if name == "cats" else (rows, *(tail or (prm.n_values,)))
        out[name] = (np.empty(shape, dtype=dtype) if scratch is None
                     else scratch.take(name, shape, dtype))
    return out | {"gs": gs}


def _frontier(prm: GrowParams, n: int, gs: np.ndarray, kids: bool) -> dict:
    """What the growth order keeps between nodes: the depth-first stack holding the root
    (rows ``[0, n)``, no parent, no histogram slot, arena after the ``n`` rows; the growers
    over sample lists ignore the arena; its top is recorded in ``gs``), or the best-first
    heap, empty, and the children table where the layout keeps one (``kids``)."""
    if prm.max_leaf_nodes > 0:
        front = {"heap": np.empty(64, dtype=np.int64)}
        if kids:
            front = {"kids": np.empty((64, 2), dtype=np.int64)} | front
        return front
    stack = np.zeros((64, nd.N_SCOLS), dtype=np.int64)
    stack[0, nd.S_HI] = n
    stack[0, nd.S_PARENT] = -1
    stack[0, nd.S_ARENA] = n
    stack[0, nd.S_SLOT] = -1
    gs[nd.G_TOP] = 1
    return {"stack": stack}


def loop_frame(args: dict, prm: GrowParams, kids: bool) -> dict:
    """All the parameters of a layout's node loop by name: its arguments, a one-row node
    table and the frontier (for :func:`treelearn.engine.compiling.signatures_beside`)."""
    return args | _node_table(prm, 1) | _frontier(prm, 1, np.zeros(nd.N_GSTATE, np.int64), kids)


def assembly_kernels(values: dict) -> list[tuple]:
    """The kernels :func:`assemble` calls after the node loop, with the signatures it calls
    them with, given the loop's parameters by name, for
    :func:`treelearn.engine.compiling.signatures_beside` (half a second to a second of a first
    fit, on the critical path after the grower's chain)."""
    from .._compiling import signature
    from .._tree import node_depths
    from .nodes import fill_tree_arrays, tree_offsets

    ids = np.zeros(1, dtype=np.intp)
    given = {"ti": values["ti"], "tf": values["tf"],
             "cats": values["cats"], "ptr": ids,
             "cptr": ids, "child": ids, "cat": ids, "ints": np.zeros((5, 1), dtype=np.intp),
             "floats": np.zeros((3, 1)), "seen": np.zeros(1, dtype=np.bool_),
             "branch_ptr": ids, "branch_child": ids}
    return [(kernel, signature(kernel, given, {"count": "int64"}))
            for kernel in (tree_offsets, fill_tree_arrays, node_depths)]


def drive(args: dict, prm: GrowParams, n: int, p: int, scratch: Scratch | None = None) -> Tree:
    """Grow a tree with the builder (:mod:`treelearn.engine.builder`) and assemble it: the
    one chunked driver of every layout.

    ``args`` holds the layout ``L`` and its ``data``; the node tables and the frontier are
    added here (:func:`_node_table`, :func:`_frontier`). Each call of the builder's loop does
    at most a chunk of work (``params.chunk``) and returns the arrays it may have replaced
    (``data``, a table or the frontier grown), in the order of its parameters. Between calls a
    Ctrl-C stops the fit (nothing is left half-built). With ``scratch`` the node tables are
    taken from it and given back, the tree holding copies of what it keeps."""
    table = _node_table(prm, n, scratch)
    gs = table["gs"]
    front = _frontier(prm, n, gs, True)
    args = args | table | front
    loops = type(args["L"])  # the builder's loops compiled for the layout
    kernel = loops.grow_best_first if prm.max_leaf_nodes > 0 else loops.grow_depth_first
    grown = ("data", *(k for k in table if k != "gs"), *front)
    while not gs[nd.G_DONE]:
        args.update(zip(grown, kernel(**args), strict=True))
        check_interrupt()
    tree = assemble(args["ti"], args["tf"], args["tv"], args["cats"], gs, p, prm.n_classes,
                    scratch)
    if scratch is not None:
        for name in _TABLE:
            scratch.give(name, args[name])
    return tree


def category_search(is_cat: np.ndarray) -> np.bool_ | None:
    """The last member of a grower's ``cfg``: None when no column is categorical, so that the
    kernels compile no category search for a numeric table (``presorted._levels_opt``,
    ``grow_hist._summary_opt``; about a third of a first fit's compile time)."""
    return np.bool_(True) if bool(np.asarray(is_cat).any()) else None


def fit_extras(prm: GrowParams) -> np.bool_ | None:
    """The growers' ``extras`` switch (exact, ranked, histogram, Dask's level loop): None
    for a plain fit (missing values learned or imputed, and
    :attr:`GrowParams.criterion_only`), so that their kernels compile none of the rest
    (C4.5's scoring, the p-values, fractional cases, M5's routing: a fifth of a first numeric
    fit's compile time, measured in :mod:`treelearn.engine.config`); ``np.bool_(True)``
    otherwise. Kernels branch on ``extras is not None``, which Numba prunes before typing
    when ``extras`` is None."""
    plain = prm.missing in (lvl.MISSING_LEARN, lvl.MISSING_IMPUTE) and prm.criterion_only
    return None if plain else np.bool_(True)


def assemble(ti, tf, tv, cats, gs, n_features: int, n_classes: int,
             scratch: Scratch | None = None) -> Tree:
    """The :class:`Tree` of a grower's node table (:func:`treelearn.engine.nodes.tree_arrays`).
    With ``scratch`` (an ensemble's, whose tables are reused) the tree shares no array with
    the table, and its arrays are views of the scratch's (given back by
    :func:`treelearn.engine.nodes.release_tree_arrays` once the tree is packed)."""
    from .nodes import G_NODES, tree_arrays

    count = int(gs[G_NODES])
    (left, right, ptr, child, feature, threshold, impurity, n_samples, weight, cptr, cat, mb,
     seen) = tree_arrays(ti, tf, cats, count, scratch=scratch)
    value = tv[:count]
    if scratch is not None:
        value = flat_array(scratch, "tree.tv", value.shape, np.float64)
        value[:] = tv[:count]
    return Tree(n_features, [n_classes], left, right, feature, threshold, impurity, n_samples,
                weight, value, branch_ptr=ptr, branch_child=child, cat_ptr=cptr,
                cat_branch=cat, missing_branch=mb, missing_seen=seen, _trusted=True)


