"""Many trees as one set of arrays, walked by one compiled loop over trees and rows.

A forest's prediction is a sum over trees of each row's leaf value. Calling every tree's own
``predict`` costs a Python round trip, a validation pass and an (n_samples, n_values)
temporary per tree; here all trees are laid end to end and one kernel walks the rows through
every tree in turn, adding leaf values into the output. For each tree the rows are split
between the threads (each writes its own rows: no merge), and trees are taken in order, so
every row's sum is added in the order of ``estimators_``.

Two layouts:

* **Binary numeric trees** (forests on numeric data, with or without learned missing-value
  directions) are renumbered breadth first so that the two children of a node are adjacent,
  and each node is one 16-byte record ``(child, feature * 4 + seen * 2 + nan_right,
  threshold, slot)``. A step is branch-free, ``node = child + (x > t or (x is NaN and
  nan_right))``, and a leaf's record leads back to itself (threshold NaN), so four rows walk
  a tree in lockstep until all four stand still (:func:`_walk4`). Measured on 200k rows x
  20 fully grown trees, one thread: a walk per row over separate arrays 0.66 s, four in
  lockstep 0.29 s, scikit-learn 0.47 s. ``threshold`` is float32 rounded down from the
  tree's float64 threshold: for a float32 ``x``, ``x <= t32`` exactly when ``x <= t64``, so
  routing is unchanged. ``slot`` is a leaf's row of ``leaf_value``, and ``-2 - r`` for the
  ``r``-th split node (its float64 threshold).

  The same records also *store* such trees (:meth:`PackedForest.tree` rebuilds any one,
  array for array): besides them a node keeps only its row count and, for classifiers whose
  class weights are whole numbers (a bootstrap of unweighted rows), its class counts as
  uint32, from which value, weight and impurity are recomputed exactly (the pack checks it,
  tree by tree; otherwise value, weight and impurity are kept as float64). A forest then
  holds 40 bytes per node with two classes (scikit-learn: 80), not a full tree per member
  (~130); the original node numbering is the trees' preorder (kept as an array only for
  best-first trees). What only rebuilds a tree stays in each tree's own arrays
  (:data:`StoredTree`): a forest packs each tree on the thread that grew it, and joining the
  packs then copies only what the walk reads. Measured on the diamonds-shaped table: joining
  everything took 0.25 s of a 30-tree fit's 3.0 s on one thread (most of it first touches
  of new memory), 0.12 s since; 100-tree forests on two threads fit 11-13% faster. The join
  is one compiled pass per tree (:func:`join_records`; NumPy's four masked passes took 0.3 s
  of a 100-tree forest on ggplot2's diamonds, under the GIL). Measured and not kept
  (2026-12-05): releasing each piece's records and leaf values as they are joined, to lower
  the fit's peak: the same peak resident memory (693 MB, two threads), since the pieces'
  blocks go back to the allocator, not to the system, while the joined arrays are new pages.
  Each tree is packed by one compiled pass (:func:`pack_binary`: its records, what rebuilds
  it, the check for whole class counts and for preorder numbering; the NumPy version, kept
  as the tests' twin, took 5.7 ms of a 47k-node tree under the GIL, the pass 2.3 ms within
  a forest's fit, 1.4 ms on outputs already touched). Measured and not kept (2026-12-05):
  records in depth-first sibling-pair order instead of breadth first, for reads closer to
  the trees' preorder: packing took the same time (4.8 ms a tree both ways, 30 trees, beside
  a test run), a 30-tree forest's prediction on 55k rows 0.33-0.36 s against 0.39-0.43 s
  (within that run's noise). The join's time depends on the
  process: 25 ms for 100 trees of ggplot2's diamonds after a fit whose forest was dropped,
  0.2 s while the previous forest is still held (its pages are new either way; not
  understood further).
* **Any other trees** (categorical level tables, multiway nodes) keep the trees' own arrays
  end to end and route with the same inlined :func:`treelearn._tree._branch_of` as
  prediction, pruning and export.

A tree that sends missing values down every branch (C4.5's fractional cases) has no single
leaf per row: when such a tree meets a NaN, the caller uses the general router of
:class:`treelearn._tree.Tree` instead (:meth:`PackedForest.exact`).
"""

from __future__ import annotations

import copy
import operator
import weakref
from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from .._interrupt import check as check_interrupt
from .._tree import (
    MISSING_FRACTIONAL,
    TREE_LEAF,
    TREE_UNDEFINED,
    Tree,
    _branch_of,
    split_decreases,
)
from ..engine.config import X_DTYPE, get_num_threads, njit, noref, pjit, prange, tiny
from ..engine.criteria import node_impurity

#: Row-tree walks per kernel call (about 0.1-0.3 s on one core for fully grown trees).
WALKS_PER_CALL = 8_000_000


@tiny
def _leaf_of(X, i, node, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
             missing_branch):
    """The leaf reached by row ``i`` of ``X`` from ``node`` (global ids; no fractional node on
    the way: the caller checked)."""
    while branch_ptr[node + 1] != branch_ptr[node]:
        b = _branch_of(X[i, feature[node]], node, threshold, cat_ptr, cat_branch, missing_branch)
        node = branch_child[branch_ptr[node] + b]
    return node


