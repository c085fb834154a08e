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

Weka's M5P, the implementation users compare with, differs from the book in its growth: a
split maximises an impurity reduction of order 5 (Wang's ``Impurity`` class: the fifth root
of the variance) instead of the standard deviation reduction, and each child keeps at least
``floor(n / 5) + 1`` of the node's ``n`` cases (so no leaf of one case); it prunes on
``rmse * (n + 2 v) / (n - v)`` (``estimate="weka"`` here) and drops attributes by Akaike's
criterion. Only the estimate is offered: the growth rules would need a per-node minimum leaf
size in the engine.

Where this follows the book and where it differs:

* missing values: with ``missing="m5"`` (:class:`~treelearn.M5Regressor`'s default) as M5'
  routes them (:mod:`treelearn.engine.target_route`): splits scored on the known values times
  their share, the cases with a missing value sent at fit to the branch whose mean target is
  nearest their own, and at prediction the way of the node's average value; the other modes
  route them as the grower learned. Inside a model a missing value is the mean of the
  feature's known values at fit (for the statistics) and at the leaf (at prediction, M5's
  "average of the training cases that reach the node");
* nominal attributes enter the models as M5's synthetic binary attributes: the ``k`` levels
  seen at fit are ordered by their mean target (over all training cases, as Weka's supervised
  NominalToBinary orders them) and attribute ``j`` is "the level is among the ``k - j`` of
  largest mean", ``j = 1 .. k - 1``; each is dropped or kept on its own. Features with more
  than ``max_levels`` levels (default 32) are used by the splits only: 300 airports would
  add 299 columns to every node's normal equations;
* a ``ridge`` ``alpha`` multiplies each diagonal entry of the centred normal equations by
  ``1 + alpha`` (ridge regression on standardized attributes); a column that is constant at a
  node, or a linear combination of the columns already in the model, is left out
  (tolerance :data:`~treelearn.engine.linear.COLLINEAR_TOL`), so collinear data and leaves
  with fewer cases than attributes fall back to smaller models, down to the constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._tree import TREE_LEAF, Tree
from .engine.linear import (
    EST_M5,
    EST_WEKA,
    allowed_features,
    centred_rows,
    fit_node_models,
    known_means,
    postorder,
    preorder,
    row_ranges,
    smooth_leaves,
)
from .engine.target_route import average_branches, replay

ESTIMATES = {"m5": EST_M5, "weka": EST_WEKA}
FEATURE_SETS = ("subtree", "path")


def _joined(parts: list, dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)


def _allowed(tree: Tree, parent: np.ndarray, features: str) -> np.ndarray:
    """Per node, the features its model may use (bool, node x n_features)."""
    return allowed_features(parent, tree.feature,
                            tree.children_left == TREE_LEAF, tree.n_features,
                            features == "subtree")


@dataclass
class _Columns:
    """The columns of the models: a numeric feature, or one synthetic binary attribute of a
    nominal one (``ones``: its level codes with value 1; ``known``: the codes seen at fit)."""

    feature: list
    ones: list
    known: list


def _columns(X, y, w, allowed, is_cat, max_levels):
    """The model columns (float32, NaN where the value is missing or a level was not seen)
    and what each one is."""
    cols = _Columns([], [], [])
    used = np.flatnonzero(allowed.any(axis=0))
    num = used[~is_cat[used]]
    data = []
    if num.size:
        block = X[:, num]
        block = block.toarray() if sp.issparse(block) else np.asarray(block)
        data.append(np.asarray(block, dtype=np.float32))
        cols.feature += num.tolist()
        cols.ones += [None] * num.size
        cols.known += [None] * num.size
    for f in used[is_cat[used]]:
        x = X[:, f]
        x = np.asarray(x.toarray()).ravel() if sp.issparse(x) else np.asarray(x)
        x = x.astype(np.float32)
        ok = ~np.isnan(x)
        codes = x[ok].astype(np.int64)
        if codes.size == 0:
            continue
        n_codes = int(codes.max()) + 1
        sw = np.bincount(codes, weights=w[ok], minlength=n_codes)
        sy = np.bincount(codes, weights=w[ok] * y[ok], minlength=n_codes)
        seen = np.flatnonzero(sw > 0)
        if seen.size < 2 or seen.size > max_levels:
            continue
        order = seen[np.argsort(sy[seen] / sw[seen], kind="stable")]
        rank = np.full(n_codes, -1, dtype=np.int64)
        rank[order] = np.arange(order.size)
        xr = np.full(x.shape[0], -1, dtype=np.int64)
        xr[ok] = rank[codes]
        for j in range(1, order.size):
            col = np.where(xr >= j, 1.0, 0.0).astype(np.float32)
            col[xr < 0] = np.nan
            cols.feature.append(int(f))
            cols.ones.append(np.sort(order[j:]))
            cols.known.append(np.sort(seen))
            data.append(col[:, None])
    if not data:
        return np.zeros((X.shape[0], 0), dtype=np.float32), cols
    if len(data) == 1:
        return np.ascontiguousarray(data[0]), cols
    return np.ascontiguousarray(np.hstack(data)), cols


