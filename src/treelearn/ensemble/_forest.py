"""Bagging, random forests and extra trees: many treelearn trees over one prepared X.

The literature's cure for a single tree's instability (Breiman 1996, "Bagging predictors";
Breiman 2001, "Random forests"; Geurts, Ernst & Wehenkel 2006, "Extremely randomized trees"):
grow many trees on resampled rows and let them vote (average their class fractions, or their
predictions for regression).

How a forest is fitted here, and why:

* X is validated and encoded once (categorical levels, missing values), the target once, and
  the engine's view of X is prepared once (:func:`treelearn._members.share`: the
  presorted lists for the exact splitters, the bin matrix for ``"hist"``). Each tree takes
  its rows out of that in linear time; sorting or binning per tree would cost more than
  growing a fully grown tree.
* A bootstrap sample is a vector of integer weights (how often each row was drawn), as in
  scikit-learn: rows drawn zero times take no part in the tree, rows drawn twice weigh two.
  X is never copied row by row for a tree (only the bins or sorted lists of its rows).
* The random numbers are scikit-learn's: one ``randint(2**31 - 1)`` per tree from
  ``check_random_state(random_state)`` becomes the tree's ``random_state``; its bootstrap is
  ``RandomState(seed).randint(0, n, n_samples_bootstrap)`` (or a draw proportional to the
  sample weights); the tree's splitter seed comes from its ``random_state`` exactly as in a
  single treelearn tree. So with ``splitter="best"`` (or ``"random"`` for extra trees) and the
  same integer ``random_state``, every tree equals scikit-learn's tree of the same index (on
  data without ties) and the forests predict the same.
* Trees are grown side by side on ``n_jobs`` threads (the compiled loops release the GIL);
  each keeps to one thread then, so that two-level parallelism does not oversubscribe.
* Prediction walks all trees in one compiled loop (:mod:`._packed`).
"""

from __future__ import annotations

import os
import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from .. import _members, _shap
from .._docs import SHAP_INTERACTION_RETURNS, SHAP_RETURNS, fits, takes_rows
from .._estimators import (
    _COMMON_CONSTRAINTS,
    MAX_INT,
    BaseDecisionTree,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ProbaClassifierMixin,
    monotonic_constraints,
    resolve_max_features,
)
from .._interrupt import check as check_interrupt
from .._interrupt import interruptible, map_threads
from .._memory import check as check_memory
from .._memory import dense_shape
from .._tree import CHECK_TRUSTED
from .._validation import (
    RANDOM_STATE,
    InstanceOf,
    Interval,
    Options,
    check_y_missing,
    validate_params,
)
from ..engine.build import RANKED_FRACTION, fit_bytes, memory_alternatives, ranked_bytes
from ..engine.compiling import beside_also
from ..engine.nodes import release_tree_arrays
from ._packed import Members, PackedForest
from ._packed import later_kernels as packing_kernels
from ._proximity import ProximityMixin

#: Parameters of a forest that are passed to each of its trees.
TREE_PARAMS = ("criterion", "splitter", "max_depth", "min_samples_split", "min_samples_leaf",
               "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
               "min_impurity_decrease", "ccp_alpha", "max_bins", "categorical_features",
               "categorical_split", "missing", "selection", "monotonic_cst")

_ENSEMBLE_CONSTRAINTS = {
    "n_estimators": [Interval("int", 1, None)],
    "bootstrap": [InstanceOf((bool, np.bool_), "a bool")],
    "oob_score": [InstanceOf((bool, np.bool_), "a bool")],
    "n_jobs": [Interval("int", None, None), None],
    "random_state": [RANDOM_STATE, None],
    "warm_start": [InstanceOf((bool, np.bool_), "a bool")],
    "max_samples": [Interval("int", 1, None), Interval("real", 0.0, 1.0, "right"), None],
}


def n_threads(n_jobs: int | None) -> int:
    """Threads for ``n_jobs`` (joblib's convention: None is 1, -1 all cores, -2 all but one)."""
    cores = os.cpu_count() or 1
    if n_jobs is None or n_jobs == 0:
        return 1
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return int(n_jobs)


def n_samples_bootstrap(n: int, max_samples, sample_weight: np.ndarray | None) -> int:
    """Rows drawn per tree: all ``n`` (None), ``max_samples`` (an int, at most ``n``), or that
    fraction of ``n`` (of the weights' total when weights are given), at least one; as
    scikit-learn's forests."""
    if max_samples is None:
        return n
    if isinstance(max_samples, Integral):
        if max_samples > n:
            raise ValueError(f"max_samples={max_samples} is larger than the number of samples "
                             f"({n}); pass at most {n}, or a fraction in (0, 1].")
        return int(max_samples)
    total = n if sample_weight is None else float(sample_weight.sum())
    return max(int(max_samples * total), 1)


