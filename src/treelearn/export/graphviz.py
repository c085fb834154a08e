"""A tree as a Graphviz graph: DOT text (no Graphviz needed) and SVG/PNG/PDF rendering.

Nodes show the feature they test (or the prediction, for leaves), impurity, samples and the
class counts or value; edges carry each branch's test ("<= 0.80", "in {red, blonde}",
"or missing" where missing values go). Classifier nodes are coloured by predicted class, the
stronger the purer the node (the margin of the top class over the second); regressor nodes by
value. Rendering runs Graphviz's ``dot`` program and writes the file atomically.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .._files import atomic_path
from .._paths import branch_condition
from ._view import TreeView, view_of

#: Class colours (colour-blind friendly "tab10"), reused cyclically.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
#: Formats :func:`render_graphviz` writes.
FORMATS = ("svg", "png", "pdf")


def _blend(color: str, strength: float) -> str:
    """``color`` mixed with white: strength 0 is white, 1 the colour itself."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    mixed = np.rint(255.0 - strength * (255.0 - rgb)).astype(int)
    return "#" + "".join(f"{c:02x}" for c in mixed)


def node_colors(view: TreeView) -> list[str]:
    """Fill colour of every node (see module docstring)."""
    tree = view.tree
    value = tree.value[:, 0, :]
    if view.is_classifier:
        cls = view.node_class
        top = np.sort(value, axis=1)
        first, second = top[:, -1], (top[:, -2] if value.shape[1] > 1 else np.zeros(len(top)))
        with np.errstate(invalid="ignore", divide="ignore"):
            strength = np.where(second < 1.0, (first - second) / (1.0 - second), 0.0)
        return [_blend(PALETTE[int(c) % len(PALETTE)], float(np.clip(s, 0.0, 1.0)))
                for c, s in zip(cls, strength, strict=True)]
    v = value[:, 0]
    span = float(v.max() - v.min())
    strength = (v - v.min()) / span if span > 0 else np.zeros_like(v)
    return [_blend("#e58139", float(s)) for s in strength]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_label(view: TreeView, node: int, decimals: int, show_impurity: bool,
                show_samples: bool, show_value: bool) -> str:
    tree = view.tree
    lines = []
    if tree.children_left[node] >= 0:
        lines.append(view.split_name(node, decimals))
    if show_impurity:
        lines.append(f"impurity = {tree.impurity[node]:.{decimals}f}")
    if show_samples:
        lines.append(f"samples = {tree.n_node_samples[node]}")
    v = tree.value[node, 0]
    if view.is_classifier:
        if show_value:
            counts = v * tree.weighted_n_node_samples[node]
            lines.append("value = [" + ", ".join(f"{c:.{decimals}f}".rstrip("0").rstrip(".")
                                                 for c in counts) + "]")
        lines.append(f"class = {view.node_prediction_text(node)}")
    elif tree.has_linear_leaves and tree.children_left[node] < 0:
        lines.append(view.node_prediction_text(node, decimals))
    else:
        lines.append(f"value = {v[0]:.{decimals}f}")
    return "\n".join(lines)


def export_graphviz(model, *, feature_names: Sequence[str] | None = None,
                    class_names: Sequence | None = None, filled: bool = True,
                    max_depth: int | None = None, decimals: int = 2,
                    show_impurity: bool = True, show_samples: bool = True,
                    show_value: bool = True, rankdir: str = "TB") -> str:
    """The tree as Graphviz DOT text.

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    feature_names, class_names : sequence, optional
        Names to use instead of the model's.
    filled : bool, default=True
        Colour nodes by class (classifiers) or value (regressors).
    max_depth : int, optional
        Draw nodes down to this depth; deeper subtrees become one "..." node.
    decimals : int, default=2
        Digits of thresholds, impurities and values.
    show_impurity, show_samples, show_value : bool, default=True
        What node labels show besides the test or prediction.
    rankdir : {"TB", "LR"}, default="TB"
        Top-to-bottom or left-to-right layout.

    Returns
    -------
    dot : str
        Render it with :func:`render_graphviz`, Graphviz's ``dot`` or any DOT viewer.
    """
    if max_depth is not None and (not isinstance(max_depth, int | np.integer) or max_depth < 0):
        raise ValueError(f"max_depth must be a non-negative int or None, got {max_depth!r}.")
    if not isinstance(decimals, int | np.integer) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int, got {decimals!r}.")
    if rankdir not in ("TB", "LR"):
        raise ValueError(f'rankdir must be "TB" or "LR", got {rankdir!r}.')
    view = view_of(model, feature_names, class_names, "export_graphviz")
    tree = view.tree
    colors = node_colors(view) if filled else None
    style = "filled, rounded" if filled else "rounded"
    out = ["digraph Tree {",
           f'node [shape=box, style="{style}", fontname="helvetica", color="black"];',
           'edge [fontname="helvetica", fontsize=10];',
           f"rankdir={rankdir};"]
    depth = tree.node_depths()
    for node in range(tree.node_count):
        if max_depth is not None and depth[node] > max_depth:
            continue
        kids = tree.children(node).tolist()
        if max_depth is not None and depth[node] == max_depth and kids:
            out.append(f'{node} [label="(...)"{", fillcolor=white" if filled else ""}];')
            continue
        label = _quote(_node_label(view, node, decimals, show_impurity, show_samples,
                                   show_value))
        fill = f', fillcolor="{colors[node]}"' if colors else ""
        out.append(f"{node} [label={label}{fill}];")
        for b, c in enumerate(kids):
            cond = branch_condition(tree, node, b)
            # the node names the feature; the edge shows the rest of the test
            text = cond.test_text(view.categories, decimals)
            if cond.says_missing:
                text += " or missing"
            out.append(f"{node} -> {c} [label={_quote(text)}];")
    note = view.monotonic_note()
    if note is not None:  # the constraints, as the graph's caption
        out.append(f"label={_quote(note)};")
        out.append("labelloc=b;")
    out.append("}")
    return "\n".join(out) + "\n"


def render_graphviz(source, path, *, format: str | None = None, **kwargs) -> Path:
    """Render a tree (or DOT text) to an image file with Graphviz's ``dot`` program.

    Parameters
    ----------
    source : fitted tree, Tree or str
        A model (drawn with :func:`export_graphviz` and ``kwargs``) or DOT text.
    path : str or Path
        Where to write; written to a temporary file first and renamed, so an existing file is
        replaced only by a complete one.
    format : {"svg", "png", "pdf"}, optional
        Default: from the suffix of ``path``.

    Returns
    -------
    path : Path
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS} (or given by the file suffix); got "
                         f"{fmt!r}.")
    dot_text = source if isinstance(source, str) else export_graphviz(source, **kwargs)
    exe = shutil.which("dot")
    if exe is None:
        raise FileNotFoundError("rendering needs Graphviz's `dot` program (e.g. apt install "
                                "graphviz); export_graphviz's DOT text needs nothing.")
    with atomic_path(path) as tmp:
        run = subprocess.run([exe, f"-T{fmt}", "-o", tmp], input=dot_text.encode(),
                             capture_output=True, timeout=600)
        if run.returncode != 0:
            raise RuntimeError(f"Graphviz's dot failed: {run.stderr.decode(errors='replace')}")
    return path