@tiny
def _step(X, i, node, rec_i, rec_f):
    """One level down in the binary layout (a leaf's record leads back to itself)."""
    fm = rec_i[node, 1]
    x = X[i, fm >> 2]
    return rec_i[node, 0] + ((x > rec_f[node, 2]) | ((x != x) & (fm & 1)))


@tiny
def _walk1(X, i, root, rec_i, rec_f):
    """The leaf of row ``i`` (binary layout)."""
    a = root
    while True:
        b = _step(X, i, a, rec_i, rec_f)
        if b == a:
            return a
        a = b


@tiny
def _walk4(X, i, root, rec_i, rec_f):
    """The leaves of rows ``i .. i + 3``, walked in lockstep: four independent chains of
    loads keep the memory system busy where one chain waits (2.3x faster than one row at a
    time on 200k rows x 20 fully grown trees; eight lanes gained nothing more)."""
    a0 = root
    a1 = root
    a2 = root
    a3 = root
    while True:
        b0 = _step(X, i, a0, rec_i, rec_f)
        b1 = _step(X, i + 1, a1, rec_i, rec_f)
        b2 = _step(X, i + 2, a2, rec_i, rec_f)
        b3 = _step(X, i + 3, a3, rec_i, rec_f)
        if b0 == a0 and b1 == a1 and b2 == a2 and b3 == a3:
            return a0, a1, a2, a3
        a0 = b0
        a1 = b1
        a2 = b2
        a3 = b3


#: The unused arrays of :func:`forest_walk_binary` and :func:`forest_walk`, typed as the used ones.
_NO_VALUES = np.zeros((0, 1))
_NO_NODES = np.zeros(0, dtype=np.int32)
_NO_LEAVES = np.zeros((0, 1), dtype=np.intp)


@tiny
def _add_leaf(sums, i, leaf_value, r):
    for v in range(leaf_value.shape[1]):
        sums[i, v] += leaf_value[r, v]


@pjit
def forest_walk_binary(X, roots, rec_i, rec_f, leaf_value, original, n_parts, sums, leaves):
    """Every row through the trees in order, binary layout: either ``sums[i] +=
    leaf_value[leaf row]`` (``sums`` zeroed by the caller; ``original`` and ``leaves`` empty)
    or, when ``sums`` is empty, ``leaves[i, t]``: the leaf of row ``i`` in tree ``t`` as a
    node id of that tree (``leaf_value`` and ``sums`` then :data:`_NO_VALUES`). One kernel
    for both, compiled once; the unused arrays are empty, not None, because Numba did not
    prune a None argument's branch inside the parallel loop."""
    n = X.shape[0]
    to_leaves = sums.shape[0] == 0
    per = (n + n_parts - 1) // n_parts
    for t in range(roots.shape[0]):
        root = roots[t]
        for c in prange(n_parts):
            hi = min(n, (c + 1) * per)
            i = c * per
            while i + 4 <= hi:
                l0, l1, l2, l3 = _walk4(X, i, root, rec_i, rec_f)
                if to_leaves:
                    leaves[i, t] = original[l0]
                    leaves[i + 1, t] = original[l1]
                    leaves[i + 2, t] = original[l2]
                    leaves[i + 3, t] = original[l3]
                else:
                    _add_leaf(sums, i, leaf_value, rec_i[l0, 3])
                    _add_leaf(sums, i + 1, leaf_value, rec_i[l1, 3])
                    _add_leaf(sums, i + 2, leaf_value, rec_i[l2, 3])
                    _add_leaf(sums, i + 3, leaf_value, rec_i[l3, 3])
                i += 4
            while i < hi:
                leaf = _walk1(X, i, root, rec_i, rec_f)
                if to_leaves:
                    leaves[i, t] = original[leaf]
                else:
                    _add_leaf(sums, i, leaf_value, rec_i[leaf, 3])
                i += 1


@pjit
def forest_walk(X, roots, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
                missing_branch, leaf_row, leaf_value, n_parts, sums, leaves):
    """:func:`forest_walk_binary` for any tree layout (global node ids): ``sums`` with
    ``leaf_row`` and ``leaf_value``, or ``leaves`` (the others empty)."""
    n = X.shape[0]
    to_leaves = sums.shape[0] == 0
    per = (n + n_parts - 1) // n_parts
    for t in range(roots.shape[0]):
        root = roots[t]
        for c in prange(n_parts):
            for i in range(c * per, min(n, (c + 1) * per)):
                leaf = _leaf_of(X, i, root, feature, threshold, branch_ptr, branch_child,
                                cat_ptr, cat_branch, missing_branch)
                if to_leaves:
                    leaves[i, t] = leaf - root
                else:
                    _add_leaf(sums, i, leaf_value, leaf_row[leaf])


