"""Quantile regression forests (Meinshausen 2006, "Quantile regression forests", JMLR 7).

A regression forest's leaves hold more than their mean: the training targets that fell into
them. Weighting each training row by how often it shares a leaf with a new row (divided by
the leaf's size, per tree, with ``weighted_leaves``) gives an estimate of the whole
conditional distribution of ``y``, and so any quantile, prediction intervals included.

The API is the ``quantile-forest`` package's (Johnson 2024, JOSS 9(93):5976):
``predict(X, quantiles=..., interpolation=..., weighted_quantile=..., weighted_leaves=...,
aggregate_leaves_first=..., oob_score=..., indices=...)``, ``default_quantiles``, and the
same quantile definition (frequency weights: with whole-number weights NumPy's quantile of
each target repeated as often as its weight). The trees are scikit-learn's for the same
``random_state``, as for every forest here, and with the same trees both give the same
numbers (tested), with two exceptions where this one keeps to the definition: a position
that falls exactly on a block end or halfway is computed exactly here (quantile-forest
divides by the total weight first, so "lower", "higher", "midpoint" and "nearest" can take
the other neighbour there; NumPy agrees with this one), and equal targets are merged before
the quantile is read (quantile-forest reads tied rows in the order of an unstable sort, which
with fractional weights, ``weighted_leaves=True``, changes its answer).

Why the storage is as it is: the training rows of every tree's leaves are kept once, as one
list ordered by leaf (a pointer per leaf of every tree) holding each row's position in the
sorted targets (int32) and its weight (its bootstrap draws; without bootstrap its sample
weight): 12 bytes per (tree, drawn row). quantile-forest keeps a dense
``(n_trees, max_nodes, max_rows_per_leaf)`` int64 array, which with every row kept
(``max_samples_leaf=None``) grows with the largest leaf; its default keeps one random row per
leaf instead. Here every row is kept (Meinshausen's forest): there is no ``max_samples_leaf``.

Prediction (:func:`treelearn.engine.leaves.leaf_quantiles`) gathers, per row and on both
cores, the entries of its leaves into a per-thread accumulator indexed by target rank, sorts
only the ranks it touched, and reads the quantiles off the cumulative weights: the work is
the row's leaf entries, not the training set (quantile-forest clears an array of all training
rows per prediction row).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._docs import takes_rows
from .._interrupt import check as check_interrupt
from .._interrupt import interruptible
from .._memory import check as check_memory
from ..engine.config import get_num_threads
from ..engine.leaves import INTERPOLATIONS, leaf_quantiles, leaf_samples
from ._forest import (
    _FOREST_DOC,
    _RUN_DEFAULTS,
    _TREE_DEFAULTS,
    ExtraTreesRegressor,
    RandomForestRegressor,
    _forest_init,
)


def _check_quantiles(quantiles, name: str = "quantiles"):
    """``(sorted quantiles, order to put them back, scalar?)``, or ``None`` for "mean"."""
    if isinstance(quantiles, str):
        if quantiles == "mean":
            return None
        raise ValueError(f'{name} must be a float in [0, 1], a list of them, or "mean"; got '
                         f"{quantiles!r}.")
    scalar = isinstance(quantiles, Real)
    q = np.atleast_1d(np.asarray(quantiles, dtype=object))
    if q.ndim != 1 or q.size == 0 or not all(
            isinstance(v, Real) and not isinstance(v, bool) for v in q):
        raise ValueError(f'{name} must be a float in [0, 1], a list of them, or "mean"; got '
                         f"{quantiles!r}.")
    q = q.astype(np.float64)
    if not np.all((q >= 0.0) & (q <= 1.0)):
        raise ValueError(f"{name} must lie in [0, 1]; got {quantiles!r}.")
    order = np.argsort(q, kind="stable")
    return q[order], order, scalar or q.size == 1


class _QuantileForest:
    """What both quantile forests add to their forest: the leaves' training targets."""

    @takes_rows("shap_values : never returned", "The call raises TypeError (see above).")
    def shap_values(self, X):
        """Not computed: a quantile forest predicts quantiles of the training targets its
        leaves hold, not a mean of leaf values, and SHAP values add up only to the latter.
        Raises ``TypeError``."""
        raise TypeError(f"{type(self).__name__} predicts quantiles of the leaves' training "
                        "targets, which are not sums over its trees: SHAP values would not "
                        "add up to them. The trees' mean prediction is explained by "
                        "RandomForestRegressor(...).shap_values.")

    @takes_rows("shap_interaction_values : never returned",
                "The call raises TypeError, as :meth:`shap_values` does.")
    def shap_interaction_values(self, X):
        """Not computed, for the reason :meth:`shap_values` gives. Raises ``TypeError``."""
        return self.shap_values(X)

    @property
    def expected_value_(self):
        """Not defined (see :meth:`shap_values`)."""
        raise AttributeError(f"{type(self).__name__} has no expected_value_: see shap_values.")

    def fit(self, X, y, sample_weight=None):
        """Grow the forest on (X, y) and keep every tree's leaf rows (see the module notes).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        _check_quantiles(self.default_quantiles, "default_quantiles")
        if self.monotonic_cst is not None:
            raise ValueError(f"{type(self).__name__} does not take monotonic_cst: its quantiles "
                             "come from the training targets in the leaves, which no "
                             "constraint orders (the trees' mean predictions would be "
                             "monotone: RandomForestRegressor(monotonic_cst=...)).")
        super().fit(X, y, sample_weight)
        self._keep_leaf_samples(X, y, sample_weight)
        return self

    def _keep_leaf_samples(self, X, y, sample_weight) -> None:
        n = self._sampling["n_train"]
        T = len(self.estimators_)
        check_memory(n * T * 20.0, f"Keeping the leaf rows of {T} trees over {n:,} rows",
                     "Fewer trees, or max_samples (fewer rows per tree), need less.")
        leaves = np.ascontiguousarray(self.apply(X), dtype=np.int64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if self.bootstrap:
            weights = np.zeros((n, T))
            for t, tree in enumerate(self.estimators_):
                smp = self._sampling
                weights[:, t] = self._draw(int(tree.random_state), n, smp["n_features"],
                                           smp["n_draws"], smp["base_w"],
                                           np.zeros(n, int))[1]
                check_interrupt()
        else:
            sw = np.ones(n) if sample_weight is None else \
                np.asarray(sample_weight, dtype=np.float64)
            weights = np.repeat(sw[:, None], T, axis=1)
        order = np.argsort(y, kind="stable")
        sizes = leaves.max(axis=0) + 1
        offsets = np.zeros(T, np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        ptr, rank, weight = leaf_samples(leaves, weights, order, offsets, int(sizes.sum()))
        self._leaf_store = {"offsets": offsets, "sizes": sizes.astype(np.int64), "ptr": ptr,
                            "rank": rank, "weight": weight, "y_sorted": y[order]}

    @interruptible
    @takes_rows("y_pred : ndarray of shape (n_samples,) for one quantile or \"mean\", else "
                "(n_samples, n_quantiles)")
    def predict(self, X, quantiles=None, interpolation: str = "linear",
                weighted_quantile: bool = True, weighted_leaves: bool = False,
                aggregate_leaves_first: bool = True, oob_score: bool = False,
                indices=None) -> np.ndarray:
        """Quantiles of ``y`` given each row of ``X``, from the training targets in its leaves.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        quantiles : float, list of floats or "mean", default=None
            Each in [0, 1]; "mean": the leaves' weighted mean (the forest's mean prediction
            when ``weighted_leaves`` and ``aggregate_leaves_first=False``). None:
            ``default_quantiles``.
        interpolation : {"linear", "lower", "higher", "midpoint", "nearest"}, default="linear"
            Between two training targets, as NumPy's quantile methods of these names.
        weighted_quantile : bool, default=True
            Accepted for quantile-forest's API; its unweighted computation gives the same
            numbers, and so does this one (``weighted_leaves`` then has no effect).
        weighted_leaves : bool, default=False
            Give each tree's leaf the same weight, shared among its rows (Meinshausen's
            weights); otherwise every kept row weighs its number of draws.
        aggregate_leaves_first : bool, default=True
            One quantile of all trees' leaf rows together; otherwise the mean over trees of
            each leaf's own quantile.
        oob_score : bool, default=False
            Out-of-bag quantiles: each row of ``X`` is a training row (``indices`` says
            which; by default X is the training data in order) and reads only the trees that
            did not draw it. NaN for a row that every tree drew.
        indices : array-like of int, default=None
            With ``oob_score``: the training row of each row of ``X`` (-1: not a training
            row, every tree is read).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_quantiles)
        """
        check_is_fitted(self, "_leaf_store")
        if quantiles is None:
            quantiles = self.default_quantiles
        spec = _check_quantiles(quantiles)
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}; got "
                             f"{interpolation!r}.")
        for name, flag in (("weighted_quantile", weighted_quantile),
                           ("weighted_leaves", weighted_leaves),
                           ("aggregate_leaves_first", aggregate_leaves_first),
                           ("oob_score", oob_score)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool; got {flag!r}.")
        lx = np.ascontiguousarray(self.apply(X), dtype=np.int64)
        n, T = lx.shape
        use = np.zeros((0, 0), np.bool_)
        if oob_score:
            use = self._oob_use(n, indices)
        elif indices is not None:
            raise ValueError("indices are read only with oob_score=True.")
        store = self._leaf_store
        if spec is None:
            qs, order, scalar = np.zeros(0), np.zeros(1, np.intp), True
        else:
            qs, order, scalar = spec
        out = np.empty((n, max(qs.size, 1)))
        parts = get_num_threads()
        step = max(1, 2_000_000 // max(T, 1))
        for a in range(0, n, step):  # a Ctrl-C is taken between calls
            b = min(n, a + step)
            leaf_quantiles(lx[a:b], use[a:b] if use.size else use, store["offsets"],
                           store["sizes"], store["ptr"], store["rank"], store["weight"],
                           store["y_sorted"], qs, INTERPOLATIONS.index(interpolation),
                           bool(weighted_leaves and weighted_quantile),
                           bool(aggregate_leaves_first), spec is None, parts, out[a:b])
            check_interrupt()
        result = np.empty_like(out)
        result[:, order] = out
        return result[:, 0] if scalar else result

    def _oob_use(self, n: int, indices) -> np.ndarray:
        """(n, T) bool: which trees row ``i`` of X may read out of bag."""
        self._samples_known()
        n_train = self._sampling["n_train"]
        if indices is None:
            if n != n_train:
                raise ValueError(f"out-of-bag quantiles without indices need the training data: "
                                 f"X has {n} rows, the forest was fitted on {n_train}.")
            idx = np.arange(n)
        else:
            idx = np.asarray(indices)
            if idx.shape != (n,) or idx.dtype.kind not in "iu":
                raise ValueError(f"indices must hold one int per row of X ({n}); got "
                                 f"{idx.shape} of {idx.dtype}.")
            if np.any(idx >= n_train) or np.any(idx < -1):
                raise ValueError(f"indices must be training rows (0..{n_train - 1}) or -1.")
        if not self.bootstrap:
            raise ValueError("out-of-bag quantiles need bootstrap=True.")
        use = np.ones((n, len(self.estimators_)), np.bool_)
        train = idx >= 0
        for t, oob in enumerate(self.oob_masks()):
            use[train, t] = oob[idx[train]]
        return use


_QUANTILE_DOC = """    default_quantiles : float, list of floats or "mean", default=0.5
        What :meth:`predict` returns without ``quantiles`` (0.5: the conditional median).