def bootstrap_counts(seed: int, n: int, n_draws: int,
                     sample_weight: np.ndarray | None) -> np.ndarray:
    """How often each row is drawn into the bootstrap sample of the tree with
    ``random_state=seed``: ``n_draws`` draws with replacement, uniform or proportional to
    ``sample_weight`` (scikit-learn's ``_generate_sample_indices``, draw for draw)."""
    rng = check_random_state(seed)
    if sample_weight is None:
        idx = rng.randint(0, n, n_draws)
    else:
        idx = rng.choice(n, n_draws, replace=True, p=sample_weight / np.sum(sample_weight))
    return np.bincount(idx, minlength=n)


def _fit_columns(tree, cols: np.ndarray, X, X_raw, y, w: np.ndarray, target) -> None:
    """Fit ``tree`` on the columns ``cols`` of the encoded ``X`` (a random subspace): its
    fitted data attributes are narrowed to those columns first, and so are its monotonic
    constraints."""
    if getattr(tree, "monotonic_cst", None) is not None:
        tree.monotonic_cst = monotonic_constraints(tree)[cols]
    tree.is_categorical_ = tree.is_categorical_[cols]
    tree.categories_ = [tree.categories_[c] for c in cols]
    tree.n_features_in_ = len(cols)
    if hasattr(tree, "feature_names_in_"):
        tree.feature_names_in_ = tree.feature_names_in_[cols]
    raw = X_raw.iloc[:, cols] if hasattr(X_raw, "iloc") else np.asarray(X_raw)[:, cols]
    _members.fit_member(tree, X[:, cols], raw, y, target)