def target_replay(tree: Tree, X: np.ndarray, y: np.ndarray,
                  w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training rows of a tree grown with ``missing="m5"`` walked down it as M5' routed
    them (see :mod:`treelearn.engine.target_route`).

    Parameters
    ----------
    tree : Tree
        A regression tree.
    X : ndarray of shape (n_samples, n_features)
        The training features as the tree reads them (float32; categorical features as codes;
        missing values NaN).
    y, w : ndarray of shape (n_samples,)
        Targets and weights.

    Returns
    -------
    leaf : ndarray of shape (n_samples,)
        Each row's leaf.
    missing_branch : ndarray of shape (node_count,)
        Each internal node's branch for a missing value at prediction: the branch of the
        node's average known value (weighted), or of its most frequent level; -2 at leaves.
    """
    if not (X.shape[0] == y.shape[0] == w.shape[0]):
        raise ValueError(f"X, y and w need one row each: got {X.shape[0]}, {y.shape[0]} and "
                         f"{w.shape[0]} rows.")
    if X.shape[1] != tree.n_features:
        raise ValueError(f"X has {X.shape[1]} features; the tree reads {tree.n_features}.")
    return replay(np.asarray(X, dtype=np.float32), np.ascontiguousarray(y, dtype=np.float64),
                  np.ascontiguousarray(w, dtype=np.float64), tree.feature, tree.threshold,
                  tree.branch_ptr, tree.branch_child, tree.cat_ptr, tree.cat_branch)


def average_missing_branches(tree: Tree, X: np.ndarray, y: np.ndarray,
                             w: np.ndarray) -> np.ndarray:
    """M5' branch for a missing value at each internal node of a tree grown with
    ``missing="m5"`` on ``X``, ``y``, ``w``: the branch of the node's weighted average known
    value of its split feature (its most frequent level); -2 at leaves. The rows are walked
    as M5' routed them (:func:`target_replay`) when ``X`` holds a missing value, else as
    prediction routes them (the same walk, on all threads)."""
    if np.isnan(X).any():
        return target_replay(tree, X, y, w)[1]
    X = np.asarray(X, dtype=np.float32)
    order, size = preorder(tree.branch_ptr, tree.branch_child)
    rows, lo, hi = row_ranges(tree.apply(X).astype(np.int64), order, size)
    inner = np.flatnonzero(tree.children_left != TREE_LEAF).astype(np.int64)
    return average_branches(X, np.ascontiguousarray(w, dtype=np.float64), rows, lo, hi, inner,
                            tree.threshold, tree.feature, tree.cat_ptr, tree.cat_branch)


def fit_linear_leaves(tree: Tree, X, y: np.ndarray, w: np.ndarray, *,
                      is_categorical: np.ndarray | None = None, features: str = "subtree",
                      smoothing: float = 15.0, prune: bool = True, drop_attributes: bool = True,
                      alpha: float = 0.0, estimate: str = "m5", max_levels: int = 32,
                      missing_by_target: bool = False) -> Tree:
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
        Nominal features (level codes), which enter the models as synthetic binary
        attributes. Default: none.
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
    max_levels : int, default=32
        Nominal features with more levels seen at fit are left to the splits.
    missing_by_target : bool, default=False
        The tree was grown with ``missing="m5"``: rows with a missing split value belong to
        the leaf M5' routed them to by their target (:func:`target_replay`), not to the one
        prediction would send them to.

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
    is_cat = np.zeros(p, dtype=np.bool_) if is_categorical is None else np.asarray(
        is_categorical, dtype=np.bool_)
    keep = w > 0.0
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
    parent = tree.node_parents()
    allowed = _allowed(tree, parent, features)
    Xq, spec = _columns(X, y, w, allowed, is_cat, max_levels)
    q = Xq.shape[1]
    if missing_by_target and not sp.issparse(X) and np.isnan(X).any():
        # (without missing values the routing is prediction's, and apply is parallel)
        leaf = target_replay(tree, X, y, w)[0]
    else:
        leaf = tree.apply(X)
    order, size = preorder(tree.branch_ptr, tree.branch_child)
    rows, lo, hi = row_ranges(leaf.astype(np.int64), order, size)
    W = float(w.sum())
    # means of the known values: the fill for missing values, and the centre that keeps the
    # summed moments well conditioned
    # rows in the order of the nodes' ranges, so that every pass over a node's rows reads
    # consecutive memory; centred on the means of known values (a missing value is the mean)
    Xc, mu = centred_rows(Xq, rows, np.ascontiguousarray(w, dtype=np.float64))
    ybar = float(np.dot(w, y) / W)
    yc = np.ascontiguousarray(y[rows] - ybar, dtype=np.float64)
    ws = np.ascontiguousarray(w[rows], dtype=np.float64)
    col_feature = np.asarray(spec.feature, dtype=np.intp)
    attr = np.ascontiguousarray(allowed[:, col_feature]) if q else \
        np.zeros((tree.node_count, 0), dtype=np.bool_)
    depth = tree.node_depths()
    stack_cap = int((depth.max() + 1) * max(int(tree.n_branches.max()), 1) + 1)
    coef, icpt, est, model_est, leafy = fit_node_models(
        Xc, yc, ws, np.arange(rows.size, dtype=np.int64), lo, hi,
        postorder(tree.branch_ptr, tree.branch_child), tree.branch_ptr, tree.branch_child,
        tree.n_node_samples.astype(np.int64), attr, float(alpha), ESTIMATES[estimate],
        bool(drop_attributes), bool(prune), stack_cap)
    keep_leaf = leafy & (tree.children_left != TREE_LEAF)
    kept = tree.kept_order(keep_leaf) if keep_leaf.any() else np.arange(tree.node_count)
    out = tree.subtree(keep_leaf, order=kept) if keep_leaf.any() else tree
    new_leaves = np.flatnonzero(out.children_left == TREE_LEAF)
    old_leaves = kept[new_leaves].astype(np.int64)
    lcoef, licpt = smooth_leaves(coef, icpt, parent, tree.n_node_samples,
                                 old_leaves, float(smoothing))
    fill = known_means(Xq, np.ascontiguousarray(w, dtype=np.float64), rows, lo, hi,
                       old_leaves, np.arange(q, dtype=np.int64), mu)
    n = out.node_count
    # the terms: every nonzero coefficient, leaf by leaf, columns in order
    tl_, tj = np.nonzero(lcoef)
    counts = np.bincount(tl_, minlength=new_leaves.size)
    lin_ptr = np.zeros(n + 1, dtype=np.intp)
    lin_ptr[new_leaves + 1] = counts
    lin_ptr = np.cumsum(lin_ptr)
    lin_intercept = out.value[:, 0, 0].copy()
    # back from the centred coordinates: y = ybar + c0 + sum b (x - mu)
    lin_intercept[new_leaves] = ybar + licpt - (lcoef * mu[None, :]).sum(axis=1)
    set_len = np.zeros(tj.size, dtype=np.intp)
    set_code, set_one = [], []
    cat_col = np.array([o is not None for o in spec.ones], dtype=np.bool_)
    for k in np.flatnonzero(cat_col[tj]) if tj.size else []:
        j = tj[k]
        set_len[k] = spec.known[j].size
        set_code.append(spec.known[j])
        set_one.append(np.isin(spec.known[j], spec.ones[j]))
    set_ptr = np.zeros(tj.size + 1, dtype=np.intp)
    set_ptr[1:] = np.cumsum(set_len)
    return Tree(
        out.n_features, out.n_classes, out.children_left, out.children_right, out.feature,
        out.threshold, out.impurity, out.n_node_samples, out.weighted_n_node_samples,
        out.value, branch_ptr=out.branch_ptr, branch_child=out.branch_child,
        cat_ptr=out.cat_ptr, cat_branch=out.cat_branch, missing_branch=out.missing_branch,
        missing_seen=out.missing_seen, lin_ptr=lin_ptr, lin_feature=col_feature[tj],
        lin_coef=lcoef[tl_, tj], lin_fill=fill[tl_, tj],
        lin_intercept=lin_intercept, lin_set_ptr=set_ptr,
        lin_set_code=_joined(set_code, np.intp), lin_set_one=_joined(set_one, np.bool_),
        obl_ptr=out.obl_ptr, obl_feature=out.obl_feature, obl_weight=out.obl_weight,
        _trusted=True)
