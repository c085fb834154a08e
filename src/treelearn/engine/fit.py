"""Driving a fit from Python: prepare the data once, run the compiled builder in chunks, assemble.

:func:`grow_exact` (presorted lists, ``"best"``/``"random"``), :func:`grow_hist` (a bin
matrix, ``"hist"``), :func:`grow_sparse` (CSR) and :func:`grow_ranked` (a shared ranking)
prepare what their layout's node steps read and allocate every work array once, as the
layout's named tuple (``L``: :mod:`.grow_exact`, :mod:`.grow_hist`, :mod:`.sparse`,
:mod:`.ranked`) beside its ``data``; one driver, :func:`_grow`, adds the node tables and the
frontier (stack or heap) and calls the builder's loop (:mod:`.builder`) until it reports that
it is done. Each call does at most :data:`CHUNK_WORK` entries of work (rows x features), so
control is back in Python several times a second: a Ctrl-C stops the fit there
(:func:`treelearn._interrupt.check`; nothing is left half-built). :func:`assemble` turns the
node table into a :class:`treelearn._tree.Tree`. (The loop is called with keyword arguments:
a call per chunk, so the dispatcher's folding of names costs nothing measurable.)

Numeric data and tables share one engine: the same node table (:mod:`.nodes`), feature draw
(:mod:`.random`), stopping rules, and search of a per-level or per-bin summary
(:mod:`.levels`; a numeric feature is the special case of an ordered summary without
missing entries). Two dense layouts remain because each wins where the other loses
(``benchmarks/bench_realshaped.py``, 2-core machine): presorted lists scan a feature of a
small node in O(rows) without building anything (fully grown trees: exact 1.0-2.9x
scikit-learn, hist 0.7-2.7x), while histograms cost O(bins) per feature whatever the rows,
with subtraction for one child (depth 10 on 327k-350k rows: hist 4.0-6.3x scikit-learn,
exact 2.7-2.8x). Sparse input and the forests' shared ranking are layouts of their own (see
:mod:`.sparse`, :mod:`.ranked`).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from .._interrupt import check as check_interrupt
from .._tree import Tree
from . import levels as lvl
from . import nodes as nd
from .abserr import scratch as abs_scratch
from .columns import in_sorted_order, presort
from .compiling import signatures_beside
from .config import PARALLEL_MIN_WORK
from .criteria import ABSOLUTE_ERROR, SDR, SQUARED_ERROR
from .grow_exact import Exact, later_kernels
from .levels import workspace
from .random import N_DRAW
from .scratch import Scratch, flat_array
from .search import N_FRES, Config, Work
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

    def arrays(self, total_weight: float, chunk: int | None = None):
        """The parameter arrays the compiled loops read (``chunk``: work per call, default
        :data:`CHUNK_WORK` as it is at the call)."""
        ip = np.zeros(nd.N_IPARAMS, dtype=np.int64)
        ip[nd.P_MAX_DEPTH] = self.max_depth
        ip[nd.P_MIN_SPLIT] = self.min_samples_split
        ip[nd.P_MIN_LEAF] = self.min_samples_leaf
        ip[nd.P_MAX_FEATURES] = self.max_features
        ip[nd.P_MAX_LEAF_NODES] = self.max_leaf_nodes
        ip[nd.P_RANDOM] = int(self.random_split)
        ip[nd.P_SEED] = self.seed
        ip[nd.P_MODE] = self.missing
        ip[nd.P_MULTIWAY] = int(self.multiway)
        ip[nd.P_COST_MODE] = self.cost_mode
        ip[nd.P_MIN_COUNT] = self.min_count
        ip[nd.P_SELECTION] = self.selection
        ip[nd.P_AVERAGE_GAIN] = int(self.average_gain)
        ip[nd.P_PENALTY] = int(self.threshold_penalty)
        ip[nd.P_CHUNK] = CHUNK_WORK if chunk is None else chunk
        fp = np.zeros(nd.N_FPARAMS)
        fp[nd.P_MIN_WEIGHT_LEAF] = self.min_weight_leaf
        fp[nd.P_MIN_IMPURITY_DECREASE] = self.min_impurity_decrease
        fp[nd.P_TOTAL_WEIGHT] = total_weight
        fp[nd.P_COST_WEIGHT] = self.cost_weight
        fp[nd.P_SMOOTH] = self.smooth
        fp[nd.P_ALPHA] = self.alpha
        fp[nd.P_MIN_IMPURITY] = self.min_impurity_split
        fp[nd.P_SCREEN] = self.screen
        return ip, fp


def fit_bytes(n: int, p: int, splitter: str, n_stats: int, weighted: bool,
              nnz: int | None = None, max_bins: int = 255) -> int:
    """Estimated bytes of the big buffers a fit of ``n`` rows and ``p`` features allocates
    (``n_stats``: classes of a classifier, 0 for a regressor; ``nnz``: stored entries of
    sparse input), for :func:`treelearn._memory.check`.

    Both scan X for NaN (a byte per cell). Exact (``"best"``/``"random"``): the transposed
    float32 copy the features are sorted from, the sorted values and row indices, the class
    codes (or targets) and the weights in each feature's order (12 + 4 or 8 + 8 bytes per
    cell), and ~100 bytes per row of work buffers. Histograms: the bin matrix and its partner
    of the partition (a byte per cell, rows padded to 8), the target and weight copies, and
    the histogram pool (:data:`~treelearn.engine.grow_hist.HIST_POOL_BYTES` at most), the
    binner's sorted subsample. Measured with tracemalloc (classification, fully grown, 2
    cores): 1M x 40 exact 622 MB (estimate 780 MB), hist 239 MB (estimate 262 MB); 300k x 10
    exact 76 MB (77 MB), hist 115 MB (99 MB). Sparse: the CSR copy and per-row
    buffers. The fractional cases of C4.5's missing values grow an arena as needed, not
    counted here.
    """
    target = 4 if n_stats else 8
    wbytes = 8 if weighted else 0
    if nnz is not None:
        return 8 * nnz + n * (24 + target + wbytes)
    if splitter == "hist":
        from .grow_hist import HIST_POOL_BYTES

        width = max(-(-p // 8) * 8, 8)
        hists = min(HIST_POOL_BYTES, 1024 * p * (max_bins + 1) * (max(n_stats, 2) + 2) * 8)
        binning = 8 * p * min(n, 200_000)  # the binner's sorted subsample
        return n * (2 * width + p) + n * (2 * target + 2 * wbytes + 16) + hists + binning
    return n * p * (13 + target + wbytes) + 100 * n


def ranked_bytes(n: int, p: int, n_stats: int, trees: int) -> int:
    """Estimated bytes of an ensemble whose trees grow with the ranked splitter on ``trees``
    threads: the presorted values and row ids the columns are ranked from, the ranks and the
    distinct values (16 bytes per cell at the peak), and per tree its sample list and the
    sort's buffers (about 60 bytes per row for a classifier, 70 for a regressor). Measured
    (peak resident memory, 1M x 40, 4 trees on 2 threads): 450 MB; estimate 760 MB."""
    return 16 * n * p + trees * n * (60 if n_stats else 70)


def memory_alternatives(splitter: str, n: int, p: int, n_stats: int, weighted: bool) -> str:
    """What to change when a fit does not fit in memory (for the MemoryError's message)."""
    from .._memory import format_size

    if splitter == "hist":
        return ("Fit on fewer rows (a sample) or fewer features, or on a machine with more "
                "memory.")
    hist = fit_bytes(n, p, "hist", n_stats, weighted)
    rest = "fit on fewer rows (a sample) or fewer features, or on a machine with more memory."
    if hist >= fit_bytes(n, p, splitter, n_stats, weighted):
        return rest[0].upper() + rest[1:]
    return (f'splitter="hist" needs about {format_size(hist)} (it bins each feature into at '
            f"most max_bins values); or {rest}")


def _work(n: int, p: int, S: int, width: int, seed: int, absolute: bool,
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


def _frame(args: dict, prm: GrowParams, kids: bool) -> dict:
    """All the parameters of a layout's node loop by name: its arguments, a one-row node
    table and the frontier (for :func:`treelearn.engine.compiling.signatures_beside`)."""
    return args | _node_table(prm, 1) | _frontier(prm, 1, np.zeros(nd.N_GSTATE, np.int64), kids)


def _assembly_kernels(values: dict) -> list[tuple]:
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


def _grow(args: dict, prm: GrowParams, n: int, p: int, scratch: Scratch | None = None) -> Tree:
    """Grow a tree with the builder (:mod:`treelearn.engine.builder`) and assemble it: the
    one chunked driver of every layout.

    ``args`` holds the layout ``L`` and its ``data``; the node tables and the frontier are
    added here (:func:`_node_table`, :func:`_frontier`). Each call of the builder's loop does
    at most a chunk of work (``iparams[P_CHUNK]``) and returns the arrays it may have replaced
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


def grow_exact(X: np.ndarray, is_cat: np.ndarray, n_levels: np.ndarray, ycls: np.ndarray,
               yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree with the exact (or random) splitter on a dense float32 table (categorical
    columns as level codes, NaN for missing values); rows of zero weight must be removed.
    The presorted lists grow it, or the ranked splitter where it applies
    (:func:`ranked_applies`)."""
    sorted_ = presort(X)
    if ranked_applies(prm, is_cat, bool(np.isnan(sorted_[0][:, -1]).any())):
        from .ranked import rank_columns

        return grow_ranked(rank_columns(*sorted_), np.arange(X.shape[0], dtype=np.int32),
                           ycls, yreg, w, prm)
    return grow_presorted(sorted_, is_cat, n_levels, ycls, yreg, w, prm)


def category_search(is_cat: np.ndarray) -> np.bool_ | None:
    """The last member of a grower's ``cfg``: None when no column is categorical, so that the
    kernels compile no category search for a numeric table (``grow_exact._levels_opt``,
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
                 category=category_search(is_cat), extras=fit_extras(prm))
    costs = prm.costs if prm.costs is not None else np.ones(p)
    kmax = width + 1
    buffers = (np.zeros(n, dtype=np.int32), np.zeros(kmax + 1, dtype=np.int64),
               np.zeros(kmax + 1, dtype=np.int64), np.zeros(2 * kmax), np.zeros(S),
               np.empty(n, dtype=np.float32), np.empty(n, dtype=np.int32),
               np.empty(n if C is not None else 0, dtype=np.int32),
               np.empty(n if R is not None else 0), np.empty(n if W is not None else 0))
    work = _work(n, p, S, width, prm.seed, absolute, mono=prm.monotonic)
    kid_lo = np.zeros(kmax, dtype=np.int64)
    kid_hi = np.zeros(kmax, dtype=np.int64)
    # A cell of a table (levels, C4.5's fractional cases) costs ~10x a numeric one: smaller
    # chunks keep Ctrl-C as quick (measured: 1M-row C4.5 table, 1.9 s to stop, now 0.5 s).
    table = bool(is_cat.any()) or fractional
    ip, fp = prm.arrays(float(w.sum()), CHUNK_WORK // 8 if table else None)
    L = Exact(iparams=ip, kid_lo=kid_lo, kid_hi=kid_hi, kid_slot=np.zeros(kmax, np.int64),
              work=work, n_levels=n_codes, luts=np.zeros(0, np.int64),
              lutoff=np.zeros(p + 1, np.int64), charge=np.int64(p), cfg=cfg, costs=costs,
              buffers=buffers, crit=np.int64(crit), fparams=fp,
              absolute=np.zeros(0) if absolute else None)
    args = {"L": L, "data": data}
    # the late kernels are derived for depth-first growth only
    beside = (nullcontext() if prm.max_leaf_nodes > 0 else
              signatures_beside(Exact.grow_depth_first, args, lambda: _frame(args, prm, False),
                                lambda v: later_kernels(v) + _assembly_kernels(v)))
    with beside:
        return _grow(args, prm, n, p, scratch)


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


def grow_hist(X: np.ndarray, binner, is_cat: np.ndarray, n_levels: np.ndarray,
              ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree with the histogram splitter on a dense float32 table (categorical columns
    as level codes, NaN for missing values) with a fitted ``binner`` for its numeric
    columns; rows of zero weight must be removed."""
    from .binning import table_layout

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
    import numba

    from .grow_hist import HIST_POOL_BYTES, Hist
    from .grow_hist import later_kernels as later_hist_kernels
    from .hist import RowBuffers

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
                 category=category_search(is_cat), extras=fit_extras(prm))
    costs = prm.costs if prm.costs is not None else np.ones(p)
    width = kmax
    work = _work(n, p, S, width, prm.seed, absolute, hist=True, mono=prm.monotonic)
    buffers = (np.zeros(n, dtype=np.int64), np.zeros(kmax + 1, dtype=np.int64),
               np.zeros(kmax + 1, dtype=np.int64), np.zeros(2 * kmax), np.zeros(kmax,
                                                                            dtype=np.int64))
    kid_lo = np.zeros(kmax, dtype=np.int64)
    kid_hi = np.zeros(kmax, dtype=np.int64)
    kid_slot = np.zeros(kmax, dtype=np.int64)
    need = np.zeros(kmax, dtype=np.bool_)
    ip, fp = prm.arrays(float(w.sum()))
    L = Hist(iparams=ip, kid_lo=kid_lo, kid_hi=kid_hi, kid_slot=kid_slot, work=work,
             n_levels=levels, luts=luts, lutoff=lutoff, charge=np.int64(p), lay=lay,
             edges=edges, cfg=cfg, costs=costs, pool=pool, free=free, nfree=nfree, priv=priv,
             tcounts=tcounts, crit=np.int64(crit), fparams=fp, buffers=buffers, need=need,
             absolute=np.zeros(0) if absolute else None, classification=not is_reg,
             weighted=weighted, sq=need_sq)
    args = {"L": L, "data": bufs}
    top = Hist.grow_best_first if prm.max_leaf_nodes > 0 else Hist.grow_depth_first
    with signatures_beside(top, args, lambda: _frame(args, prm, True),
                           lambda v: later_hist_kernels(v) + _assembly_kernels(v)):
        return _grow(args, prm, n, p, scratch)


def grow_sparse(X, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree on a CSR matrix (numeric features, no missing values; see
    :mod:`treelearn.engine.sparse`); rows of zero weight must be removed."""
    import scipy.sparse as sp

    from .sparse import Sparse

    X = sp.csr_matrix(X, dtype=np.float32)
    X.sort_indices()
    n, p = X.shape
    data = (X.indptr.astype(np.int64), X.indices.astype(np.int32),
            np.ascontiguousarray(X.data, dtype=np.float32), np.zeros(n, dtype=np.bool_),
            np.empty(n, dtype=np.int32))
    absolute = prm.crit == ABSOLUTE_ERROR
    work = _work(n, p, prm.n_stats, 4, prm.seed, absolute, mono=prm.monotonic)
    ip, fp = prm.arrays(float(w.sum()))
    L = Sparse(samples=np.arange(n, dtype=np.int32), tgt=_targets(ycls, yreg, w),
               crit=np.int64(prm.crit), fparams=fp, absolute=np.zeros(0) if absolute else None,
               **_two_way(ip, work))
    return _grow({"L": L, "data": data}, prm, n, p)


def _two_way(iparams: np.ndarray, work: Work) -> dict:
    """The builder's fields of a layout of two-way numeric splits over a sample list: room
    for two children, no level maps, a row's work charged as 8 features'."""
    kids = {name: np.zeros(2, dtype=np.int64) for name in ("kid_lo", "kid_hi", "kid_slot")}
    return kids | {"iparams": iparams, "work": work, "n_levels": np.ones(1, dtype=np.int64),
                   "luts": np.zeros(0, dtype=np.int64),
                   "lutoff": np.zeros(2, dtype=np.int64), "charge": np.int64(8)}


def _targets(ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray) -> tuple:
    """``(class codes, targets, weights)`` as the growers over a sample list read them (an
    absent one as a one-entry placeholder)."""
    return (ycls.astype(np.int32) if ycls.size else np.zeros(1, dtype=np.int32),
            yreg.astype(np.float64) if yreg.size else np.zeros(1), w.astype(np.float64))


#: The ranked splitter grows a tree whose nodes draw at most one in this many features.
RANKED_FRACTION = 3


def ranked_applies(prm: GrowParams, is_cat: np.ndarray, has_missing: bool) -> bool:
    """Whether the ranked splitter (:mod:`treelearn.engine.ranked`) grows trees of these
    settings: depth-first growth, numeric features, a criterion scanned from sums, no C4.5
    fractional cases, costs, C4.5 rules or statistical selection, and nodes that draw at most
    one in :data:`RANKED_FRACTION` features (otherwise the presorted lists, which keep every
    feature sorted, do less work)."""
    p = is_cat.shape[0]
    return (p > 0 and prm.max_leaf_nodes == 0 and not bool(is_cat.any())
            and prm.crit != ABSOLUTE_ERROR
            and not (prm.missing in (lvl.MISSING_C45, lvl.MISSING_M5) and has_missing)
            and prm.criterion_only and RANKED_FRACTION * prm.max_features <= p)


def grow_ranked(ranked: tuple, samples: np.ndarray, ycls: np.ndarray, yreg: np.ndarray,
                w: np.ndarray, prm: GrowParams, scratch: Scratch | None = None) -> Tree:
    """Grow a tree with the ranked splitter on the rows ``samples`` (increasing row ids of
    positive weight) of ``ranked = (ranks, values, offsets, nan_rank)``
    (:func:`~treelearn.engine.ranked.rank_columns`); ``ycls``/``yreg`` and ``w`` are indexed
    by row id. ``scratch``: an ensemble's per-thread arrays (node tables, sort buffers)."""
    from .ranked import Ranked, RankedData, give_back, ranked_buffers
    from .ranked import later_kernels as later_ranked_kernels

    p = ranked[0].shape[0]
    n = samples.shape[0]
    weighted = not bool(np.all(w[samples] == 1.0))
    buffers = ranked_buffers(n, prm.crit < SQUARED_ERROR, weighted, scratch)
    data = RankedData(*ranked, *buffers)
    tgt = _targets(ycls, yreg, w)
    work = _work(n, p, prm.n_stats, 4, prm.seed, False, mono=prm.monotonic)
    # a node's row costs 8 units and sorts about max_features features: chunks of ~0.1 s
    ip, fp = prm.arrays(float(tgt[2][samples].sum()),
                        max(1, 8 * CHUNK_WORK // max(4 * prm.max_features, 1)))
    L = Ranked(samples=samples, tgt=tgt, crit=np.int64(prm.crit), fparams=fp,
               extras=fit_extras(prm), **_two_way(ip, work))
    args = {"L": L, "data": data}
    # depth-first only (ranked_applies)
    with signatures_beside(Ranked.grow_depth_first, args, lambda: _frame(args, prm, False),
                           lambda v: later_ranked_kernels(v) + _assembly_kernels(v)):
        tree = _grow(args, prm, n, p, scratch)
    if scratch is not None:
        give_back(buffers, scratch)
    return tree
