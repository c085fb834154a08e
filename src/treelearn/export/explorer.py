"""The interactive explorer: one self-contained HTML file to read, prune and query a tree.

:func:`explore` writes a page that needs nothing but a browser (no network: its script and
style, ``assets/explorer.js`` and ``assets/explorer.css``, are inlined with the data):

* a collapsible tree (click a node's triangle), details of a node on hover or click: the rule
  leading to it, samples, class counts and shares or value, impurity, prediction;
* a slider along the cost-complexity (weakest-link) pruning sequence that prunes and restores
  the tree live, showing the step's alpha, leaves, depth and training / validation score (a
  model tree has no such sequence: M5 prunes while fitting its models, and a cut subtree
  would need its root's model; the page says so and shows the model's own scores);
* for a tree of binary numeric splits on two features, the decision regions (each leaf's
  rectangle, or polygon at oblique splits, the data on top), following the slider;
* a form to enter a sample and see its path lit up, down to the leaf it lands in (the leaf of
  largest weight for C4.5's fractional cases, as ``apply`` returns), with each column's
  contribution to its prediction beside it: the SHAP values of the tree pruned at the
  slider's step (the predicted class's probability or a chosen class's, or the value),
  computed in the page by
  the algorithm of :mod:`treelearn._shap` from the nodes' values (``shap_value``: a
  classifier's class fractions, exact floats; none for linear leaves).

Everything that needs the model is computed here: the pruning sequence (each node's collapse
step), per-step scores (:mod:`treelearn.pruning._loss` held-out machinery, so a step costs
nothing), node labels and colours, region boxes. The page derives visibility, leaf counts and
depth from the collapse steps itself, and routes samples with the tree's own rules (float32
comparison through ``Math.fround``), so what it shows can be checked against the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from .._files import atomic_path
from .._paths import branch_condition, node_terms
from .._shap import leaf_values
from .._version import __version__
from ..pruning import Pruner
from ..pruning._loss import node_losses
from ..pruning.cost_complexity import sequence_errors
from ._view import TreeView, view_of
from .graphviz import PALETTE, node_colors
from .plot import node_boxes, node_polygons


def _asset(name: str) -> str:
    return resources.files("treelearn.export").joinpath("assets", name).read_text("utf-8")


def _scores(est, pruner: Pruner, X, y, view: TreeView) -> tuple[list | None, str]:
    """Score of the subtree at every pruning step on ``(X, y)``, and the score's name."""
    if X is None or y is None or est is None:
        return None, ""
    tree = pruner.original
    loss = node_losses(est, X, y)
    per_step = sequence_errors(tree.branch_ptr, tree.branch_child, pruner.sequence, loss)
    y = np.asarray(y)
    if not view.is_classifier:
        yf = y.astype(float)
        sst = float(((yf - yf.mean()) ** 2).sum())
        return [round(1.0 - e / sst, 6) if sst > 0 else None for e in per_step], "R²"
    if view.cost_matrix is not None:
        return [round(-e / y.shape[0], 6) for e in per_step], "−mean cost"
    return [round(1.0 - e / y.shape[0], 6) for e in per_step], "accuracy"


def _model_score(model, X, y) -> tuple[list | None, str]:
    """R² of a model tree's own predictions on ``(X, y)`` (one step)."""
    if X is None or y is None:
        return None, ""
    yf = np.asarray(y, dtype=float)
    pred = np.asarray(model.predict(X), dtype=float)
    pred = pred.reshape(pred.shape[0])  # a Tree predicts shape (n, 1, 1)
    sst = float(((yf - yf.mean()) ** 2).sum())
    r2 = 1.0 - float(((yf - pred) ** 2).sum()) / sst if sst > 0 else None
    return [None if r2 is None else round(r2, 6)], "R²"


def _levels_text(view: TreeView) -> list:
    return [None if lv is None else [str(v) for v in lv] for lv in view.categories]


