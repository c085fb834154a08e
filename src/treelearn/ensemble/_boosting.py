"""AdaBoost (SAMME, multi-class) with a decision stump as the default base learner.

"Boosting: build one classifier at a time, based on the results of the current ensemble":
each round fits the base tree to the rows weighted by how badly the ensemble so far treats
them, then raises the weights of the rows it misclassifies. SAMME (Zhu, Zou, Rosset & Hastie
2009) is AdaBoost for ``K`` classes; for ``K = 2`` it is Freund & Schapire's AdaBoost with
every learner's weight doubled (the same predictions):

* weighted error ``e_t`` of learner ``t`` (weights summing to one);
* learner weight ``alpha_t = learning_rate * (ln((1 - e_t) / e_t) + ln(K - 1))``; the
  textbook's two-class ``alpha = 1/2 ln((1 - e) / e)`` (Li Hang, *Statistical Learning
  Methods*, ch. 8) is half of it;
* misclassified rows' weights multiplied by ``exp(alpha_t)``, then all normalized;
* a learner no better than chance (``e_t >= 1 - 1/K``) is dropped and boosting stops (an
  error if it is the first); a perfect learner (``e_t = 0``) ends boosting with weight 1.

These are scikit-learn's ``AdaBoostClassifier`` rules step for step (including its seeds:
one ``randint(2**31 - 1)`` per learner from ``random_state``), so with the same base tree the
two agree learner by learner. X is validated and prepared once (presorted or binned) and
every round grows its tree on it with new weights.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import _members, _shap
from .._docs import fits, takes_rows
from .._estimators import MAX_INT, BaseDecisionTree, DecisionTreeClassifier
from .._interrupt import check as check_interrupt
from .._interrupt import interruptible
from .._tree import expected_costs
from .._validation import (
    RANDOM_STATE,
    InstanceOf,
    Interval,
    check_sample_weight,
    check_y_missing,
    validate_params,
)
from ._packed import PackedForest


def tree_codes(tree: BaseDecisionTree, X: np.ndarray) -> np.ndarray:
    """Class codes (indices into ``classes_``) a fitted classifier tree predicts for the
    encoded ``X`` (as :meth:`DecisionTreeClassifier.predict` decides: least expected cost
    when the tree has a cost matrix, else the most probable class, the first on ties)."""
    proba = tree.tree_.predict(X)[:, 0, :]
    cost = getattr(tree, "cost_matrix_", None)
    if cost is not None:
        return np.argmin(expected_costs(proba, cost), axis=1)
    return np.argmax(proba, axis=1)


def _vote_values(tree: BaseDecisionTree, alpha: float, K: int) -> np.ndarray:
    """Per node of the tree, SAMME's vote of its class: ``alpha`` for the class the node
    predicts, ``-alpha / (K - 1)`` for the others (leaves are what prediction reads)."""
    t = tree.tree_
    proba = t.value[:, 0, :]
    cost = getattr(tree, "cost_matrix_", None)
    codes = (np.argmin(expected_costs(proba, cost), axis=1) if cost is not None
             else np.argmax(proba, axis=1))
    # one class (a training set of one label): no other class to vote against
    out = np.full((t.node_count, K), -alpha / (K - 1) if K > 1 else 0.0)
    out[np.arange(t.node_count), codes] = alpha
    return out


class AdaBoostClassifier(ClassifierMixin, BaseEstimator):
    """AdaBoost for classification (SAMME), by default with decision stumps.

    Parameters
    ----------
    estimator : treelearn classifier tree, default=None
        The base learner with all its parameters (any treelearn classifier tree or preset).
        None: ``DecisionTreeClassifier(max_depth=1)``, a decision stump.
    n_estimators : int, default=50
        Most learners fitted (fewer when a learner is perfect or no better than chance).
    learning_rate : float, default=1.0
        Shrinks each learner's weight ``alpha_t``.
    random_state : int, RandomState instance or None, default=None
        Seeds of the learners (drawn as scikit-learn draws them).

    Attributes
    ----------
    estimators_ : list of trees
        The fitted learners.
    estimator_weights_ : ndarray of shape (n_estimators,)
        ``alpha_t`` of each learner (0 for rounds not run).
    estimator_errors_ : ndarray of shape (n_estimators,)
        Weighted training error of each learner (1 for rounds not run).
    classes_ : ndarray
        The class labels.

    Notes
    -----
    :meth:`decision_function` is the weighted vote divided by the sum of the weights, in
    scikit-learn's scale: for two classes ``2 * sum_t alpha_t h_t(x) / sum_t alpha_t`` with
    ``h_t(x) = +1`` for ``classes_[1]`` and ``-1`` for ``classes_[0]`` (positive: predict
    ``classes_[1]``); in the textbook's two-class terms, with ``f(x) = sum_t a_t h_t(x)`` and
    ``a_t = alpha_t / 2``, it is ``2 f(x) / sum_t a_t``. For ``K`` classes, column ``k`` is
    ``sum_t alpha_t (1 if h_t(x) = k else -1 / (K - 1)) / sum_t alpha_t``.
    """

    _parameter_constraints = {
        "estimator": [InstanceOf((object,), "a treelearn classifier tree"), None],
        "n_estimators": [Interval("int", 1, None)],
        "learning_rate": [Interval("real", 0.0, None, "neither")],
        "random_state": [RANDOM_STATE, None],
    }

    def __init__(self, estimator=None, *, n_estimators: int = 50, learning_rate: float = 1.0,
                 random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _template(self) -> DecisionTreeClassifier:
        est = self.estimator
        if est is None:
            return DecisionTreeClassifier(max_depth=1)
        if not isinstance(est, DecisionTreeClassifier):
            raise TypeError("estimator must be a treelearn classifier tree "
                            f"(DecisionTreeClassifier, C45Classifier, ...); got "
                            f"{type(est).__name__}.")
        return clone(est)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        splitter = getattr(self.estimator, "splitter", "best")
        tags.input_tags.sparse = splitter != "hist"
        tags.input_tags.allow_nan = splitter != "random"
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    @interruptible
    @fits(sample_weight="Initial weights (normalized to sum to one).")
    def fit(self, X, y, sample_weight=None):
        """Boost the base tree on (X, y)."""
        validate_params(self, self._parameter_constraints)
        template = self._template()
        _members.check_params(template)
        check_y_missing(y)
        X, X_raw, y, _ = _members.prepare(template, X, y)
        n = X.shape[0]
        w = check_sample_weight(sample_weight, n).astype(np.float64)
        target = _members.encode_target(template, y, np.ones(n))
        own = target.w  # the base tree's class weights
        ycls = target.ycls
        K = int(target.n_classes)
        data = _members.learned(template)
        shared = None
        rng = check_random_state(self.random_state)
        if not hasattr(X, "tocsr"):
            shared = _members.share(template, X, w, 0, parallel=True)
            data = _members.learned(template)
        w = w / w.sum()
        # The base tree sees the weights scaled to about the number of cases: C4.5's
        # pessimistic pruning and other case-count rules need counts, not fractions (a C4.5
        # base pruned itself to a leaf on weights summing to one). A power of two scales
        # every sum and ratio exactly, so the trees are bit for bit those of the normalized
        # weights (scikit-learn's).
        scale = 2.0 ** round(np.log2(max(int(np.count_nonzero(w)), 1)))
        eps = np.finfo(np.float64).eps
        zero = w == 0.0
        estimators = []
        weights = np.zeros(self.n_estimators)
        errors = np.ones(self.n_estimators)
        for it in range(self.n_estimators):
            check_interrupt()
            w = np.clip(w, eps, None)
            w[zero] = 0.0
            seed = int(rng.randint(MAX_INT))
            tree = _members.new_member(template, seed, data)
            tw = w * own * scale
            _members.fit_member(tree, X, X_raw, y, target.weighted(tw), shared)
            wrong = tree_codes(tree, X) != ycls
            err = float(np.average(wrong, weights=w))
            estimators.append(tree)
            if err <= 0.0:
                weights[it] = 1.0
                errors[it] = 0.0
                break
            if err >= 1.0 - 1.0 / K:
                estimators.pop()
                if not estimators:
                    raise ValueError("The base tree is no better than chance on the "
                                     f"training data (weighted error {err:.4f} >= "
                                     f"{1.0 - 1.0 / K:.4f}); the ensemble cannot be fit.")
                break
            alpha = self.learning_rate * (np.log((1.0 - err) / err) + np.log(K - 1.0))
            weights[it] = alpha
            errors[it] = err
            if it == self.n_estimators - 1:
                break
            with np.errstate(divide="ignore"):  # rows of weight 0 stay 0 (exp(-inf))
                w = np.exp(np.log(w) + alpha * wrong * (w > 0))
            total = w.sum()
            if not np.isfinite(total):
                warnings.warn(f"Sample weights have reached infinite values at iteration "
                              f"{it}, causing overflow; boosting stopped early.",
                              UserWarning, stacklevel=3)
                break
            if total <= 0:
                break
            w = w / total
        self.estimators_ = estimators
        self.estimator_weights_ = weights
        self.estimator_errors_ = errors
        self.__dict__.update({k: v for k, v in data.items() if k != "cost_matrix_"})
        self.classes_ = template.classes_
        self.n_classes_ = K
        self._pack()
        return self

    def _pack(self) -> None:
        """The learners as one packed forest adding their weighted votes."""
        votes = [_vote_values(t, a, self.n_classes_)
                 for t, a in zip(self.estimators_, self.estimator_weights_, strict=False)]
        self._packed = PackedForest([t.tree_ for t in self.estimators_], values=votes)

    def _validate_X_predict(self, X):
        check_is_fitted(self, "estimators_")
        X = _members.validate_rows(self, X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        return X

    def _raw_votes(self, X) -> np.ndarray:
        """``sum_t alpha_t * vote_t(x)`` (n_samples, K)."""
        if self._packed.exact(X):
            return self._packed.sum(X)
        K = self.n_classes_
        out = np.zeros((X.shape[0], K))
        for t, a in zip(self.estimators_, self.estimator_weights_, strict=False):
            codes = tree_codes(t, X)
            v = np.full((X.shape[0], K), -a / (K - 1))
            v[np.arange(X.shape[0]), codes] = a
            out += v
            check_interrupt()
        return out

    def _finish(self, pred: np.ndarray, norm: float) -> np.ndarray:
        pred = pred / norm
        if self.n_classes_ == 2:
            return pred[:, 1] - pred[:, 0]
        return pred

    def _vote_trees(self) -> tuple[list, list]:
        """The learners' trees and their node values as :meth:`decision_function` sums them
        (SAMME's votes over the sum of the weights; two classes: the second's column less
        the first's)."""
        K = self.n_classes_
        norm = self.estimator_weights_[:len(self.estimators_)].sum()
        trees, values = [], []
        for t, a in zip(self.estimators_, self.estimator_weights_, strict=False):
            v = _vote_values(t, a, K) / norm
            trees.append(t.tree_)
            values.append(v[:, 1:] - v[:, :1] if K == 2 else v)
        return trees, values

    def _explain(self, X, interactions: bool) -> np.ndarray:
        """SHAP values (or interaction values) of the decision function, refused for rows
        whose vote is not a sum of leaf values."""
        trees, values = self._vote_trees()
        for tree in trees:
            _shap._check_tree(tree)
        out = _shap.sum_of_trees(trees, values, X, interactions)
        # a learner's vote for a row sent down several branches (C4.5's fractional cases) is
        # the class of its mixed leaves, not a mix of the leaves' votes
        score = self._finish(self._raw_votes(X), self.estimator_weights_[
            :len(self.estimators_)].sum()).reshape(X.shape[0], -1)
        phi = out.sum(axis=2) if interactions else out
        total = _shap.sum_expected_value(trees, values) + phi.sum(axis=1)
        bad = np.abs(total - score).max(axis=1) > 1e-9 * (1.0 + np.abs(score).max(axis=1))
        if bad.any():
            raise ValueError(
                f"{int(bad.sum())} of the rows (the first: row {int(np.argmax(bad))}) are sent "
                "down several branches of a learner by C4.5's fractional cases; its vote for "
                "them is the class of the mixed leaves, not a sum over leaves, so their SHAP "
                "values are not defined. Impute the missing values or grow the learners with "
                "missing='learn'.")
        return out[..., 0] if self.n_classes_ == 2 else out

    @interruptible
    @takes_rows("shap_values : ndarray of shape (n_samples, n_features) for two classes, "
                "else (n_samples, n_features, n_classes)",
                "Each column's contribution to :meth:`decision_function`: "
                "``expected_value_`` plus the sum over the columns is the decision function.")
    def shap_values(self, X) -> np.ndarray:
        """Exact SHAP values of :meth:`decision_function`, the weighted vote (path-dependent
        TreeSHAP of each learner's vote, weighted as the vote weights it): not of the
        probabilities, a softmax of the vote that is not a sum over the learners (the margin,
        as gradient boosting libraries explain their log-odds). ValueError for rows that
        C4.5's fractional cases send down several branches of a learner."""
        X = self._validate_X_predict(X)
        return self._explain(X, False)

    @interruptible
    @takes_rows("shap_interaction_values : ndarray of shape (n_samples, n_features, "
                "n_features) for two classes, else (n_samples, n_features, n_features, "
                "n_classes)", "SHAP's interaction values of :meth:`decision_function`.")
    def shap_interaction_values(self, X) -> np.ndarray:
        """Exact SHAP interaction values of :meth:`decision_function` (see
        :meth:`shap_values`)."""
        X = self._validate_X_predict(X)
        return self._explain(X, True)

    @property
    def expected_value_(self):
        """:meth:`decision_function` with no column known (a float for two classes, else one
        per class): what :meth:`shap_values` adds up from."""
        check_is_fitted(self, "estimators_")
        ev = _shap.sum_expected_value(*self._vote_trees())
        return float(ev[0]) if self.n_classes_ == 2 else ev

    @interruptible
    @takes_rows("score : ndarray of shape (n_samples,) for two classes, else "
                "(n_samples, n_classes)")
    def decision_function(self, X) -> np.ndarray:
        """The weighted vote (see the class notes for its scale)."""
        X = self._validate_X_predict(X)
        n_fit = len(self.estimators_)
        return self._finish(self._raw_votes(X), self.estimator_weights_[:n_fit].sum())

    def staged_decision_function(self, X):
        """:meth:`decision_function` after each learner (a generator)."""
        X = self._validate_X_predict(X)
        K = self.n_classes_
        acc = np.zeros((X.shape[0], K))
        norm = 0.0
        for t, a in zip(self.estimators_, self.estimator_weights_, strict=False):
            codes = tree_codes(t, X)
            v = np.full((X.shape[0], K), -a / (K - 1))
            v[np.arange(X.shape[0]), codes] = a
            acc += v
            norm += a
            yield self._finish(acc, norm)

    def _label(self, score: np.ndarray) -> np.ndarray:
        if self.n_classes_ == 2:
            return self.classes_.take((score > 0).astype(int), axis=0)
        return self.classes_.take(np.argmax(score, axis=1), axis=0)

    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """The class of largest weighted vote."""
        return self._label(self.decision_function(X))

    def staged_predict(self, X):
        """:meth:`predict` after each learner (a generator)."""
        for score in self.staged_decision_function(X):
            yield self._label(score)

    @staticmethod
    def _proba(score: np.ndarray, K: int) -> np.ndarray:
        if K == 1:  # one class: certain (scikit-learn's answer too)
            return np.ones((score.shape[0], 1))
        if K == 2:
            score = np.vstack([-score, score]).T / 2
        else:
            score = score / (K - 1)
        return softmax(score, axis=1)

    @takes_rows("proba : ndarray of shape (n_samples, n_classes)")
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities: the softmax of the decision function (divided by ``K - 1``;
        for two classes of ``(-d/2, d/2)``), as scikit-learn's SAMME."""
        return self._proba(self.decision_function(X), self.n_classes_)

    def staged_predict_proba(self, X):
        """:meth:`predict_proba` after each learner (a generator)."""
        for score in self.staged_decision_function(X):
            yield self._proba(score, self.n_classes_)

    def staged_score(self, X, y):
        """Accuracy on (X, y) after each learner (a generator)."""
        y = np.asarray(y)
        for pred in self.staged_predict(X):
            yield float(np.mean(pred == y))

    @property
    def feature_importances_(self) -> np.ndarray:
        """The learners' impurity importances averaged with weights ``alpha_t``."""
        check_is_fitted(self, "estimators_")
        a = self.estimator_weights_[:len(self.estimators_)]
        if a.sum() == 0:
            return np.zeros(self.n_features_in_)
        imp = sum(w * t.feature_importances_ for t, w in zip(self.estimators_, a, strict=True))
        return imp / a.sum()
