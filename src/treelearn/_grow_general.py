"""Growing trees on tables: categorical features, missing values, multiway splits, costs.

The numeric engines (:mod:`treelearn._builder`, :mod:`treelearn._grow_hist`) keep every node's
rows as one range of presorted or binned arrays, which is what makes them fast, and which a
multiway split or a C4.5 fractional case (one row in several children with parts of its
weight) does not fit. Trees that need either, or categorical features, missing values at fit
or feature costs, grow here: the node queue is Python (a node is a pair of arrays, its rows and
their weights), the work per node is one compiled call (:func:`treelearn._split_general.
search_node`) over the candidate features. Per node that costs tens of microseconds more than
the numeric engines; per row it is the same linear work.

Both splitters run here through :func:`prepare_codes`: "best" codes a numeric feature by the
rank of its value (every cut between two distinct values is a candidate, thresholds are the
midpoints scikit-learn uses), "hist" by its bin (thresholds at bin edges).

Growth order and stopping rules are those of the numeric engines: depth-first in preorder
(first branch first) or, with ``max_leaf_nodes``, best-first on the weighted impurity decrease
(a multiway split adds ``k - 1`` leaves and is made only while that stays within the limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._binning import Binner
from ._builder import heap_pop, heap_push
from ._config import EPSILON, X_DTYPE
from ._criteria import ABSOLUTE_ERROR, SQUARED_ERROR, node_impurity
from ._split_exact import weighted_median
from ._split_general import (
    KIND_NUMERIC,
    abs_cost,
    node_summary,
    search_node,
    search_node_abs,
)
from ._tree import MISSING_FRACTIONAL, TREE_LEAF, TREE_UNDEFINED, Tree


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