@noref
def binary_order(left, right, start, out_new, order):
    """Renumber one binary tree (local ids, ``left == -1`` at leaves) so that siblings are
    adjacent: breadth first, the root first, then each internal node's two children as a
    pair. ``out_new[old] = start + new``, ``order[new] = old`` (the queue)."""
    order[0] = 0
    out_new[0] = start
    head = 0
    tail = 1
    while head < tail:
        old = order[head]
        head += 1
        if left[old] != TREE_LEAF:
            order[tail] = left[old]
            out_new[left[old]] = start + tail
            order[tail + 1] = right[old]
            out_new[right[old]] = start + tail + 1
            tail += 2


@tiny
def round_down_f32(t):
    """The largest float32 at or below the float64 ``t``: ``x <= t`` and ``x <= result`` agree
    for every float32 ``x`` (beyond float32's range: +-inf, then the bound)."""
    t32 = np.float32(t)
    if np.float64(t32) > t:
        t32 = np.nextafter(t32, np.float32(-np.inf))
    return t32


#: Flags of :func:`pack_binary`'s result besides the leaf count.
#: STORABLE: no leaf claims a missing-value direction (a grower's tree: the records store it);
#: WHOLE: the class weights are whole counts that give back value and weight exactly;
#: SAME_IMPURITY: the impurities recomputed from those counts are the tree's, bit for bit;
#: PREORDER: the tree numbers its nodes in preorder (depth first, left first).
STORABLE, WHOLE, SAME_IMPURITY, PREORDER = 1, 2, 4, 8


@tiny
def _whole_counts(value, weights, imps, crit, counts, stats):
    """:data:`WHOLE` when every row of class fractions ``value`` times its ``weights`` is
    whole counts (uint32, into ``counts``) giving back value and weight exactly, with
    :data:`SAME_IMPURITY` when :func:`~treelearn.engine.criteria.node_impurity` of them gives
    back ``imps`` too; else 0."""
    same = SAME_IMPURITY
    K = value.shape[1]
    for j in range(value.shape[0]):
        w = 0.0
        for k in range(K):
            c = np.rint(value[j, k] * weights[j])
            if not (c >= 0.0 and c < 4294967296.0):
                return 0
            stats[k] = c
            w += c
        if w != weights[j] or w == 0.0:
            return 0
        for k in range(K):
            if stats[k] / w != value[j, k]:
                return 0
            counts[j, k] = np.uint32(stats[k])
        if node_impurity(stats, w, crit) != imps[j]:
            same = 0
    return WHOLE | same


# One pass per tree, compiled without allocation or a returned array (a version that
# allocated its work took 1.5 s to compile, paid by a user's first forest). It replaced
# NumPy's rounding, gathers, count checks and a preorder walk over the records: 5.7 ms of a
# 47k-node tree's packing, under the GIL, against ~1 ms here.
@noref
def pack_binary(tree, cols, start, n_leaf, n_inner, whole, crit, out):
    """Pack one tree whose every split is binary and numeric: its records ``start ...``
    (the module docstring's layout) in :func:`binary_order`, and what rebuilds it, in the
    same order.

    ``tree = (left, right, feature, threshold, missing_branch, missing_seen, branch_ptr,
    cat_ptr, n_samples, weight, value, impurity)``: the tree's arrays, ``value`` as
    (node_count, n_values). ``cols``: the columns of X its features read (empty: the
    identity). ``n_leaf``/``n_inner``: leaves and split nodes of the trees packed before it
    (the slots go on from them). ``whole``: look for whole class counts (a classifier's
    normalized values), impurities recomputed with criterion ``crit``.

    ``out = (rec, rec_f, order_all, new, order, leaves, n_samples32, thresholds, counts,
    node_value, weights, imps, stats)``: ``order_all[start + j]`` the old id of
    record ``j``; ``new``, ``order``: work of the tree's size; ``leaves[:count]`` the leaves'
    old ids in record order (their rows of ``leaf_value``); per record: ``n_samples32``,
    ``counts`` (with ``whole``), ``node_value``, ``weights``, impurity ``imps``; the split
    nodes' float64 ``thresholds`` in record order; ``stats``: work of the class count. Empty
    per-record arrays (``n_samples32`` of length 0): only the records, nothing to rebuild the
    tree from (a pack that does not store its trees).

    Returns ``(count, flags)``: the leaf count and :data:`STORABLE` | :data:`WHOLE` |
    :data:`SAME_IMPURITY` | :data:`PREORDER`; ``(-1, 0)``, nothing written, when a split is
    not binary and numeric or sends missing values down every branch."""
    (left, right, feature, threshold, missing_branch, missing_seen, branch_ptr, cat_ptr,
     n_samples, weight, value, impurity) = tree
    (rec, rec_f, order_all, new, order, leaves, n_samples32, thresholds, counts, node_value,
     weights, imps, stats) = out
    n = left.shape[0]
    storable = True
    for i in range(n):
        if left[i] == TREE_LEAF:
            if missing_seen[i] or missing_branch[i] != TREE_UNDEFINED:
                storable = False
        elif (branch_ptr[i + 1] - branch_ptr[i] != 2 or cat_ptr[i + 1] != cat_ptr[i]
              or missing_branch[i] == MISSING_FRACTIONAL):
            return -1, 0
    binary_order(left, right, start, new, order)
    mapped = cols.shape[0] > 0
    keep = n_samples32.shape[0] > 0
    nl = 0
    for j in range(n):
        old = order[j]
        g = start + j
        order_all[g] = old
        if left[old] == TREE_LEAF:
            rec[g, 0] = g
            rec[g, 1] = 0
            rec_f[g, 2] = np.float32(np.nan)
            rec[g, 3] = n_leaf + nl
            leaves[nl] = old
            nl += 1
        else:
            f = max(feature[old], 0)
            if mapped:
                f = cols[f]
            rec[g, 0] = new[left[old]]
            rec[g, 1] = f * 4 + np.int64(missing_seen[old]) * 2 + np.int64(
                missing_branch[old] == 1)
            rec_f[g, 2] = round_down_f32(threshold[old])
            rec[g, 3] = -2 - (n_inner + j - nl)
            if keep:
                thresholds[j - nl] = threshold[old]
        if keep:
            n_samples32[j] = n_samples[old]
            weights[j] = weight[old]
            imps[j] = impurity[old]
            for v in range(value.shape[1]):
                node_value[j, v] = value[old, v]
    flags = STORABLE if storable and keep else 0
    if whole and keep:
        flags |= _whole_counts(node_value, weights, imps, crit, counts, stats)
    # preorder numbering (the depth-first growers'): then no array of the original ids
    top = 0
    new[0] = 0
    k = 0
    while top >= 0:
        i = new[top]
        top -= 1
        if i != k:
            return nl, flags
        k += 1
        if left[i] != TREE_LEAF:
            new[top + 1] = right[i]
            new[top + 2] = left[i]
            top += 2
    return nl, flags | PREORDER