def _regions(view: TreeView, X, y, max_points: int, seed: int) -> dict | None:
    """Boxes of every node clipped to the picture, region colours and a sample of points;
    None unless the tree has binary numeric splits on two features."""
    tree = view.tree
    if tree.n_features != 2 or not tree._numeric_binary or \
            np.any(tree.missing_branch == -1):
        return None
    oblique = tree.is_oblique
    pts = np.zeros((0, 2))
    labels = np.zeros(0)
    if X is not None:
        Xa = np.asarray(X, dtype=float)
        keep = np.isfinite(Xa).all(axis=1)
        pts = Xa[keep]
        labels = np.asarray(y)[keep] if y is not None else np.zeros(pts.shape[0])
        if pts.shape[0] > max_points:
            pick = np.sort(np.random.default_rng(seed).choice(pts.shape[0], max_points,
                                                              replace=False))
            pts, labels = pts[pick], labels[pick]
    extent = []
    axis_split = ~tree.is_oblique_node
    for f in (0, 1):
        e = np.concatenate([pts[:, f], tree.threshold[(tree.feature == f) & axis_split]])
        a, b = (float(e.min()), float(e.max())) if e.size else (0.0, 1.0)
        pad = (b - a) * 0.05 if b > a else 1.0
        extent.append([a - pad, b + pad])
    shapes = {}
    if oblique:
        # every node's polygon (the slider shows inner nodes as leaves)
        shapes["poly"] = [[[float(v) for v in p] for p in poly]
                          for poly in node_polygons(tree, extent)]
    else:
        lo, hi = node_boxes(tree)
        shapes["lo"] = np.stack([np.clip(lo[:, f], *extent[f]) for f in (0, 1)],
                                axis=1).tolist()
        shapes["hi"] = np.stack([np.clip(hi[:, f], *extent[f]) for f in (0, 1)],
                                axis=1).tolist()
    if view.is_classifier:
        cls = view.node_class
        color = [PALETTE[int(c) % len(PALETTE)] for c in cls]
        index = {c: k for k, c in enumerate(view.classes.tolist())}
        point_color = [PALETTE[index.get(v, 0) % len(PALETTE)] for v in labels.tolist()]
    else:
        color = node_colors(view)
        point_color = ["#333333"] * pts.shape[0]
    return {"extent": extent, **shapes, "color": color, "points": pts.tolist(),
            "point_color": point_color}


def explorer_data(model, X=None, y=None, *, X_valid=None, y_valid=None,
                  feature_names: Sequence[str] | None = None, class_names: Sequence | None = None,
                  risk: str = "impurity", max_points: int = 2000, title: str | None = None
                  ) -> dict:
    """The data :func:`explore` embeds in the page (a JSON-ready dict)."""
    view = view_of(model, feature_names, class_names, "explore")
    tree = view.tree
    n = tree.node_count
    collapse = np.full(n, -1, dtype=np.int64)  # -1: a leaf, never collapsed
    note = ""
    if tree.has_linear_leaves:
        # A pruned subtree of a model tree would predict with its root's linear model, which
        # the tree does not keep (M5 prunes while fitting the models): no slider steps, and
        # the one score is the model's own.
        est = model if hasattr(model, "tree_") else None
        alphas, path_leaves = [0.0], [int(tree.n_leaves)]
        train, score_name = _model_score(model, X, y)
        valid, _ = _model_score(model, X_valid, y_valid)
        note = ("A model tree: M5's pruning is part of its fit (prune=\"m5\"), so there is no "
                "cost-complexity sequence to slide along.")
    else:
        pruner = Pruner(model, risk=risk)
        est = pruner.estimator
        collapse[pruner.sequence] = np.arange(pruner.n_steps)
        alphas, path_leaves = pruner.path.ccp_alphas.tolist(), pruner.path.n_leaves.tolist()
        train, score_name = _scores(est, pruner, X, y, view)
        valid, _ = _scores(est, pruner, X_valid, y_valid, view)
    edge = [""] * n
    for i in range(n):
        for b, c in enumerate(tree.children(i).tolist()):
            edge[c] = branch_condition(tree, i, b).text(view.feature_names, view.categories)
    value = tree.value[:, 0, :]
    counts = value * tree.weighted_n_node_samples[:, None] if view.is_classifier else value
    kind = type(est).__name__ if est is not None else "Tree"
    return {
        "title": title or f"{kind}: {tree.n_leaves} leaves, depth {tree.max_depth}",
        "version": __version__,
        "classifier": view.is_classifier,
        "features": view.feature_names,
        "levels": _levels_text(view),
        "classes": view.class_names,
        "children": [tree.children(i).tolist() for i in range(n)],
        "feature": tree.feature.tolist(),
        # an oblique node's [feature, weight] pairs (null elsewhere) and what a node splits on
        "terms": [[list(t) for t in node_terms(tree, i)] or None for i in range(n)],
        "split_name": [view.split_name(i) if tree.children_left[i] >= 0 else ""
                       for i in range(n)],
        # float64 thresholds; the page compares Math.fround(x) <= t, as the kernels do
        "threshold": [float(t) if np.isfinite(t) else ("inf" if t > 0 else "-inf")
                      for t in tree.threshold],
        "cat_branch": [tree.cat_branch[tree.cat_ptr[i]:tree.cat_ptr[i + 1]].tolist() or None
                       for i in range(n)],
        "missing_branch": tree.missing_branch.tolist(),
        "weight": tree.weighted_n_node_samples.tolist(),
        "samples": tree.n_node_samples.tolist(),
        "impurity": [round(float(v), 6) for v in tree.impurity],
        "counts": np.round(counts, 4).tolist(),
        "prediction": [view.node_prediction_text(i, 4) for i in range(n)],
        "edge": edge,
        "color": node_colors(view),
        "collapse": collapse.tolist(),
        "alphas": alphas,
        "path_leaves": path_leaves,
        "note": note,
        "score_name": score_name,
        "train_score": train,
        "valid_score": valid,
        "regions": _regions(view, X, y, max_points, 0),
        # every node's value as SHAP reads it (a pruned node is a leaf); none where SHAP
        # values are not defined
        "shap_value": (None if tree.has_linear_leaves
                       else leaf_values(tree, view.is_classifier).tolist()),
    }