class _BaseEnsemble(ProximityMixin, BaseEstimator):
    """Trees grown on resampled rows of one prepared X, averaged (not for direct use)."""

    def _constraints(self) -> dict:
        return dict(_ENSEMBLE_CONSTRAINTS)

    def _template(self) -> BaseDecisionTree:  # pragma: no cover - overridden
        raise NotImplementedError

    def _validate_forest_params(self) -> None:
        validate_params(self, self._constraints())
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("max_samples needs bootstrap=True: without bootstrap every tree "
                             "sees every row.")
        if not self.bootstrap and self.oob_score:
            raise ValueError("oob_score needs bootstrap=True (out-of-bag rows exist only for "
                             "bootstrap samples).")

    def _draw(self, seed: int, n: int, p: int, n_draws: int | None, base_w,
              ycls: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """The tree's weights of the rows, its bootstrap counts (None without bootstrap), and
        its columns (None: all)."""
        if not self.bootstrap:
            return (np.ones(n) if base_w is None else base_w), None, None
        counts = bootstrap_counts(seed, n, n_draws, base_w)
        w = counts.astype(np.float64)
        if getattr(self, "class_weight", None) == "balanced_subsample":
            drawn = np.repeat(np.arange(n), counts)
            w = w * compute_sample_weight("balanced", ycls, indices=drawn)
        return w, counts, None

    @interruptible
    @fits(X="Training data (DataFrames with categorical columns and missing values as for a "
            "single tree).",
          y="Class labels or regression targets.",
          sample_weight="Non-negative weights. With ``bootstrap=True`` rows are drawn with "
                        "probability proportional to their weight (and then weigh their number "
                        "of draws), as in scikit-learn >= 1.7; otherwise every tree uses them as "
                        "weights.")
    def fit(self, X, y, sample_weight=None):
        """Grow the ensemble's trees on (X, y)."""
        self._validate_forest_params()
        template = self._template()
        _members.check_params(template)
        check_y_missing(y)
        threads = min(n_threads(self.n_jobs), self.n_estimators)
        self._check_memory(template, X, sample_weight, threads)
        X, X_raw, y, sw = _members.prepare(template, X, y, sample_weight)
        n = X.shape[0]
        target = _members.encode_target(template, y, np.ones(n) if sw is None else sw)
        ycls = target.ycls
        base_w = self._base_weights(y, sw)
        n_draws = n_samples_bootstrap(n, self.max_samples, base_w) if self.bootstrap else None

        rng = check_random_state(self.random_state)
        old = list(getattr(self, "estimators_", [])) if self.warm_start else []
        more = self.n_estimators - len(old)
        if more < 0:
            raise ValueError(f"n_estimators={self.n_estimators} must be at least "
                             f"len(estimators_)={len(old)} when warm_start=True.")
        if more == 0:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit "
                          "new trees.", UserWarning, stacklevel=2)
            return self
        if old:
            rng.randint(MAX_INT, size=len(old))  # the seeds the earlier trees used
        seeds = [int(rng.randint(MAX_INT)) for _ in range(more)]
        data = _members.learned(template)
        own = _members.encode_target(template, y, np.ones(n)).w  # the base tree's class weights
        shared = None
        if not sp.issparse(X) and self._shares_prepared_data:
            w_bin = np.ones(n) if base_w is None else base_w
            shared = _members.share(template, X, w_bin, seeds[0], parallel=threads == 1)
            data = _members.learned(template)  # with the binner_ of "hist"
        p = X.shape[1]

        def grow(k: int):
            check_interrupt()
            seed = seeds[k]
            w, _, cols = self._draw(seed, n, p, n_draws, base_w, ycls)
            w = w * own
            tree = _members.new_member(template, seed, data)
            tgt = target.weighted(w)
            if cols is None:
                _members.fit_member(tree, X, X_raw, y, tgt, shared)
            else:
                _fit_columns(tree, cols, X, X_raw, y, w, tgt)
            # packed here, on the tree's thread: packing is as long as a small tree's fit
            piece = self._pack_one(tree, cols, p)
            dims = None
            if piece[0] is not None and piece[0].stored:
                # the packed records keep the tree (Members rebuilds it when asked for): the
                # fit's peak memory holds each tree once, compactly, and the thread's next
                # tree reuses its arrays
                dims = (tree.tree_.n_features, tree.tree_.n_classes)
                if shared is not None:
                    release_tree_arrays(tree.tree_, shared.scratch)
                del tree.tree_
            return tree, cols, piece, dims

        old_pack = self._packed_pieces(len(old)) if old else []
        with beside_also(packing_kernels):  # compiled beside the first tree's grower
            if threads == 1:
                grown = [grow(k) for k in range(more)]
            else:
                grown = map_threads(grow, range(more), threads)
        self.estimators_ = old + [t for t, _, _, _ in grown]
        if self._uses_subspaces():
            old_cols = list(getattr(self, "estimators_features_", [])) if old else []
            self.estimators_features_ = old_cols + [
                np.arange(p) if c is None else c for _, c, _, _ in grown]
        # what redraws each tree's sample (out-of-bag rows), with the trees' random_state
        self._sampling = {"n_draws": n_draws, "n_train": n, "n_features": p,
                          "base_w": base_w}
        self.__dict__.update(data)
        self.n_outputs_ = 1
        pieces = None if old_pack is None else old_pack + [q for _, _, q, _ in grown]
        self._pack(pieces, [None] * len(old) + [d for _, _, _, d in grown],
                   [q for _, _, q, _ in grown])
        if self.oob_score:
            self._set_oob(X, y, ycls)
        else:
            for stale in ("oob_score_", "oob_decision_function_", "oob_prediction_"):
                self.__dict__.pop(stale, None)
        return self

    def _adopt(self, trees: list):
        """This ensemble fitted with ``trees``: fitted trees of its kind on the same features,
        grown elsewhere (:mod:`treelearn.dask`). Their samples are not known here, so
        out-of-bag estimates raise; everything else works as after :meth:`fit`."""
        if not trees:
            raise ValueError("an ensemble needs at least one tree.")
        own = {"tree_", "max_features_", "pruning_", "selection_"}  # each tree's own
        data = {k: v for k, v in vars(trees[0]).items()
                if k.endswith("_") and not k.startswith("_") and k not in own}
        self.estimators_ = list(trees)
        self._sampling = None
        self.__dict__.update(data)
        self.n_outputs_ = 1
        for stale in ("oob_score_", "oob_decision_function_", "oob_prediction_"):
            self.__dict__.pop(stale, None)
        self._pack()
        return self

    def _samples_known(self) -> None:
        """Raise unless this ensemble can redraw its trees' samples (out-of-bag rows)."""
        if getattr(self, "_sampling", None) is None:
            raise ValueError("this ensemble's trees were grown elsewhere (treelearn.dask draws "
                             "Poisson bootstrap counts on the cluster): their samples, and "
                             "out-of-bag estimates, are not known here.")

    # -- hooks of the ensemble kinds -------------------------------------------------------------
    #: Whether the trees grow from one prepared X (the axis-aligned engine's presorted lists
    #: or bins); trees that read X itself (oblique ones) set it False.
    _shares_prepared_data = True

    def _uses_subspaces(self) -> bool:
        return False

    def _base_weights(self, y, sw):
        return sw

    def _check_memory(self, template, X, sample_weight, threads: int) -> None:
        if (shape := dense_shape(X)) is None:
            return
        n, p = shape
        n_stats = 4 if is_classifier(template) else 0
        if self._ranked_likely(template, X, p):
            need = ranked_bytes(n, p, n_stats, threads)
        else:
            one = fit_bytes(n, p, template.splitter, n_stats, True, None,
                            int(template.max_bins))
            # the shared presort or bins, plus one tree's buffers per thread
            need = one * (1 + threads) + 4 * n * p
        what = (f"Fitting {type(self).__name__}(splitter={template.splitter!r}, "
                f"n_jobs={self.n_jobs}) on {n:,} rows x {p:,} features")
        alt = memory_alternatives(template.splitter, n, p, n_stats, True)
        check_memory(need, what, alt + " Fewer threads (n_jobs) need less too.")

    @staticmethod
    def _ranked_likely(template, X, p: int) -> bool:
        """Whether the trees will grow with the ranked splitter
        (:func:`treelearn.engine.layouts.ranked.ranked_applies`), as far as the settings and
        the kind of X tell before X is validated (a DataFrame may hold categories: no)."""
        try:
            mf = resolve_max_features(template.max_features, p)
        except ValueError:
            return False
        return (template.splitter != "hist" and isinstance(X, np.ndarray)
                and template.categorical_features in (None, "auto")
                and template.max_leaf_nodes is None and template.criterion != "absolute_error"
                and template.missing != "c45" and template.feature_costs is None
                and template.selection not in ("test", "screened") and not template.average_gain
                and not template.threshold_penalty and RANKED_FRACTION * mf <= p)

    # -- prediction ----------------------------------------------------------------------------
    def _pack_one(self, tree, cols, p: int) -> tuple[PackedForest, np.ndarray | None]:
        """One tree packed (:meth:`_pack`) and its importances over the ``p`` columns."""
        piece = PackedForest([tree.tree_], None if cols is None else [cols],
                             normalize=is_classifier(self), store=True,
                             crit=_members.criterion_code(tree),
                             verify=CHECK_TRUSTED)
        return piece, tree.feature_importances_ if tree.tree_.node_count > 1 else None

    def _packed_pieces(self, n_old: int) -> list | None:
        """The pieces :meth:`_pack` starts from when a warm start adds trees to ``n_old``
        fitted ones: their packed forest and importances (None: pack all trees anew)."""
        packed = getattr(self, "_packed", None)
        if packed is None or packed.n_trees != n_old or not (packed.binary and packed.stored):
            return None
        return [(packed, list(self._tree_importances))]

    def _pack(self, pieces: list | None = None, dims: list | None = None,
              new: list | None = None) -> None:
        """Pack the trees for prediction; where the packed records can also store them (binary
        numeric trees), the members keep no tree of their own: :class:`Members` rebuilds one
        when it is asked for. ``pieces``: the trees already packed in order, with their
        importances (:meth:`_pack_one`), joined here when they all store their trees.
        ``dims``: each member's ``(n_features, n_classes)`` where the fit dropped its tree
        after packing it (None where it kept it); ``new``: the pieces of the trees grown by
        this fit, the last ones, from which such a tree is rebuilt when the pieces are not
        joined."""
        members = list(self.estimators_)
        if dims is not None and pieces is None or dims is not None and any(
                not (q.binary and q.stored) for q, _ in pieces):
            # not joined: every tree is packed anew from its own arrays
            first = len(members) - len(new)
            for k, d in enumerate(dims[first:]):
                if d is not None:
                    members[first + k].tree_ = new[k][0].tree(0, *d)
            dims = None
        packed = None
        if pieces is not None:
            packed = PackedForest.concat([q for q, _ in pieces])
        if packed is not None:
            self._tree_importances = [imp for _, i in pieces
                                      for imp in (i if isinstance(i, list) else [i])]
        else:
            feats = getattr(self, "estimators_features_", None)
            template = self._template()
            crit = _members.criterion_code(template)
            packed = PackedForest([t.tree_ for t in members], feats,
                                  normalize=is_classifier(self), store=True, crit=crit)
            # each tree's importances now: afterwards a tree is rebuilt only when asked for
            self._tree_importances = [t.feature_importances_ if t.tree_.node_count > 1
                                      else None for t in members]
        self._packed = packed
        if packed.stored:
            self.estimators_ = Members(packed, members, dims)

    @interruptible
    @takes_rows(*SHAP_RETURNS)
    def shap_values(self, X) -> np.ndarray:
        """Exact SHAP values of the predictions: the mean over the trees of each tree's
        path-dependent TreeSHAP values (see :meth:`DecisionTreeClassifier.shap_values`), one
        per input column."""
        X = self._validate_X_predict(X)
        return _shap.ensemble_shap(self, X, is_classifier(self))

    @interruptible
    @takes_rows(*SHAP_INTERACTION_RETURNS)
    def shap_interaction_values(self, X) -> np.ndarray:
        """Exact SHAP interaction values of the predictions: the mean over the trees of each
        tree's (see :meth:`DecisionTreeClassifier.shap_interaction_values`)."""
        X = self._validate_X_predict(X)
        return _shap.ensemble_shap(self, X, is_classifier(self), interactions=True)

    @property
    def expected_value_(self):
        """The prediction with no column known: the mean of the trees' expected values (a
        float, or one value per class)."""
        check_is_fitted(self, "estimators_")
        return _shap.ensemble_expected_value(self, is_classifier(self))

    def _validate_X_predict(self, X):
        check_is_fitted(self, "estimators_")
        # the forest holds what validation learned at fit (levels, names, width)
        X = _members.validate_rows(self, X)
        if self.splitter == "random" and not sp.issparse(X) and np.isnan(X).any():
            raise ValueError(f"Input X contains NaN: {type(self).__name__} with random splits "
                             "was fitted without missing values and has no rule for them.")
        return X

    def _tree_inputs(self, X):
        """(tree, X as that tree reads it) for every tree."""
        feats = getattr(self, "estimators_features_", None)
        for k, t in enumerate(self.estimators_):
            yield t, (X if feats is None else X[:, feats[k]])

    def _value_sum(self, X) -> np.ndarray:
        """Sum over trees of each row's value (class fractions or prediction)."""
        if not sp.issparse(X) and self._packed.exact(X):
            return self._packed.sum(X)
        out = np.zeros((X.shape[0], self._packed.n_values))
        for t, Xt in self._tree_inputs(X):
            out += self._tree_values(t, Xt)
            check_interrupt()
        return out

    @interruptible
    @takes_rows("X_leaves : ndarray of shape (n_samples, n_estimators)",
                "Node index of each sample's leaf in each tree.")
    def apply(self, X) -> np.ndarray:
        """Leaf index of every sample in every tree."""
        X = self._validate_X_predict(X)
        if not sp.issparse(X) and self._packed.exact(X):
            return self._packed.apply(X)
        return np.column_stack([t.tree_.apply(Xt) for t, Xt in self._tree_inputs(X)])

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean of the trees' normalized impurity importances (trees of one node left out),
        normalized to sum to one; zeros when every tree is a single leaf (scikit-learn's
        definition)."""
        check_is_fitted(self, "estimators_")
        p = self.n_features_in_
        imps = []
        feats = getattr(self, "estimators_features_", None)
        for k, imp in enumerate(self._tree_importances):
            if imp is None:
                continue
            if feats is not None:
                full = np.zeros(p)
                full[feats[k]] = imp
                imp = full
            imps.append(imp)
        if not imps:
            return np.zeros(p)
        mean = np.mean(imps, axis=0, dtype=np.float64)
        return mean / mean.sum()

    def __len__(self) -> int:
        return len(self.estimators_)

    def __getitem__(self, i):
        return self.estimators_[i]

    def __iter__(self):
        return iter(self.estimators_)

    # -- out of bag ----------------------------------------------------------------------------
    def oob_masks(self):
        """For every tree, the boolean mask of the training rows it did not draw."""
        check_is_fitted(self, "estimators_")
        if not self.bootstrap:
            raise ValueError("out-of-bag rows exist only with bootstrap=True.")
        self._samples_known()
        smp = self._sampling
        n = smp["n_train"]
        for tree in self.estimators_:
            yield self._draw(int(tree.random_state), n, smp["n_features"], smp["n_draws"],
                             smp["base_w"], np.zeros(n, int))[1] == 0

    def _training_rows(self, X, y):
        """X (validated) and y as codes (classifiers) or floats: the training data again."""
        X = self._validate_X_predict(X)
        self._samples_known()
        n = self._sampling["n_train"]
        if n is None or X.shape[0] != n:
            raise ValueError(f"out-of-bag estimates need the training data: X has "
                             f"{X.shape[0]} rows, the ensemble was fitted on {n}.")
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must have one value per row ({n}); got shape {y.shape}.")
        if is_classifier(self):
            index = {c: k for k, c in enumerate(self.classes_.tolist())}
            try:
                y = np.array([index[v] for v in y.tolist()])
            except KeyError as exc:
                raise ValueError(f"y holds the label {exc.args[0]!r}, not one of classes_."
                                 ) from None
        return X, y.astype(np.float64) if not is_classifier(self) else y

    def _tree_values(self, tree, X) -> np.ndarray:
        """One tree's values for the rows of X (class fractions for classifiers)."""
        v = tree.tree_.predict(X)[:, 0, :]
        if is_classifier(self):
            s = v.sum(axis=1, keepdims=True)
            s[s == 0.0] = 1.0
            v = v / s
        return v

    def oob_error_curve(self, X, y) -> np.ndarray:
        """Out-of-bag error after each tree: ``curve[k]`` is the error of the first ``k + 1``
        trees on the training rows that at least one of them left out (misclassified share,
        or mean squared error for regression; NaN while no row has a vote).

        Parameters
        ----------
        X, y : the training data the ensemble was fitted on.

        Returns
        -------
        curve : ndarray of shape (n_estimators,)
        """
        X, y = self._training_rows(X, y)
        n = X.shape[0]
        acc = np.zeros((n, self._packed.n_values))
        hits = np.zeros(n, dtype=np.int64)
        out = np.empty(len(self.estimators_))
        for k, ((t, Xt), oob) in enumerate(zip(self._tree_inputs(X), self.oob_masks(),
                                               strict=True)):
            if oob.any():
                acc[oob] += self._tree_values(t, Xt[oob])
                hits[oob] += 1
            seen = hits > 0
            if not seen.any():
                out[k] = np.nan
            elif is_classifier(self):
                out[k] = float(np.mean(np.argmax(acc[seen], axis=1) != y[seen]))
            else:
                out[k] = float(np.mean((acc[seen, 0] / hits[seen] - y[seen]) ** 2))
            check_interrupt()
        return out

    def oob_permutation_importances(self, X, y, n_repeats: int = 3,
                                    random_state=0) -> np.ndarray:
        """Breiman's (2001) importances: per tree, the drop of its score on its out-of-bag
        rows when one feature's values are shuffled among them, averaged over trees and
        ``n_repeats`` shuffles (accuracy for classifiers, negative squared error for
        regressors; larger: more important).

        Parameters
        ----------
        X, y : the training data the ensemble was fitted on.
        n_repeats : int, default=3
        random_state : int, RandomState or None, default=0

        Returns
        -------
        importances : ndarray of shape (n_features,)
        """
        from sklearn.utils import check_random_state

        X, y = self._training_rows(X, y)
        rng = check_random_state(random_state)
        p = X.shape[1]
        feats = getattr(self, "estimators_features_", None)
        total = np.zeros(p)
        count = 0
        for k, (t, oob) in enumerate(zip(self.estimators_, self.oob_masks(), strict=True)):
            rows = np.flatnonzero(oob)
            if rows.size == 0:
                continue
            cols = np.arange(p) if feats is None else feats[k]
            Xo = np.ascontiguousarray(X[rows][:, cols])
            base = self._oob_score_of(t, Xo, y[rows])
            for j_local, j in enumerate(cols):
                drop = 0.0
                for _ in range(n_repeats):
                    Xs = Xo.copy()
                    Xs[:, j_local] = Xs[rng.permutation(rows.size), j_local]
                    drop += base - self._oob_score_of(t, Xs, y[rows])
                total[j] += drop / n_repeats
            count += 1
            check_interrupt()
        return total / max(count, 1)

    def oob_impurity_importances(self, X, y) -> np.ndarray:
        """Impurity importances corrected with out-of-bag rows: MDI-oob (Li, Wang, Basu,
        Kumbier & Yu 2019, "A debiased MDI feature importance measure for random forests",
        NeurIPS).

        The impurity importance (``feature_importances_``) is the sum over a tree's training
        rows of what its splits on a feature move each row's prediction towards the row's
        target (``Tree.held_out_decreases``: for Gini and squared error exactly the impurity
        decrease). On its own rows a tree can always move the prediction towards the target,
        also by splitting on noise, and a feature with many values offers more such splits:
        the bias against which scikit-learn's documentation warns. Summed over the rows a
        tree did not draw instead, a split on noise helps as often as it hurts, so a noise
        feature's importance is near zero (it can be negative), whatever its number of
        values. Per tree the sum is divided by the out-of-bag weight; the result is the mean
        over the trees with out-of-bag rows, not normalized.

        For classification the targets are the one-hot classes (the Gini form), whatever the
        trees' criterion; for regression the values minus the tree's training mean (the
        root's value; for in-bag rows this changes nothing, out of bag it makes the measure
        independent of a constant added to ``y``).

        Parameters
        ----------
        X, y : the training data the ensemble was fitted on (bootstrap samples only).

        Returns
        -------
        importances : ndarray of shape (n_features,)
        """
        X, y = self._training_rows(X, y)
        n, p = X.shape
        base_w = self._sampling["base_w"]
        w = np.ones(n) if base_w is None else np.asarray(base_w, dtype=np.float64)
        if is_classifier(self):
            targets = np.zeros((n, self._packed.n_values))
            targets[np.arange(n), y] = w
        else:
            targets = (w * y)[:, None]
        feats = getattr(self, "estimators_features_", None)
        total = np.zeros(p)
        count = 0
        for k, (t, oob) in enumerate(zip(self.estimators_, self.oob_masks(), strict=True)):
            rows = np.flatnonzero(oob)
            if rows.size == 0 or w[rows].sum() <= 0.0:
                continue
            cols = np.arange(p) if feats is None else feats[k]
            tgt = targets[rows]
            if not is_classifier(self):
                tgt = tgt - w[rows, None] * t.tree_.value[0, 0, 0]
            Xo = X[rows] if feats is None else X[rows][:, cols]
            total[cols] += t.tree_.held_out_decreases(Xo, tgt) / w[rows].sum()
            count += 1
            check_interrupt()
        return total / max(count, 1)

    def _oob_score_of(self, tree, X, y) -> float:
        v = self._tree_values(tree, X)
        if is_classifier(self):
            return float(np.mean(np.argmax(v, axis=1) == y))
        return -float(np.mean((v[:, 0] - y) ** 2))

    def _set_oob(self, X, y, ycls) -> None:
        n = X.shape[0]
        V = self._packed.n_values
        acc = np.zeros((n, V))
        hits = np.zeros(n, dtype=np.int64)
        for (t, Xt), oob in zip(self._tree_inputs(X), self.oob_masks(), strict=True):
            if not oob.any():
                continue
            acc[oob] += self._tree_values(t, Xt[oob])
            hits[oob] += 1
            check_interrupt()
        if (hits == 0).any():
            warnings.warn("Some inputs do not have OOB scores. This probably means too few "
                          "trees were used to compute any reliable OOB estimates.",
                          UserWarning, stacklevel=4)
        acc /= np.maximum(hits, 1)[:, None]
        if is_classifier(self):
            self.oob_decision_function_ = acc
            self.oob_score_ = float(accuracy_score(ycls, np.argmax(acc, axis=1)))
        else:
            self.oob_prediction_ = acc[:, 0]
            self.oob_score_ = float(r2_score(y, acc[:, 0]))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        splitter = getattr(self, "splitter", "best")
        tags.input_tags.sparse = splitter != "hist"
        tags.input_tags.allow_nan = splitter != "random"
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