@noref
def join_records(src, dst, start, n_leaf, n_inner):
    """``src``, the records of a pack, to ``dst`` from record ``start``, its numbers moved on
    as the join needs: every child by ``start``, a leaf's slot by ``n_leaf`` and a split's
    ``-2 - r`` by ``n_inner`` (one pass; the NumPy version's four passes over masked columns
    took 0.3 s of a 100-tree forest's 2.5 s, all under the GIL)."""
    for g in range(src.shape[0]):
        slot = src[g, 3]
        dst[start + g, 0] = src[g, 0] + start
        dst[start + g, 1] = src[g, 1]
        dst[start + g, 2] = src[g, 2]
        dst[start + g, 3] = slot + n_leaf if slot >= 0 else slot - n_inner


# Compiled without allocation (the caller gives the stack): growing its own stack cost a
# user's first forest 2.1 s of compiling NumPy's allocation and its error messages.
@noref
def preorder_ids(rec_i, roots, out, stack):
    """``out[g]``: the preorder number (depth first, left first: the growers' and
    scikit-learn's numbering of depth-first trees) of packed node ``g`` within its tree;
    ``stack``: work of at least the largest tree's node count plus one
    (:func:`preorder_stack`)."""
    for t in range(roots.shape[0]):
        top = 0
        stack[0] = roots[t]
        k = 0
        while top >= 0:
            g = stack[top]
            top -= 1
            out[g] = k
            k += 1
            c = rec_i[g, 0]
            if c != g:
                stack[top + 1] = c + 1
                stack[top + 2] = c
                top += 2


def preorder_stack(roots: np.ndarray, total: int) -> np.ndarray:
    """The work of :func:`preorder_ids` for trees starting at ``roots`` among ``total``
    packed nodes: a depth-first walk holds at most a tree's node count plus one."""
    sizes = np.diff(np.append(np.asarray(roots, dtype=np.int64), total))
    return np.empty(int(sizes.max(initial=0)) + 2, dtype=np.int64)


@njit
def class_impurities(counts, crit, out):
    """``out[i]``: the impurity of node ``i`` from its class counts, as the growers compute
    it (:func:`treelearn.engine.criteria.node_impurity` of the weights and their sum)."""
    K = counts.shape[1]
    stats = np.empty(K)
    for i in range(counts.shape[0]):
        w = 0.0
        for k in range(K):
            stats[k] = np.float64(counts[i, k])
            w += stats[k]
        out[i] = node_impurity(stats, w, crit) if w > 0.0 else 0.0
    return out


def later_kernels() -> list[tuple]:
    """The kernels that pack a forest's grown trees (:class:`PackedForest` of binary numeric
    trees, stored) and score their importances, with the signatures they are called with, for
    :func:`treelearn.engine.compiling.beside_also`: a first forest compiles them after its first
    tree's grower (a second of its first run), while the other core could."""
    from .._compiling import signature

    ids = np.zeros(1, dtype=np.int64)
    f64 = np.zeros(1)
    rec = np.zeros((1, 4), dtype=np.int32)
    tree = (ids, ids, ids, f64, ids, np.zeros(1, dtype=np.bool_), ids, ids, ids, f64,
            np.zeros((1, 2)), f64)
    out = (rec, rec.view(np.float32), ids, ids, ids, ids, np.zeros(1, dtype=np.int32), f64,
           np.zeros((1, 2), dtype=np.uint32), np.zeros((1, 2)), f64, f64, f64)
    given = {"tree": tree, "cols": ids, "out": out, "whole": True,
             "counts": np.zeros((1, 2), dtype=np.uint32), "rec_i": rec,
             "roots": np.zeros(1, dtype=np.int32), "stack": ids, "src": rec, "dst": rec}
    scalars = dict.fromkeys(("start", "n_leaf", "n_inner", "crit"), "int64")
    # what the fit calls first; then what reading a member or apply() calls later
    return [(pack_binary, signature(pack_binary, given, scalars)),
            (split_decreases, signature(split_decreases, given | {
                "branch_ptr": ids, "branch_child": ids, "weight": f64, "impurity": f64,
                "cat_ptr": ids, "missing_branch": ids, "out": f64})),
            (join_records, signature(join_records, given, scalars)),
            (class_impurities, signature(class_impurities, given | {"out": f64}, scalars)),
            (preorder_ids, signature(preorder_ids,
                                     given | {"out": np.zeros(1, dtype=np.int32)}, scalars))]


