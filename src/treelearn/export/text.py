"""Plain-text rendering of a tree, in scikit-learn's ``export_text`` layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._paths import node_terms, sum_text
from .._tree import TREE_LEAF, Tree
from ._view import TreeView, view_of


def export_text(model, *, feature_names: Sequence[str] | None = None,
                class_names: Sequence[str] | None = None, max_depth: int = 10,
                decimals: int = 2, show_weights: bool = False,
                show_proportions: bool = False, show_impurity: bool = False,
                show_samples: bool = False, target_name: str = "y") -> str:
    """Render a fitted tree as indented text, one line per branch and leaf.

    A model tree's leaves print their linear models (``LM3: y = 1.20 * carat - 0.40 * depth
    + 310.00``), and the text ends with the list of models at six significant digits and
    their training cases, as Weka's M5P prints them.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
        The tree to render.
    feature_names : sequence of str, optional
        Names of the features; defaults to ``feature_names_in_`` or ``feature_0, ...``.
    class_names : sequence of str, optional
        Names of the classes (classifiers); defaults to ``classes_``.
    max_depth : int, default=10
        Deeper branches are summarised as ``truncated branch of depth d``.
    decimals : int, default=2
        Digits shown for thresholds and values.
    show_weights : bool, default=False
        Show each leaf's weighted class counts (classifiers).
    show_proportions : bool, default=False
        Show each leaf's class proportions (classifiers).
    show_impurity, show_samples : bool, default=False
        Show each leaf's impurity / sample count.
    target_name : str, default="y"
        The name on the left of a linear leaf's formula.

    Returns
    -------
    text : str
    """
    if not isinstance(max_depth, int | np.integer) or max_depth < 0:
        raise ValueError(f"max_depth must be a non-negative int, got {max_depth!r}.")
    if not isinstance(decimals, int | np.integer) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int, got {decimals!r}.")
    view = view_of(model, feature_names, class_names, "export_text")
    tree, feature_names = view.tree, view.feature_names
    lines: list[str] = []
    depths = tree.node_depths()
    # Explicit stack of (node, text before the node's line or None for the node itself).
    stack: list[tuple[int, str | None]] = [(0, None)]
    while stack:
        node, header = stack.pop()
        if header is not None:
            lines.append(header)
            continue
        depth = depths[node]
        indent = "|   " * depth + "|--- "
        if tree.children_left[node] == TREE_LEAF:
            lines.append(indent + _leaf_text(view, node, decimals, show_weights,
                                             show_proportions, show_impurity, show_samples,
                                             target_name))
            continue
        if depth >= max_depth:
            sub = int(depths[_descendants(tree, node)].max() - depth)
            lines.append(indent + f"truncated branch of depth {sub}")
            continue
        name = (sum_text(node_terms(tree, node), feature_names, decimals)
                if tree.is_oblique_node[node] else feature_names[tree.feature[node]])
        conditions = _branch_conditions(tree, node, name,
                                        view.categories, decimals)
        for child, cond in reversed(list(zip(tree.children(node), conditions, strict=True))):
            stack.append((int(child), None))
            stack.append((-1, indent + cond))
    note = view.monotonic_note()
    if note is not None:
        lines.append(f"({note})")
    if tree.has_linear_leaves:
        lines.append("")
        lines.append(f"Linear models ({tree.n_leaves}):")
        for node, k in view.model_number.items():
            lines.append(f"LM{k}: {target_name} = {view.formula(node, None)}  "
                         f"({tree.n_node_samples[node]} cases)")
    return "\n".join(lines) + "\n"


def _branch_conditions(tree: Tree, node: int, name: str, levels, decimals: int) -> list[str]:
    """The condition text of each branch of ``node`` (scikit-learn's "<=" / ">" for numeric
    splits, level sets for categorical ones), noting where missing values go."""
    f = tree.feature[node]
    nb = int(tree.n_branches[node])
    c0, c1 = tree.cat_ptr[node], tree.cat_ptr[node + 1]
    if c1 > c0:
        names = (list(levels[f]) if levels[f] is not None
                 else [f"level {c}" for c in range(c1 - c0)])
        cmap = tree.cat_branch[c0:c1]
        out = []
        for b in range(nb):
            members = [str(names[c]) for c in np.flatnonzero(cmap == b)]
            if not members:  # no level: the branch of missing values (an optimal tree's test)
                out.append(f"{name} is missing")
            elif len(members) == 1:
                out.append(f"{name} = {members[0]}")
            else:
                out.append(f"{name} in {{{', '.join(members)}}}")
    else:
        thr = f"{tree.threshold[node]:.{decimals}f}"
        out = [f"{name} <= {thr}", f"{name} >  {thr}"]
    # Numeric nodes keep scikit-learn's two lines; where categorical values that are missing
    # (or unseen) go is part of reading the split, so it is shown where the node learned it
    # from missing values at fit.
    mb = tree.missing_branch[node]
    if c1 > c0 and 0 <= mb < nb and tree.missing_seen[node] and (cmap == mb).any():
        out[mb] += " or missing"
    return out


def _descendants(tree: Tree, node: int) -> np.ndarray:
    out = []
    stack = [node]
    while stack:
        i = stack.pop()
        out.append(i)
        if tree.children_left[i] != TREE_LEAF:
            stack.extend((tree.children_right[i], tree.children_left[i]))
    return np.asarray(out)


def _leaf_text(view: TreeView, node: int, decimals: int, show_weights: bool,
               show_proportions: bool, show_impurity: bool, show_samples: bool,
               target_name: str = "y") -> str:
    tree = view.tree
    v = tree.value[node, 0]
    if view.is_classifier:
        text = f"class: {view.node_prediction_text(node)}"
        if show_proportions:
            text = "proportions: [" + ", ".join(f"{p:.{decimals}f}" for p in v) + "] " + text
        if show_weights:
            counts = v * tree.weighted_n_node_samples[node]
            text = "weights: [" + ", ".join(f"{c:.{decimals}f}" for c in counts) + "] " + text
    elif tree.has_linear_leaves:
        text = f"LM{view.model_number[node]}: {target_name} = {view.formula(node, decimals)}"
    else:
        text = f"value: [{v[0]:.{decimals}f}]"
    if show_impurity:
        text += f", impurity: {tree.impurity[node]:.{decimals}f}"
    if show_samples:
        text += f", samples: {tree.n_node_samples[node]}"
    return text
