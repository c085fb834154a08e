"""scikit-learn compatible decision tree estimators: validate -> prepare -> build -> prune.

``fit`` is a short pipeline of named steps (validation of parameters and data, resolution of
fractional parameters into a ``_Settings`` record, preparation of X, growth, pruning), each a
function of its own, instead of one long method mixing them.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.model_selection import train_test_split
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_feature_names,
    check_consistent_length,
    check_is_fitted,
)

from . import _shap
from ._docs import (
    CLASS_ATTRIBUTES,
    FEATURE_ATTRIBUTES,
    SHAP_INTERACTION_RETURNS,
    SHAP_RETURNS,
    fits,
    takes_rows,
)
from ._interrupt import interruptible
from ._memory import check as check_memory
from ._tree import MISSING_FRACTIONAL, TREE_LEAF, Tree, expected_costs
from ._validation import (
    RANDOM_STATE,
    HasMethods,
    InstanceOf,
    Interval,
    Options,
    check_sample_weight,
    check_X,
    check_y_1d,
    check_y_missing,
    keep_params,
    validate_params,
)
from .engine import build as engine
from .engine.binning import Binner
from .engine.build import (
    CLASSIFICATION_CRITERIA,
    COST_NONE,
    COST_NUNEZ,
    COST_TAN,
    MISSING_C45,
    MISSING_IMPUTE,
    MISSING_LEARN,
    MISSING_M5,
    RAND_R_MAX,
    REGRESSION_CRITERIA,
    SELECT_CRITERION,
    SELECT_SCREENED,
    SELECT_TEST,
    GrowParams,
    Shared,
    fit_bytes,
    memory_alternatives,
)
from .engine.columns import categorical_mask, encode_table, learn_levels
from .model_trees import ESTIMATES, FEATURE_SETS, fit_linear_leaves
from .model_trees import average_missing_branches as m5_branches
from .pruning._bottom_up import collapse_bottom_up
from .pruning._loss import tree_node_losses
from .pruning.cost_complexity import cost_complexity_path, prune_to_alpha
from .pruning.cv import cv_pruning
from .pruning.mdl import mdl_prune
from .pruning.pessimistic import pessimistic_prune, pessimistic_prune_cases

MAX_INT = np.iinfo(np.int32).max

_COMMON_CONSTRAINTS = {
    "splitter": [Options(("best", "random", "hist"))],
    "max_bins": [Interval("int", 2, 255)],
    "binner": [InstanceOf((Binner,), "a treelearn Binner"), None],
    "max_depth": [Interval("int", 1, None), None],
    "min_samples_split": [Interval("int", 2, None), Interval("real", 0.0, 1.0, "right")],
    "min_samples_leaf": [Interval("int", 1, None), Interval("real", 0.0, 1.0, "neither")],
    "min_weight_fraction_leaf": [Interval("real", 0.0, 0.5, "both"),
                                 Interval("int", 0, 0, "both")],
    "max_features": [Interval("int", 1, None), Interval("real", 0.0, 1.0, "right"),
                     Options(("sqrt", "log2")), None],
    "random_state": [RANDOM_STATE, None],
    "max_leaf_nodes": [Interval("int", 2, None), None],
    "min_impurity_decrease": [Interval("real", 0.0, None), Interval("int", 0, None)],
    "ccp_alpha": [Interval("real", 0.0, None), Interval("int", 0, None)],
    "categorical_features": [Options(("auto",)), InstanceOf((list, tuple, np.ndarray),
                                                            "a list, tuple or array"), None],
    "categorical_split": [Options(("binary", "multiway"))],
    "missing": [Options(("learn", "c45", "impute", "m5"))],
    "feature_costs": [InstanceOf((list, tuple, np.ndarray, dict), "a sequence or dict"), None],
    "cost_function": [Options(("tan", "nunez"))],
    "cost_weight": [Interval("real", 0.0, None), Interval("int", 0, None)],
    "prune": [Options(("cv", "reduced_error", "pessimistic", "mdl", "m5")), None],
    "prune_cv": [Interval("int", 2, None),
                 HasMethods(("split", "get_n_splits"), "a cross-validation splitter")],
    "prune_rule": [Options(("1se", "min"))],
    "ccp_risk": [Options(("impurity", "misclassification"))],
    "confidence_factor": [Interval("real", 0.0, 1.0, "neither")],
    "validation_fraction": [Interval("real", 0.0, 1.0, "neither")],
    "subtree_raising": [InstanceOf((bool, np.bool_), "a bool")],
    "n_jobs": [Interval("int", None, None), None],
    "min_level_count": [Interval("int", 1, None)],
    "level_smoothing": [Interval("real", 0.0, None), Interval("int", 0, None)],
    "selection": [Options(("auto", "criterion", "test", "screened"))],
    "selection_alpha": [Interval("real", 0.0, 1.0, "right")],
    "average_gain": [InstanceOf((bool, np.bool_), "a bool")],
    "threshold_penalty": [InstanceOf((bool, np.bool_), "a bool")],
}

_MISSING_CODES = {"learn": MISSING_LEARN, "c45": MISSING_C45, "impute": MISSING_IMPUTE,
                  "m5": MISSING_M5}
_COST_CODES = {"tan": COST_TAN, "nunez": COST_NUNEZ}


@dataclass(frozen=True)
class _Settings:
    """Parameters resolved against the data (fractions turned into counts, None into limits)."""

    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    max_features: int
    max_leaf_nodes: int  # 0: depth-first growth
    random_split: bool
    seed: int


def resolve_max_features(mf, n_features: int) -> int:
    """The number of features a node draws for ``max_features=mf`` (scikit-learn's rules)."""
    if mf is None:
        return n_features
    if mf == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if mf == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(mf, Integral):
        if mf > n_features:
            raise ValueError(
                f"max_features must be at most n_features={n_features}; got max_features={mf}."
            )
        return int(mf)
    return max(1, int(mf * n_features))


def _resolve(est, n_samples: int, n_features: int, sample_weight: np.ndarray) -> _Settings:
    msl = est.min_samples_leaf
    min_samples_leaf = msl if isinstance(msl, Integral) else math.ceil(msl * n_samples)
    mss = est.min_samples_split
    min_samples_split = mss if isinstance(mss, Integral) else max(2, math.ceil(mss * n_samples))
    min_samples_split = max(min_samples_split, 2 * min_samples_leaf)
    max_features = resolve_max_features(est.max_features, n_features)
    rng = check_random_state(est.random_state)
    return _Settings(
        max_depth=MAX_INT if est.max_depth is None else int(est.max_depth),
        min_samples_split=int(min_samples_split),
        min_samples_leaf=int(min_samples_leaf),
        min_weight_leaf=float(est.min_weight_fraction_leaf) * float(sample_weight.sum()),
        max_features=int(max_features),
        max_leaf_nodes=0 if est.max_leaf_nodes is None else int(est.max_leaf_nodes),
        random_split=est.splitter == "random",
        # Same draw as scikit-learn's splitter seed, so ties are broken as in scikit-learn.
        seed=int(rng.randint(0, RAND_R_MAX)),
    )


def _positive_weight_rows(X, ycls, yreg, w):
    """The rows of positive weight: samples of weight zero take no part, as in scikit-learn
    (they are not counted either)."""
    keep = w > 0.0
    if keep.all():
        return X, ycls, yreg, w
    return (X[keep], ycls[keep] if ycls.size else ycls, yreg[keep] if yreg.size else yreg,
            w[keep])


#: The kernels' codes of the selection rules (:mod:`treelearn.engine.search`).
_SELECTION_CODES = {"criterion": SELECT_CRITERION, "test": SELECT_TEST,
                    "screened": SELECT_SCREENED}
#: ``selection="auto"`` screens features by test when a categorical feature has more levels.
MANY_LEVELS = 20


def _resolve_selection(est) -> str:
    """``est.selection``, with "auto" made "screened" when a categorical feature of the fit
    has more than :data:`MANY_LEVELS` levels (sets ``est.selection_``)."""
    sel = est.selection
    if sel == "auto":
        many = any(lv is not None and len(lv) > MANY_LEVELS for lv in est.categories_)
        sel = "screened" if many else "criterion"
    est.selection_ = sel
    return sel


def level_counts(est) -> np.ndarray:
    """The number of learned levels of each column of a fitted estimator (0: numeric), as
    the engine reads them."""
    return np.array([0 if lv is None else len(lv) for lv in est.categories_], dtype=np.int64)


def _min_impurity_split(est, yreg: np.ndarray, w: np.ndarray) -> float:
    """M5's stopping rule as a variance: a node whose target standard deviation is below
    ``min_sd_fraction`` of the root's is a leaf (0: no such rule)."""
    frac = float(getattr(est, "min_sd_fraction", 0.0))
    if frac <= 0.0 or not yreg.size:
        return 0.0
    wt = float(w.sum())
    mean = float(np.dot(w, yreg)) / wt
    var = float(np.dot(w, (yreg - mean) ** 2)) / wt
    return frac * frac * var


def _grow(est, X, ycls, yreg, w, crit: int, n_stats: int, n_values: int, n_classes: int,
          settings: _Settings, costs, binner: Binner | None,
          shared: Shared | None = None) -> Tree:
    """Grow the tree with the engine: presorted lists (``"best"``/``"random"``), histograms
    (a fitted ``binner``), or the sparse grower for CSR input; from ``shared`` data when
    given."""
    rows = (ycls, yreg, w)  # of every row of X (the ranked splitter reads them by row id)
    if shared is None:
        X, ycls, yreg, w = _positive_weight_rows(X, ycls, yreg, w)
    else:
        keep = w > 0.0
        ycls = ycls[keep] if ycls.size else ycls
        yreg = yreg[keep] if yreg.size else yreg
        w = w[keep]
    prm = GrowParams(
        crit=crit, n_stats=n_stats, n_values=n_values, n_classes=n_classes,
        max_depth=settings.max_depth, min_samples_split=settings.min_samples_split,
        min_samples_leaf=settings.min_samples_leaf, min_weight_leaf=settings.min_weight_leaf,
        max_features=settings.max_features, max_leaf_nodes=settings.max_leaf_nodes,
        min_impurity_decrease=float(est.min_impurity_decrease), seed=settings.seed,
        random_split=settings.random_split, missing=_MISSING_CODES[est.missing],
        multiway=est.categorical_split == "multiway",
        costs=costs, cost_mode=COST_NONE if costs is None else _COST_CODES[est.cost_function],
        cost_weight=float(est.cost_weight),
        min_count=int(est.min_level_count), smooth=float(est.level_smoothing),
        selection=_SELECTION_CODES[_resolve_selection(est)], alpha=float(est.selection_alpha),
        average_gain=bool(est.average_gain), threshold_penalty=bool(est.threshold_penalty),
        min_impurity_split=_min_impurity_split(est, yreg, w),
    )
    if shared is None and sp.issparse(X):
        if np.isnan(X.data).any():
            raise ValueError("sparse X with missing values (NaN) is not supported; pass a dense "
                             "array or DataFrame.")
        if prm.criterion_only:
            return engine.grow(X, est.is_categorical_, None, ycls, yreg, w, dataclasses.replace(
                prm, monotonic=_engine_monotonic(est, False)), has_missing=False)
        # the sparse layout searches by the criterion alone: feature costs, C4.5's rules and
        # the statistical selection need the dense one (they were ignored here before)
        check_memory(4.0 * X.shape[0] * X.shape[1], "A dense copy of sparse X (feature costs, "
                     "C4.5's average-gain rule or threshold penalty, or selection='test' or "
                     "'screened' search dense columns)",
                     "Use selection='criterion' without feature costs or C4.5's rules to keep X "
                     "sparse.")
        X = np.asarray(X.toarray(), dtype=np.float32)
    n_levels = level_counts(est)
    # C4.5's scores equal the plain criterion's when nothing is missing, up to rounding, which
    # can break near-ties differently: a numeric table without holes is grown in the plain
    # way (scikit-learn's tree), and only its missing-value routing is C4.5's.
    has_missing = shared.has_missing if shared is not None else bool(np.isnan(X).any())
    plain_c45 = (est.missing == "c45" and costs is None and not est.is_categorical_.any()
                 and not has_missing)
    if plain_c45 or (est.missing == "m5" and not has_missing):
        prm = dataclasses.replace(prm, missing=_MISSING_CODES["learn"])
    mono = _engine_monotonic(est, has_missing)
    if mono is not None:
        prm = dataclasses.replace(prm, monotonic=mono)
    tree = engine.grow(X, est.is_categorical_, n_levels, ycls, yreg, w, prm,
                       has_missing=has_missing, binner=binner, shared=shared,
                       keep=None if shared is None else keep, rows=rows)
    if plain_c45:
        inner = tree.children_left != TREE_LEAF
        tree.missing_branch[inner] = MISSING_FRACTIONAL
    if est.missing == "m5" and not sp.issparse(X):
        # prediction's branch for a missing value: the node's average (sparse input has none);
        # shared data holds every row, the targets and weights only the tree's
        inner = tree.children_left != TREE_LEAF
        Xt = X if shared is None else X[keep]
        tree.missing_branch[inner] = m5_branches(tree, Xt, yreg, w)[inner]
    return tree


def _indexable(X):
    """A table in a form cross-validation can take rows of (DataFrames and arrays as they
    are; other array-likes as object arrays)."""
    if hasattr(X, "iloc") or isinstance(X, np.ndarray):
        return X
    return np.asarray(X, dtype=object)


_MONOTONIC_CONSTRAINT = {"monotonic_cst": [
    InstanceOf((list, tuple, np.ndarray, dict), "an array-like of -1, 0 and 1, or a dict"),
    None]}


def monotonic_constraints(est) -> np.ndarray | None:
    """The fitted estimator's ``monotonic_cst`` as one int per feature (-1, 0, 1; the user's
    convention), or None when it has none; checked against its features (ValueError naming
    the problem)."""
    spec = getattr(est, "monotonic_cst", None)
    if spec is None:
        return None
    p = int(est.n_features_in_)
    if isinstance(spec, dict):
        names = getattr(est, "feature_names_in_", None)
        index = {} if names is None else {str(n): j for j, n in enumerate(names)}
        cst = np.zeros(p, dtype=np.int64)
        for key, value in spec.items():
            if isinstance(key, (int, np.integer)) and not isinstance(key, bool) \
                    and 0 <= key < p:
                j = int(key)
            elif str(key) in index:
                j = index[str(key)]
            else:
                raise ValueError(f"monotonic_cst names {key!r}, which is not a feature "
                                 f"(the features: {', '.join(index) or f'0..{p - 1}'}).")
            cst[j] = value if value in (-1, 0, 1) else 2
        values = np.asarray(list(spec.values()), dtype=object)
    else:
        values = np.asarray(spec, dtype=object).ravel()
        if values.shape[0] != p:
            raise ValueError(f"monotonic_cst has shape {values.shape[0]} but the input data X "
                             f"has {p} features.")
        cst = None
    bad = [v for v in values.tolist() if isinstance(v, bool) or v not in (-1, 0, 1)]
    if bad:
        raise ValueError("monotonic_cst must be None or an array-like of -1, 0 or 1, but got "
                         f"{sorted(set(map(repr, bad)))}.")
    if cst is None:
        cst = np.asarray(values.tolist(), dtype=np.int64)
    return cst


def _engine_monotonic(est, has_missing: bool) -> np.ndarray | None:
    """The constraints as the engine reads them (:attr:`GrowParams.monotonic`: on the first
    class's fraction for classifiers, so signs flipped), after the checks of what the
    engine cannot constrain; None when no feature is constrained."""
    cst = monotonic_constraints(est)
    if cst is None or not cst.any():
        return None
    name = type(est).__name__
    cats = np.flatnonzero(cst.astype(bool) & np.asarray(est.is_categorical_, dtype=bool))
    if cats.size:
        names = getattr(est, "feature_names_in_", None)
        which = [str(names[j]) if names is not None else str(j) for j in cats]
        raise ValueError(f"monotonic_cst constrains categorical features ({', '.join(which)}): "
                         "their levels have no order; constrain numeric features only.")
    if is_classifier(est) and est.n_classes_ > 2:
        raise ValueError("Monotonicity constraints are not supported with multiclass "
                         f"classification ({est.n_classes_} classes).")
    if est.criterion == "absolute_error":
        raise ValueError(f"{name}: monotonic_cst is not supported with "
                         "criterion='absolute_error' (its leaves are medians).")
    if getattr(est, "linear_leaves", False):
        raise ValueError(f"{name}: monotonic_cst is not supported with linear leaves (a "
                         "leaf's linear model can run against the constraint).")
    if est.missing in ("c45", "m5") and has_missing:
        raise ValueError(f"{name}: monotonic_cst with missing={est.missing!r} on data with "
                         "missing values is not supported (rows split fractionally or routed by "
                         "their target); use missing='learn'.")
    if getattr(est, "subtree_raising", False):
        raise ValueError(f"{name}: monotonic_cst is not supported with subtree_raising=True "
                         "(a raised subtree leaves the bounds it was grown in); pass "
                         "subtree_raising=False.")
    return -cst if is_classifier(est) else cst


class BaseDecisionTree(BaseEstimator):
    """Shared machinery of the classifier and the regressor (not for direct use; the
    parameters are the subclasses', stored by :func:`~treelearn._validation.keep_params`)."""

    _criteria: dict[str, int] = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.splitter != "hist"
        # The general engine has no random splitter.
        tags.input_tags.allow_nan = self.splitter != "random"
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _constraints(self) -> dict:
        return {"criterion": [Options(tuple(self._criteria))], **_COMMON_CONSTRAINTS}

    def _encode_target(self, y, sample_weight):  # pragma: no cover - overridden
        raise NotImplementedError

    @interruptible
    @fits(X="Training data. Converted to float32 (as scikit-learn does); sparse input is used "
            "as CSR without densifying.",
          y="Class labels (ints, strings, bools) or regression targets.")
    def fit(self, X, y, sample_weight=None):
        """Build a decision tree from the training set (X, y)."""
        validate_params(self, self._constraints())
        self._check_prune_params()
        check_y_missing(y)
        self._check_memory(X, sample_weight)
        X_raw = X
        X, y = self._validate_table(X, y, fitting=True)
        y = check_y_1d(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        target = self._encode_target(y, sw)
        return self._fit_encoded(X, X_raw, y, sw if sample_weight is not None else None,
                                 target)

    def _fit_encoded(self, X, X_raw, y, sw, target, shared: Shared | None = None):
        """The fit after validation: ``X`` encoded, ``X_raw``/``y`` as given (for pruning's
        refits), ``sw`` the given weights or None, ``target`` from :meth:`_encode_target`.
        ``shared``: data prepared once for many trees on these rows (a forest's; rows of
        weight zero are then left out of the tree without copying X)."""
        ycls, yreg, w, n_stats, n_values, n_classes = target
        crit = self._criteria[self.criterion]
        settings = _resolve(self, X.shape[0], X.shape[1], w)
        costs = self._check_costs(X.shape[1])
        table = (self.is_categorical_.any() or costs is not None
                 or (not sp.issparse(X) and bool(np.isnan(X).any())))
        if table and self.splitter == "random":
            raise ValueError('splitter="random" does not support missing values (NaN), '
                             'categorical features or feature costs; use splitter="best" or '
                             '"hist".')
        validation = None
        w_grow = w
        if self.prune == "reduced_error":
            validation = self._validation_rows(X.shape[0], ycls, settings.seed)
            if validation is not None:
                # Validation rows take no part in growing (weight 0 drops them).
                w_grow = np.where(validation, 0.0, w)
        if shared is not None:
            binner = shared.binner
            self.binner_ = binner
        elif self.splitter == "hist":
            binner = self._fit_binner(X, w_grow, settings.seed)
        else:
            binner = None
        tree = _grow(self, X, ycls, yreg, w_grow, crit, n_stats, n_values, n_classes,
                     settings, costs, binner, shared)
        cost = getattr(self, "cost_matrix_", None)
        if self.ccp_alpha > 0.0:
            tree = prune_to_alpha(tree, self.ccp_alpha, self.ccp_risk, cost)
        self.pruning_ = None
        for stale in ("unpruned_tree_", "ccp_alpha_"):  # from an earlier fit
            self.__dict__.pop(stale, None)
        if self.prune is not None:
            self.unpruned_tree_ = tree
            if self.prune != "m5":  # M5's pruning is part of fitting the leaf models
                tree = self._post_prune(tree, X, X_raw, y, sw, ycls, yreg, w, crit,
                                        validation, settings.seed)
        if getattr(self, "linear_leaves", False):
            tree = fit_linear_leaves(
                tree, X, yreg, w_grow, is_categorical=self.is_categorical_,
                features=self.linear_features, smoothing=float(self.smoothing),
                prune=self.prune == "m5", drop_attributes=bool(self.drop_attributes),
                alpha=float(self.ridge_alpha), estimate=self.linear_estimate,
                missing_by_target=self.missing == "m5")
        self.tree_ = tree
        self.n_outputs_ = 1
        self.max_features_ = settings.max_features
        return self

    def _check_memory(self, X, sample_weight) -> None:
        """MemoryError naming sizes and alternatives when the fit's big buffers (plus the
        float32 copy of X validation makes) would not fit (see :mod:`treelearn._memory`)."""
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2:
            return  # lists and the like are small, or validation rejects them
        n, p = int(shape[0]), int(shape[1])
        # classes are not known yet: a classifier's counts are sized for a few
        n_stats = 4 if is_classifier(self) else 0
        weighted = (sample_weight is not None or getattr(self, "class_weight", None) is not None
                    or self.missing == "c45")
        nnz = int(X.nnz) if sp.issparse(X) else None
        need = fit_bytes(n, p, self.splitter, n_stats, weighted, nnz, int(self.max_bins))
        dtype = getattr(X, "dtype", None)
        if nnz is None and dtype != np.float32:
            need += 4 * n * p  # validation's float32 copy
        what = (f"Fitting {type(self).__name__}(splitter={self.splitter!r}) on {n:,} rows x "
                f"{p:,} features")
        check_memory(need, what, memory_alternatives(self.splitter, n, p, n_stats, weighted))

    def _post_prune(self, tree, X, X_raw, y, sw, ycls, yreg, w, crit, validation, seed):
        """The ``prune`` method applied to the grown tree (training data as fit saw it: ``X``
        encoded, ``X_raw``/``y`` for refits, ``w`` effective weights, ``sw`` given ones)."""
        cost = getattr(self, "cost_matrix_", None)
        codes = ycls if ycls.size else None
        targets = None if codes is not None else yreg
        if self.prune == "pessimistic" and self.subtree_raising:
            return pessimistic_prune_cases(tree, X, ycls, w, crit, self.confidence_factor)
        if self.prune == "pessimistic":
            return pessimistic_prune(tree, self.confidence_factor)
        if self.prune == "mdl":
            return mdl_prune(tree)
        if self.prune == "reduced_error":
            if validation is None:  # too few rows to hold any out
                return tree
            v = validation
            loss = tree_node_losses(tree, X[v], None if codes is None else codes[v],
                                    None if targets is None else targets[v], w[v], cost)
            return tree.subtree(collapse_bottom_up(tree, loss)[0])
        self.ccp_alpha_ = 0.0
        if X.shape[0] < 2:  # nothing to cross-validate
            return tree
        root_loss = tree_node_losses(tree, X, codes, targets, w, cost)[0] / max(w.sum(), 1e-300)
        base = clone(self).set_params(prune=None, ccp_alpha=0.0)
        if getattr(base, "linear_leaves", False):
            base.set_params(linear_leaves=False)  # the folds measure the constant tree
        # Folds refit from the input: raw tables (levels are learned per fold), the validated
        # matrix otherwise; labels as validated (1-d).
        X_cv = _indexable(X_raw) if self.is_categorical_.any() else X
        result = cv_pruning(base, X_cv, y, tree=tree, w_fit=sw, w_test=w, cv=self.prune_cv,
                            rule=self.prune_rule, risk=self.ccp_risk, n_jobs=self.n_jobs,
                            random_state=seed % (2**32), root_loss=root_loss)
        self.pruning_ = result
        self.ccp_alpha_ = result.chosen_alpha
        return prune_to_alpha(tree, result.chosen_alpha, self.ccp_risk, cost)

    def _check_prune_params(self) -> None:
        if self.prune == "cv" and self.ccp_alpha > 0.0:
            raise ValueError('prune="cv" chooses ccp_alpha by cross-validation; leave '
                             'ccp_alpha at 0 (or use prune=None with ccp_alpha).')
        if self.prune in ("pessimistic", "mdl") and not is_classifier(self):
            raise ValueError(f'prune="{self.prune}" is defined for classification trees; '
                             'regression trees support "cv", "reduced_error" and "m5".')
        if self.prune == "m5" and not getattr(self, "linear_leaves", False):
            raise ValueError('prune="m5" prunes a model tree; it needs linear_leaves=True '
                             "(a DecisionTreeRegressor or M5Regressor).")
        if getattr(self, "linear_leaves", False) and self.missing == "c45":
            raise ValueError('linear_leaves=True needs missing values sent one way at each node '
                             '(missing="learn", "impute" or "m5"), not missing="c45".')
        if self.missing == "m5" and is_classifier(self):
            raise ValueError('missing="m5" routes cases with a missing value by their target '
                             "(M5'), which needs a regression tree; use \"learn\", \"c45\" "
                             'or "impute".')
        if self.missing == "m5" and self.criterion == "absolute_error":
            raise ValueError('missing="m5" scores splits by M5\'s standard deviation reduction, '
                             'defined for criterion="sdr" and "squared_error", not '
                             '"absolute_error".')

    def _validation_rows(self, n: int, ycls: np.ndarray, seed: int):
        """Rows held out for reduced-error pruning (``validation_fraction``, stratified for
        classifiers when every class has two cases), or None if there are too few rows."""
        if n < 2:
            return None
        strat = None
        if ycls.size and np.bincount(ycls).min() >= 2:
            strat = ycls
        n_val = max(1, min(n - 1, int(round(self.validation_fraction * n))))
        if strat is not None and min(n_val, n - n_val) < np.unique(strat).shape[0]:
            strat = None
        _, val = train_test_split(np.arange(n), test_size=n_val, stratify=strat,
                                  random_state=seed % (2**32))
        mask = np.zeros(n, dtype=bool)
        mask[val] = True
        return mask

    def _fit_binner(self, X, w, seed: int) -> Binner:
        """The binner of a hist fit: the ``binner`` parameter (fitted: reused as is; not fitted:
        a copy is fitted), else a new one with ``max_bins``. Kept as ``binner_``."""
        if sp.issparse(X):
            raise TypeError(
                'splitter="hist" needs dense X; sparse input is supported by splitter="best" '
                'and splitter="random".'
            )
        if self.binner is not None and self.binner.is_fitted:
            if self.binner.n_features_in_ != X.shape[1]:
                raise ValueError(
                    f"binner was fitted on {self.binner.n_features_in_} features, but X has "
                    f"{X.shape[1]} features."
                )
            binner = self.binner
        else:
            if self.binner is not None:
                binner = copy.deepcopy(self.binner)
            else:
                binner = Binner(max_bins=self.max_bins, random_state=seed % (2**32))
            positive = w > 0.0
            binner.fit(X if positive.all() else X[positive])
        self.binner_ = binner
        return binner

    def _validate_table(self, X, y=None, fitting: bool = False):
        """Validate X (and y when ``fitting``): categorical columns become level codes
        (learned at fit), numeric ones float32, missing values NaN."""
        is_df = hasattr(X, "columns") and hasattr(X, "iloc")
        if fitting:
            spec = self.categorical_features
            mask = None
            if spec is not None and not (isinstance(spec, str) and spec == "auto"
                                         and not is_df):
                if sp.issparse(X):
                    raise TypeError("categorical_features needs dense X (an array or "
                                    'DataFrame); use categorical_features=None for sparse X.')
                if not is_df and not hasattr(X, "dtype"):
                    X = np.asarray(X, dtype=object)
                if len(X.shape) == 2:
                    names = [str(c) for c in X.columns] if is_df else None
                    mask = categorical_mask(spec, X, X.shape[1], names)
            if mask is None or not mask.any():
                X, y = check_X(self, X, reset=True, y=y)
                self.is_categorical_ = np.zeros(X.shape[1], dtype=bool)
                self.categories_ = [None] * X.shape[1]
                return X, y
            self.is_categorical_ = mask
            self.categories_ = learn_levels(X, mask)
        mask = getattr(self, "is_categorical_", None)  # absent on models from from_sklearn
        if mask is None or not mask.any():
            return check_X(self, X, reset=False)
        if sp.issparse(X):
            raise TypeError("categorical features need dense X (an array or DataFrame).")
        if fitting:
            _check_feature_names(self, X, reset=True)
            self.n_features_in_ = mask.shape[0]
        else:
            _check_feature_names(self, X, reset=False)
            if not is_df:
                X = np.asarray(X, dtype=object)
            n = X.shape[1] if len(X.shape) == 2 else -1
            if n != self.n_features_in_:
                raise ValueError(f"X has {n} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input.")
        names = [str(c) for c in X.columns] if is_df else None
        X_obj = X if is_df else np.asarray(X, dtype=object)
        enc = encode_table(X_obj, mask, self.categories_, names)
        if enc.shape[0] == 0:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
        if np.isinf(enc).any():
            raise ValueError("Input X contains infinity.")
        if not fitting:
            return enc
        y = np.asarray(y)
        check_consistent_length(enc, y)
        return enc, y

    def _check_costs(self, n_features: int):
        """``feature_costs`` as a float array (None when not given)."""
        fc = self.feature_costs
        if fc is None:
            return None
        if isinstance(fc, dict):
            names = getattr(self, "feature_names_in_", None)
            out = np.ones(n_features)
            for k, v in fc.items():
                if isinstance(k, str):
                    if names is None or k not in list(names):
                        raise ValueError(f"feature_costs names feature {k!r}, which X does "
                                         "not have.")
                    out[list(names).index(k)] = v
                else:
                    out[int(k)] = v
            costs = out
        else:
            costs = np.asarray(fc, dtype=np.float64)
            if costs.shape != (n_features,):
                raise ValueError(f"feature_costs must have one cost per feature "
                                 f"({n_features}); got shape {costs.shape}.")
        if not np.all(np.isfinite(costs)) or np.any(costs <= 0.0):
            raise ValueError("feature_costs must be finite and positive.")
        return costs

    def _validate_X_predict(self, X):
        check_is_fitted(self, "tree_")
        return self._validate_table(X)

    @interruptible
    @takes_rows("X_leaves : ndarray of shape (n_samples,)",
                "Node index (in ``tree_``) of each sample's leaf.")
    def apply(self, X) -> np.ndarray:
        """Return the index of the leaf that each sample is predicted as."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    @interruptible
    @takes_rows("indicator : sparse matrix of shape (n_samples, n_nodes)",
                "Nonzero elements indicate the nodes each sample goes through.")
    def decision_path(self, X):
        """Return the decision path in the tree."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    @interruptible
    @takes_rows(*SHAP_RETURNS)
    def shap_values(self, X) -> np.ndarray:
        """Exact SHAP values of the predictions (path-dependent TreeSHAP, Lundberg et al.
        2020), one per input column: a category column gets one value, whatever its levels
        and subsets; learned missing directions and C4.5's fractional cases are followed as
        the prediction follows them (see :mod:`treelearn._shap`); an oblique split is known
        when every column it reads is. Linear leaves raise ``TypeError``."""
        X = self._validate_X_predict(X)
        return _shap.estimator_shap(self, X, is_classifier(self))

    @interruptible
    @takes_rows(*SHAP_INTERACTION_RETURNS)
    def shap_interaction_values(self, X) -> np.ndarray:
        """Exact SHAP interaction values of the predictions (Lundberg et al. 2020), pairs of
        input columns as :meth:`shap_values` has columns. Each row costs about ``2 m + 1``
        times its SHAP values, ``m`` the number of columns the tree splits on; the output
        holds ``n_samples x n_features ** 2`` values per output and is checked against the
        memory first."""
        X = self._validate_X_predict(X)
        return _shap.estimator_shap(self, X, is_classifier(self), interactions=True)

    @property
    def expected_value_(self):
        """The prediction with no column known (a float, or one value per class): each
        leaf's value weighted by the training shares of the branches down to it; what
        :meth:`shap_values` adds up from."""
        check_is_fitted(self, "tree_")
        return _shap.estimator_expected_value(self, is_classifier(self))

    def get_depth(self) -> int:
        """Return the depth of the tree (a single leaf has depth 0)."""
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """Return the number of leaves of the tree."""
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total impurity decrease of each feature (mean decrease in impurity)."""
        check_is_fitted(self, "tree_")
        return self.tree_.compute_feature_importances()

    @interruptible
    def cost_complexity_pruning_path(self, X, y, sample_weight=None) -> Bunch:
        """Compute the minimal cost-complexity pruning path (scikit-learn's definition).

        Parameters
        ----------
        X, y, sample_weight
            As for :meth:`fit`; a tree is grown with ``ccp_alpha=0`` and the rest of this
            estimator's parameters.

        Returns
        -------
        ccp_path : Bunch
            ``ccp_alphas`` (increasing effective alphas, starting at 0) and ``impurities`` (total
            leaf impurity, weighted by node weight over the root's, of each subtree).
        """
        est = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight)
        path = cost_complexity_path(est.tree_)
        return Bunch(ccp_alphas=path.ccp_alphas, impurities=path.impurities)


_DOC_ATTRIBUTES = FEATURE_ATTRIBUTES + """
    tree_ : Tree
        The fitted tree (flat arrays, scikit-learn's layout).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Normalised impurity decrease per feature.
    max_features_ : int
        Resolved number of features examined per node.
    is_categorical_ : ndarray of bool, shape (n_features_in_,)
        Which features were treated as categorical.
    categories_ : list
        Levels of each categorical feature (codes are positions in it); None for numeric ones.
    unpruned_tree_ : Tree
        With ``prune`` set: the tree before post-pruning (``tree_`` is the pruned one).
    pruning_ : CVPruning or None
        With ``prune="cv"``: the cross-validation table and the chosen alpha.
    ccp_alpha_ : float
        With ``prune="cv"``: the chosen alpha."""

_DOC_PARAMS = """
    splitter : {"best", "random", "hist"}, default="best"
        "best" scans every cut of every candidate feature; "random" scores one uniformly drawn
        threshold per candidate feature (scikit-learn's random splitter); "hist" bins each
        feature into at most ``max_bins`` bins (quantiles; one bin per value when a feature has
        no more distinct values) and scans the bins' histograms: much faster on large data,
        thresholds restricted to bin edges (real values: predict takes raw X). Dense X only.
    max_depth : int, default=None
        Maximum depth; None grows until leaves are pure or other limits stop them.
    min_samples_split : int or float, default=2
        Minimum samples needed to split a node (a float is a fraction of n_samples, rounded up).
    min_samples_leaf : int or float, default=1
        Minimum samples each child must keep (a float is a fraction of n_samples, rounded up).
    min_weight_fraction_leaf : float, default=0.0
        Minimum fraction of the total sample weight each child must keep.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Number of features examined per node, drawn at random without replacement (constant
        features are skipped and not counted). None examines every feature in index order.
    random_state : int, RandomState or None, default=None
        Seeds the feature draws and random thresholds; with an int results are reproducible.
    max_leaf_nodes : int, default=None
        Grow best-first (largest impurity decrease first) until this many leaves.
    min_impurity_decrease : float, default=0.0
        Split only if the weighted impurity decrease
        ``N_t / N * (impurity - N_tR / N_t * right_impurity - N_tL / N_t * left_impurity)``
        is at least this (the literature's minimum information gain, with entropy).
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning (0: no pruning), on the scale
        of ``ccp_risk`` divided by the root's weight (scikit-learn's scale).
    max_bins : int, default=255
        Bins per feature for ``splitter="hist"`` (2 to 255; a further bin is kept for missing
        values). Ignored by the other splitters and when a fitted ``binner`` is given.
    binner : Binner or None, default=None
        Bin edges for ``splitter="hist"``. A fitted :class:`treelearn.Binner` is used as is, so
        repeated fits (cross-validation, parameter searches: ``clone`` copies it with its edges)
        skip learning the edges; an unfitted one is fitted on X (its settings, e.g.
        ``subsample``, apply). None: a new ``Binner(max_bins)``. The binner used is kept as
        ``binner_``.
    categorical_features : "auto", list of int or str, boolean mask, or None, default="auto"
        Columns holding categories. "auto": a DataFrame's category, object, string and bool
        columns (none for arrays). Levels are learned at fit (``categories_``); missing values
        (None, NaN, ``pd.NA``) are allowed. A level not seen at fit is treated as a missing
        value at prediction time (routed by ``missing``), never an error.
    categorical_split : {"binary", "multiway"}, default="binary"
        "binary" (CART): the best subset of levels goes left (exact by Breiman's ordering for
        two classes and regression with the concave criteria; all subsets up to 10 levels
        otherwise, else the best cut over one ordering per class). "multiway" (ID3/C4.5): one
        branch per level present at the node; a level absent at the node is routed like a
        missing value. ``min_samples_leaf`` then asks at least two branches to be that large.
    missing : {"learn", "c45", "impute", "m5"}, default="learn"
        Missing values in X. "learn": each split learns the side for missing values
        (scikit-learn's rule; nodes that saw none send them to the child with more samples).
        "c45": C4.5's fractional cases (gain on the known values times their weight share; a
        case with an unknown value goes down every branch with that branch's share of the
        weight, at fit and at prediction). "impute": the node's median (numeric) or most
        frequent level (categorical) of the split feature. "m5" (regression only; M5', Wang &
        Witten 1997): splits scored like "c45", a case with an unknown value sent at fit to
        the branch whose mean target is nearest its own, and at prediction the way of the
        node's weighted average value (most frequent level) of the feature. Without missing
        values at fit the tree is the same for every choice; only the routing of later
        missing values differs.
    feature_costs : sequence or dict, default=None
        A positive cost per feature (or {index or name: cost}, others cost 1). Features are then
        chosen by ``cost_function`` applied to the split's gain (impurity decrease; in bits
        with entropy; gain ratio and chi-square use their own score).
    cost_function : {"tan", "nunez"}, default="tan"
        "tan": ``gain**2 / cost`` (Tan & Schlimmer 1990); "nunez": ``(2**gain - 1) /
        (cost + 1)**cost_weight`` (Nunez 1991).
    cost_weight : float, default=1.0
        Nunez's exponent ``w`` (0 ignores the costs).
    prune : {"cv", "reduced_error", "pessimistic", "mdl"} or None, default=None
        Post-pruning done by ``fit`` (:mod:`treelearn.pruning`). "cv": cost-complexity pruning
        with alpha chosen by cross-validation (``prune_cv``, ``prune_rule``; the table is kept
        as ``pruning_``, the alpha as ``ccp_alpha_``). "reduced_error": ``validation_fraction``
        of the rows is held out (stratified), the tree grows on the rest and every subtree
        whose replacement by a leaf does not raise the held-out error is replaced.
        "pessimistic" (C4.5, classifiers): a subtree becomes a leaf when the leaf's upper
        confidence limit of errors at ``confidence_factor`` is not higher. "mdl"
        (classifiers): a subtree is kept only if it shortens the description of tree plus
        class labels. The grown tree is kept as ``unpruned_tree_``.
    prune_cv : int or cross-validation splitter, default=10
        Folds for ``prune="cv"`` (stratified and shuffled for classifiers; fewer when the
        smallest class has fewer cases), or a splitter such as
        ``ShuffleSplit(n_splits=20, test_size=0.2)`` for repeated random splits.
    prune_rule : {"1se", "min"}, default="1se"
        "min": the alpha of the best cross-validated score; "1se": the smallest tree whose
        score is within one standard error of the best (Breiman et al.'s rule).
    ccp_risk : {"impurity", "misclassification"}, default="impurity"
        Leaf risk of cost-complexity pruning (``ccp_alpha`` and ``prune="cv"``): weighted
        impurity (scikit-learn's) or weighted misclassified cases (rpart's; classifiers).
    confidence_factor : float, default=0.25
        C4.5's CF for ``prune="pessimistic"`` (in (0, 1); smaller prunes more).
    subtree_raising : bool, default=False
        With ``prune="pessimistic"``: also let the subtree of a node's most used branch
        replace the node when that lowers the estimated errors of all the node's training
        cases (C4.5's subtree raising; class counts of the raised nodes recomputed).
    validation_fraction : float, default=0.2
        Share of the rows held out for ``prune="reduced_error"``.
    n_jobs : int, default=None
        Cross-validation folds fitted in parallel (joblib) for ``prune="cv"``.
    min_level_count : int, default=1
        Levels of a categorical feature with fewer rows than this at a node are pooled into
        one "other" group for ordering and routing (rare levels cannot win a split on their
        own). 1: no pooling. Levels unseen at fit keep their route (the missing branch).
    level_smoothing : float, default=0.0
        Binary subset splits order the levels by their class share (or mean target) shrunk
        toward the node's: ``(n_l * share_l + m * share_node) / (n_l + m)`` with ``m`` this
        value (the m-estimate; LightGBM's ``cat_smooth``). 0: the plain shares (Breiman's
        exact ordering).
    selection : {"auto", "criterion", "test", "screened"}, default="auto"
        "criterion": the criterion chooses feature and cut (scikit-learn's trees). "test": the
        split feature is the one with the smallest multiplicity-adjusted p-value
        of a test of independence between it and the target at the node (chi-square on the
        class x level table, or on quartile groups for numeric features; for regression on
        whether the target is above the node's mean), as in
        conditional inference trees (Hothorn, Hornik & Zeileis 2006) and GUIDE (Loh 2002),
        which removes the bias toward features with many levels; the criterion then chooses
        the cut. "screened": the test screens, the criterion chooses: the criterion's best
        among the features whose p-value at the node is below 0.01, and where none is, the
        smallest p-value as in "test"; a noise column passes the screen at about 1% of the
        nodes, while the real features keep the criterion's choice. See
        :mod:`treelearn.engine.selection` for the formulas and the measurements behind the
        rule. "auto" (fitted choice in ``selection_``): "screened" when a categorical
        feature has more than 20 levels, else "criterion" (so numeric data grows
        scikit-learn's tree, at its speed). Measured (``benchmarks/bench_selection.py``,
        ``max_depth=6, min_samples_leaf=20``, 3 seeds x 10-fold CV): a pure-noise column of
        30, 60 or 200 levels costs "auto" at most 0.24 points of accuracy on average on the
        credit, churn, churn-shaped and adult-shaped tables ("criterion": 0.2-4.2 points),
        and on tables with many-level columns "screened" is as accurate as "test" or more.
    selection_alpha : float, default=1.0
        With ``selection="test"`` or ``"screened"``: a node is not split when no feature
        passes the screen and no adjusted p-value is below this (1.0: never stop on it).
    average_gain : bool, default=False
        C4.5's rule: the gain ratio chooses only among tests whose gain is at least the
        average gain of the tests examined (Quinlan 1993, ch. 2).
    threshold_penalty : bool, default=False
        C4.5 Release 8's correction for numeric tests: the gain of a threshold test is
        lowered by ``log2(N - 1) / |D|`` (``N - 1`` candidate cuts, ``|D|`` the node's
        weight) before it competes (Quinlan 1996).
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotonic constraints, scikit-learn's: per feature 1 (predictions never decrease as
        the feature grows), -1 (never increase) or 0 (free); a dict maps feature names (or
        indices) to constraints, the others free. For classifiers the constraint is on the
        probability of the second class (``classes_[1]``); two classes only. A split on a
        constrained feature is taken only when its children's values are in the right
        order and within the bounds inherited from above, and every node's value is clipped
        to its bounds (scikit-learn's rule: the same trees). Numeric features only; not
        with ``criterion="absolute_error"``, linear leaves, C4.5's or M5's missing-value
        modes on data with missing values, or ``subtree_raising``.

    Notes
    -----
    With ``splitter="best"`` the fitted tree is the one scikit-learn grows with the same
    ``random_state``. Ties between equally good splits are broken as scikit-learn breaks them:
    features are examined in the order of scikit-learn's Fisher-Yates draw from
    ``random_state`` (its ``rand_r`` generator), the first best feature wins, and within a
    feature the smallest threshold. For regression targets that are not integers, splits that
    tie in exact arithmetic are decided by rounding, which can differ between the libraries.

    Trees with categorical features, missing values at fit or feature costs grow in the same
    compiled engine (:mod:`treelearn.engine`; both splitters, same stopping rules, same
    feature draw). On data with missing values, ``missing="learn"`` grows scikit-learn's
    tree. ``splitter="random"`` is not available there (a ValueError says so). Sparse X may
    not hold NaN.
"""


def _class_codes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``; integer labels of a small range by counting
    (a sort of a million labels took a tenth of a 1M-row hist fit)."""
    y = np.asarray(y)
    if y.ndim == 1 and y.size and y.dtype.kind in "iu":
        lo, hi = int(y.min()), int(y.max())
        if hi - lo < min(1 << 20, 8 * y.size):
            present = np.bincount((y - lo).astype(np.intp), minlength=hi - lo + 1) > 0
            lut = np.cumsum(present) - 1
            classes = (np.flatnonzero(present) + lo).astype(y.dtype)
            return classes, lut[(y - lo).astype(np.intp)]
    return np.unique(y, return_inverse=True)


def class_targets(y, sample_weight, n_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The class-target checks of a classifier that is not a tree of this module (the
    baselines, the optimal tree): ``y`` one column of class labels, the weights checked
    against ``n_rows``; returns ``(classes, codes, weights)``."""
    y = check_y_1d(y)
    check_classification_targets(y)
    w = check_sample_weight(sample_weight, n_rows)
    classes, codes = _class_codes(y)
    return classes, codes, w


class ProbaClassifierMixin:
    """``predict`` and ``predict_log_proba`` of a classifier from its ``predict_proba`` and
    ``classes_`` (trees with misclassification costs override ``predict``)."""

    @takes_rows("log_proba : ndarray of shape (n_samples, n_classes)")
    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (``-inf`` for probability zero)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """The class of highest :meth:`predict_proba` of each row (ties: the first in
        ``classes_``)."""
        proba = self.predict_proba(X)  # first: it checks that the model is fitted
        return self.classes_.take(np.argmax(proba, axis=1), axis=0)


class DecisionTreeClassifier(ProbaClassifierMixin, ClassifierMixin, BaseDecisionTree):
    __doc__ = """A decision tree classifier.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "misclassification", "gain_ratio", "chi2"}, \
default="gini"
        Split quality; see :mod:`treelearn.engine.criteria` for the formulas. Entropy is in bits.
    """ + _DOC_PARAMS + """
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied into the sample weights.
    misclassification_cost : array-like of shape (n_classes, n_classes), default=None
        ``C[i, j]``: cost of predicting class ``j`` (order of ``classes_``) for a case of class
        ``i``. ``predict`` returns the class of least expected cost
        ``sum_i p(i | leaf) C[i, j]``. Splits do not use it; to make them cost-sensitive,
        weight the classes (``class_weight``), Breiman et al.'s altered priors.

    Attributes
    ----------
""" + CLASS_ATTRIBUTES + _DOC_ATTRIBUTES + """
    """

    _criteria = CLASSIFICATION_CRITERIA

    def __init__(self, *, criterion="gini", splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 class_weight=None, ccp_alpha=0.0, max_bins=255, binner=None,
                 categorical_features="auto", categorical_split="binary", missing="learn",
                 feature_costs=None, cost_function="tan", cost_weight=1.0,
                 misclassification_cost=None, prune=None, prune_cv=10, prune_rule="1se",
                 ccp_risk="impurity", confidence_factor=0.25, subtree_raising=False,
                 validation_fraction=0.2, n_jobs=None, min_level_count=1,
                 level_smoothing=0.0, selection="auto", selection_alpha=1.0,
                 average_gain=False, threshold_penalty=False, monotonic_cst=None):
        keep_params(self, locals())

    def _constraints(self) -> dict:
        return {**super()._constraints(), **_MONOTONIC_CONSTRAINT,
                "class_weight": [InstanceOf((dict,), "a dict"), Options(("balanced",)), None],
                "misclassification_cost": [InstanceOf((list, tuple, np.ndarray),
                                                      "a square array-like"), None]}

    def _encode_target(self, y, w):
        check_classification_targets(y)
        classes, codes = _class_codes(y)
        self.classes_ = classes
        self.n_classes_ = int(classes.shape[0])
        if self.class_weight is not None:
            w = w * compute_sample_weight(self.class_weight, y)
        K = self.n_classes_
        self.cost_matrix_ = self._check_cost_matrix(K)
        return (codes.astype(np.int32), np.zeros(0), np.ascontiguousarray(w, dtype=np.float64),
                K, K, K)

    def _check_cost_matrix(self, K: int):
        C = self.misclassification_cost
        if C is None:
            return None
        C = np.asarray(C, dtype=np.float64)
        if C.shape != (K, K):
            raise ValueError(f"misclassification_cost must be a {K} x {K} matrix (true class x "
                             f"predicted class, in the order of classes_); got shape {C.shape}.")
        if not np.all(np.isfinite(C)) or np.any(C < 0.0):
            raise ValueError("misclassification_cost must be finite and non-negative.")
        return C

    @interruptible
    @takes_rows("proba : ndarray of shape (n_samples, n_classes)",
                "Columns in the order of ``classes_``.")
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities: the weighted class fractions of each sample's leaf."""
        X = self._validate_X_predict(X)
        proba = self.tree_.predict(X)[:, 0, :]
        normalizer = proba.sum(axis=1, keepdims=True)
        normalizer[normalizer == 0.0] = 1.0
        return proba / normalizer

    @interruptible
    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """Predicted class of each sample (the most probable class of its leaf; ties: first)."""
        X = self._validate_X_predict(X)
        proba = self.tree_.predict(X)[:, 0, :]
        if getattr(self, "cost_matrix_", None) is not None:
            # Least expected cost: sum_i p(i) C[i, j] over true classes i, for each prediction j.
            return self.classes_.take(np.argmin(expected_costs(proba, self.cost_matrix_),
                                                   axis=1), axis=0)
        return self.classes_.take(np.argmax(proba, axis=1), axis=0)


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    __doc__ = """A decision tree regressor.

    Parameters
    ----------
    criterion : {"squared_error", "absolute_error", "sdr"}, default="squared_error"
        "squared_error" minimises the weighted variance and predicts leaf means;
        "absolute_error" minimises the mean absolute deviation and predicts leaf weighted
        medians; "sdr" maximises the standard deviation reduction (Quinlan's M5) and predicts
        leaf means.
    """ + _DOC_PARAMS + """
    linear_leaves : bool, default=False
        Fit a linear model at every leaf (a model tree, :mod:`treelearn.model_trees`):
        after growing (and pruning), each node gets a least-squares model on the features
        ``linear_features`` allows (a categorical one with at most 32 levels as M5's
        synthetic binary attributes, levels ordered by mean target), from per-node
        sufficient statistics. ``prune="m5"``
        then prunes where a node's model is estimated no worse than its subtree.
    linear_features : {"subtree", "path"}, default="subtree"
        The features a node's model may use: those tested in its subtree (M5; a leaf of the
        grown tree is then a constant, made linear by smoothing and pruning), or those
        tested on the path from the root to it (LightGBM's ``linear_tree``).
    smoothing : float, default=15.0
        M5's smoothing constant ``k``: along the path from a leaf to the root each
        prediction is blended with the parent model's, ``(n p + k q) / (n + k)``, folded into
        the leaf's coefficients. 0 turns smoothing off. Used with ``linear_leaves``.
    drop_attributes : bool, default=True
        M5's greedy attribute dropping: remove the attribute whose removal raises the squared
        error least while the error estimate does not increase.
    ridge_alpha : float, default=0.0
        Ridge regularisation of the leaf models: each diagonal entry of the centred normal
        equations is multiplied by ``1 + ridge_alpha`` (ridge on standardized features).
    linear_estimate : {"m5", "weka"}, default="m5"
        The error estimate of dropping and M5 pruning: "m5", the book's
        ``mean |residual| * (n + v) / (n - v)``; "weka", Weka M5P's
        ``rmse * (n + 2 v) / (n - v)``.
    min_sd_fraction : float, default=0.0
        M5's stopping rule: a node whose target standard deviation is below this fraction
        of the root's is not split (M5 uses 0.05).
    Attributes
    ----------
""" + _DOC_ATTRIBUTES + """
    """

    _criteria = REGRESSION_CRITERIA

    def __init__(self, *, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, ccp_alpha=0.0, max_bins=255, binner=None,
                 categorical_features="auto", categorical_split="binary", missing="learn",
                 feature_costs=None, cost_function="tan", cost_weight=1.0, prune=None,
                 prune_cv=10, prune_rule="1se", ccp_risk="impurity", confidence_factor=0.25,
                 subtree_raising=False, validation_fraction=0.2, n_jobs=None,
                 min_level_count=1, level_smoothing=0.0, selection="auto",
                 selection_alpha=1.0, average_gain=False, threshold_penalty=False,
                 linear_leaves=False, linear_features="subtree", smoothing=15.0,
                 drop_attributes=True, ridge_alpha=0.0, linear_estimate="m5",
                 min_sd_fraction=0.0, monotonic_cst=None):
        keep_params(self, locals())

    def _constraints(self) -> dict:
        return {**super()._constraints(), **_MONOTONIC_CONSTRAINT,
                "linear_leaves": [InstanceOf((bool, np.bool_), "a bool")],
                "linear_features": [Options(FEATURE_SETS)],
                "smoothing": [Interval("real", 0.0, None), Interval("int", 0, None)],
                "drop_attributes": [InstanceOf((bool, np.bool_), "a bool")],
                "ridge_alpha": [Interval("real", 0.0, None), Interval("int", 0, None)],
                "linear_estimate": [Options(tuple(ESTIMATES))],
                "min_sd_fraction": [Interval("real", 0.0, 1.0, "left"),
                                    Interval("int", 0, 0)]}

    def _encode_target(self, y, w):
        if y.dtype.kind not in "biuf":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    "DecisionTreeRegressor needs a numeric target y; got values of dtype "
                    f"{y.dtype} that cannot be converted to float."
                ) from None
        y = np.ascontiguousarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        return np.zeros(0, dtype=np.int32), y, np.ascontiguousarray(w), 2, 1, 1

    @interruptible
    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """Predicted value of each sample (its leaf's mean or median, or its leaf's linear
        model with ``linear_leaves``)."""
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)[:, 0, 0]



def _preset_init(base: type, defaults: dict):
    """An ``__init__`` for a preset: ``base``'s parameters with other defaults. The signature
    is ``base``'s (scikit-learn reads parameters from it), so clone and get_params work."""
    sig = inspect.signature(base.__init__)
    names = [p for p in sig.parameters if p != "self"]
    params = [p.replace(default=defaults.get(p.name, p.default)) if p.name != "self" else p
              for p in sig.parameters.values()]
    base_defaults = {p.name: p.default for p in params if p.name != "self"}

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments "
                            f"{unknown}.")
        base.__init__(self, **{**base_defaults, **kwargs})

    __init__.__signature__ = sig.replace(parameters=params)
    return __init__


class ID3Classifier(DecisionTreeClassifier):
    """ID3 (Quinlan 1986): information gain, one branch per level of a categorical feature.

    A :class:`DecisionTreeClassifier` with ``criterion="entropy"`` (information gain in bits),
    ``categorical_split="multiway"`` and ``categorical_features="auto"``; grown until leaves
    are pure, not pruned, the feature chosen by the criterion (``selection="criterion"``).
    Numeric features get binary threshold splits (ID3 itself had none). Every parameter of
    :class:`DecisionTreeClassifier` can be set.
    """

    __init__ = _preset_init(DecisionTreeClassifier, {"criterion": "entropy",
                                                     "categorical_split": "multiway",
                                                     "selection": "criterion"})


class C45Classifier(DecisionTreeClassifier):
    """C4.5 (Quinlan 1993): gain ratio, multiway categorical splits, fractional missing values.

    A :class:`DecisionTreeClassifier` with ``criterion="gain_ratio"``,
    ``categorical_split="multiway"``, binary thresholds on numeric features, ``missing="c45"``
    (gain on known values scaled by their share; a case with an unknown value goes down every
    branch with a fraction of its weight) and ``min_samples_leaf=2`` (C4.5's minimum of two
    cases: binary splits need two per branch, multiway splits two in at least two branches)
    and ``prune="pessimistic"`` with ``confidence_factor=0.25`` and ``subtree_raising=True``
    (C4.5's error-based pruning; see :mod:`treelearn.pruning.pessimistic`). As C4.5 chooses
    tests: ``average_gain=True`` (the best gain ratio among tests of at least average gain)
    and ``threshold_penalty=True`` (Release 8: a numeric test's gain minus
    ``log2(N - 1) / |D|``), and ``selection="criterion"``.
    """

    __init__ = _preset_init(DecisionTreeClassifier, {"criterion": "gain_ratio",
                                                     "categorical_split": "multiway",
                                                     "missing": "c45", "min_samples_leaf": 2,
                                                     "prune": "pessimistic",
                                                     "subtree_raising": True,
                                                     "average_gain": True,
                                                     "threshold_penalty": True,
                                                     "selection": "criterion"})


class CARTClassifier(DecisionTreeClassifier):
    """CART classification trees (Breiman et al. 1984): gini, binary splits.

    A :class:`DecisionTreeClassifier` with ``criterion="gini"`` and binary splits everywhere:
    categorical features split into the best subset of levels (Breiman's ordering), missing
    values take a learned direction. Pruned as Breiman et al. and rpart prune: cost-complexity
    with the risk counted as misclassified cases (``ccp_risk="misclassification"``), alpha
    chosen by 10-fold cross-validation with the 1-SE rule (``prune="cv"``; the table is
    ``pruning_``).
    """

    __init__ = _preset_init(DecisionTreeClassifier, {"criterion": "gini",
                                                     "categorical_split": "binary",
                                                     "prune": "cv",
                                                     "ccp_risk": "misclassification"})


class CARTRegressor(DecisionTreeRegressor):
    """CART regression trees (Breiman et al. 1984): squared error, binary splits.

    A :class:`DecisionTreeRegressor` with ``criterion="squared_error"`` and binary splits
    (categorical levels ordered by their mean target, which finds the best subset exactly),
    pruned by cost-complexity with alpha chosen by 10-fold cross-validation and the 1-SE rule
    (``prune="cv"``).
    """

    __init__ = _preset_init(DecisionTreeRegressor, {"criterion": "squared_error",
                                                    "categorical_split": "binary",
                                                    "prune": "cv"})


class M5Regressor(DecisionTreeRegressor):
    """M5 model trees (Quinlan 1992; M5', Wang & Witten 1997): linear models at the leaves.

    A :class:`DecisionTreeRegressor` with ``criterion="sdr"`` (splits maximise the standard
    deviation reduction), ``min_samples_split=4`` and ``min_sd_fraction=0.05`` (a node with
    fewer than four cases, or a target standard deviation under 5% of the root's, is a leaf),
    ``linear_leaves=True`` (a model at every node on the attributes tested in its subtree,
    attributes dropped greedily while ``mean |residual| * (n + v) / (n - v)`` does not
    increase), ``prune="m5"`` (bottom-up, where the node's model is estimated no worse than
    its subtree) and ``smoothing=15``. Each step can be switched off: ``prune=None``,
    ``smoothing=0``, ``drop_attributes=False``; ``linear_estimate="weka"`` uses Weka M5P's
    estimate. Missing values are routed as M5' routes them (``missing="m5"``: by the target
    at fit, by the node's average value at prediction). See :mod:`treelearn.model_trees` for
    where this follows the book and where Weka differs.

    M5' routing of missing values is the book's, not the best for prediction: on the
    diamonds-like table of ``benchmarks/bench_model_trees.py`` with 10% of the cells missing,
    held-out RMSE was 1141 with ``missing="m5"`` against 634 with ``missing="learn"`` (and
    664 with ``"impute"``). Routing by the target at fit makes the training cases with a
    missing value look well placed, so the tree neither learns other features as stand-ins
    for the missing one nor prunes as much; at prediction they take the node's average way.
    For predictions on tables with holes, prefer ``missing="learn"``.
    """

    __init__ = _preset_init(DecisionTreeRegressor, {"criterion": "sdr",
                                                    "min_samples_split": 4,
                                                    "min_sd_fraction": 0.05,
                                                    "linear_leaves": True,
                                                    "prune": "m5",
                                                    "missing": "m5"})


#: The tree estimators (and what a model file may hold of them: :data:`treelearn.io.ESTIMATORS`).
__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "ID3Classifier", "C45Classifier",
           "CARTClassifier", "CARTRegressor", "M5Regressor"]