#: What rebuilds one tree of a binary pack besides its records, in the records' order: row
#: counts (int32), the split nodes' float64 thresholds, and either class counts (uint32, with
#: the impurities only where recomputing them would not give them back exactly) or the
#: values, weights and impurities. Kept per tree: joining forests then joins a list, and the
#: arrays are only read by :meth:`PackedForest.tree`.
StoredTree = namedtuple("StoredTree", ("n_samples", "thresholds", "counts", "node_value",
                                       "weights", "impurity"))


class PackedForest:
    """The routing arrays and leaf values of ``trees`` end to end.

    Parameters
    ----------
    trees : list of Tree
        The fitted trees, all with the same value width.
    features : list of ndarray or None, optional
        Per tree, the columns of X its feature ``j`` reads (``features[t][j]``, increasing),
        for trees fitted on a subset of the columns (bagging's random subspaces). Default: the
        identity.
    normalize : bool, default=False
        Divide each leaf's values by their sum (class fractions of classifiers).
    values : list of ndarray, optional
        Per tree, the values to add for each node (node_count, n_values), instead of the
        tree's ``value`` (AdaBoost's weighted votes).
    store : bool, default=False
        Also keep what rebuilds every tree exactly (:meth:`tree`), so that the caller can drop
        the trees: possible for binary numeric trees (:attr:`stored` tells whether it was).
    crit : int, optional
        The trees' criterion code (:mod:`treelearn.engine.criteria`), for impurities
        recomputed from class counts.
    verify : bool, default=True
        With ``store``, rebuild every tree from the records and keep the trees instead where
        one differs. Trees just grown by treelearn's growers pass by construction: a forest
        skips the rebuild (a third of its packing) except in the test suite
        (``TREELEARN_CHECK_TREES=1``, as for :class:`treelearn._tree.Tree`'s invariants);
        trees from elsewhere (a model file) are always rebuilt.
    """

    def __init__(self, trees: list[Tree], features: list[np.ndarray] | None = None,
                 normalize: bool = False, values: list[np.ndarray] | None = None,
                 store: bool = False, crit: int | None = None, verify: bool = True):
        if not trees:
            raise ValueError("a packed forest needs at least one tree")
        if any(t.is_oblique for t in trees):
            raise ValueError("a packed forest routes by one feature per node; it cannot hold "
                             "trees with oblique splits.")
        counts = np.array([t.node_count for t in trees], dtype=np.int64)
        total = int(counts.sum())
        if total >= np.iinfo(np.int32).max // 2:
            raise ValueError(f"the forest has {total:,} nodes; packing holds at most 2**30")
        starts = np.zeros(len(trees) + 1, dtype=np.int64)
        starts[1:] = np.cumsum(counts)
        self.roots = starts[:-1].astype(np.int32)
        self.n_trees = len(trees)
        self.node_count = total
        self._values = values
        self.n_values = int(trees[0].value.shape[2] if values is None else values[0].shape[1])
        self.fractional = any(bool(np.any(t.missing_branch == MISSING_FRACTIONAL))
                              for t in trees)
        self._normalize = normalize
        self.stored = False
        self._features = features
        self.binary = not self.fractional and self._pack_binary(trees, starts, store, crit,
                                                                verify)
        if not self.binary:
            feats = [self._global_features(t, None if features is None else features[k])
                     for k, t in enumerate(trees)]
            self._pack_general(trees, feats, starts)

    @classmethod
    def concat(cls, pieces: list[PackedForest]) -> PackedForest | None:
        """The packed forest of the trees of ``pieces``, in order: packs of binary trees that
        store them, made one by one (a forest packs each tree on the thread that grew it),
        with the same arrays as packing all the trees at once. None when a piece is not such
        a pack (the caller packs the trees together then)."""
        if not pieces or any(not (p.binary and p.stored) for p in pieces):
            return None
        first = pieces[0]
        sizes = np.array([p.node_count for p in pieces], dtype=np.int64)
        total = int(sizes.sum())
        if total >= np.iinfo(np.int32).max // 2:
            raise ValueError(f"the forest has {total:,} nodes; packing holds at most 2**30")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        out = cls.__new__(cls)
        out.n_trees = sum(p.n_trees for p in pieces)
        out.node_count = total
        out.roots = np.concatenate([p.roots + s for p, s in zip(pieces, starts, strict=True)
                                    ]).astype(np.int32)
        out._values = None
        out.n_values = first.n_values
        out.fractional = False
        out.binary = True
        out._normalize = first._normalize
        feats = [p._features for p in pieces]
        out._features = None if all(f is None for f in feats) else [
            a for p, f in zip(pieces, feats, strict=True)
            for a in (f if f is not None else [None] * p.n_trees)]
        out.records = np.empty((total, first.records.shape[1]), dtype=first.records.dtype)
        n_leaf = n_inner = 0
        for p, start in zip(pieces, starts, strict=True):
            # the child (a leaf's: itself), a leaf's row of leaf_value, -2 - r for the r-th
            # threshold, moved on past the trees before
            join_records(p.records, out.records, np.int64(start), np.int64(n_leaf),
                         np.int64(n_inner))
            n_leaf += p.leaf_value.shape[0]  # a row per leaf
            n_inner += sum(s.thresholds.shape[0] for s in p.stored_trees)  # one per split
        out.leaf_value = np.concatenate([p.leaf_value for p in pieces])
        out.original = None if all(p.original is None for p in pieces) else np.concatenate(
            [p.original if p.original is not None else p._preorder() for p in pieces])
        out.stored = True
        out._crit = first._crit
        # what rebuilds a tree stays in each tree's own arrays: only a list is joined
        out.stored_trees = [s for p in pieces for s in p.stored_trees]
        return out

    def _leaf_values(self, k: int, tree: Tree, nodes: np.ndarray) -> np.ndarray:
        """Values of the leaves ``nodes`` of tree ``k`` (class fractions when normalizing)."""
        if self._values is not None:
            return self._values[k][nodes]
        vals = tree.value[nodes, 0, :]
        if self._normalize:
            s = vals.sum(axis=1, keepdims=True)
            s[s == 0.0] = 1.0
            vals = vals / s
        return vals

    @staticmethod
    def _global_features(tree: Tree, cols) -> np.ndarray:
        f = tree.feature
        if cols is not None:
            f = np.where(f >= 0, np.asarray(cols)[np.maximum(f, 0)], f)
        return f

    def _pack_binary(self, trees, starts, store, crit, verify) -> bool:
        """The records of ``trees`` (:func:`pack_binary`, one pass per tree) and, with
        ``store``, what rebuilds each tree (:data:`StoredTree`), where every tree then comes
        back exactly (else :attr:`stored` is False and the original ids are kept). False,
        nothing set, when a tree is not binary and numeric."""
        total = self.node_count
        rec = np.empty((total, 4), dtype=np.int32)
        rec_f = rec.view(np.float32)
        order_all = np.empty(total, dtype=np.int64)
        whole = bool(store and self._normalize and self._values is None and crit is not None)
        n_leaf = n_inner = 0
        vals = []
        parts = []
        storable = store
        preorder = True
        biggest = max(t.node_count for t in trees)
        work = np.empty((3, biggest), dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        for k, t in enumerate(trees):
            m = t.node_count
            cols = none if self._features is None else np.asarray(self._features[k],
                                                                   dtype=np.int64)
            n_in = m - (m + 1) // 2  # split nodes of a binary tree
            V = t.value.shape[2]  # the tree's own values (AdaBoost packs its votes instead)
            s = m if store else 0  # without store, the records only (AdaBoost's packs)
            part = StoredTree(np.empty(s, dtype=np.int32), np.empty(n_in if store else 0),
                              np.empty((s if whole else 0, V), dtype=np.uint32),
                              np.empty((s, V)), np.empty(s), np.empty(s))
            arrays = (t.children_left, t.children_right, t.feature, t.threshold,
                      t.missing_branch, t.missing_seen, t.branch_ptr, t.cat_ptr,
                      t.n_node_samples, t.weighted_n_node_samples, t.value.reshape(m, V),
                      t.impurity)
            nl, flags = pack_binary(arrays, cols, np.int64(starts[k]), np.int64(n_leaf),
                                    np.int64(n_inner), whole, np.int64(crit or 0),
                                    (rec, rec_f, order_all, work[0, :m], work[1, :m],
                                     work[2, :m], *part, np.empty(V)))
            if nl < 0:
                return False
            vals.append(self._leaf_values(k, t, work[2, :nl].copy()))
            n_leaf += nl
            n_inner += m - nl
            storable = storable and bool(flags & STORABLE)
            preorder = preorder and bool(flags & PREORDER)
            if flags & WHOLE:
                part = part._replace(node_value=None, weights=None)
                if flags & SAME_IMPURITY:
                    part = part._replace(impurity=None)
            else:
                part = part._replace(counts=None)
            parts.append(part)
        self.records = rec
        self.leaf_value = np.ascontiguousarray(vals[0] if len(vals) == 1 else
                                               np.concatenate(vals), dtype=np.float64)
        self.original = None if storable and preorder else order_all.astype(np.int32)
        self._drop_store()
        if storable:
            self.stored_trees = parts
            self._crit = crit
            self.stored = True
            if verify and any(self.tree(k, t.n_features, t.n_classes) != t
                              for k, t in enumerate(trees)):
                self._drop_store()
                self.original = order_all.astype(np.int32)
        return True

    # -- storing the trees in the records ------------------------------------------------------
    def _preorder(self) -> np.ndarray:
        out = np.empty(self.node_count, dtype=np.int32)
        preorder_ids(self.records, self.roots, out,
                     preorder_stack(self.roots, self.node_count))
        return out

    def _drop_store(self) -> None:
        self.stored = False
        self.stored_trees = None
        self._crit = None

    def tree(self, k: int, n_features: int, n_classes) -> Tree:
        """Tree ``k`` rebuilt from the records (:attr:`stored` must be True), with its node
        numbering, features (its own columns) and every array as it was packed."""
        a = int(self.roots[k])
        b = int(self.roots[k + 1]) if k + 1 < self.n_trees else self.node_count
        rec = self.records[a:b]
        n = b - a
        if self.original is not None:
            pre = self.original[a:b]
        else:
            pre = np.empty(self.node_count, dtype=np.int32)
            preorder_ids(self.records, self.roots[k:k + 1], pre,
                         np.empty(n + 2, dtype=np.int64))
            pre = pre[a:b]
        pre = pre.astype(np.intp)
        leaf = rec[:, 3] >= 0
        child = rec[:, 0].astype(np.intp) - a
        left = np.full(n, TREE_LEAF, dtype=np.intp)
        right = np.full(n, TREE_LEAF, dtype=np.intp)
        left[pre[~leaf]] = pre[child[~leaf]]
        right[pre[~leaf]] = pre[child[~leaf] + 1]
        fm = rec[:, 1].astype(np.intp)
        feature = np.full(n, TREE_UNDEFINED, dtype=np.intp)
        feature[pre[~leaf]] = fm[~leaf] >> 2
        if self._features is not None:
            feature[pre[~leaf]] = np.searchsorted(self._features[k], feature[pre[~leaf]])
        threshold = np.full(n, float(TREE_UNDEFINED))
        part = self.stored_trees[k]
        r = -2 - rec[~leaf, 3]  # the split nodes' slots: consecutive within a tree
        if r.size:
            threshold[pre[~leaf]] = part.thresholds[r - r.min()]
        missing = np.full(n, TREE_UNDEFINED, dtype=np.intp)
        missing[pre[~leaf]] = fm[~leaf] & 1
        seen = np.zeros(n, dtype=np.bool_)
        seen[pre[~leaf]] = (fm[~leaf] >> 1) & 1
        n_samples = np.empty(n, dtype=np.intp)
        n_samples[pre] = part.n_samples
        V = self.n_values
        value = np.empty((n, 1, V))
        weights = np.empty(n)
        impurity = np.empty(n)
        if part.counts is not None:
            c = part.counts.astype(np.float64)
            w = c.sum(axis=1)
            weights[pre] = w
            value[pre, 0, :] = c / w[:, None]
            impurity[pre] = (part.impurity if part.impurity is not None else
                             class_impurities(part.counts, self._crit, np.empty(n)))
        else:
            weights[pre] = part.weights
            value[pre, 0, :] = part.node_value
            impurity[pre] = part.impurity
        return Tree(n_features, n_classes, left, right, feature, threshold, impurity,
                    n_samples, weights, value, missing_branch=missing, missing_seen=seen,
                    _trusted=True)

    def _pack_general(self, trees, feats, starts) -> None:
        bptr, bchild, cptr, cbranch, leaf_rows, vals = [], [], [], [], [], []
        n_child = n_cat = n_leaf = 0
        for k, t in enumerate(trees):
            bptr.append(t.branch_ptr[:-1] + n_child)
            bchild.append(t.branch_child + starts[k])
            n_child += t.branch_child.shape[0]
            cptr.append(t.cat_ptr[:-1] + n_cat)
            cbranch.append(t.cat_branch)
            n_cat += t.cat_branch.shape[0]
            leaf = t.children_left == TREE_LEAF
            rows = np.full(t.node_count, -1, dtype=np.int64)
            rows[leaf] = n_leaf + np.arange(int(leaf.sum()))
            n_leaf += int(leaf.sum())
            leaf_rows.append(rows)
            vals.append(self._leaf_values(k, t, np.flatnonzero(leaf)))
        self.feature = np.concatenate(feats).astype(np.int32)
        self.threshold = np.concatenate([t.threshold for t in trees])
        self.missing_branch = np.concatenate([t.missing_branch for t in trees]).astype(np.int8)
        self.branch_ptr = np.concatenate(bptr + [np.array([n_child])]).astype(np.int32)
        self.branch_child = np.concatenate(bchild).astype(np.int32)
        self.cat_ptr = np.concatenate(cptr + [np.array([n_cat])]).astype(np.int32)
        self.cat_branch = np.concatenate(cbranch).astype(np.int32)
        self.leaf_row = np.concatenate(leaf_rows).astype(np.int32)
        self.leaf_value = np.ascontiguousarray(np.concatenate(vals), dtype=np.float64)

    def _arrays(self) -> list[np.ndarray]:
        if not self.binary:
            return [getattr(self, k) for k in (
                "roots", "feature", "threshold", "missing_branch", "branch_ptr",
                "branch_child", "cat_ptr", "cat_branch", "leaf_row", "leaf_value")]
        stored = [a for s in self.stored_trees or () for a in s]
        return [self.roots, self.records, self.original, self.leaf_value] + stored

    @property
    def nbytes(self) -> int:
        """Bytes held by the packed arrays."""
        return int(sum(a.nbytes for a in self._arrays() if a is not None))

    def _step(self) -> int:
        """Rows per kernel call: about :data:`WALKS_PER_CALL` row-tree walks, so a Ctrl-C is
        taken between calls, and enough rows that each tree's nodes, loaded into cache once
        per call, serve many rows (walking 200k rows through one tree at a time was 2.5x
        faster than blocks of 2048 rows through every tree)."""
        return max(WALKS_PER_CALL // max(self.n_trees, 1), 4096)

    def exact(self, X: np.ndarray) -> bool:
        """Whether the packed walk gives every row one leaf per tree (False when a tree with
        fractional missing-value routing meets a NaN)."""
        return not (self.fractional and bool(np.isnan(X).any()))

    def _general(self):
        return (self.roots, self.feature, self.threshold, self.branch_ptr, self.branch_child,
                self.cat_ptr, self.cat_branch, self.missing_branch)

    def sum(self, X: np.ndarray) -> np.ndarray:
        """Sum over trees of each row's leaf values, shape (n_samples, n_values) (X: dense,
        validated; :meth:`exact` must hold)."""
        X = np.ascontiguousarray(X, dtype=X_DTYPE)
        out = np.zeros((X.shape[0], self.n_values))
        parts = get_num_threads()
        step = self._step()
        for a in range(0, X.shape[0], step):  # a Ctrl-C is taken between calls
            b = min(X.shape[0], a + step)
            if self.binary:
                forest_walk_binary(X[a:b], self.roots, self.records,
                                   self.records.view(np.float32), self.leaf_value, _NO_NODES,
                                   parts, out[a:b], _NO_LEAVES)
            else:
                forest_walk(X[a:b], *self._general(), self.leaf_row, self.leaf_value, parts,
                            out[a:b], _NO_LEAVES)
            check_interrupt()
        return out

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf of every row in every tree, shape (n_samples, n_trees), node ids of each tree
        (:meth:`exact` must hold)."""
        X = np.ascontiguousarray(X, dtype=X_DTYPE)
        out = np.empty((X.shape[0], self.n_trees), dtype=np.intp)
        parts = get_num_threads()
        step = self._step()
        original = None
        if self.binary:
            original = self.original if self.original is not None else self._preorder()
        for a in range(0, X.shape[0], step):
            b = min(X.shape[0], a + step)
            if self.binary:
                forest_walk_binary(X[a:b], self.roots, self.records,
                                   self.records.view(np.float32), _NO_VALUES, original, parts,
                                   _NO_VALUES, out[a:b])
            else:
                forest_walk(X[a:b], *self._general(), self.leaf_row, _NO_VALUES, parts,
                            _NO_VALUES, out[a:b])
            check_interrupt()
        return out


class Members(Sequence):
    """An ensemble's fitted trees, rebuilt from its packed records when asked for.

    Each member is the fitted estimator it was (parameters, ``random_state``, fitted
    attributes) without its own ``tree_``: indexing gives a shallow copy with the tree
    rebuilt (:meth:`PackedForest.tree`), the same object while anything holds it. A fully
    grown forest thus holds its node arrays once, compactly, instead of a full tree per
    member; reading one member costs rebuilding its arrays (milliseconds for 70k nodes)."""

    def __init__(self, packed: PackedForest, estimators: list, dims: list | None = None):
        """``dims``: each member's ``(n_features, n_classes)``, needed for the members given
        without their ``tree_`` (a forest's fit drops each tree once it is packed)."""
        self._packed = packed
        if dims is None:
            dims = [None] * len(estimators)
        self._dims = [(e.tree_.n_features, e.tree_.n_classes) if d is None else tuple(d)
                      for e, d in zip(estimators, dims, strict=True)]
        self._shells = []
        for e in estimators:
            shell = copy.copy(e)
            shell.__dict__.pop("tree_", None)
            self._shells.append(shell)
        # the given estimators stay the members while anything else holds them (warm start)
        self._cache: weakref.WeakValueDictionary = weakref.WeakValueDictionary(
            (k, e) for k, e in enumerate(estimators) if "tree_" in vars(e))

    def __len__(self) -> int:
        return len(self._shells)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        k = operator.index(i)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"member {i} of {len(self)}")
        est = self._cache.get(k)
        if est is None:
            est = copy.copy(self._shells[k])
            est.tree_ = self._packed.tree(k, *self._dims[k])
            self._cache[k] = est
        return est

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_cache")
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        self._cache = weakref.WeakValueDictionary()

    def __repr__(self) -> str:
        return f"<{len(self)} trees stored in packed records>"
