"""The literature's yardsticks: the majority class, and OneR (Holte 1993).

Holte's "very simple classification rules" predict from one attribute: for each attribute a
rule maps each of its values (numeric attributes: intervals) to the majority class there; the
attribute whose rule makes the fewest training errors wins. A tree that does not beat OneR
has not learned much (Witten & Frank, *Data Mining*, section 4.1).

Numeric attributes are cut as Weka's ``OneR -B 6`` cuts them:

1. the distinct values, in increasing order, each with its class counts, are the first
   buckets; a bucket's upper boundary is the midpoint to the next distinct value (the last
   one's is infinity);
2. left to right, a bucket joins the one before it when both have the same majority class, or
   when the one before holds fewer than ``min_bucket_size`` cases of its majority class;
3. adjacent buckets of the same majority class are merged.

A value ``x`` falls in the first bucket whose boundary is above it. Missing values are a value
of their own: their majority class (and the cases it gets right) count for the attribute's
rule. Majority classes are the first of the largest counts in ``classes_`` order, as Weka's.
Where Weka answers class 0 (a level or a missing value never seen in training), this answers
the training data's majority class.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .. import _members
from .._docs import fits, takes_rows
from .._estimators import ProbaClassifierMixin, class_targets
from .._interrupt import check as check_interrupt
from .._interrupt import interruptible
from .._validation import (
    InstanceOf,
    Interval,
    Options,
    check_y_missing,
    validate_params,
)
from ..engine.config import njit


@njit
def _major(counts, b):
    """The majority class of row ``b`` (the first of the largest counts, as Weka's)."""
    best = 0
    for k in range(counts.shape[1]):
        if counts[b, k] > counts[b, best]:
            best = k
    return best


@njit
def _absorb(counts, end, b):
    """Bucket ``b`` joins bucket ``b - 1`` (counts added, the end moves to ``b``'s)."""
    for k in range(counts.shape[1]):
        counts[b - 1, k] += counts[b, k]
    end[b - 1] = end[b]


@njit
def one_r_buckets(dist, min_bucket, out_end, out_counts):
    """Weka's two passes over the distinct values' class counts ``dist`` (m, K): writes each
    final bucket's end (one past its last distinct value) and counts; returns the number of
    buckets."""
    m, K = dist.shape
    nb = 0
    for i in range(m):  # pass 1: join small buckets and same-class neighbours
        for k in range(K):
            out_counts[nb, k] = dist[i, k]
        out_end[nb] = i + 1
        if nb > 0:
            old = _major(out_counts, nb - 1)
            if _major(out_counts, nb) == old or out_counts[nb - 1, old] < min_bucket:
                _absorb(out_counts, out_end, nb)
                nb -= 1
        nb += 1
    n_final = 0
    for b in range(nb):  # pass 2: merge neighbours of the same majority class
        for k in range(K):
            out_counts[n_final, k] = out_counts[b, k]
        out_end[n_final] = out_end[b]
        if n_final > 0 and _major(out_counts, n_final) == _major(out_counts, n_final - 1):
            _absorb(out_counts, out_end, n_final)
            n_final -= 1
        n_final += 1
    return n_final


def numeric_rule(x: np.ndarray, codes: np.ndarray, w: np.ndarray, K: int, min_bucket: float):
    """OneR's intervals for one numeric column (no missing values): ``(breaks, counts)``,
    ``counts[b]`` the class counts of interval ``b``, ``breaks[b]`` its upper boundary
    (``len(counts) - 1`` of them; the last interval is unbounded)."""
    uniq, inv = np.unique(x, return_inverse=True)
    dist = np.zeros((uniq.size, K))
    np.add.at(dist, (inv, codes), w)
    end = np.empty(uniq.size, dtype=np.int64)
    counts = np.empty((uniq.size, K))
    nb = one_r_buckets(dist, float(min_bucket), end, counts)
    mids = (uniq[:-1].astype(np.float64) + uniq[1:]) / 2.0
    return mids[end[:nb - 1] - 1], counts[:nb].copy()


def _fit_classes(est, X, y, sample_weight) -> tuple:
    """The checks a baseline's ``fit`` starts with: ``X`` validated (feature names, table
    columns), ``y`` a 1-D column of class labels without holes, the weights; sets
    ``classes_`` and ``n_classes_``; returns ``(X, class codes, weights)``."""
    check_y_missing(y)
    X, y = _validate(est, X, y, fitting=True)
    est.classes_, codes, w = class_targets(y, sample_weight, X.shape[0])
    est.n_classes_ = len(est.classes_)
    return X, codes, w


class MajorityClassifier(ProbaClassifierMixin, ClassifierMixin, BaseEstimator):
    """The majority-class baseline (Weka's ZeroR): every case gets the most frequent
    (weighted) training class; probabilities are the training class frequencies.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    class_prior_ : ndarray of shape (n_classes,)
        Weighted training class frequencies.
    """

    categorical_features = "auto"  # X is validated like a tree's (tables accepted)
    _parameter_constraints: dict = {}

    def __sklearn_tags__(self):
        return _baseline_tags(super().__sklearn_tags__())

    @fits(X="Checked for shape only.")
    def fit(self, X, y, sample_weight=None):
        """Count the classes of ``y``."""
        X, codes, w = _fit_classes(self, X, y, sample_weight)
        freq = np.bincount(codes, weights=w, minlength=self.n_classes_)
        self.class_prior_ = freq / freq.sum()
        return self

    @takes_rows("proba : ndarray of shape (n_samples, n_classes)")
    def predict_proba(self, X) -> np.ndarray:
        """The training class frequencies, for every row."""
        check_is_fitted(self, "class_prior_")
        X = _validate(self, X)
        return np.tile(self.class_prior_, (X.shape[0], 1))


def _validate(est, X, y=None, fitting: bool = False):
    """X (and y when ``fitting``) validated as treelearn's trees validate them: categorical
    columns become level codes, missing values NaN."""
    if fitting:
        return _members.validate_rows(est, X, y, fitting=True)
    return _members.validate_rows(est, X)


def _baseline_tags(tags):
    tags.input_tags.allow_nan = True
    tags.input_tags.sparse = True
    tags.input_tags.string = True
    tags.input_tags.categorical = True
    tags.classifier_tags.poor_score = True  # a yardstick, not a learner of every shape
    return tags


class OneRClassifier(ProbaClassifierMixin, ClassifierMixin, BaseEstimator):
    """OneR (Holte 1993): the one-attribute rule with the fewest training errors.

    Parameters
    ----------
    min_bucket_size : int or float, default=6
        Cases of its majority class an interval of a numeric attribute must hold before the
        next distinct value may start a new one (Weka's ``-B``; Holte's SMALL). Counted with
        the sample weights.
    categorical_features : "auto", list, mask or None, default="auto"
        Which columns are nominal (as for :class:`~treelearn.DecisionTreeClassifier`): a rule
        with one class per level.

    Attributes
    ----------
    feature_ : int
        Index of the chosen attribute.
    feature_name_ : str
        Its name (``x<i>`` without feature names).
    rules_ : list of dict
        Per attribute: its rule (``"breaks"`` and ``"counts"`` for numeric attributes,
        ``"counts"`` per level for nominal ones, ``"missing"`` counts) and ``"correct"``, the
        weighted number of training cases it classifies correctly.
    classes_ : ndarray
        The class labels.
    """

    _parameter_constraints = {
        "min_bucket_size": [Interval("real", 0.0, None), Interval("int", 0, None)],
        "categorical_features": [Options(("auto",)),
                                 InstanceOf((list, tuple, np.ndarray), "a list"), None],
    }

    def __init__(self, *, min_bucket_size: float = 6, categorical_features="auto"):
        self.min_bucket_size = min_bucket_size
        self.categorical_features = categorical_features

    def __sklearn_tags__(self):
        return _baseline_tags(super().__sklearn_tags__())

    @interruptible
    @fits(sample_weight="Case weights (counts of the rules).")
    def fit(self, X, y, sample_weight=None):
        """Build every attribute's rule and keep the one with the fewest errors."""
        validate_params(self, self._parameter_constraints)
        X, codes, w = _fit_classes(self, X, y, sample_weight)
        K = self.n_classes_
        keep = w > 0.0  # a case of weight 0 takes no part (its value opens no interval)
        if not keep.all():
            X, codes, w = X[np.flatnonzero(keep)], codes[keep], w[keep]
        self.majority_ = int(np.argmax(np.bincount(codes, weights=w, minlength=K)))
        self.n_weight_ = float(w.sum())
        cols = X.tocsc() if sp.issparse(X) else X
        rules = []
        for f in range(X.shape[1]):
            x = cols[:, f].toarray().ravel() if sp.issparse(cols) else cols[:, f]
            rules.append(self._rule(x, codes, w, K, bool(self.is_categorical_[f]), f))
            check_interrupt()
        best = 0
        for f, r in enumerate(rules):
            if r["correct"] > rules[best]["correct"]:
                best = f
        self.rules_ = rules
        self.feature_ = best
        names = getattr(self, "feature_names_in_", None)
        self.feature_name_ = str(names[best]) if names is not None else f"x{best}"
        return self

    def _rule(self, x, codes, w, K, categorical: bool, f: int) -> dict:
        miss = np.isnan(x)
        missing = np.bincount(codes[miss], weights=w[miss], minlength=K).astype(np.float64)
        correct = float(missing.max()) if miss.any() else 0.0
        xs, cs, ws = x[~miss], codes[~miss], w[~miss]
        if categorical:
            L = len(self.categories_[f])
            counts = np.zeros((L, K))
            np.add.at(counts, (xs.astype(np.int64), cs), ws)
            rule = {"counts": counts}
        elif xs.size:
            breaks, counts = numeric_rule(xs, cs, ws, K, self.min_bucket_size)
            rule = {"breaks": breaks, "counts": counts}
        else:
            rule = {"breaks": np.zeros(0), "counts": np.zeros((1, K))}
        correct += float(counts.max(axis=1).sum())
        rule["missing"] = missing
        rule["correct"] = correct
        return rule

    def _cells(self, x: np.ndarray) -> np.ndarray:
        """Class counts of the interval, level or missing cell each value falls in (rows of
        zeros: a level never seen, or missing values never seen in training)."""
        rule = self.rules_[self.feature_]
        K = self.n_classes_
        out = np.zeros((x.shape[0], K))
        miss = np.isnan(x)
        if rule["missing"].sum() > 0:
            out[miss] = rule["missing"]
        xs = x[~miss]
        if "breaks" in rule:
            out[~miss] = rule["counts"][np.searchsorted(rule["breaks"], xs, side="right")]
        else:
            out[~miss] = rule["counts"][xs.astype(np.int64)]
        return out

    def _column(self, X) -> np.ndarray:
        check_is_fitted(self, "rules_")
        X = _validate(self, X)
        col = X[:, [self.feature_]]
        return (col.toarray() if sp.issparse(col) else np.asarray(col)).ravel().astype(
            np.float64)

    @takes_rows("proba : ndarray of shape (n_samples, n_classes)")
    def predict_proba(self, X) -> np.ndarray:
        """Class fractions of each row's interval (level, missing cell) of the chosen
        attribute; a cell without training cases gives the majority class probability 1."""
        cells = self._cells(self._column(X))
        total = cells.sum(axis=1, keepdims=True)
        empty = total[:, 0] == 0.0
        cells[empty, self.majority_] = 1.0
        total[empty] = 1.0
        return cells / total

    def export_text(self, decimals: int = 2) -> str:
        """The rule as Weka prints it: one line per interval (or level), then the count of
        training cases it classifies correctly."""
        check_is_fitted(self, "rules_")
        rule = self.rules_[self.feature_]
        cls = [str(c) for c in self.classes_]
        lines = [f"{self.feature_name_}:"]
        if "breaks" in rule:
            br = rule["breaks"]
            for b, counts in enumerate(rule["counts"]):
                if b < br.size:
                    cond = f"< {br[b]:.{decimals}f}"
                elif b > 0:
                    cond = f">= {br[b - 1]:.{decimals}f}"
                else:
                    cond = "not ?"
                lines.append(f"\t{cond}\t-> {cls[int(np.argmax(counts))]}")
        else:
            for lv, counts in zip(self.categories_[self.feature_], rule["counts"], strict=True):
                label = cls[int(np.argmax(counts))] if counts.sum() > 0 else cls[self.majority_]
                lines.append(f"\t{lv}\t-> {label}")
        if rule["missing"].sum() > 0:
            lines.append(f"\t?\t-> {cls[int(np.argmax(rule['missing']))]}")
        lines.append(f"({rule['correct']:g}/{self.n_weight_:g} instances correct)")
        return "\n".join(lines) + "\n"
