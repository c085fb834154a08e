"""Pictures of a tree with matplotlib: the tree itself, decision regions, feature importances.

matplotlib is optional (``pip install "treelearn[plot]"``) and imported when a function is
called. Every function draws on ``ax`` (a new figure's axes when None) and returns it.
:func:`tree_layout` and :func:`node_boxes` are the geometry, shared with the pruning pictures
and the explorer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._paths import branch_condition
from .._tree import Tree
from ._view import TreeView, view_of
from .graphviz import PALETTE, node_colors


def axes(ax, figsize=None):
    """``ax``, or the axes of a new figure of ``figsize`` (importing matplotlib only now)."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - the test extras install matplotlib
        raise ImportError('plotting needs matplotlib: pip install "treelearn[plot]"') from exc
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def tree_layout(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of every node: leaves at consecutive x in depth-first order, a parent centred
    over its children, y = -depth."""
    n = tree.node_count
    x = np.zeros(n)
    depth = tree.node_depths()
    ptr, kids = tree.branch_ptr, tree.branch_child
    next_x = 0.0
    order = []
    stack = [0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(kids[ptr[i]:ptr[i + 1]][::-1].tolist())
    for i in order:
        if ptr[i + 1] == ptr[i]:
            x[i] = next_x
            next_x += 1.0
    for i in reversed(order):
        if ptr[i + 1] > ptr[i]:
            x[i] = x[kids[ptr[i]:ptr[i + 1]]].mean()
    return x, -depth.astype(float)


def node_boxes(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """The region of feature space each node covers: ``(lo, hi)`` of shape (node_count,
    n_features), a node holding the points with ``lo < x <= hi`` in every feature.

    Only for trees of binary numeric splits (categorical nodes have no box).
    """
    if np.any(np.diff(tree.cat_ptr) > 0) or not tree.is_binary:
        raise ValueError("regions are boxes only for trees of binary numeric splits; this tree "
                         "has categorical or multiway nodes.")
    lo = np.full((tree.node_count, tree.n_features), -np.inf)
    hi = np.full((tree.node_count, tree.n_features), np.inf)
    # Parents come first: each node narrows its parent's box.
    for i in range(tree.node_count):
        left, right = tree.children_left[i], tree.children_right[i]
        if left < 0:
            continue
        f, t = tree.feature[i], tree.threshold[i]
        lo[left], hi[left] = lo[i], hi[i]
        lo[right], hi[right] = lo[i], hi[i]
        hi[left, f] = min(hi[i, f], t)
        lo[right, f] = max(lo[i, f], t)
    return lo, hi


def clip_half_plane(poly: list, w: np.ndarray, t: float, keep_le: bool) -> list:
    """The part of the convex polygon ``poly`` (a list of 2-d points in order) where
    ``w . x <= t`` (``keep_le``) or ``w . x > t`` (Sutherland-Hodgman, one edge)."""
    sign = 1.0 if keep_le else -1.0
    out = []
    n = len(poly)
    for k in range(n):
        a, b = poly[k], poly[(k + 1) % n]
        da = sign * (float(np.dot(w, a)) - t)
        db = sign * (float(np.dot(w, b)) - t)
        if da <= 0.0:
            out.append(a)
        if (da < 0.0 < db) or (db < 0.0 < da):
            out.append(a + (b - a) * (da / (da - db)))
    return out


def node_polygons(tree: Tree, limits) -> list[list]:
    """The region of every node of a tree on two numeric features, within the rectangle
    ``limits`` (``((x0, x1), (y0, y1))``): a convex polygon (its corners in order, empty
    when the node's region misses the rectangle), cut by every split on its path, oblique
    ones along their slanted lines. Parents come first, so one pass cuts every node."""
    (x0, x1), (y0, y1) = limits
    box = [np.array(p, dtype=float) for p in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
    poly: list[list] = [[] for _ in range(tree.node_count)]
    poly[0] = box
    for i in range(tree.node_count):
        if tree.children_left[i] < 0 or not poly[i]:
            continue
        feats, weights = tree.split_terms(i)
        w = np.zeros(2)
        w[feats] = weights
        t = float(tree.threshold[i])
        poly[int(tree.children_left[i])] = clip_half_plane(poly[i], w, t, True)
        poly[int(tree.children_right[i])] = clip_half_plane(poly[i], w, t, False)
    return poly


def leaf_polygons(tree: Tree, limits) -> dict[int, list]:
    """:func:`node_polygons` of the leaves, by leaf."""
    poly = node_polygons(tree, limits)
    return {int(i): poly[i] for i in np.flatnonzero(tree.children_left < 0)}


def plot_tree(model, *, feature_names: Sequence[str] | None = None,
              class_names: Sequence | None = None, max_depth: int | None = None,
              filled: bool = True, decimals: int = 2, fontsize: float = 8, ax=None):
    """Draw the tree: a box per node (test or prediction, samples, class or value), each edge
    labelled with its branch's test. No Graphviz needed.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    feature_names, class_names : sequence, optional
        Names to use instead of the model's.
    max_depth : int, optional
        Draw nodes down to this depth only.
    filled : bool, default=True
        Colour nodes as :func:`~treelearn.export.export_graphviz` does.
    decimals : int, default=2
    fontsize : float, default=8
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    if max_depth is not None and (not isinstance(max_depth, int | np.integer) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None, got {max_depth!r}.")
    view = view_of(model, feature_names, class_names, "plot_tree")
    tree = view.tree
    if max_depth is not None and tree.max_depth > max_depth:
        # the tree cut at max_depth: nodes there become leaves showing their own prediction
        cut = (tree.node_depths() == max_depth) & (tree.children_left >= 0)
        tree = tree.subtree(cut)
        view = TreeView(tree, view.feature_names, view.class_names, view.classes,
                        view.categories, view.cost_matrix)
    x, y = tree_layout(tree)
    # a new figure wide enough for a box per leaf at this font size
    ax = axes(ax, figsize=(max(6.0, 0.16 * fontsize * tree.n_leaves),
                           max(4.0, 0.12 * fontsize * (tree.max_depth + 1))))
    colors = node_colors(view) if filled else ["white"] * tree.node_count
    for i in range(tree.node_count):
        for b, c in enumerate(tree.children(i)):
            ax.plot([x[i], x[c]], [y[i], y[c]], color="0.5", linewidth=0.8, zorder=1)
            cond = branch_condition(tree, i, b)
            text = cond.test_text(view.categories, decimals) + (" or missing" if cond.says_missing
                                                                else "")
            ax.text((x[i] + x[c]) / 2, (y[i] + y[c]) / 2, text, fontsize=fontsize * 0.8,
                    ha="center", va="center", color="0.25", zorder=2,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none"})
        lines = []
        if tree.children_left[i] >= 0:
            lines.append(view.split_name(i, decimals))
        lines.append(f"samples = {tree.n_node_samples[i]}")
        lines.append(("class = " if view.is_classifier else "value = ")
                     + view.node_prediction_text(i, decimals))
        ax.text(x[i], y[i], "\n".join(lines), fontsize=fontsize, ha="center", va="center",
                zorder=3, gid=f"node-{i}",
                bbox={"boxstyle": "round,pad=0.3", "fc": colors[i], "ec": "0.2"})
    ax.set_xlim(x.min() - 0.7, x.max() + 0.7)
    ax.set_ylim(y.min() - 0.5, 0.5)
    ax.set_axis_off()
    return ax


def plot_decision_regions(model, X=None, y=None, *, feature_names: Sequence[str] | None = None,
                          class_names: Sequence | None = None, margin: float = 0.05,
                          alpha: float = 0.35, ax=None):
    """The decision regions of a tree on two numeric features, drawn as its leaves' exact
    rectangles (one per leaf, not a grid of predictions), with the data on top. The leaves of
    an oblique tree are convex polygons, cut along the slanted lines of their splits.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
        Fitted on exactly two numeric features.
    X : array-like of shape (n_samples, 2), optional
        Points to draw (and the extent of the picture); without it the picture spans the
        thresholds.
    y : array-like of shape (n_samples,), optional
        Their classes (coloured like the regions) or values.
    feature_names, class_names : sequence, optional
        Axis labels and legend entries instead of the model's names.
    margin : float, default=0.05
        Space around the data, as a share of its range.
    alpha : float, default=0.35
        Opacity of the regions.
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
        Its patches are the leaves' rectangles, or polygons for an oblique tree (``gid`` =
        ``leaf-<node>``).
    """
    view = view_of(model, feature_names, class_names, "plot_decision_regions")
    tree = view.tree
    if tree.n_features != 2:
        raise ValueError(f"decision regions need a tree of two features; this one has "
                         f"{tree.n_features}.")
    oblique = tree.is_oblique
    if not oblique:
        lo, hi = node_boxes(tree)
    if X is not None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"X must have shape (n_samples, 2); got {X.shape}.")
        pts = X[np.isfinite(X).all(axis=1)]
    else:
        pts = np.zeros((0, 2))
    axis_split = ~tree.is_oblique_node
    edges = [np.concatenate([pts[:, f], tree.threshold[(tree.feature == f) & axis_split]])
             for f in (0, 1)]
    limits = []
    for e in edges:
        a, b = (float(e.min()), float(e.max())) if e.size else (0.0, 1.0)
        pad = (b - a) * margin if b > a else 1.0
        limits.append((a - pad, b + pad))
    ax = axes(ax)
    from matplotlib.patches import Polygon, Rectangle

    leaves = np.flatnonzero(tree.children_left < 0)
    value = tree.value[:, 0, :]
    if view.is_classifier:
        cls = view.node_class
        face = [PALETTE[int(c) % len(PALETTE)] for c in cls]
    else:
        import matplotlib as mpl

        v = value[:, 0]
        norm = mpl.colors.Normalize(v[leaves].min(), v[leaves].max())
        cmap = mpl.colormaps["viridis"]
        face = [cmap(norm(val)) for val in v]
    if oblique:
        for leaf, corners in leaf_polygons(tree, limits).items():
            if len(corners) >= 3:
                ax.add_patch(Polygon(np.array(corners), closed=True, facecolor=face[leaf],
                                     alpha=alpha, edgecolor="0.3", linewidth=0.6,
                                     gid=f"leaf-{leaf}"))
    for leaf in leaves if not oblique else ():
        x0, x1 = np.clip([lo[leaf, 0], hi[leaf, 0]], *limits[0])
        y0, y1 = np.clip([lo[leaf, 1], hi[leaf, 1]], *limits[1])
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=face[leaf], alpha=alpha,
                               edgecolor="0.3", linewidth=0.6, gid=f"leaf-{leaf}"))
    if pts.shape[0]:
        if y is None:
            ax.scatter(pts[:, 0], pts[:, 1], s=12, c="k")
        elif view.is_classifier:
            y = np.asarray(y)[np.isfinite(X).all(axis=1)]
            for k, c in enumerate(view.classes):
                m = y == c
                if m.any():
                    ax.scatter(pts[m, 0], pts[m, 1], s=14, color=PALETTE[k % len(PALETTE)],
                               edgecolors="k", linewidths=0.4, label=view.class_names[k])
            ax.legend(loc="best", fontsize=8)
        else:
            y = np.asarray(y, dtype=float)[np.isfinite(X).all(axis=1)]
            ax.scatter(pts[:, 0], pts[:, 1], s=14, c=y, cmap="viridis", edgecolors="k",
                       linewidths=0.4, norm=norm)
    ax.set_xlim(*limits[0])
    ax.set_ylim(*limits[1])
    ax.set_xlabel(view.feature_names[0])
    ax.set_ylabel(view.feature_names[1])
    ax.set_title(f"Decision regions ({leaves.size} leaves)")
    return ax


def plot_feature_importances(model, X=None, y=None, *, kind: str = "impurity",
                             n_repeats: int = 10, random_state=0, top: int | None = None,
                             feature_names: Sequence[str] | None = None, ax=None):
    """Feature importances as horizontal bars, most important on top.

    Parameters
    ----------
    model : fitted estimator (a tree, an ensemble, or a Tree for ``kind="impurity"``)
    X, y : array-like, optional
        Data for permutation importances (e.g. held-out data).
    kind : str or sequence of str, default="impurity"
        Mean decrease in impurity ("impurity": ``feature_importances_``, normalised), the mean
        drop of the score when a feature's values are shuffled ("permutation":
        scikit-learn's ``permutation_importance``, error bars: its standard deviation), or
        both side by side ("both"); "corrected": a forest's or bagging's out-of-bag impurity
        importance (MDI-oob, Li et al. 2019; ``oob_impurity_importances``, X and y the
        training data), normalised by its sum of absolute values; "all": the three side by
        side; "shap": the mean |SHAP value| over the rows of X (``shap_values``; a
        classifier's averaged over its classes), normalised to sum to one. A list of kinds
        draws them side by side, e.g. ``["impurity", "shap"]``.
    n_repeats : int, default=10
        Shuffles per feature (permutation).
    random_state : int, RandomState or None, default=0
        Seed of the shuffles.
    top : int, optional
        Show only the ``top`` most important features (by the first kind shown).
    feature_names : sequence of str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    kinds = {"impurity": ("impurity",), "permutation": ("permutation",),
             "both": ("impurity", "permutation"), "corrected": ("corrected",),
             "all": ("impurity", "permutation", "corrected"), "shap": ("shap",)}
    asked = [kind] if isinstance(kind, str) else list(kind)
    if not asked or any(not isinstance(k, str) or k not in kinds for k in asked):
        raise ValueError('kind must be "impurity", "permutation", "both", "corrected", "all" '
                         f'or "shap", or a list of them; got {kind!r}.')
    shown = tuple(dict.fromkeys(k for a in asked for k in kinds[a]))
    ensemble = getattr(model, "estimators_", None) is not None and not hasattr(model, "tree_")
    if ensemble:  # a forest, bagging, AdaBoost: the ensemble's own importances
        names = getattr(model, "feature_names_in_", None)
        names = feature_names or ([str(n) for n in names] if names is not None
                                  else [f"feature_{i}" for i in range(model.n_features_in_)])
    else:
        view = view_of(model, feature_names, None, "plot_feature_importances")
        names = view.feature_names
    series = {}
    if "impurity" in shown:
        series["impurity"] = (model.feature_importances_ if ensemble
                              else view.tree.compute_feature_importances(), None)
    if "permutation" in shown:
        if X is None or y is None:
            raise ValueError("permutation importances need X and y.")
        if not hasattr(model, "fit"):
            raise TypeError("permutation importances need a fitted estimator, not a Tree.")
        from sklearn.inspection import permutation_importance

        r = permutation_importance(model, X, y, n_repeats=n_repeats, random_state=random_state)
        series["permutation"] = (r.importances_mean, r.importances_std)
    if "corrected" in shown:
        if not hasattr(model, "oob_impurity_importances"):
            raise TypeError("corrected (out-of-bag) impurity importances need a forest or "
                            f"bagging fitted with bootstrap samples; got {type(model).__name__}.")
        if X is None or y is None:
            raise ValueError("corrected importances need the training data X and y.")
        imp = model.oob_impurity_importances(X, y)
        scale = np.abs(imp).sum()
        series["corrected (out-of-bag)"] = (imp / scale if scale > 0 else imp, None)
    if "shap" in shown:
        if X is None:
            raise ValueError("SHAP importances need the rows X to explain.")
        if not hasattr(model, "shap_values"):
            raise TypeError(f"SHAP importances need a model with shap_values; got "
                            f"{type(model).__name__}.")
        phi = np.abs(np.asarray(model.shap_values(X), dtype=np.float64))
        imp = phi.mean(axis=0) if phi.ndim == 2 else phi.mean(axis=(0, 2))
        scale = imp.sum()
        series["mean |SHAP|"] = (imp / scale if scale > 0 else imp, None)
    first = next(iter(series.values()))[0]
    order = np.argsort(-first, kind="stable")
    if top is not None:
        order = order[:top]
    ax = axes(ax)
    height = 0.8 / len(series)
    pos = np.arange(order.size)[::-1]
    for k, (name, (mean, std)) in enumerate(series.items()):
        ax.barh(pos + (len(series) - 1 - 2 * k) * height / 2, mean[order], height=height,
                xerr=None if std is None else std[order], label=name,
                color=PALETTE[k], capsize=2)
    ax.set_yticks(pos)
    ax.set_yticklabels([names[i] for i in order])
    ax.set_xlabel("importance")
    ax.set_title("Feature importances")
    if len(series) > 1:
        ax.legend()
    return ax