class _ForestClassifierMixin(ProbaClassifierMixin):
    """Voting by mean class fractions (scikit-learn's soft vote)."""

    def _base_weights(self, y, sw):
        cw = self.class_weight
        if cw is None or (cw == "balanced_subsample" and self.bootstrap):
            return sw
        kind = "balanced" if cw == "balanced_subsample" else cw
        expanded = compute_sample_weight(kind, y) if sw is None else \
            _balanced_with_weights(kind, y, sw)
        return expanded if sw is None else sw * expanded

    @interruptible
    @takes_rows("proba : ndarray of shape (n_samples, n_classes)")
    def predict_proba(self, X) -> np.ndarray:
        """Mean over trees of the class fractions of each sample's leaf."""
        X = self._validate_X_predict(X)
        return self._value_sum(X) / len(self.estimators_)



def _balanced_with_weights(kind, y, sw):
    """Class weights from ``class_weight`` ("balanced" counts the sample weights, as
    scikit-learn's forests do)."""
    from sklearn.utils.class_weight import compute_class_weight

    if kind != "balanced":
        return compute_sample_weight(kind, y)
    classes = np.unique(y)
    cw = compute_class_weight("balanced", classes=classes, y=y, sample_weight=sw)
    return compute_sample_weight(dict(zip(classes, cw, strict=True)), y)


