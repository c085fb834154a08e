"""The optimal classification tree of a given depth, proven, as an ordinary treelearn tree.

:class:`OptimalTreeClassifier` answers the greedy tree's first named weakness ("no global
optimization"): among every binary tree of depth at most ``max_depth`` whose splits are
``x[f] <= t`` at a midpoint between two values of ``f`` at the node, it finds one that
minimises the weighted misclassification of the training rows plus ``ccp_alpha`` per leaf
(Breiman et al.'s cost-complexity objective with the 0-1 loss), and proves it. The search is
:mod:`treelearn.engine.optimal` (branch and bound with ConTree's similarity bound and a
depth-2 solver; the papers are cited there); the greedy tree of the same depth (CART with
the Gini index) is its first upper bound and the answer whenever nothing beats it. That tree
comes from scikit-learn's ``DecisionTreeClassifier``, the same tree on tie-free data as
ours, because it is compiled already: with ours, a first optimal fit on an empty kernel
cache also compiled the CART engine (measured: 14 s of the 33-36 s first fit of bank at
depth 3).

The result is a :class:`~treelearn._tree.Tree` like every other estimator's, so every reader
works on it: text, rules, Graphviz, plots, the explorer, model files, ``to_sklearn``.

Category columns are searched as one test per level, ``x == level`` against every other
level (missing values count as a level of their own): each level becomes a 0/1 column of the
matrix the search reads (:func:`_expand`), so the optimum is exact over trees of such tests
and numeric thresholds. Splits into arbitrary subsets of levels are not searched: a column
of ``L`` levels has ``2**(L-1) - 1`` of them at every node, which multiplies the search by
that much, and Breiman's ordering, which makes the subset search linear for CART's
criteria, does not hold for the 0-1 loss at depth above one. A fitted test reads as an
ordinary categorical split (the level on the left branch, every other level, unseen ones
and missing values on the right).

When a time limit or Ctrl-C stops the search, ``lower_bound_`` is the equivalent-points
bound (:func:`equivalent_points_bound`): the search is depth first, so until it ends every
root split it has not reached is bounded only by such data-level bounds.

Not here: missing values in numeric columns (refused by name: a NaN has no branch in a tree
of thresholds), and an optimal regressor. The regressor was weighed and not built, because
none of the search's speed carries over to squared error: the similarity bound rests on the
0-1 loss (moving rows of weight ``d`` changes a subtree's misclassification by at most
``d``; their squared error by up to ``d`` times the square of the target's range, a bound
too weak to skip anything), the depth-two solver from counts needs a loss that is a
function of class counts, and the leaf-count bounds (``2 alpha``, a pure node) have no
counterpart. A regressor would be a second search (STreeD's, van den Bos et al. 2024), not
this one with another cost.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.tree import DecisionTreeClassifier as SklearnTree
from sklearn.utils.validation import check_is_fitted

from ._docs import CLASS_ATTRIBUTES, FEATURE_ATTRIBUTES, fits
from ._estimators import (
    _COMMON_CONSTRAINTS,
    BaseDecisionTree,
    DecisionTreeClassifier,
    ProbaClassifierMixin,
    class_targets,
)
from ._interrupt import interruptible
from ._progress import progress
from ._tree import TREE_LEAF, Tree, larger_child_branch
from ._validation import (
    InstanceOf,
    Interval,
    Options,
    check_y_missing,
    keep_params,
    validate_params,
)
from .engine import optimal as kernel

#: Deepest tree searched: the search's work grows about as (rows x features) to the depth.
MAX_DEPTH = 6
#: The level of a searched column that tests a category column for a missing value; numeric
#: columns have level -1 (see :func:`_expand`).
MISSING_LEVEL = -2


class OptimalTreeClassifier(ProbaClassifierMixin, ClassifierMixin, BaseDecisionTree):
    __doc__ = """The classification tree of depth at most ``max_depth`` with the least training
    misclassification plus ``ccp_alpha`` per leaf, found and proven by branch and bound.

    Parameters
    ----------
    max_depth : int, default=3
        Depth limit of the tree (1 to 6). The search's work grows steeply with it: depth 2 takes
        milliseconds, depth 3 seconds on a thousand rows, depth 4 may need ``time_limit``.
    min_samples_leaf : int, default=1
        Least rows in a leaf. Above 1, ConTree's similarity bound does not hold and every
        threshold is evaluated, so the search is slower.
    ccp_alpha : float, default=0.0
        Cost per leaf, in units of sample weight: a split must remove more than ``ccp_alpha``
        of misclassified weight per extra leaf. 0 gives the least training error.
    time_limit : float or None, default=None
        Seconds the search may take. When it runs out, the best tree found so far is kept
        (at worst the greedy tree) and ``optimal_`` is False. None: search to the end.
    verbose : bool, default=True
        Show a progress bar on standard error while the search runs: the root's features
        finished (in the search's order) and the objective of the best tree found so far.
        Shown only when standard error is a terminal, so logs and pipes stay clean.
    on_interrupt : {"raise", "keep"}, default="raise"
        What Ctrl-C does (the search stops within a tenth of a second either way): "raise"
        raises ``KeyboardInterrupt`` and leaves the estimator as it was; "keep" ends the fit
        with the best tree found so far, as a time limit does (``optimal_`` False).
    categorical_features : "auto", list of int or str, boolean mask, or None, default="auto"
        Columns holding categories, as for :class:`~treelearn.DecisionTreeClassifier`
        ("auto": a DataFrame's category, object, string and bool columns). Each level is a
        candidate test ``x == level`` at every node; a missing value is a level of its own.

    Attributes
    ----------
""" + CLASS_ATTRIBUTES + FEATURE_ATTRIBUTES + """
    is_categorical_ : ndarray of bool, shape (n_features_in_,)
        Which features were treated as categorical.
    categories_ : list
        Levels of each categorical feature (codes are positions in it); None for numeric ones.
    tree_ : Tree
        The fitted tree (flat arrays, scikit-learn's layout; values are class fractions).
    objective_ : float
        The tree's training objective: misclassified weight plus ``ccp_alpha`` per leaf.
    optimal_ : bool
        Whether ``objective_`` is proven the least possible (False when ``time_limit`` stopped
        the search).
    lower_bound_ : float
        A proven lower bound of the least objective: ``objective_`` when optimal, else the
        equivalent-points bound (the minority weight of every group of rows with the same
        features, which no tree can separate, plus one leaf's ``ccp_alpha``).
    greedy_objective_ : float
        The objective of the greedy tree of the same depth (CART with the Gini index), the
        search's first upper bound.
    n_thresholds_evaluated_ : int
        How many (node, threshold) candidates the search evaluated: a measure of its
        work, not of the tree. A depth-two subproblem solved from counts (0/1 features,
        equal weights) counts one per feature, since it scores every threshold at once.

    Notes
    -----
    Every midpoint of every numeric feature is a candidate at every node (no binarisation
    step), and so is every level of every category column, as the test ``x == level``
    (subsets of levels are not searched: see the module docstring). At prediction, a level
    not seen at fit, or a missing value in a column whose missing values were not a level at
    fit, takes the "every other level" branch, as the test reads. Missing values in numeric
    columns are refused (impute them, or declare the column categorical). Ties between trees
    of equal objective are broken by the search's order (features in column order,
    thresholds by bisection), so an optimal tree is returned, not necessarily the one
    another solver returns.

    Examples
    --------
    >>> from treelearn import OptimalTreeClassifier
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = OptimalTreeClassifier(max_depth=2).fit(X, y)
    >>> clf.optimal_, clf.objective_
    (True, 6.0)
    """

    def __init__(self, *, max_depth=3, min_samples_leaf=1, ccp_alpha=0.0, time_limit=None,
                 verbose=True, on_interrupt="raise", categorical_features="auto"):
        keep_params(self, locals())

    #: Read by the shared tree machinery (tags, ``to_sklearn``): every threshold is examined.
    splitter = "best"
    #: Settings of :func:`treelearn.compile_kernels`'s fits: one kernel (compiled with all it
    #: calls) serves every depth, so the shallowest search compiles it in the least time.
    warm_up_params = {"max_depth": 2, "verbose": False}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False  # in numeric columns (category columns take it)
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _constraints(self) -> dict:
        return {"max_depth": [Interval("int", 1, MAX_DEPTH)],
                "min_samples_leaf": [Interval("int", 1, None)],
                "ccp_alpha": [Interval("real", 0.0, None), Interval("int", 0, None)],
                "time_limit": [Interval("real", 0.0, None, "neither"),
                               Interval("int", 1, None), None],
                "verbose": [InstanceOf((bool, np.bool_), "a bool")],
                "on_interrupt": [Options(("raise", "keep"))],
                "categorical_features": _COMMON_CONSTRAINTS["categorical_features"]}

    @interruptible
    @fits(X="Training data: numbers (float32, as scikit-learn's trees) without missing "
            "values, and category columns (missing values allowed there).",
          y="Class labels (ints, strings, bools).")
    def fit(self, X, y, sample_weight=None):
        """Find the optimal tree of ``(X, y)`` (see the class docstring)."""
        validate_params(self, self._constraints())
        check_y_missing(y)
        if sp.issparse(X):
            raise TypeError("OptimalTreeClassifier needs dense X; sparse input is not "
                            "supported.")
        X, y = self._validate_table(X, y, fitting=True)
        _refuse_numeric_nan(X, self.is_categorical_, getattr(self, "feature_names_in_", None))
        self.classes_, codes, w = class_targets(y, sample_weight, X.shape[0])
        self.n_classes_ = int(self.classes_.shape[0])
        self.n_outputs_ = 1
        self.max_features_ = X.shape[1]
        n_features = X.shape[1]
        X, origin, level = _expand(X, self.is_categorical_)
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        alpha = float(self.ccp_alpha)
        depth = int(self.max_depth)
        min_leaf = int(self.min_samples_leaf)

        greedy = SklearnTree(max_depth=depth, min_samples_leaf=min_leaf,
                             random_state=0).fit(X, codes, sample_weight=w)
        greedy_records = _records_of(greedy.tree_)
        self.greedy_objective_ = objective(greedy_records, X, codes, w, self.n_classes_, alpha)

        keep = np.flatnonzero(w > 0.0)  # rows of no weight change no objective
        Xk, yk, wk = X[keep], codes[keep], w[keep]
        ranks, values = _ranks(Xk)
        n, p = Xk.shape
        bufs = kernel.buffers(ranks, self.n_classes_, depth, yk, wk)
        memo = kernel.memo(n, depth)
        total = float(wk.sum())
        # 1e-9 of the total weight: above the rounding of sums of weights, below any real
        # difference between two trees' objectives unless weights differ by 1e-9 relatively
        tol = 1e-9 * max(total, 1.0)
        fpar = np.array([alpha, tol])
        ipar = np.array([min_leaf, 1 if min_leaf == 1 else 0], dtype=np.int64)
        ctl = np.zeros(kernel.CTL_FIELDS)
        ctl[kernel.C_INCUMBENT] = self.greedy_objective_
        def bound() -> float:
            return equivalent_points_bound(Xk, yk, wk, self.n_classes_) + alpha

        shown = None  # the bound, computed only where it is shown or needed (3.5 s at 1M x 28)
        with progress(p, "optimal tree", quiet=not self.verbose, unit="root feature") as bar:
            if not bar.disable:
                shown = bound()
            stopped = _run(kernel.solve, ((ranks, yk, wk), bufs, memo, fpar, ipar, ctl, 0, depth,
                                          self.greedy_objective_ + tol), ctl, self.time_limit,
                           bar, keep_on_interrupt=self.on_interrupt == "keep",
                           bound=shown if shown is not None else 0.0)
        found = _records_from_kernel(bufs, values)
        found_obj = objective(found, X, codes, w, self.n_classes_, alpha)
        if found_obj < self.greedy_objective_ - tol:
            records, obj = found, found_obj
        else:
            records, obj = greedy_records, min(self.greedy_objective_, found_obj)
            if found_obj <= self.greedy_objective_:
                records = found
        self.objective_ = float(obj)
        self.optimal_ = not stopped
        self.lower_bound_ = self.objective_ if self.optimal_ else min(
            shown if shown is not None else bound(), self.objective_)
        self.n_thresholds_evaluated_ = int(ctl[kernel.C_EVALS])
        tree = _tree_of(records, X, codes, w, self.n_classes_)
        self.tree_ = _on_columns(tree, origin, level, n_features, self.categories_)
        return self

    def _validate_X_predict(self, X):
        # no missing numbers, as at fit: a NaN in a numeric column has no branch in these trees
        check_is_fitted(self, "tree_")
        X = self._validate_table(X)
        _refuse_numeric_nan(X, self.is_categorical_, getattr(self, "feature_names_in_", None))
        return X

    #: The class fractions of each row's leaf, as every treelearn classifier tree gives them.
    predict_proba = DecisionTreeClassifier.predict_proba


def _run(solve, args, ctl: np.ndarray, time_limit: float | None, bar=None, *,
         keep_on_interrupt: bool = False, bound: float = 0.0) -> bool:
    """Run the search on a thread of its own (the kernel releases the GIL) while this one
    watches the clock and Ctrl-C and shows the kernel's progress on ``bar`` (with the lower
    ``bound``); returns whether it was stopped before its end. Ctrl-C stops the search, then
    raises ``KeyboardInterrupt`` unless ``keep_on_interrupt``."""
    failure: list[BaseException] = []

    def work():
        try:
            solve(*args)
        except BaseException as exc:  # pragma: no cover - a kernel error, re-raised below
            failure.append(exc)

    deadline = None if time_limit is None else time.monotonic() + float(time_limit)
    thread = threading.Thread(target=work, name="treelearn-optimal", daemon=True)
    thread.start()
    stopped = False
    try:
        while thread.is_alive():
            thread.join(0.05)
            if deadline is not None and time.monotonic() >= deadline and thread.is_alive():
                ctl[kernel.C_STOP] = 1
                stopped = True
            if bar is not None and not bar.disable:
                bar.n = int(ctl[kernel.C_ROOT_DONE])
                bar.set_postfix_str(f"objective {ctl[kernel.C_INCUMBENT]:.6g}, bound "
                                    f"{min(bound, ctl[kernel.C_INCUMBENT]):.6g}")
    except KeyboardInterrupt:
        ctl[kernel.C_STOP] = 1
        thread.join()
        if not keep_on_interrupt:
            raise
        stopped = True
    except BaseException:  # pragma: no cover - anything else stops the search, then propagates
        ctl[kernel.C_STOP] = 1
        thread.join()
        raise
    if failure:  # pragma: no cover
        raise failure[0]
    return stopped


def _refuse_numeric_nan(X: np.ndarray, is_categorical: np.ndarray, names=None) -> None:
    """A ValueError naming the first numeric column of ``X`` with a missing value (by its
    name when ``names`` are known)."""
    bad = np.flatnonzero(~is_categorical & np.isnan(X).any(axis=0))
    if bad.shape[0]:
        col = repr(str(names[bad[0]])) if names is not None else str(int(bad[0]))
        raise ValueError(f"Input X contains NaN in numeric column {col}: an optimal "
                         "tree has no branch for a missing number; impute it first, or "
                         "declare the column categorical (a missing value is then a level "
                         "of its own).")


def _expand(X: np.ndarray, is_categorical: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The matrix the search reads, with the origin and the level of each of its columns.

    A numeric column stays as it is (level -1). A category column (level codes, NaN for
    missing) becomes one 0/1 column per value it holds, level codes and missing
    (:data:`MISSING_LEVEL`) alike, that is 0 on that value's rows: its one threshold sends
    them left, as the test ``x == level`` does. A column of two values needs one such test
    (the other is the same split mirrored: the last one's is kept, so a level and missing
    values give the test for missing), a column of one value none."""
    cols, origin, level = [], [], []
    for j in range(X.shape[1]):
        x = X[:, j]
        if not is_categorical[j]:
            cols.append(x)
            origin.append(j)
            level.append(-1)
            continue
        missing = np.isnan(x)
        values = [int(v) for v in np.unique(x[~missing])]
        if missing.any():
            values.append(MISSING_LEVEL)
        for v in values[-1:] if len(values) == 2 else values:
            hit = missing if v == MISSING_LEVEL else x == v
            cols.append((~hit).astype(np.float32))
            origin.append(j)
            level.append(v)
    if not cols:  # every column constant: one with no threshold, so the tree is a leaf
        cols, origin, level = [np.zeros(X.shape[0], dtype=np.float32)], [0], [-1]
    Xe = np.column_stack(cols)
    return (np.ascontiguousarray(Xe, dtype=np.float32), np.asarray(origin, dtype=np.intp),
            np.asarray(level, dtype=np.intp))


def _on_columns(tree: Tree, origin: np.ndarray, level: np.ndarray, n_features: int,
                categories: list) -> Tree:
    """The tree of the searched columns (:func:`_expand`) as a tree of the original ones: a
    level's test becomes a categorical split with that level on branch 0 and every other
    level on branch 1, where missing values go too unless the test is for missing. Readers
    say where missing values go (``missing_seen``) at the splits of a column that had them
    at fit."""
    with_missing = np.zeros(n_features, dtype=bool)
    with_missing[origin[level == MISSING_LEVEL]] = True
    if not (level != -1).any() and tree.n_features == n_features:  # the original columns
        return tree
    m = tree.node_count
    inner = tree.children_left != TREE_LEAF
    feature = tree.feature.copy()
    threshold = tree.threshold.copy()
    missing_branch = larger_child_branch(tree.children_left, tree.children_right,
                                         tree.n_node_samples)
    missing_seen = np.zeros(m, dtype=bool)
    cat_ptr = np.zeros(m + 1, dtype=np.intp)
    cat_branch: list[np.ndarray] = []
    for t in range(m):
        cat_ptr[t + 1] = cat_ptr[t]
        if not inner[t]:
            continue
        col = int(tree.feature[t])
        feature[t] = origin[col]
        lv = int(level[col])
        if lv == -1:
            continue
        branch = np.ones(len(categories[origin[col]]), dtype=np.intp)
        if lv >= 0:
            branch[lv] = 0
        cat_branch.append(branch)
        cat_ptr[t + 1] += branch.shape[0]
        threshold[t] = -2.0
        missing_branch[t] = 0 if lv == MISSING_LEVEL else 1
        missing_seen[t] = with_missing[origin[col]]
    return Tree(n_features, tree.n_classes, tree.children_left, tree.children_right, feature,
                threshold, tree.impurity, tree.n_node_samples, tree.weighted_n_node_samples,
                tree.value, cat_ptr=cat_ptr,
                cat_branch=np.concatenate(cat_branch) if cat_branch else np.zeros(0, np.intp),
                missing_branch=missing_branch, missing_seen=missing_seen, _trusted=True)


def equivalent_points_bound(X: np.ndarray, y: np.ndarray, w: np.ndarray, K: int) -> float:
    """The misclassified weight no tree can avoid: rows with the same features reach the same
    leaf, so each group of them misclassifies at least its weight less its largest class's
    (the equivalent points bound of Angelino et al., "Learning certifiably optimal rule
    lists", JMLR 2018, used for trees by GOSDT: Lin et al., ICML 2020)."""
    if X.shape[0] == 0:
        return 0.0
    _, group = np.unique(X, axis=0, return_inverse=True)
    cw = np.zeros((int(group.max()) + 1, K))
    np.add.at(cw, (group.ravel(), y), w)
    return float(np.sum(cw.sum(axis=1) - cw.max(axis=1)))


def _ranks(X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Dense ranks of every feature's values (int32, features x rows) and each feature's
    distinct values in increasing order."""
    n, p = X.shape
    ranks = np.empty((p, n), dtype=np.int32)
    values = []
    for f in range(p):
        u, inv = np.unique(X[:, f], return_inverse=True)
        ranks[f] = inv
        values.append(u)
    return ranks, values


def _threshold(lo: np.float32, hi: np.float32) -> float:
    """scikit-learn's threshold between two neighbouring float32 values: their midpoint in
    float64, or the lower one when the midpoint rounds up to the upper one."""
    t = (float(lo) + float(hi)) / 2.0
    if np.float32(t) >= hi:
        t = float(lo)
    return t


def _records_from_kernel(bufs: kernel.Scratch, values: list[np.ndarray]) -> list[tuple[int, float]]:
    """The root's recorded tree in preorder as ``(feature, threshold)`` (feature -1: leaf)."""
    res, rlen = bufs.res, bufs.rlen
    out = []
    for k in range(int(rlen[0])):
        f = int(res[0, 0, k])
        if f < 0:
            out.append((-1, 0.0))
        else:
            v = values[f]
            out.append((f, _threshold(v[int(res[0, 1, k])], v[int(res[0, 2, k])])))
    return out


def _records_of(tree) -> list[tuple[int, float]]:
    """A binary tree's nodes (ours or scikit-learn's ``tree_``) in preorder as ``(feature,
    threshold)``."""
    out = []
    stack = [0]
    while stack:
        t = stack.pop()
        if tree.children_left[t] == TREE_LEAF:
            out.append((-1, 0.0))
        else:
            out.append((int(tree.feature[t]), float(tree.threshold[t])))
            stack.append(int(tree.children_right[t]))
            stack.append(int(tree.children_left[t]))
    return out


def _walk(records, X):
    """Each node of the preorder ``records`` with its rows: ``(feature, threshold, rows,
    left, right)`` in preorder (children by position)."""
    nodes: list[list] = []

    def visit(k: int, rows: np.ndarray) -> int:
        f, thr = records[k]
        me = len(nodes)
        nodes.append([f, thr, rows, TREE_LEAF, TREE_LEAF])
        if f < 0:
            return k + 1
        go_left = X[rows, f] <= thr
        nodes[me][3] = len(nodes)
        k = visit(k + 1, rows[go_left])
        nodes[me][4] = len(nodes)
        return visit(k, rows[~go_left])

    end = visit(0, np.arange(X.shape[0]))
    if end != len(records):
        raise ValueError("malformed preorder record")
    return nodes


def objective(records, X, y, w, K: int, alpha: float) -> float:
    """Misclassified weight plus ``alpha`` per leaf of the tree ``records`` on the data: the
    quantity the search minimises, computed plainly from the rows reaching each leaf."""
    total = 0.0
    for f, _, rows, _, _ in _walk(records, X):
        if f < 0:
            cw = np.bincount(y[rows], weights=w[rows], minlength=K)
            total += float(cw.sum() - cw.max()) + alpha
    return total


def _tree_of(records, X, y, w, K: int) -> Tree:
    """The :class:`Tree` of the preorder ``records`` with the training rows' statistics."""
    nodes = _walk(records, X)
    m = len(nodes)
    left = np.full(m, TREE_LEAF, dtype=np.intp)
    right = np.full(m, TREE_LEAF, dtype=np.intp)
    feature = np.full(m, -2, dtype=np.intp)
    threshold = np.full(m, -2.0)
    impurity = np.zeros(m)
    n_samples = np.zeros(m, dtype=np.intp)
    weighted = np.zeros(m)
    value = np.zeros((m, 1, K))
    for t, (f, thr, rows, lt, rt) in enumerate(nodes):
        cw = np.bincount(y[rows], weights=w[rows], minlength=K)
        tot = cw.sum()
        frac = cw / tot if tot > 0 else cw
        value[t, 0] = frac
        impurity[t] = 1.0 - float(np.sum(frac * frac)) if tot > 0 else 0.0
        n_samples[t] = rows.shape[0]
        weighted[t] = tot
        if f >= 0:
            left[t], right[t], feature[t], threshold[t] = lt, rt, f, thr
    # valid by construction (checked all the same in the test suite: TREELEARN_CHECK_TREES)
    return Tree(X.shape[1], np.array([K]), left, right, feature, threshold, impurity,
                n_samples, weighted, value, _trusted=True)
