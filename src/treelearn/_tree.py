"""The fitted tree as a struct of arrays, with scikit-learn's names and meanings.

Invariants (checked by :meth:`Tree.check`, relied on by pruning, export and persistence):

* ``node_count >= 1``; node 0 is the root; every array has ``node_count`` rows.
* A leaf has ``children_left == children_right == -1``, ``feature == -2`` and
  ``threshold == -2.0``. An internal node has two children with ``i < child < node_count``
  (children come after their parent, so the table has no cycles), and ``0 <= feature < n_features``.
* Every node except the root is the child of exactly one node.
* ``n_node_samples`` and ``weighted_n_node_samples`` of an internal node are the sums of its
  children's; both are positive.
* ``value`` has shape ``(node_count, 1, n_values)``: class fractions (each row sums to 1) for
  classifiers, like scikit-learn >= 1.4, or the predicted value (mean or median) for regressors.
* ``max_depth`` is the depth of the deepest node (the root has depth 0).

Samples go left when ``x[feature] <= threshold`` with ``x`` converted to float32 (scikit-learn's
rule, so that both libraries route every sample identically).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._config import X_DTYPE, njit, pjit, prange
from ._split_exact import sparse_value

#: Predictions for at least this many rows are spread over the threads.
PARALLEL_MIN_ROWS = 100_000

TREE_LEAF = -1
TREE_UNDEFINED = -2


@njit
def apply_dense(X, left, right, feature, threshold, out):
    """Leaf index of every row of a dense float32 ``X``."""
    for i in range(X.shape[0]):
        node = 0
        while left[node] != TREE_LEAF:
            if X[i, feature[node]] <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node


@pjit
def apply_dense_parallel(X, left, right, feature, threshold, out):
    """:func:`apply_dense` over row blocks on all threads (for large X; compiled on first use)."""
    n = X.shape[0]
    n_blocks = (n + 4095) // 4096
    for b in prange(n_blocks):
        for i in range(b * 4096, min(n, (b + 1) * 4096)):
            node = 0
            while left[node] != TREE_LEAF:
                if X[i, feature[node]] <= threshold[node]:
                    node = left[node]
                else:
                    node = right[node]
            out[i] = node


@njit
def apply_sparse(indptr, indices, data, left, right, feature, threshold, out):
    """Leaf index of every row of a CSR matrix (sorted indices, float32 data)."""
    for i in range(out.shape[0]):
        node = 0
        while left[node] != TREE_LEAF:
            if sparse_value(indptr, indices, data, i, feature[node]) <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node


@njit
def node_depths(left, right):
    """Depth of every node (parents precede children, so one forward pass suffices)."""
    depth = np.zeros(left.shape[0], dtype=np.int64)
    for i in range(left.shape[0]):
        if left[i] != TREE_LEAF:
            depth[left[i]] = depth[i] + 1
            depth[right[i]] = depth[i] + 1
    return depth


@njit
def _path_indices(leaves, left, right, depth):
    """CSR pieces of the decision path: the nodes from the root to each sample's leaf."""
    n = leaves.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        indptr[i + 1] = indptr[i] + depth[leaves[i]] + 1
    indices = np.empty(indptr[n], dtype=np.int64)
    parent = np.full(left.shape[0], -1, dtype=np.int64)
    for i in range(left.shape[0]):
        if left[i] != TREE_LEAF:
            parent[left[i]] = i
            parent[right[i]] = i
    for i in range(n):
        node = leaves[i]
        p = indptr[i + 1] - 1
        while node >= 0:
            indices[p] = node
            p -= 1
            node = parent[node]
    return indptr, indices


