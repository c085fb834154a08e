"""What every exporter reads of a model: its flat tree plus the names that make it readable.

Exporters accept a fitted treelearn estimator, a fitted scikit-learn decision tree (converted
with :func:`treelearn.from_sklearn`) or a bare :class:`~treelearn._tree.Tree`; this module turns
any of them into one :class:`TreeView`, so no exporter looks at estimators itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._paths import node_terms, sum_text
from .._tree import Tree, expected_costs


@dataclass(frozen=True)
class TreeView:
    """A tree with its feature names, class names, categorical levels and cost matrix.

    Attributes
    ----------
    tree : Tree
    feature_names : list of str
        One per feature (``feature_names_in_`` or ``feature_0, ...`` unless given).
    class_names : list of str or None
        One per class for classifiers; None for regressors.
    classes : ndarray or None
        The class labels themselves (``classes_``; ``0..K-1`` for a bare Tree).
    categories : list
        Per feature, the levels of a categorical feature (in code order) or None.
    cost_matrix : ndarray or None
        ``misclassification_cost`` of a classifier fitted with one (predict = least expected
        cost instead of the most probable class).
    monotonic : ndarray or None
        Per feature the model's monotonic constraint (1, -1, 0; for classifiers on the
        second class's probability), or None without constraints.
    """

    tree: Tree
    feature_names: list
    class_names: list | None
    classes: np.ndarray | None
    categories: list
    cost_matrix: np.ndarray | None
    monotonic: np.ndarray | None = None

    def monotonic_note(self) -> str | None:
        """``"monotonic: carat increasing, age decreasing"`` (None without constraints):
        what readers print beside the tree."""
        if self.monotonic is None or not np.any(self.monotonic):
            return None
        parts = [f"{self.feature_names[j]} {'increasing' if c > 0 else 'decreasing'}"
                 for j, c in enumerate(self.monotonic) if c != 0]
        what = f" (the probability of {self.class_names[1]})" if self.class_names and \
            len(self.class_names) == 2 else ""
        return f"monotonic{what}: {', '.join(parts)}"

    @property
    def is_classifier(self) -> bool:
        return self.class_names is not None

    def leaf_class(self, value: np.ndarray) -> np.ndarray:
        """Class index predicted from rows of class fractions (the estimator's rule)."""
        value = np.atleast_2d(value)
        if self.cost_matrix is not None:
            return np.argmin(expected_costs(value, self.cost_matrix), axis=1)
        return np.argmax(value, axis=1)

    def split_name(self, node: int, decimals: int | None = 2) -> str:
        """What internal ``node`` compares: its feature's name, or at an oblique split the
        weighted sum (``0.71*x1 + 0.71*x2``, weights with ``decimals`` digits)."""
        terms = node_terms(self.tree, node)
        if terms:
            return sum_text(terms, self.feature_names, decimals)
        return self.feature_names[int(self.tree.feature[node])]

    @cached_property
    def node_class(self) -> np.ndarray:
        """Class index each node predicts as a leaf (classifiers), computed once."""
        return self.leaf_class(self.tree.value[:, 0, :])

    def node_prediction_text(self, node: int, decimals: int = 2) -> str:
        """The prediction of ``node`` as a leaf: a class name or a value, or at a linear
        leaf of a model tree its model (``LM3: 1.20 * carat - 0.40 * depth + 310.00``)."""
        if self.is_classifier:
            return str(self.class_names[int(self.node_class[node])])
        if self.tree.has_linear_leaves and self.tree.children_left[node] < 0:
            return f"LM{self.model_number[node]}: {self.formula(node, decimals)}"
        return f"{self.tree.value[node, 0, 0]:.{decimals}f}"

    @cached_property
    def model_number(self) -> dict:
        """The number of each leaf's linear model, 1, 2, ... in node order (M5P's LM1...)."""
        leaves = np.flatnonzero(self.tree.children_left < 0)
        return {int(n): k + 1 for k, n in enumerate(leaves)}

    def formula(self, node: int, decimals: int | None = 2) -> str:
        """A leaf's linear model as text: the terms in order, then the intercept
        (``decimals=None``: six significant digits)."""
        tree = self.tree
        icpt, feats, coefs, _ = tree.leaf_model(node)

        def num(v: float) -> str:
            return f"{v:.{decimals}f}" if decimals is not None else f"{v:.6g}"

        out = ""
        first = int(tree.lin_ptr[node]) if tree.lin_ptr is not None else 0
        for k, (f, c) in enumerate(zip(feats.tolist(), coefs.tolist(), strict=True)):
            name = self.feature_names[f]
            levels = tree.term_levels(first + k)
            if levels is not None:
                lv = self.categories[f]
                ones = [str(lv[int(code)]) if lv is not None and int(code) < len(lv)
                        else str(int(code)) for code, one in zip(*levels, strict=True) if one]
                name = f"[{name} in {{{', '.join(ones)}}}]"
            if not out:
                out = f"{num(c)} * {name}"
            else:
                out += f" {'-' if c < 0 else '+'} {num(abs(c))} * {name}"
        if not out:
            return num(icpt)
        return out + f" {'-' if icpt < 0 else '+'} {num(abs(icpt))}"


def view_of(model, feature_names: Sequence[str] | None = None,
            class_names: Sequence | None = None, caller: str = "export") -> TreeView:
    """The :class:`TreeView` of ``model``; names given here override the model's own."""
    from ..interop import estimator_and_tree

    est, tree = estimator_and_tree(model, caller)
    if feature_names is None:
        names = getattr(est, "feature_names_in_", None)
        feature_names = ([str(n) for n in names] if names is not None
                         else [f"feature_{i}" for i in range(tree.n_features)])
    else:
        if isinstance(feature_names, str) or len(feature_names) != tree.n_features:
            got = 1 if isinstance(feature_names, str) else len(feature_names)
            raise ValueError(f"feature_names has {got} names but the tree has "
                             f"{tree.n_features} features.")
        feature_names = [str(n) for n in feature_names]
    is_clf = hasattr(est, "classes_") if est is not None else tree.n_classes[0] > 1
    classes = None
    if is_clf:
        classes = np.asarray(getattr(est, "classes_", np.arange(tree.value.shape[2])))
        if class_names is None:
            class_names = [str(c) for c in classes.tolist()]
        elif isinstance(class_names, str) or len(class_names) != classes.shape[0]:
            got = 1 if isinstance(class_names, str) else len(class_names)
            raise ValueError(f"class_names has {got} names but the tree has "
                             f"{classes.shape[0]} classes.")
        else:
            class_names = [str(c) for c in class_names]
    else:
        class_names = None
    categories = getattr(est, "categories_", None)
    if categories is None:
        categories = [None] * tree.n_features
    cost = getattr(est, "cost_matrix_", None)
    mono = None
    if est is not None and getattr(est, "monotonic_cst", None) is not None:
        from .._estimators import monotonic_constraints

        mono = monotonic_constraints(est)
    return TreeView(tree, list(feature_names), class_names, classes, list(categories),
                    None if cost is None else np.asarray(cost, dtype=np.float64), mono)
