"""Oblique random forests: bagged trees whose splits are sparse random projections.

The forest of Tomita et al.'s SPORF ("Sparse Projection Oblique Randomer Forests", JMLR 2020;
YDF's ``split_axis="SPARSE_OBLIQUE"``): Breiman's random forest in which each node, instead
of drawing ``sqrt(p)`` features and splitting on one, draws ``n_projections`` sparse random
projections (each feature in one with probability ``projection_density / p``, weights +1 or
-1 over the feature's standard deviation) and splits on the best, ``w . x <= t``. It learns
rotated and interacting structure that axis-aligned forests approximate with staircases, and
keeps their robustness to noise features (a projection is sparse, so most touch few noise
columns).

The trees are :class:`~treelearn.ObliqueTreeClassifier` / ``Regressor`` with
``n_projections`` set (their SPORF search, :func:`treelearn.engine.oblique.best_projection`),
grown on bootstrap samples as the other forests' trees (one seed per tree drawn as
scikit-learn draws them; out-of-bag scores, importances, warm starts and model files as for
:class:`~treelearn.RandomForestClassifier`). Importances share an oblique split's impurity
decrease equally among its features (:meth:`treelearn._tree.Tree.compute_feature_importances`).

Each tree grows in one compiled loop (:func:`treelearn.engine.oblique.grow_projections`),
which releases the GIL, so ``n_jobs`` threads grow trees side by side. Not yet here, measured
in ``benchmarks/bench_oblique.py`` and the README: the axis-aligned forests' speed (their
trees scan ``sqrt(p)`` presorted columns, an oblique node sorts or bins ``p ** 2``
projections: 6-12 times their time at equal trees on most tables, up to 43 on eeg), and the
packed forest's prediction (it routes by one feature per node; an oblique forest walks its
trees one by one). Category columns and missing values are refused by name, as for the
oblique trees.
"""

from __future__ import annotations

from sklearn.base import ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils.validation import check_is_fitted

from .. import _members
from .._memory import check as check_memory
from .._memory import dense_shape
from .._validation import InstanceOf, Options
from ..oblique import (
    ObliqueTreeClassifier,
    ObliqueTreeRegressor,
    numeric_only,
    refuse_missing,
    refuse_sparse,
)
from ._forest import (
    _CLASS_WEIGHT_DOC,
    _ENSEMBLE_CONSTRAINTS,
    _Forest,
    _forest_init,
    _ForestClassifierMixin,
    _ForestRegressorMixin,
)

#: Parameters of an oblique forest passed to each of its trees.
OBLIQUE_TREE_PARAMS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                       "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                       "min_impurity_decrease", "ccp_alpha", "n_projections",
                       "projection_density")


class _TreeByTree:
    """What an oblique forest predicts through instead of a packed forest: nothing packed,
    every tree routes its own rows (:meth:`treelearn._tree.Tree.apply`)."""

    binary = stored = False

    def __init__(self, n_trees: int, n_values: int):
        self.n_trees = n_trees
        self.n_values = n_values

    @staticmethod
    def exact(X) -> bool:
        return False


class _ObliqueForest(_Forest):
    """Forests of oblique trees (SPORF)."""

    _shares_prepared_data = False
    #: What the shared forest machinery reads: the trees search their own splits.
    splitter = "best"

    def _template(self):
        params = {k: getattr(self, k) for k in OBLIQUE_TREE_PARAMS}
        return self._tree_class(max_cycles=0, n_starts=0, **params)

    def _constraints(self) -> dict:
        tree_c = _members.constraints(self._tree_class(criterion=self.criterion))
        out = {k: tree_c[k] for k in OBLIQUE_TREE_PARAMS}
        out["n_projections"] = [c for c in out["n_projections"] if c is not None]
        out.update(_ENSEMBLE_CONSTRAINTS)
        if is_classifier(self):
            out["class_weight"] = [InstanceOf((dict, list), "a dict"),
                                   Options(("balanced", "balanced_subsample")), None]
        return out

    def _check_memory(self, template, X, sample_weight, threads: int) -> None:
        if (shape := dense_shape(X)) is None:
            return
        n, p = shape
        # the float32 X, each growing tree's copy of its rows and its per-row statistics
        need = 4 * n * p * (1 + threads) + 8 * n * 6
        check_memory(need, f"Fitting {type(self).__name__} on {n:,} rows x {p:,} features",
                     "Fewer threads (n_jobs) need less.")

    def _pack_one(self, tree, cols, p: int):
        return None, tree.feature_importances_ if tree.tree_.node_count > 1 else None

    def _packed_pieces(self, n_old: int):
        return None

    def _pack(self, pieces=None, dims=None, new=None) -> None:
        members = list(self.estimators_)
        n_values = int(members[0].tree_.value.shape[2])
        self._packed = _TreeByTree(len(members), n_values)
        self._tree_importances = [t.feature_importances_ if t.tree_.node_count > 1 else None
                                  for t in members]

    def _validate_X_predict(self, X):
        check_is_fitted(self, "estimators_")
        refuse_sparse(X, type(self).__name__)
        X = _members.validate_rows(self, X)
        refuse_missing(X, type(self).__name__)
        return X

    def __sklearn_tags__(self):
        return numeric_only(super().__sklearn_tags__())