class Tree:
    """A fitted binary decision tree: flat arrays, one row per node (see module docstring).

    Parameters
    ----------
    n_features : int
        Number of input features.
    n_classes : ndarray of shape (1,)
        Number of classes (1 for regression), scikit-learn's convention.
    children_left, children_right, feature, threshold, impurity, n_node_samples,
    weighted_n_node_samples, value : ndarray
        The node arrays.
    """

    n_outputs = 1

    def __init__(self, n_features, n_classes, children_left, children_right, feature, threshold,
                 impurity, n_node_samples, weighted_n_node_samples, value):
        self.n_features = int(n_features)
        self.n_classes = np.asarray(n_classes, dtype=np.intp).reshape(1)
        self.children_left = np.ascontiguousarray(children_left, dtype=np.intp)
        self.children_right = np.ascontiguousarray(children_right, dtype=np.intp)
        self.feature = np.ascontiguousarray(feature, dtype=np.intp)
        self.threshold = np.ascontiguousarray(threshold, dtype=np.float64)
        self.impurity = np.ascontiguousarray(impurity, dtype=np.float64)
        self.n_node_samples = np.ascontiguousarray(n_node_samples, dtype=np.intp)
        self.weighted_n_node_samples = np.ascontiguousarray(weighted_n_node_samples,
                                                            dtype=np.float64)
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 2:
            value = value[:, None, :]
        self.value = np.ascontiguousarray(value)
        # Validated before any kernel reads the arrays: a kernel following a bad child index
        # would read out of bounds, so no Tree exists that breaks the invariants.
        self.check()
        self.max_depth = int(node_depths(self.children_left, self.children_right).max())

    # -- size ------------------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return int(self.children_left.shape[0])

    @property
    def capacity(self) -> int:
        """Same as ``node_count`` (scikit-learn compatibility)."""
        return self.node_count

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def max_n_classes(self) -> int:
        """Width of ``value`` (scikit-learn compatibility)."""
        return int(self.value.shape[2])

    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves."""
        return self.children_left == TREE_LEAF

    def node_depths(self) -> np.ndarray:
        """Depth of every node."""
        return node_depths(self.children_left, self.children_right)

    # -- prediction ------------------------------------------------------------------------------
    def _prepare(self, X):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=X_DTYPE)
            X.sort_indices()
            return X
        return np.ascontiguousarray(X, dtype=X_DTYPE)

    def apply(self, X) -> np.ndarray:
        """Index of the leaf each row of ``X`` lands in (X: array or sparse, already validated)."""
        X = self._prepare(X)
        out = np.empty(X.shape[0], dtype=np.intp)
        if sp.issparse(X):
            apply_sparse(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data,
                         self.children_left, self.children_right, self.feature, self.threshold,
                         out)
        else:
            kernel = apply_dense_parallel if X.shape[0] >= PARALLEL_MIN_ROWS else apply_dense
            kernel(X, self.children_left, self.children_right, self.feature, self.threshold, out)
        return out

    def predict(self, X) -> np.ndarray:
        """``value`` of each row's leaf, shape (n_samples, 1, n_values)."""
        return self.value[self.apply(X)]

    def decision_path(self, X) -> sp.csr_matrix:
        """Indicator matrix (n_samples, node_count): nonzero where a row passes through a node."""
        leaves = self.apply(X)
        indptr, indices = _path_indices(leaves, self.children_left, self.children_right,
                                        self.node_depths())
        data = np.ones(indices.shape[0], dtype=np.intp)
        return sp.csr_matrix((data, indices, indptr), shape=(leaves.shape[0], self.node_count))

    # -- importances -----------------------------------------------------------------------------
    def compute_feature_importances(self, normalize: bool = True) -> np.ndarray:
        """Weighted impurity decrease per feature (mean decrease in impurity).

        For each internal node: ``w * imp - w_l * imp_l - w_r * imp_r``, summed per feature,
        divided by the root's weight and, with ``normalize``, scaled to sum to one.
        """
        out = np.zeros(self.n_features)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        if internal.size:
            l = self.children_left[internal]
            r = self.children_right[internal]
            w = self.weighted_n_node_samples
            imp = self.impurity
            dec = w[internal] * imp[internal] - w[l] * imp[l] - w[r] * imp[r]
            np.add.at(out, self.feature[internal], dec)
        out /= self.weighted_n_node_samples[0]
        if normalize:
            total = out.sum()
            if total > 0.0:
                out /= total
        return out

    # -- invariants ------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ValueError naming the first broken invariant (see module docstring).

        Called by the constructor; pure NumPy, it never follows an index it has not checked.
        """
        n = self.node_count
        if n < 1:
            raise ValueError("tree has no nodes")
        arrays = {
            "children_right": self.children_right, "feature": self.feature,
            "threshold": self.threshold, "impurity": self.impurity,
            "n_node_samples": self.n_node_samples,
            "weighted_n_node_samples": self.weighted_n_node_samples, "value": self.value,
        }
        for name, a in arrays.items():
            if a.shape[0] != n:
                raise ValueError(f"tree array {name} has {a.shape[0]} rows, expected {n}")
        if self.value.ndim != 3 or self.value.shape[1] != 1:
            raise ValueError("tree value must have shape (node_count, 1, n_values)")
        if self.value.shape[2] != self.n_classes[0]:
            raise ValueError(f"tree value has {self.value.shape[2]} columns but n_classes is "
                             f"{self.n_classes[0]}")
        if not np.all(np.isfinite(self.value)):
            raise ValueError("a node value is not finite")
        left, right = self.children_left, self.children_right
        leaf = left == TREE_LEAF
        if np.any((right == TREE_LEAF) != leaf):
            raise ValueError("a node has exactly one child")
        if np.any(self.feature[leaf] != TREE_UNDEFINED):
            raise ValueError("a leaf has a split feature")
        if np.any(self.threshold[leaf] != TREE_UNDEFINED):
            raise ValueError("a leaf has a threshold")
        idx = np.arange(n)
        inner = ~leaf
        if np.any(left[inner] <= idx[inner]) or np.any(right[inner] <= idx[inner]):
            raise ValueError("a child index does not come after its parent")
        if np.any(left[inner] >= n) or np.any(right[inner] >= n):
            raise ValueError("a child index is out of range")
        f = self.feature[inner]
        if np.any(f < 0) or np.any(f >= self.n_features):
            raise ValueError("a split feature is out of range")
        if not np.all(np.isfinite(self.threshold[inner])):
            raise ValueError("a threshold is not finite")
        counts = np.bincount(np.concatenate([left[inner], right[inner]]), minlength=n)
        if counts[0] != 0 or np.any(counts[1:] != 1):
            raise ValueError("a node is not the child of exactly one node")
        if np.any(self.n_node_samples <= 0) or np.any(self.weighted_n_node_samples <= 0):
            raise ValueError("a node has no samples")
        if np.any(self.n_node_samples[inner]
                  != self.n_node_samples[left[inner]] + self.n_node_samples[right[inner]]):
            raise ValueError("n_node_samples of a node is not the sum of its children's")
        w = self.weighted_n_node_samples
        wsum = w[left[inner]] + w[right[inner]]
        if not np.allclose(self.weighted_n_node_samples[inner], wsum, rtol=1e-9, atol=0.0):
            raise ValueError("weighted_n_node_samples of a node is not the sum of its children's")

    # -- copies ----------------------------------------------------------------------------------
    def subtree(self, keep_leaf: np.ndarray) -> Tree:
        """The tree cut at the nodes where ``keep_leaf`` is True, renumbered in preorder.

        Nodes below a cut disappear; a cut node becomes a leaf with its own value. The new tree's
        nodes are numbered depth-first, left child first (scikit-learn's pruned-tree order).
        """
        left, right = self.children_left, self.children_right
        order = []
        stack = [0]
        while stack:
            i = stack.pop()
            order.append(i)
            if left[i] != TREE_LEAF and not keep_leaf[i]:
                stack.append(right[i])
                stack.append(left[i])
        order = np.asarray(order, dtype=np.intp)
        new_id = np.full(self.node_count, -1, dtype=np.intp)
        new_id[order] = np.arange(order.size)
        cut = keep_leaf[order] | (left[order] == TREE_LEAF)
        new_left = np.where(cut, TREE_LEAF, new_id[left[order]])
        new_right = np.where(cut, TREE_LEAF, new_id[right[order]])
        return Tree(
            self.n_features, self.n_classes, new_left, new_right,
            np.where(cut, TREE_UNDEFINED, self.feature[order]),
            np.where(cut, float(TREE_UNDEFINED), self.threshold[order]),
            self.impurity[order], self.n_node_samples[order],
            self.weighted_n_node_samples[order], self.value[order],
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        names = ("children_left", "children_right", "feature", "threshold", "impurity",
                 "n_node_samples", "weighted_n_node_samples", "value")
        return self.n_features == other.n_features and all(
            np.array_equal(getattr(self, a), getattr(other, a)) for a in names
        )

    __hash__ = None  # mutable container of arrays

    def __repr__(self) -> str:
        return (f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, "
                f"max_depth={self.max_depth}, n_features={self.n_features})")
