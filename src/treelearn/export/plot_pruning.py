"""Pictures of pruning (matplotlib): cost-complexity curves, the cross-validated score against
alpha, tree size against alpha, and the tree with pruned nodes red and kept nodes green.

matplotlib is optional (``pip install "treelearn[plot]"``); it is imported when a function is
called. Every function draws on ``ax`` (a new figure's axes when None) and returns it.
"""

from __future__ import annotations

import numpy as np

from .plot import axes as _axes
from .plot import tree_layout

KEPT_COLOR = "tab:green"
PRUNED_COLOR = "tab:red"


def plot_cost_complexity(pruner, weights, complexity: str = "leaves", ax=None):
    """One curve ``cost + weight * size`` against tree size per weight, minimum marked.

    ``pruner`` is a :class:`~treelearn.pruning.Pruner`; sizes count ``complexity``
    ("leaves" or "nodes"); cost in cases.
    """
    ax = _axes(ax)
    sizes = pruner.sizes(complexity)
    for wgt in np.atleast_1d(weights):
        cc = pruner.cost_complexity(float(wgt), complexity)
        line, = ax.plot(sizes, cc, drawstyle="steps-post", label=f"weight {wgt:g}")
        k = pruner.best_step(float(wgt), complexity)
        ax.plot([sizes[k]], [cc[k]], "o", color=line.get_color(), markersize=7)
    ax.set_xlabel(f"tree size ({complexity})")
    ax.set_ylabel("cost + weight x size")
    ax.set_title("Cost-complexity")
    ax.legend()
    return ax


def plot_cv_pruning(result, ax=None):
    """Cross-validated score against alpha with a +/-1 std band; best and chosen marked.

    ``result`` is a :class:`~treelearn.pruning.CVPruning` (``est.pruning_`` after
    ``prune="cv"``, or :func:`~treelearn.pruning.choose_alpha`).
    """
    ax = _axes(ax)
    a, m, s = result.alphas, result.mean_score, result.std_score
    ax.plot(a, m, marker=".", label="mean score")
    ax.fill_between(a, m - s, m + s, alpha=0.25, label="+/- 1 std")
    ax.axvline(result.best_alpha, color="k", linestyle="--",
               label=f"best: alpha={result.best_alpha:.3g}")
    ax.axvline(result.chosen_alpha, color=PRUNED_COLOR, linestyle=":",
               label=f"{result.rule}: alpha={result.chosen_alpha:.3g}")
    positive = a[a > 0]
    if positive.size:
        ax.set_xscale("symlog", linthresh=float(positive.min()))
    ax.set_xlabel("alpha")
    ax.set_ylabel("cross-validated score")
    ax.set_title(f"Cross-validation ({result.n_splits} splits)")
    ax.legend()
    return ax


def plot_tree_size(path, ax=None):
    """Number of leaves against alpha (a step function). ``path``: a Pruner,
    CostComplexityPath or CVPruning."""
    ax = _axes(ax)
    p = getattr(path, "path", path)
    ax.plot(p.ccp_alphas, p.n_leaves, drawstyle="steps-post", marker=".")
    positive = p.ccp_alphas[p.ccp_alphas > 0]
    if positive.size:
        ax.set_xscale("symlog", linthresh=float(positive.min()))
    ax.set_xlabel("alpha")
    ax.set_ylabel("leaves")
    ax.set_title("Tree size")
    return ax


def pruned_tree_figsize(tree) -> tuple[float, float]:
    """A figure size (inches) at which :func:`plot_pruned_tree` keeps its labels apart: a
    fifth of an inch per leaf, half an inch per level."""
    return max(6.0, 0.2 * tree.n_leaves), max(4.0, 0.5 * (tree.max_depth + 1))


def plot_pruned_tree(pruner, ax=None, decimals: int = 2):
    """The original tree of ``pruner`` with nodes kept at its current step green and pruned
    ones red. Every node whose split has a pruning cost of its own is labelled with it (the
    weight, in cases, at which the split is removed: :attr:`Pruner.pruning_alpha`); splits
    that are removed together with an ancestor's have none and stay unlabelled. Without
    ``ax`` the figure is sized by :func:`pruned_tree_figsize`."""
    tree = pruner.original
    ax = _axes(ax, figsize=pruned_tree_figsize(tree))
    x, y = tree_layout(tree)
    kept = pruner.kept_mask()
    ptr, kids = tree.branch_ptr, tree.branch_child
    for i in range(tree.node_count):
        for c in kids[ptr[i]:ptr[i + 1]]:
            ax.plot([x[i], x[c]], [y[i], y[c]], color="0.6", linewidth=0.8, zorder=1)
    colors = np.where(kept, KEPT_COLOR, PRUNED_COLOR)
    big = tree.n_leaves > 40
    ax.scatter(x, y, c=list(colors), s=25 if big else 60, zorder=2, edgecolors="k",
               linewidths=0.5)
    cost = pruner.pruning_alpha
    for i in np.flatnonzero((ptr[1:] > ptr[:-1]) & np.isfinite(cost)):
        ax.annotate(f"{cost[i]:.{decimals}f}", (x[i], y[i]), textcoords="offset points",
                    xytext=(0, 5 if big else 7), ha="center", fontsize=6 if big else 7)
    ax.set_axis_off()
    ax.set_title(f"Pruned at step {pruner.step} of {pruner.n_steps} "
                 f"(green: kept, red: pruned)")
    return ax
