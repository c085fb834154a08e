"""Pictures of model trees (matplotlib): a fitted curve of one feature.

matplotlib is optional (``pip install "treelearn[plot]"``); it is imported when a function is
called. The function draws on ``ax`` (a new figure's axes when None) and returns it.
"""

from __future__ import annotations

import numpy as np

from .plot import axes as _axes


def plot_fit_1d(models, X, y, ax=None, labels=None, grid: int = 1000, extend: float = 0.0):
    """The data of a one-feature regression and the curves of fitted models over it: a model
    tree's pieces of lines beside a constant tree's steps (M5 against CART).

    Parameters
    ----------
    models : fitted regressor or sequence of them
        Each predicts from the one feature.
    X : array-like of shape (n_samples, 1)
    y : array-like of shape (n_samples,)
    ax : matplotlib Axes, optional
    labels : sequence of str, optional
        Legend labels (default: the class names and leaves).
    grid : int, default=1000
        Points of each curve.
    extend : float, default=0.0
        Draw the curves this fraction of the data's range beyond it on each side (to show
        extrapolation).

    Returns
    -------
    ax : matplotlib Axes
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 1:
        raise ValueError(f"plot_fit_1d needs X with one feature; got shape {X.shape}.")
    if not isinstance(grid, int | np.integer) or grid < 2:
        raise ValueError(f"grid must be an int of at least 2; got {grid!r}.")
    models = list(models) if isinstance(models, list | tuple) else [models]
    if labels is not None and len(labels) != len(models):
        raise ValueError(f"labels has {len(labels)} entries for {len(models)} models.")
    ax = _axes(ax)
    lo, hi = float(X.min()), float(X.max())
    pad = extend * (hi - lo)
    xs = np.linspace(lo - pad, hi + pad, grid)[:, None]
    ax.scatter(X[:, 0], y, s=6, color="0.7", label="data")
    for k, m in enumerate(models):
        tree = getattr(m, "tree_", None)
        name = labels[k] if labels is not None else (
            f"{type(m).__name__} ({tree.n_leaves} leaves)" if tree is not None
            else type(m).__name__)
        ax.plot(xs[:, 0], m.predict(xs), label=name)
    if pad > 0:
        ax.axvspan(hi, hi + pad, color="0.93", zorder=0)
        ax.axvspan(lo - pad, lo, color="0.93", zorder=0)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend()
    return ax
