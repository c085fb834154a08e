"""Model trees: linear models at the leaves of a regression tree (M5, M5').

:func:`fit_linear_leaves` takes a grown regression tree and its training data and returns the
model tree, following Quinlan (1992, "Learning with continuous classes") and Wang & Witten
(1997, "Inducing model trees for continuous classes"; Witten & Frank, *Data Mining*, 6.5):

1. **A model at every node** of the grown tree, by least squares on the attributes tested in
   the node's subtree (``features="subtree"``, M5; a leaf of the grown tree has none and is
   a constant) or on the path from the root to the node (``features="path"``, as LightGBM's
   ``linear_tree``). The normal equations come from per-node sufficient statistics summed up
   the tree in compiled code (:mod:`treelearn.engine.linear`), never from refitting rows.
2. **Attribute dropping** (``drop_attributes``): the attribute whose removal raises the
   residual sum of squares least is dropped while the error estimate does not increase.
3. **Pruning** (``prune``), bottom-up: a node becomes a leaf with its model when the model's
   estimate is at most its subtree's (the children's final estimates weighted by their cases).
4. **Smoothing** (``smoothing = k``, 15 in the book): on the path from a leaf to the root each
   prediction is blended with the parent's model, ``p' = (n p + k q) / (n + k)``, ``n`` the
   cases of the node below. The models being linear, the blend is folded into each leaf's
   coefficients once, so a leaf predicts with one linear model.

Error estimates (``estimate``): ``"m5"`` is the book's ``mean |residual| * (n + v) / (n - v)``
(``v`` parameters, intercept included; at most 10,000 of a node's rows are read, at an even
stride); ``"weka"`` is Weka's M5P, ``rmse * (n + 2 v) / (n - v)`` from the statistics alone
(Weka's attribute elimination itself uses Akaike's criterion; this variant uses the same
estimate for dropping and pruning). Both use a factor of 10 when ``n <= v`` (Weka's rule).

Where this follows the book and where it differs:

* missing values: the tree routes them as the grower learned (a direction per node, chosen by
  the split score), not by M5''s surrogate split on the target; inside a model a missing value
  is the mean of the feature's known values at fit (for the statistics) and at the leaf (at
  prediction, M5''s "average of the training cases that reach the node");
* categorical features are used by the splits only; the models use numeric features (M5''s
  synthetic binary attributes for nominal values are not built);
* a ``ridge`` ``alpha`` multiplies each diagonal entry of the centred normal equations by
  ``1 + alpha`` (ridge regression on standardized attributes); a column that is constant at a
  node, or a linear combination of the columns already in the model, is left out
  (tolerance :data:`~treelearn.engine.linear.COLLINEAR_TOL`), so collinear data and leaves
  with fewer cases than attributes fall back to smaller models, down to the constant.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._tree import TREE_LEAF, Tree
from .engine.linear import (
    EST_M5,
    EST_WEKA,
    fit_node_models,
    known_means,
    postorder,
    preorder,
    row_ranges,
    smooth_leaves,
)

ESTIMATES = {"m5": EST_M5, "weka": EST_WEKA}
FEATURE_SETS = ("subtree", "path")


def _joined(parts: list, dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)


def _allowed(tree: Tree, numeric: np.ndarray, features: str) -> np.ndarray:
    """Per node, the features its model may use (bool, node x n_features)."""
    n = tree.node_count
    allowed = np.zeros((n, tree.n_features), dtype=np.bool_)
    ptr, kids, feat = tree.branch_ptr, tree.branch_child, tree.feature
    inner = np.flatnonzero(tree.children_left != TREE_LEAF)
    if features == "subtree":
        # children come after their parents: a backward pass collects each subtree's tests
        allowed[inner, feat[inner]] = True
        for i in inner[::-1]:
            for c in kids[ptr[i]:ptr[i + 1]]:
                allowed[i] |= allowed[c]
    else:
        for i in inner:
            for c in kids[ptr[i]:ptr[i + 1]]:
                allowed[c] = allowed[i]
                allowed[c, feat[i]] = True
    allowed &= numeric[None, :]
    return allowed


def fit_linear_leaves(tree: Tree, X, y: np.ndarray, w: np.ndarray, *,
                      is_categorical: np.ndarray | None = None, features: str = "subtree",
                      smoothing: float = 15.0, prune: bool = True, drop_attributes: bool = True,
                      alpha: float = 0.0, estimate: str = "m5") -> Tree:
    """The model tree of a grown regression tree (see module docstring).

    Parameters
    ----------
    tree : Tree
        A regression tree grown on ``X``, ``y``, ``w`` (no fractional missing-value routing).
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training features as the tree reads them (float32; categorical features as codes).
    y, w : ndarray of shape (n_samples,)
        Targets and weights (rows of weight zero take no part).
    is_categorical : ndarray of bool, optional
        Features the models must not use. Default: none.
    features : {"subtree", "path"}, default="subtree"
        The attributes a node's model may use.
    smoothing : float, default=15.0
        The smoothing constant ``k`` (0: no smoothing).
    prune : bool, default=True
        Prune bottom-up where a node's model is estimated no worse than its subtree.
    drop_attributes : bool, default=True
        Greedy attribute dropping.
    alpha : float, default=0.0
        Relative ridge.
    estimate : {"m5", "weka"}, default="m5"
        The error estimate for dropping and pruning.

    Returns
    -------
    Tree
        The (pruned) tree with linear models at its leaves.
    """
    if features not in FEATURE_SETS:
        raise ValueError(f"features must be one of {FEATURE_SETS}; got {features!r}.")
    if estimate not in ESTIMATES:
        raise ValueError(f"estimate must be one of {tuple(ESTIMATES)}; got {estimate!r}.")
    if np.any(tree.missing_branch == -1):
        raise ValueError("linear leaves need a tree that sends missing values one way "
                         '(missing="learn" or "impute", not "c45").')
    p = tree.n_features
    numeric = np.ones(p, dtype=np.bool_) if is_categorical is None else ~np.asarray(
        is_categorical, dtype=np.bool_)
    keep = w > 0.0
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
    allowed = _allowed(tree, numeric, features)
    used = np.flatnonzero(allowed.any(axis=0))
    q = used.size
    if sp.issparse(X):
        Xq = np.asarray(X[:, used].toarray(), dtype=np.float32)
    else:
        Xq = np.ascontiguousarray(np.asarray(X)[:, used], dtype=np.float32)
    leaf = tree.apply(X)
    order, size = preorder(tree.branch_ptr, tree.branch_child)
    rows, lo, hi = row_ranges(leaf.astype(np.int64), order, size)
    W = float(w.sum())
    # means of the known values: the fill for missing values, and the centre that keeps the
    # summed moments well conditioned
    known = ~np.isnan(Xq)
    wk = (w[:, None] * known).sum(axis=0)
    mu = np.where(wk > 0, np.nansum(w[:, None] * np.nan_to_num(Xq.astype(np.float64)),
                                    axis=0) / np.maximum(wk, 1e-300), 0.0)
    Xc = np.where(known, Xq.astype(np.float64), mu[None, :]) - mu[None, :]
    Xc = np.ascontiguousarray(Xc)
    ybar = float(np.dot(w, y) / W)
    yc = np.ascontiguousarray(y - ybar, dtype=np.float64)
    attr = np.ascontiguousarray(allowed[:, used])
    depth = tree.node_depths()
    stack_cap = int((depth.max() + 1) * max(int(tree.n_branches.max()), 1) + 1)
    coef, icpt, est, model_est, leafy = fit_node_models(
        Xc, yc, np.ascontiguousarray(w, dtype=np.float64), rows, lo, hi,
        postorder(tree.branch_ptr, tree.branch_child), tree.branch_ptr, tree.branch_child,
        tree.n_node_samples.astype(np.int64), attr, float(alpha), ESTIMATES[estimate],
        bool(drop_attributes), bool(prune), stack_cap)
    keep_leaf = leafy & (tree.children_left != TREE_LEAF)
    kept = tree.kept_order(keep_leaf) if keep_leaf.any() else np.arange(tree.node_count)
    out = tree.subtree(keep_leaf) if keep_leaf.any() else tree
    new_leaves = np.flatnonzero(out.children_left == TREE_LEAF)
    old_leaves = kept[new_leaves].astype(np.int64)
    lcoef, licpt = smooth_leaves(coef, icpt, tree.node_parents(), tree.n_node_samples,
                                 old_leaves, float(smoothing))
    fill = known_means(Xq, np.ascontiguousarray(w, dtype=np.float64), rows, lo, hi,
                       old_leaves, np.arange(q, dtype=np.int64), mu)
    n = out.node_count
    lin_ptr = np.zeros(n + 1, dtype=np.intp)
    lin_intercept = out.value[:, 0, 0].copy()
    feats, coefs, fills = [], [], []
    for t, node in enumerate(new_leaves):
        nz = np.flatnonzero(lcoef[t] != 0.0)
        lin_ptr[node + 1] = nz.size
        feats.append(used[nz])
        coefs.append(lcoef[t, nz])
        fills.append(fill[t, nz])
        # back from the centred coordinates: y = ybar + c0 + sum b (x - mu)
        lin_intercept[node] = ybar + licpt[t] - float(np.dot(lcoef[t, nz], mu[nz]))
    lin_ptr = np.cumsum(lin_ptr)
    return Tree(
        out.n_features, out.n_classes, out.children_left, out.children_right, out.feature,
        out.threshold, out.impurity, out.n_node_samples, out.weighted_n_node_samples,
        out.value, branch_ptr=out.branch_ptr, branch_child=out.branch_child,
        cat_ptr=out.cat_ptr, cat_branch=out.cat_branch, missing_branch=out.missing_branch,
        missing_seen=out.missing_seen, lin_ptr=lin_ptr, lin_feature=_joined(feats, np.intp),
        lin_coef=_joined(coefs, np.float64), lin_fill=_joined(fills, np.float64),
        lin_intercept=lin_intercept, _trusted=True)
