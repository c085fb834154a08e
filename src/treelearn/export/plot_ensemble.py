"""Pictures of ensembles (matplotlib): the out-of-bag error as trees are added, and the
rows placed by the forest's proximities (Breiman and Cutler's scaling coordinates).

matplotlib is optional (``pip install "treelearn[plot]"``); it is imported when a function is
called. The function draws on ``ax`` (a new figure's axes when None) and returns it.
"""

from __future__ import annotations

import numpy as np

from .plot import axes as _axes


def plot_oob_error(ensemble, X, y, ax=None, label: str | None = None):
    """Out-of-bag error of the first ``k`` trees against ``k`` (a forest's or bagging's;
    bootstrap samples only): where adding trees stops helping.

    Parameters
    ----------
    ensemble : fitted RandomForest*, ExtraTrees* (bootstrap=True) or Bagging*
    X, y : the training data it was fitted on
    ax : matplotlib Axes, optional
    label : str, optional
        Legend label (several ensembles on one axes).

    Returns
    -------
    ax : matplotlib Axes
    """
    curve = ensemble.oob_error_curve(X, y)
    ax = _axes(ax)
    k = np.arange(1, curve.size + 1)
    ax.plot(k, curve, label=label or type(ensemble).__name__)
    ax.set_xlabel("number of trees")
    classifier = hasattr(ensemble, "classes_")
    ax.set_ylabel("out-of-bag error" if classifier else "out-of-bag mean squared error")
    ax.set_title("Out-of-bag error")
    ax.legend()
    return ax


def plot_proximities(forest, X, y=None, ax=None, n_components: int = 2, labels=None):
    """Breiman and Cutler's picture of a forest's proximities: the rows of ``X`` placed by
    classical multidimensional scaling of ``1 - proximity`` (their "scaling coordinates"),
    so that rows the forest puts in the same leaves lie close together.

    Parameters
    ----------
    forest : fitted forest or bagging (anything with ``proximities``)
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows to draw (a dense proximity matrix of them is computed; memory is checked).
    y : array-like of shape (n_samples,), default=None
        Colours the points by class (a legend per class) or by value (a colour bar).
    ax : matplotlib Axes, optional
    n_components : {2}, default=2
        The picture's two coordinates (the leading two components).
    labels : sequence of str, optional
        Text for each point (row names), drawn beside it.

    Returns
    -------
    ax : matplotlib Axes
        The coordinates are in ``ax.collections[0].get_offsets()``.
    """
    from matplotlib.lines import Line2D

    from ..ensemble._proximity import scaling_coordinates

    if n_components != 2:
        raise ValueError("plot_proximities draws two coordinates (n_components=2); for more, "
                         "call treelearn.ensemble.scaling_coordinates(forest.proximities(X, "
                         "top_k=None), n_components).")
    P = forest.proximities(X, top_k=None)
    xy = scaling_coordinates(P, 2)
    ax = _axes(ax)
    if y is None:
        ax.scatter(xy[:, 0], xy[:, 1], s=12)
    else:
        y = np.asarray(y)
        if y.shape != (xy.shape[0],):
            raise ValueError(f"y must have one value per row of X ({xy.shape[0]}); got shape "
                             f"{y.shape}.")
        classes, codes = np.unique(y, return_inverse=True)
        if y.dtype.kind in "fc" and classes.size > 10:
            pts = ax.scatter(xy[:, 0], xy[:, 1], s=12, c=y, cmap="viridis")
            ax.figure.colorbar(pts, ax=ax, label="y")
        else:
            import matplotlib as mpl

            cmap = mpl.colormaps["tab10" if classes.size <= 10 else "tab20"]
            colors = cmap(codes.ravel() % cmap.N)
            ax.scatter(xy[:, 0], xy[:, 1], s=12, c=colors)
            handles = [Line2D([], [], marker="o", linestyle="", color=cmap(k % cmap.N),
                              label=str(c)) for k, c in enumerate(classes)]
            ax.legend(handles=handles, title="class")
    if labels is not None:
        for (a, b), text in zip(xy, labels, strict=True):
            ax.annotate(str(text), (a, b), fontsize=7)
    ax.set_xlabel("scaling coordinate 1")
    ax.set_ylabel("scaling coordinate 2")
    ax.set_title("Forest proximities (MDS of 1 - proximity)")
    return ax