"""


class RandomForestQuantileRegressor(_QuantileForest, RandomForestRegressor):
    __doc__ = ("""A quantile regression forest (Meinshausen 2006): a random forest regressor
    whose leaves keep their training targets, predicting any quantile of ``y`` given ``X``
    (see :mod:`treelearn.ensemble._quantile`; quantile-forest's API).
    """ + _FOREST_DOC.format(criterion="squared_error", tree="DecisionTreeRegressor",
                             splitter="best", max_features=1.0, bootstrap=True,
                             extra=_QUANTILE_DOC))
    __init__ = _forest_init({"n_estimators": 100, "default_quantiles": 0.5,
                             "criterion": "squared_error", "splitter": "best",
                             **_TREE_DEFAULTS, "max_features": 1.0, "bootstrap": True,
                             "oob_score": False, **_RUN_DEFAULTS})


class ExtraTreesQuantileRegressor(_QuantileForest, ExtraTreesRegressor):
    __doc__ = ("""Extremely randomized trees whose leaves keep their training targets,
    predicting quantiles of ``y`` given ``X`` (Meinshausen's weighting over extra trees; see
    :mod:`treelearn.ensemble._quantile`).
    """ + _FOREST_DOC.format(criterion="squared_error", tree="DecisionTreeRegressor",
                             splitter="random", max_features=1.0, bootstrap=False,
                             extra=_QUANTILE_DOC))
    __init__ = _forest_init({"n_estimators": 100, "default_quantiles": 0.5,
                             "criterion": "squared_error", **_TREE_DEFAULTS,
                             "max_features": 1.0, "bootstrap": False, "oob_score": False,
                             **_RUN_DEFAULTS})
