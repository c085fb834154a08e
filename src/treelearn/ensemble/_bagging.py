"""Bagging (Breiman 1996) of any treelearn tree: "sample the training data m times, build a
classifier for each sample, and let the m classifiers vote".

The base tree keeps every one of its own parameters (a C4.5 tree with pessimistic pruning and
fractional missing values, a CART tree pruned by cross-validation, ...); bagging only decides
which rows (and, for random subspaces, which columns) each copy sees. Rows are drawn with
replacement (``bootstrap``) or without (subsampling); like a forest's, a sample is a vector of
integer weights on one prepared X. Columns drawn (``max_features`` < 1.0) give each tree its
own narrower X (Ho 1998, random subspaces); prediction maps the trees' features back.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, clone
from sklearn.utils import check_random_state

from .._estimators import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor
from .._validation import InstanceOf, Interval
from ..oblique import _ObliqueTree
from ._forest import (
    _ENSEMBLE_CONSTRAINTS,
    _BaseEnsemble,
    _forest_init,
    _ForestClassifierMixin,
    _ForestRegressorMixin,
)


def _count(spec, total: int, name: str) -> int:
    """An int ``spec`` (at most ``total``) or a fraction of ``total`` (at least one)."""
    if isinstance(spec, Integral):
        if spec > total:
            raise ValueError(f"{name}={spec} is larger than the number of "
                             f"{'samples' if name == 'max_samples' else 'features'} "
                             f"({total}); pass at most {total}, or a fraction in (0, 1].")
        return int(spec)
    return max(1, int(spec * total))


class _Bagging(_BaseEnsemble):
    _default_tree: type = DecisionTreeClassifier

    def _constraints(self) -> dict:
        out = dict(_ENSEMBLE_CONSTRAINTS)
        out["max_samples"] = [Interval("int", 1, None), Interval("real", 0.0, 1.0, "right")]
        out["max_features"] = [Interval("int", 1, None), Interval("real", 0.0, 1.0, "right")]
        out["bootstrap_features"] = [InstanceOf((bool, np.bool_), "a bool")]
        out["estimator"] = [InstanceOf((object,), "a treelearn tree"), None]
        return out

    def _template(self) -> BaseDecisionTree:
        est = self.estimator
        if est is None:
            return self._default_tree()
        if not isinstance(est, BaseDecisionTree):
            raise TypeError(f"estimator must be a treelearn tree (DecisionTreeClassifier, "
                            f"C45Classifier, ...); got {type(est).__name__}.")
        want = ClassifierMixin if self._default_tree is DecisionTreeClassifier else \
            RegressorMixin
        if not isinstance(est, want):
            kind = "classifier" if want is ClassifierMixin else "regressor"
            raise TypeError(f"{type(self).__name__} needs a {kind} tree as estimator; got "
                            f"{type(est).__name__}.")
        if isinstance(est, _ObliqueTree):
            # the packed forest routes by one feature per node
            raise ValueError(f"{type(self).__name__} does not take oblique trees as estimator; "
                             "use ObliqueRandomForestClassifier/Regressor (bagged oblique "
                             "trees, SPORF's random projections at each split).")
        if getattr(est, "linear_leaves", False):
            # the packed forest predicts leaf values; linear leaves would be dropped silently
            raise ValueError(f"{type(self).__name__} does not take model trees "
                             f"({type(est).__name__} with linear_leaves=True) as estimator; "
                             "use a constant-leaf tree.")
        return clone(est)

    def _validate_forest_params(self) -> None:
        from .._validation import validate_params

        validate_params(self, self._constraints())
        if not self.bootstrap and self.oob_score:
            raise ValueError("oob_score needs bootstrap=True (out-of-bag rows exist only for "
                             "bootstrap samples).")

    def _uses_subspaces(self) -> bool:
        return True

    @property
    def splitter(self) -> str:
        """The base tree's splitter (what inputs the ensemble accepts)."""
        return getattr(self.estimator, "splitter", "best")

    def _draw(self, seed, n, p, n_draws, base_w, ycls):
        rng = check_random_state(seed)
        k = _count(self.max_features, p, "max_features")
        cols = None
        if k < p or self.bootstrap_features:
            if self.bootstrap_features:
                cols = np.unique(rng.randint(0, p, k))
            else:
                cols = np.sort(rng.choice(p, k, replace=False))
        m = _count(self.max_samples, n, "max_samples")
        if self.bootstrap:
            if base_w is None:
                idx = rng.randint(0, n, m)
            else:
                idx = rng.choice(n, m, replace=True, p=base_w / base_w.sum())
            counts = np.bincount(idx, minlength=n)
        else:
            counts = np.zeros(n, dtype=np.int64)
            counts[rng.choice(n, m, replace=False)] = 1
        w = counts.astype(np.float64)
        if base_w is not None and not self.bootstrap:
            w = w * base_w
        return w, counts, cols


_BAGGING_DOC = """
    Parameters
    ----------
    estimator : treelearn tree, default=None
        The tree to bag, with all its parameters (any treelearn tree or preset: C4.5 with
        pruning and missing values, CART pruned by cross-validation, ...). None: a
        ``{tree}()``.
    n_estimators : int, default=10
        Number of trees.
    max_samples : int or float, default=1.0
        Rows drawn per tree: a number (at most n_samples) or a fraction of n_samples.
    max_features : int or float, default=1.0
        Columns per tree (random subspaces when fewer than all).
    bootstrap : bool, default=True
        Draw rows with replacement (else without: subsampling).
    bootstrap_features : bool, default=False
        Draw columns with replacement (repeats dropped).
    oob_score : bool, default=False
        Score on the rows each tree did not draw (``oob_score_``).
    n_jobs : int, default=None
        Trees grown at once on threads (None: 1; -1: all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds of the trees and their samples.
    warm_start : bool, default=False
        Keep the fitted trees and add new ones up to ``n_estimators``.

    Attributes
    ----------
    estimators_ : list of trees
        The fitted copies of the base tree.
    estimators_features_ : list of ndarray
        Columns of X each tree reads.
    feature_importances_ : ndarray of shape (n_features,)
        Mean impurity importance of the trees (over their columns).
"""

_BAGGING_DEFAULTS = {"estimator": None, "n_estimators": 10, "max_samples": 1.0,
                     "max_features": 1.0, "bootstrap": True, "bootstrap_features": False,
                     "oob_score": False, "warm_start": False, "n_jobs": None,
                     "random_state": None}


class BaggingClassifier(_ForestClassifierMixin, ClassifierMixin, _Bagging):
    __doc__ = ("""Bagged treelearn trees for classification: mean class fractions of copies of
    the base tree grown on resampled rows.
    """ + _BAGGING_DOC.format(tree="DecisionTreeClassifier"))
    _default_tree = DecisionTreeClassifier
    __init__ = _forest_init(_BAGGING_DEFAULTS, positional=("estimator",))
    class_weight = None  # bagging leaves class weights to the base tree

    def _base_weights(self, y, sw):
        return sw


class BaggingRegressor(_ForestRegressorMixin, RegressorMixin, _Bagging):
    __doc__ = ("""Bagged treelearn trees for regression: mean prediction of copies of the base
    tree grown on resampled rows.
    """ + _BAGGING_DOC.format(tree="DecisionTreeRegressor"))
    _default_tree = DecisionTreeRegressor
    __init__ = _forest_init(_BAGGING_DEFAULTS, positional=("estimator",))
