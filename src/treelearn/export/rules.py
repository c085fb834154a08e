"""A tree as if-then rules: one rule per leaf, with its support and confidence.

A leaf's rule is the conjunction of the tests on its path (:mod:`treelearn._paths`). Several
tests of one numeric feature (or of one weighted sum, at oblique splits) are merged into at
most one ``<=`` (the smallest threshold) and one ``>`` (the largest), which accept the same
cases; a test accepts missing values where the tree sends them down that branch ("or
missing"). These are the tree's rules unchanged; C4.5's simplified rule set is
:class:`treelearn.RuleSet`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._paths import Condition, node_conditions
from ._view import TreeView, view_of


@dataclass(frozen=True)
class LeafRule:
    """The rule of one leaf.

    Attributes
    ----------
    leaf : int
        Node index of the leaf in ``tree_``.
    conditions : list of Condition
        Its tests (all must hold).
    prediction : str
        The class name, or the value, the leaf predicts.
    support : float
        Training weight at the leaf (cases, without sample weights).
    n_samples : int
        Training cases reaching the leaf.
    confidence : float or None
        Share of the predicted class among the leaf's training weight (classifiers).
    """

    leaf: int
    conditions: list
    prediction: str
    support: float
    n_samples: int
    confidence: float | None

    def text(self, view: TreeView, decimals: int | None = None,
             show_missing: bool = True) -> str:
        """``if A and B then class: c (support 12, confidence 0.92)``."""
        conds = " and ".join(c.text(view.feature_names, view.categories, show_missing,
                                    decimals) for c in self.conditions) or "always"
        head = "class" if self.confidence is not None else "value"
        stats = f"support {self.support:g}"
        if self.confidence is not None:
            stats += f", confidence {self.confidence:.2f}"
        return f"if {conds} then {head}: {self.prediction} ({stats})"


def merge_conditions(conds: list[Condition]) -> list[Condition]:
    """Merge the numeric tests of each feature into one ``<=`` and one ``>`` test.

    For a value that is not missing, ``x <= a and x <= b`` is ``x <= min(a, b)``; a missing
    value passes the merged test only if it passed every one (categorical tests stay as
    they are). Order: as first seen on the path.
    """
    order: list = []  # categorical Conditions, and (feature, op, terms) keys of numeric ones
    merged: dict[tuple, list] = {}  # key -> [threshold, missing, first Condition]
    for c in conds:
        if c.op == "in":
            order.append(c)
            continue
        key = (c.feature, c.op, c.terms)  # an oblique test merges only with the same sum
        m = merged.get(key)
        if m is None:
            merged[key] = [c.threshold, c.missing, c]
            order.append(key)
            continue
        m[0] = min(m[0], c.threshold) if c.op == "<=" else max(m[0], c.threshold)
        m[1] = m[1] and c.missing
    out: list[Condition] = []
    for item in order:
        if isinstance(item, Condition):
            out.append(item)
            continue
        thr, missing, first = merged[item]
        same = thr == first.threshold and missing == first.missing
        out.append(first if same else Condition(item[0], item[1], threshold=thr,
                                                missing=missing, seen=first.seen,
                                                terms=item[2]))
    return out


def leaf_rules(model, *, feature_names: Sequence[str] | None = None,
               class_names: Sequence | None = None, decimals: int = 2) -> list[LeafRule]:
    """The rule of every leaf, most supported first (ties: node order).

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    feature_names, class_names : sequence, optional
        Names to use instead of the model's.
    decimals : int, default=2
        Digits of a regression leaf's value in ``prediction``.

    Returns
    -------
    rules : list of LeafRule
    """
    view = view_of(model, feature_names, class_names, "leaf_rules")
    return _leaf_rules(view, decimals)


def _leaf_rules(view: TreeView, decimals: int) -> list[LeafRule]:
    tree = view.tree
    conds = node_conditions(tree)
    leaves = np.flatnonzero(tree.branch_ptr[1:] == tree.branch_ptr[:-1])
    cls = view.node_class if view.is_classifier else None
    rules = []
    for leaf in leaves:
        conf = float(tree.value[leaf, 0, cls[leaf]]) if cls is not None else None
        rules.append(LeafRule(int(leaf), merge_conditions(conds[leaf]),
                              view.node_prediction_text(int(leaf), decimals),
                              float(tree.weighted_n_node_samples[leaf]),
                              int(tree.n_node_samples[leaf]), conf))
    rules.sort(key=lambda r: (-r.support, r.leaf))
    return rules


def export_rules(model, *, feature_names: Sequence[str] | None = None,
                 class_names: Sequence | None = None, decimals: int | None = None,
                 show_missing: bool = True) -> str:
    """The tree as if-then rules, one per leaf, most supported first.

    Each line reads ``if <tests> then class: <c> (support <cases>, confidence <share>)``
    (regressors: ``then value: <v> (support <cases>)``). Support is the leaf's training
    weight; confidence the share of the predicted class among it.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    feature_names, class_names : sequence, optional
        Names to use instead of the model's.
    decimals : int, optional
        Digits of thresholds and values (default: thresholds with 6 significant digits,
        values with 2 decimals).
    show_missing : bool, default=True
        Mark tests that a missing value also passes ("or missing"): where the tree sends
        missing values. False shows the tests on known values only.

    Returns
    -------
    text : str
        One rule per line.
    """
    if decimals is not None and (not isinstance(decimals, int | np.integer) or decimals < 0):
        raise ValueError(f"decimals must be a non-negative int or None, got {decimals!r}.")
    view = view_of(model, feature_names, class_names, "export_rules")
    rules = _leaf_rules(view, 2 if decimals is None else decimals)
    return "\n".join(r.text(view, decimals, show_missing) for r in rules) + "\n"