def explore(model, X=None, y=None, path="tree.html", *, X_valid=None, y_valid=None,
            feature_names: Sequence[str] | None = None, class_names: Sequence | None = None,
            risk: str = "impurity", max_points: int = 2000, title: str | None = None) -> Path:
    """Write the interactive explorer of a tree: one self-contained HTML file.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    X, y : array-like, optional
        Training data: the training score at every pruning step and, for two features, the
        points drawn over the decision regions.
    path : str or Path, default="tree.html"
        Where to write (atomically: a temporary file renamed into place).
    X_valid, y_valid : array-like, optional
        Validation data: the validation score at every pruning step.
    feature_names, class_names : sequence, optional
        Names to use instead of the model's.
    risk : {"impurity", "misclassification"}, default="impurity"
        Leaf cost of the pruning sequence (see :class:`treelearn.Pruner`).
    max_points : int, default=2000
        At most this many points are drawn over the regions (a random sample).
    title : str, optional
        Heading of the page.

    Returns
    -------
    path : Path
        The file written; open it in any browser (it loads nothing from the network).

    Notes
    -----
    Scores are accuracy (classifiers; minus the mean cost with a cost matrix) or R²
    (regressors) of each pruned subtree, computed from per-node losses; for C4.5 trees with
    fractional cases they are expected scores (a case counts with its share at each leaf).
    """
    if not isinstance(max_points, int | np.integer) or max_points < 0:
        raise ValueError(f"max_points must be a non-negative int, got {max_points!r}.")
    if (X is None) != (y is None) or (X_valid is None) != (y_valid is None):
        raise ValueError("give X with y, and X_valid with y_valid.")
    data = explorer_data(model, X, y, X_valid=X_valid, y_valid=y_valid,
                         feature_names=feature_names, class_names=class_names, risk=risk,
                         max_points=max_points, title=title)
    page = render_page(data)
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"path {str(path)!r} is a directory; give a file name such as "
                         "tree.html.")
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(page)
    return path


def render_page(data: dict) -> str:
    """The HTML page for ``data`` (from :func:`explorer_data`), script and style inlined."""
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    # Inside <script>, "</" could close the element: JSON allows escaping the slash.
    payload = payload.replace("</", "<\\/")
    title = (data["title"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return (_asset("explorer.html")
            .replace("{{title}}", title)
            .replace("{{style}}", _asset("explorer.css"))
            .replace("{{data}}", payload)
            .replace("{{script}}", _asset("explorer.js")))