class _ForestRegressorMixin:
    """Mean of the trees' predictions."""

    @interruptible
    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """Mean over trees of each sample's prediction."""
        X = self._validate_X_predict(X)
        return self._value_sum(X)[:, 0] / len(self.estimators_)


_FOREST_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    criterion : str, default={criterion!r}
        Split criterion of every tree (see :class:`{tree}`).
    splitter : {{"best", "hist", "random"}}, default={splitter!r}
        How each tree searches splits: exact search over the presorted values (shared by all
        trees), histograms over one bin matrix shared by all trees, or one random threshold
        per feature (extremely randomized trees).
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_leaf_nodes,
    min_impurity_decrease, ccp_alpha, max_bins, categorical_features, categorical_split, missing
        As for :class:`{tree}`, for every tree (``min_samples_leaf`` counts distinct rows of
        the tree's sample, as in scikit-learn).
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default=None
        Monotonic constraints of every tree (see :class:`{tree}`; scikit-learn's meaning:
        1 increasing, -1 decreasing, 0 free; for classifiers on ``classes_[1]``'s
        probability). The forest's prediction, a mean of monotone trees, is monotone too.
    selection : {{"criterion", "auto", "test", "screened"}}, default="criterion"
        How each tree picks the split feature: by the criterion, as Breiman's random forests
        do (and scikit-learn's), or as :class:`{tree}` can ("test": the smallest p-value of
        a test of independence; "screened": the criterion among the features the test finds
        associated; "auto": "screened" when a categorical feature has more than 20 levels),
        which removes the preference for many-level columns at the price of a p-value per
        feature and node.
    max_features : int, float, {{"sqrt", "log2"}} or None, default={max_features!r}
        Features drawn at each split (scikit-learn's default for this kind of forest).
    bootstrap : bool, default={bootstrap}
        Draw each tree's rows with replacement (else every tree sees every row).
    oob_score : bool, default=False
        Score the forest on the rows each tree did not draw (``oob_score_``, accuracy or
        R^2; ``oob_decision_function_`` or ``oob_prediction_``).
    n_jobs : int, default=None
        Trees grown at once on threads (None: 1; -1: all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds of the trees and their samples, drawn as scikit-learn draws them.
    warm_start : bool, default=False
        Keep the fitted trees and add ``n_estimators - len(estimators_)`` new ones.
    max_samples : int, float or None, default=None
        Rows drawn per tree with ``bootstrap``: all (None), a number (at most n_samples), or
        a fraction of n_samples.
{extra}
    Attributes
    ----------
    estimators_ : list of {tree}
        The fitted trees (each a full treelearn tree: export, plot, prune or save any one).
    feature_importances_ : ndarray of shape (n_features,)
        Mean impurity importance (see the property).
    oob_score_ : float
        With ``oob_score=True``.
"""

_CLASS_WEIGHT_DOC = """    class_weight : dict, "balanced", "balanced_subsample" or None, \
default=None
        Weights of the classes; "balanced_subsample" balances each tree's bootstrap sample.
"""


def _forest_init(cls_defaults: dict, positional: tuple[str, ...] = ()):
    """An ``__init__`` taking the ensemble's parameters with these defaults, keyword only
    except ``positional`` (leading, in order: bagging's ``estimator``)."""
    import inspect

    names = list(cls_defaults)

    def __init__(self, *args, **kwargs):
        if len(args) > len(positional):
            raise TypeError(f"{type(self).__name__}() takes {len(positional)} positional "
                            f"argument(s) but {len(args)} were given")
        for k, v in zip(positional, args, strict=False):
            if k in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument "
                                f"{k!r}")
            kwargs[k] = v
        for k in kwargs:
            if k not in cls_defaults:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                                f"{k!r}")
        for k in names:
            setattr(self, k, kwargs.get(k, cls_defaults[k]))

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD
                                 if k in positional else inspect.Parameter.KEYWORD_ONLY,
                                 default=v)
               for k, v in cls_defaults.items()]
    __init__.__signature__ = inspect.Signature(params)
    return __init__