_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    criterion : str, default={criterion!r}
        Split criterion of every tree (see :class:`{tree}`).
    n_projections : int or "auto", default="auto"
        Sparse random projections tried at each node; "auto": ``n_features ** 2`` (at most
        6,000; why, in :func:`treelearn.oblique.resolve_projections`). Each is scored on
        binned values at nodes of 64 rows or more, the winner's threshold found exactly.
    projection_density : float, default=2.0
        Features per projection on average (SPORF's ``lambda``, YDF's
        ``projection_density_factor``, whose default 2 this is).
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_leaf_nodes,
    min_impurity_decrease, ccp_alpha
        As for :class:`{tree}`, for every tree.
    max_features : int, float, {{"sqrt", "log2"}} or None, default=None
        Features a node's projections may use (None: all; the projections' own sparsity
        randomises the trees).
    bootstrap : bool, default=True
        Draw each tree's rows with replacement (else every tree sees every row).
    oob_score : bool, default=False
        Score the forest on the rows each tree did not draw (``oob_score_``).
    n_jobs : int, default=None
        Trees grown at once on threads (None: 1; -1: all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds of the trees and their samples, drawn as scikit-learn draws them.
    warm_start : bool, default=False
        Keep the fitted trees and add ``n_estimators - len(estimators_)`` new ones.
    max_samples : int, float or None, default=None
        Rows drawn per tree with ``bootstrap``: all (None), a number, or a fraction.
{extra}
    Attributes
    ----------
    estimators_ : list of {tree}
        The fitted trees (each an ordinary treelearn tree: export, plot or save any one).
    feature_importances_ : ndarray of shape (n_features,)
        Mean impurity importance; an oblique split's decrease is shared equally by its
        features.
    oob_score_ : float
        With ``oob_score=True``.
"""

_DEFAULTS = {"max_depth": None, "min_samples_split": 2, "min_samples_leaf": 1,
             "min_weight_fraction_leaf": 0.0, "max_leaf_nodes": None,
             "min_impurity_decrease": 0.0, "ccp_alpha": 0.0, "max_features": None,
             "n_projections": "auto", "projection_density": 2.0, "bootstrap": True,
             "oob_score": False, "n_jobs": None, "random_state": None, "warm_start": False,
             "max_samples": None}


class ObliqueRandomForestClassifier(_ForestClassifierMixin, ClassifierMixin, _ObliqueForest):
    __doc__ = ("""A random forest of oblique trees (SPORF, Tomita et al. 2020): each split is
    the best of many sparse random projections ``w . x <= t``; class fractions averaged.
    Numeric features without missing values.
    """ + _DOC.format(criterion="gini", tree="ObliqueTreeClassifier",
                      extra=_CLASS_WEIGHT_DOC))
    _tree_class = ObliqueTreeClassifier
    __init__ = _forest_init({"n_estimators": 100, "criterion": "gini", **_DEFAULTS,
                             "class_weight": None})


class ObliqueRandomForestRegressor(_ForestRegressorMixin, RegressorMixin, _ObliqueForest):
    __doc__ = ("""A random forest of oblique regression trees (SPORF, Tomita et al. 2020):
    each split is the best of many sparse random projections; predictions averaged.
    Numeric features without missing values.
    """ + _DOC.format(criterion="squared_error", tree="ObliqueTreeRegressor", extra=""))
    _tree_class = ObliqueTreeRegressor
    __init__ = _forest_init({"n_estimators": 100, "criterion": "squared_error", **_DEFAULTS})
