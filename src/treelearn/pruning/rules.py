"""C4.5's rule post-pruning (Quinlan 1993, chapter 5): one if-then rule per leaf, each rule
simplified on the training cases, then ordered, with a default class.

1. A leaf's rule is the conjunction of the tests on its path (``x <= t``, ``x > t``,
   ``x in {levels}``); a test also accepts a missing value when the node sends missing values
   down that branch (every branch, for C4.5's fractional nodes).
2. Simplification: for the training cases a rule covers (``N`` weight, ``E`` of another class
   than the rule's), its pessimistic error rate is ``U_CF(E, N)`` (see
   :mod:`treelearn.pruning.pessimistic`). Repeatedly drop the condition whose removal gives the
   lowest pessimistic error rate, as long as that rate is not higher than the current one.
3. Rules that became identical are kept once; rules covering no training case are dropped.
4. Order: classes by the training weight their rules cover wrongly (false positives), fewest
   first; within a class, by pessimistic error rate. The default class is the majority class
   of the training cases no rule covers (of all cases if every case is covered).
5. While omitting a rule would reduce the training errors of the ordered list, the first
   such rule is omitted (the default class re-chosen each time).

Quinlan's program also chooses a subset of each class's rules by MDL before ordering; this
module does not (step 5 is the cheaper check he applies after ordering).
A :class:`RuleSet` predicts with the first rule that fires (else the default class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._docs import fits, takes_rows
from .._paths import leaf_conditions
from .pessimistic import u_cf


@dataclass
class Rule:
    """``if all conditions then klass``; coverage of the training cases it was built on."""

    conditions: list
    klass: int
    cases: float
    errors: float
    distribution: np.ndarray
    pessimistic_error: float

    def covers(self, X: np.ndarray) -> np.ndarray:
        mask = np.ones(X.shape[0], dtype=bool)
        for c in self.conditions:
            mask &= c.satisfied(X)
        return mask

    def _key(self):
        return (self.klass, frozenset((c.feature, c.op, c.threshold, c.levels, c.missing,
                                       c.known, c.terms) for c in self.conditions))


def _simplify(conds, X, codes, w, klass, cf):
    """Greedy condition dropping (module docstring, step 2). Returns kept conditions."""
    if not conds:
        return conds
    sat = np.column_stack([c.satisfied(X) for c in conds])
    good = codes == klass
    active = list(range(len(conds)))
    fails = (~sat).sum(axis=1)

    def rate(n, e):
        return float(u_cf(e, n, cf)) if n > 0 else 1.0

    cov = fails == 0
    n0, c0 = w[cov].sum(), w[cov & good].sum()
    current = rate(n0, n0 - c0)
    while active:
        cov = fails == 0
        n0, c0 = w[cov].sum(), w[cov & good].sum()
        one = np.flatnonzero(fails == 1)
        m = len(conds)
        if one.size:
            act = np.asarray(active)
            failing = act[np.argmin(sat[np.ix_(one, act)], axis=1)]
            n_add = np.bincount(failing, weights=w[one], minlength=m)
            c_add = np.bincount(failing, weights=w[one] * good[one], minlength=m)
        else:
            n_add = c_add = np.zeros(m)
        rates = [(rate(n0 + n_add[j], n0 + n_add[j] - c0 - c_add[j]), j) for j in active]
        best_rate, best_j = min(rates)
        if best_rate > current:
            break
        current = best_rate
        active.remove(best_j)
        fails -= ~sat[:, best_j]
    return [conds[j] for j in active]


class RuleSet(ClassifierMixin, BaseEstimator):
    """An ordered list of if-then rules with a default class: C4.5's rule post-pruning.

    Parameters
    ----------
    estimator : treelearn classifier
        The tree the rules come from: used as is when fitted, else fitted on the data given to
        :meth:`fit` (a copy; the argument is not modified).
    simplify : bool, default=True
        Drop conditions while the pessimistic error rate does not rise (False: one rule per
        leaf, unchanged).
    confidence_factor : float, default=0.25
        CF of the pessimistic error rate ``U_CF``.

    Attributes
    ----------
    rules_ : list of Rule
        In order; ``predict`` uses the first that fires.
    default_class_ : int
        Code (index in ``classes_``) of the class predicted when no rule fires.
    default_distribution_ : ndarray
        Class distribution of the training cases no rule covers.
    classes_ : ndarray

    Notes
    -----
    ``predict_proba`` gives the class distribution of the training cases covered by the rule
    that fires. ``print(ruleset)`` shows the rules.
    """

    def __init__(self, estimator=None, *, simplify: bool = True,
                 confidence_factor: float = 0.25):
        self.estimator = estimator
        self.simplify = simplify
        self.confidence_factor = confidence_factor

    @fits(X="The rows the rules are judged on (normally the training data); the tree is "
            "fitted on them first if ``estimator`` is not fitted.",
          y="Class labels.", sample_weight="Case weights (None: one each).")
    def fit(self, X, y, sample_weight=None):
        """Build the rules from the tree, judged on ``(X, y)``."""
        from sklearn.base import clone

        est = self.estimator
        if est is None:
            raise ValueError("RuleSet needs a treelearn classifier as estimator.")
        if not hasattr(est, "tree_"):
            est = clone(est).fit(X, y, sample_weight=sample_weight)
        self.estimator_ = est
        _build(self, est, X, y, sample_weight)
        return self

    def _encode(self, X):
        check_is_fitted(self, "rules_")
        return self.estimator_._validate_X_predict(X)

    def _first_rule(self, Xe) -> np.ndarray:
        which = np.full(Xe.shape[0], -1)
        todo = np.ones(Xe.shape[0], dtype=bool)
        for r, rule in enumerate(self.rules_):
            hit = todo & rule.covers(Xe)
            which[hit] = r
            todo &= ~hit
        return which

    @takes_rows("proba : ndarray of shape (n_samples, n_classes)",
                "Columns in the order of ``classes_``.")
    def predict_proba(self, X) -> np.ndarray:
        """Class distribution of the rule each row fires."""
        which = self._first_rule(self._encode(X))
        table = np.vstack([r.distribution for r in self.rules_] + [self.default_distribution_])
        return table[which]

    @takes_rows("y : ndarray of shape (n_samples,)")
    def predict(self, X) -> np.ndarray:
        """Class of the first rule that fires for each row, else the default class."""
        which = self._first_rule(self._encode(X))
        klass = np.array([r.klass for r in self.rules_] + [self.default_class_])
        return self.classes_[klass[which]]

    def to_text(self) -> str:
        """The rules as readable text, in order, then the default class."""
        check_is_fitted(self, "rules_")
        est = self.estimator_
        names = getattr(est, "feature_names_in_", None)
        cats = getattr(est, "categories_", None)
        lines = []
        for i, r in enumerate(self.rules_, 1):
            conds = " and ".join(c.text(names, cats, self.show_missing_)
                                 for c in r.conditions) or "true"
            lines.append(f"Rule {i}: if {conds}\n    then {self.classes_[r.klass]}  "
                         f"[cases {r.cases:.6g}, errors {r.errors:.6g}, estimated accuracy "
                         f"{1.0 - r.pessimistic_error:.1%}]")
        lines.append(f"Default: {self.classes_[self.default_class_]}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


def _default_counts(covered, codes, w, K):
    """Class weights of the cases no rule covers (of all cases if every case is covered)."""
    rest = ~covered if (~covered).any() else np.ones_like(covered)
    known = rest & (codes >= 0)
    return np.bincount(codes[known], weights=w[known], minlength=K)


def _drop_harmful_rules(cover, klass, codes, w, K) -> np.ndarray:
    """Indices of the ordered rules kept after Quinlan's last step: while omitting some rule
    would reduce the training errors of the decision list (default class re-chosen after
    each omission), omit the first such rule."""
    active = list(range(klass.shape[0]))
    while active:
        sub = cover[:, active]
        fires = sub.any(axis=1)
        first = np.where(fires, np.argmax(sub, axis=1), -1)
        default = int(np.argmax(_default_counts(fires, codes, w, K)))
        dropped = False
        for pos in range(len(active)):
            rows = np.flatnonzero(first == pos)
            if rows.size == 0:
                # A rule no case reaches first changes nothing; omitting it cannot reduce the
                # errors, but it is dead weight in the list.
                continue
            later = sub[np.ix_(rows, np.arange(pos + 1, len(active)))]
            nxt = (np.where(later.any(axis=1), pos + 1 + np.argmax(later, axis=1), -1)
                   if later.shape[1] else np.full(rows.size, -1))
            new_class = np.where(nxt >= 0, klass[np.asarray(active)][np.maximum(nxt, 0)],
                                 default)
            before = float(w[rows][codes[rows] != klass[active[pos]]].sum())
            after = float(w[rows][codes[rows] != new_class].sum())
            if after < before:
                del active[pos]
                dropped = True
                break
        if not dropped:
            break
    return np.asarray(active, dtype=np.int64)


def extract_rules(estimator, X, y, sample_weight=None, *, simplify: bool = True,
                  confidence_factor: float = 0.25) -> RuleSet:
    """C4.5 rules from a fitted treelearn classifier, judged on ``(X, y)``; shorthand for
    ``RuleSet(estimator, simplify=..., confidence_factor=...).fit(X, y, sample_weight)``."""
    return RuleSet(estimator, simplify=simplify,
                   confidence_factor=confidence_factor).fit(X, y, sample_weight)


def _build(rs: RuleSet, estimator, X, y, sample_weight) -> None:
    """Fill ``rs``'s fitted attributes (module docstring, steps 1-4)."""
    check_is_fitted(estimator, "tree_")
    if not hasattr(estimator, "classes_"):
        raise ValueError("rules are extracted from classifiers; got a regressor.")
    cf = rs.confidence_factor
    u_cf(0, 1, cf)  # validates the confidence factor
    simplify = rs.simplify
    Xe = estimator._validate_X_predict(X)
    y = np.asarray(y)
    if y.shape != (Xe.shape[0],):
        raise ValueError(f"y must have one label per row of X ({Xe.shape[0]}); got shape "
                         f"{y.shape}.")
    labels = estimator.classes_
    pos = np.clip(np.searchsorted(labels, y), 0, labels.shape[0] - 1)
    codes = np.where(labels[pos] == y, pos, -1)
    w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    K = labels.shape[0]
    tree = estimator.tree_
    rules, seen = [], set()
    for leaf, conds in leaf_conditions(tree):
        klass = int(np.argmax(tree.value[leaf, 0]))
        if simplify:
            conds = _simplify(conds, Xe, codes, w, klass, cf)
        rule = Rule(conds, klass, 0.0, 0.0, np.zeros(K), 1.0)
        if rule._key() in seen:
            continue
        seen.add(rule._key())
        cov = rule.covers(Xe)
        n = float(w[cov].sum())
        if n <= 0.0:
            continue
        known = cov & (codes >= 0)
        dist = np.bincount(codes[known], weights=w[known], minlength=K) / n
        rule.cases, rule.errors = n, n - float(w[cov & (codes == klass)].sum())
        rule.distribution = dist
        rule.pessimistic_error = float(u_cf(rule.errors, n, cf))
        rules.append(rule)
    # Order classes by false positives, rules within a class by pessimistic error.
    covers = {id(r): r.covers(Xe) for r in rules}
    fp = {}
    for k in range(K):
        mask = np.zeros(Xe.shape[0], dtype=bool)
        for r in rules:
            if r.klass == k:
                mask |= covers[id(r)]
        fp[k] = float(w[mask & (codes != k)].sum())
    rules.sort(key=lambda r: (fp[r.klass], r.klass, r.pessimistic_error))
    cover = (np.column_stack([covers[id(r)] for r in rules]) if rules
             else np.zeros((Xe.shape[0], 0), dtype=bool))
    klass = np.array([r.klass for r in rules], dtype=np.int64)
    keep = _drop_harmful_rules(cover, klass, codes, w, K) if simplify else np.arange(len(rules))
    rules = [rules[i] for i in keep]
    covered = cover[:, keep].any(axis=1)
    counts = _default_counts(covered, codes, w, K)
    rs.rules_ = rules
    rs.classes_ = labels
    rs.default_class_ = int(np.argmax(counts))
    total = counts.sum()
    rs.default_distribution_ = counts / total if total > 0 else np.eye(K)[rs.default_class_]
    rs.n_features_in_ = estimator.n_features_in_
    rs.show_missing_ = bool(np.isnan(Xe).any()) if not hasattr(Xe, "tocsr") else False