_TREE_DEFAULTS = {
    "max_depth": None, "min_samples_split": 2, "min_samples_leaf": 1,
    "min_weight_fraction_leaf": 0.0, "max_leaf_nodes": None, "min_impurity_decrease": 0.0,
    "ccp_alpha": 0.0, "max_bins": 255, "categorical_features": "auto",
    "categorical_split": "binary", "missing": "learn", "selection": "criterion",
    "monotonic_cst": None,
}
_RUN_DEFAULTS = {"n_jobs": None, "random_state": None, "warm_start": False,
                 "max_samples": None}


class _Forest(_BaseEnsemble):
    """Forests: trees of one kind with the forest's tree parameters."""

    _tree_class: type = DecisionTreeClassifier

    def _template(self):
        return self._tree_class(**{k: getattr(self, k) for k in TREE_PARAMS})

    def _constraints(self) -> dict:
        tree_c = _members.constraints(self._tree_class(criterion=self.criterion))
        out = {k: tree_c.get(k, _COMMON_CONSTRAINTS.get(k)) for k in TREE_PARAMS}
        out.update(_ENSEMBLE_CONSTRAINTS)
        if is_classifier(self):
            out["class_weight"] = [InstanceOf((dict, list), "a dict"),
                                   Options(("balanced", "balanced_subsample")), None]
        return out


