"""Pictures of ensembles (matplotlib): the out-of-bag error as trees are added.

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