class RandomForestClassifier(_ForestClassifierMixin, ClassifierMixin, _Forest):
    __doc__ = ("""A random forest classifier (Breiman 2001): trees grown on bootstrap samples,
    ``max_features`` features drawn at each split, class fractions averaged.
    """ + _FOREST_DOC.format(criterion="gini", tree="DecisionTreeClassifier", splitter="best",
                             max_features="sqrt", bootstrap=True, extra=_CLASS_WEIGHT_DOC))
    _tree_class = DecisionTreeClassifier
    __init__ = _forest_init({"n_estimators": 100, "criterion": "gini", "splitter": "best",
                             **_TREE_DEFAULTS, "max_features": "sqrt", "bootstrap": True,
                             "oob_score": False, **_RUN_DEFAULTS, "class_weight": None})


class RandomForestRegressor(_ForestRegressorMixin, RegressorMixin, _Forest):
    __doc__ = ("""A random forest regressor (Breiman 2001): trees grown on bootstrap samples,
    predictions averaged.
    """ + _FOREST_DOC.format(criterion="squared_error", tree="DecisionTreeRegressor",
                             splitter="best", max_features=1.0, bootstrap=True, extra=""))
    _tree_class = DecisionTreeRegressor
    __init__ = _forest_init({"n_estimators": 100, "criterion": "squared_error",
                             "splitter": "best", **_TREE_DEFAULTS, "max_features": 1.0,
                             "bootstrap": True, "oob_score": False, **_RUN_DEFAULTS})


class _ExtraTrees(_Forest):
    def _template(self):
        params = {k: getattr(self, k) for k in TREE_PARAMS if k != "splitter"}
        return self._tree_class(splitter="random", **params)

    def _constraints(self) -> dict:
        out = super()._constraints()
        out.pop("splitter", None)
        return out

    @property
    def splitter(self) -> str:
        """Always "random": one random threshold per drawn feature."""
        return "random"


class ExtraTreesClassifier(_ForestClassifierMixin, ClassifierMixin, _ExtraTrees):
    __doc__ = ("""Extremely randomized trees (Geurts, Ernst & Wehenkel 2006): at each split one
    random threshold per drawn feature, the best of those; every tree on all rows by default.
    Numeric data (no categorical features or missing values).
    """ + _FOREST_DOC.format(criterion="gini", tree="DecisionTreeClassifier",
                             splitter="random", max_features="sqrt", bootstrap=False,
                             extra=_CLASS_WEIGHT_DOC))
    _tree_class = DecisionTreeClassifier
    __init__ = _forest_init({"n_estimators": 100, "criterion": "gini",
                             **{k: v for k, v in _TREE_DEFAULTS.items()},
                             "max_features": "sqrt", "bootstrap": False, "oob_score": False,
                             **_RUN_DEFAULTS, "class_weight": None})


class ExtraTreesRegressor(_ForestRegressorMixin, RegressorMixin, _ExtraTrees):
    __doc__ = ("""Extremely randomized trees for regression (Geurts, Ernst & Wehenkel 2006).
    """ + _FOREST_DOC.format(criterion="squared_error", tree="DecisionTreeRegressor",
                             splitter="random", max_features=1.0, bootstrap=False, extra=""))
    _tree_class = DecisionTreeRegressor
    __init__ = _forest_init({"n_estimators": 100, "criterion": "squared_error",
                             **_TREE_DEFAULTS, "max_features": 1.0, "bootstrap": False,
                             "oob_score": False, **_RUN_DEFAULTS})

