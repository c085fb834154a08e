"""Pictures of SHAP values (matplotlib): every row's values per column (a beeswarm summary)
and one row's values as a waterfall from the expected value to its prediction.

Both read a fitted model's ``shap_values`` and ``expected_value_`` (trees, forests, extra
trees, bagging) or values passed in, so an explanation computed once is drawn twice without
computing it again. A classifier's values are those of one class's probability: ``class_index``
(default: the second of two classes, else the first), as ``treelearn explain`` chooses.

Why the beeswarm is drawn by hand and not by SHAP's ``summary_plot``: SHAP is not a dependency
(the benchmarks use it as an anchor), and the picture is a scatter per column whose points
are spread vertically by how many rows share a value, which matplotlib draws directly. The
spread is by bins of the column's values (100 across its range), each bin's points placed
symmetrically in turn, so dense regions look wide, as in the published summary plots.

matplotlib is optional (``pip install "treelearn[plot]"``); it is imported when a function is
called. Every function draws on ``ax`` (a new figure's axes when None) and returns it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .plot import axes as _axes

#: Colour of a point whose column value is missing or a category (no low-high order).
NEUTRAL = "#999999"


def _names(model, p: int, feature_names) -> list[str]:
    if feature_names is not None:
        if len(feature_names) != p:
            raise ValueError(f"feature_names has {len(feature_names)} names for {p} columns.")
        return [str(n) for n in feature_names]
    names = getattr(model, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else [f"feature_{j}" for j in range(p)]


def _class_slice(values: np.ndarray, class_index: int | None):
    """``(values (rows x p), output index)`` of the explained output; ``values`` as
    ``shap_values`` returns them."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 2:
        if class_index is not None:
            raise ValueError("class_index is for a classifier's values; these have one output.")
        return values, None
    if values.ndim != 3:
        raise ValueError(f"SHAP values must have 2 or 3 dimensions; got shape {values.shape}.")
    k = values.shape[2]
    if class_index is None:
        class_index = 1 if k == 2 else 0
    if not -k <= class_index < k:
        raise ValueError(f"class_index must be in 0..{k - 1}; got {class_index}.")
    return values[:, :, class_index], class_index


def _explained(model, X, shap_values, class_index):
    """The values to draw (rows x columns), the output index, and the validated rows."""
    Xv = model._validate_X_predict(X)
    if shap_values is None:
        shap_values = model.shap_values(X)
    shap_values = np.asarray(shap_values)
    if shap_values.shape[:2] != Xv.shape:
        raise ValueError(f"shap_values has shape {shap_values.shape}; X has {Xv.shape[0]} rows "
                         f"x {Xv.shape[1]} columns.")
    values, k = _class_slice(shap_values, class_index)
    return values, k, np.asarray(Xv.toarray() if hasattr(Xv, "toarray") else Xv, np.float64)


def _spread(v: np.ndarray, bins: int = 100, width: float = 0.4) -> np.ndarray:
    """Vertical offsets of a column's points: rows in the same bin of ``v`` alternate above
    and below the line, further out as the bin fills, scaled so the fullest bin spans
    ``width`` on each side."""
    if v.size == 0:
        return np.zeros(0)
    lo, hi = float(v.min()), float(v.max())
    b = np.zeros(v.size, dtype=np.int64) if hi == lo else np.minimum(
        ((v - lo) / (hi - lo) * bins).astype(np.int64), bins - 1)
    order = np.argsort(b, kind="stable")
    offsets = np.zeros(v.size)
    counts = np.bincount(b, minlength=bins)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(v.size) - start[b[order]]
    # 0, +1, -1, +2, -2, ...: a bin's points fan out from the line in turn
    offsets[order] = np.where(rank % 2 == 1, (rank + 1) // 2, -(rank // 2))
    peak = max(1, counts.max() // 2)
    return offsets / peak * width


def _colours(x: np.ndarray, categorical: bool):
    """A column's points coloured low (blue) to high (red) by the rank of their value; missing
    values and category codes neutral."""
    import matplotlib

    cmap = matplotlib.colormaps["coolwarm"]
    out = np.tile(matplotlib.colors.to_rgba(NEUTRAL), (x.size, 1))
    ok = ~np.isnan(x)
    if categorical or not ok.any():
        return out
    ranks = np.argsort(np.argsort(x[ok], kind="stable"), kind="stable")
    out[ok] = cmap(ranks / max(1, ok.sum() - 1))
    return out


def plot_shap_summary(model, X, *, shap_values=None, class_index: int | None = None,
                      top: int | None = 20, feature_names: Sequence[str] | None = None,
                      ax=None):
    """Every row's SHAP value of each column as a point (a beeswarm), columns by mean |value|
    from the top, each point coloured by the rank of the row's value in that column (blue low,
    red high; category columns and missing values grey).

    Parameters
    ----------
    model : fitted tree, forest, extra trees or bagging estimator
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows explained (as ``model.predict`` takes them).
    shap_values : ndarray, optional
        ``model.shap_values(X)`` computed before (else computed here).
    class_index : int, optional
        A classifier's class whose probability is explained (default: the second of two
        classes, else the first).
    top : int or None, default=20
        Columns shown (None: all).
    feature_names : sequence of str, optional
        Default: the model's ``feature_names_in_``, else ``feature_0``, ...
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    values, k, Xv = _explained(model, X, shap_values, class_index)
    n, p = values.shape
    names = _names(model, p, feature_names)
    cats = np.asarray(getattr(model, "is_categorical_", np.zeros(p, dtype=bool)), dtype=bool)
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")
    if top is not None:
        if top < 1:
            raise ValueError(f"top must be at least 1 (or None); got {top}.")
        order = order[:top]
    ax = _axes(ax, figsize=(7, 0.4 * order.size + 1.5))
    for pos, j in enumerate(order[::-1]):
        ax.scatter(values[:, j], pos + _spread(values[:, j]), s=8,
                   c=_colours(Xv[:, j], bool(cats[j]) if cats.size == p else False),
                   linewidths=0, rasterized=n > 2000)
    ax.axvline(0.0, color="#444444", linewidth=0.8, zorder=0)
    ax.set_yticks(np.arange(order.size))
    ax.set_yticklabels([names[j] for j in order[::-1]])
    ax.set_ylim(-0.7, order.size - 0.3)
    what = "prediction" if k is None else f"probability of {model.classes_[k]}"
    ax.set_xlabel(f"SHAP value (effect on the {what})")
    ax.set_title(f"SHAP values of {n:,} rows")
    import matplotlib

    mappable = matplotlib.cm.ScalarMappable(cmap=matplotlib.colormaps["coolwarm"])
    bar = ax.figure.colorbar(mappable, ax=ax, ticks=[0, 1], aspect=40, pad=0.02)
    bar.ax.set_yticklabels(["low", "high"])
    bar.set_label("column value")
    return ax


def _shown_value(X, i: int, j: int, Xv: np.ndarray) -> str:
    """Row ``i``'s value of column ``j`` as the user gave it (a DataFrame's cell, else the
    number)."""
    if hasattr(X, "iloc"):
        v = X.iloc[i, j]
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return "missing"
        return f"{v:.4g}" if isinstance(v, (float, np.floating)) else f"{v}"
    v = Xv[i, j]
    return "missing" if np.isnan(v) else f"{v:.4g}"


def plot_shap_waterfall(model, X, row: int = 0, *, shap_values=None,
                        class_index: int | None = None, top: int = 10,
                        feature_names: Sequence[str] | None = None, ax=None):
    """One row's prediction built up from the expected value: one bar per column, largest
    |value| on top (red pushes up, blue down), the columns beyond ``top`` in one bar, ending
    at the prediction.

    Parameters
    ----------
    model : fitted tree, forest, extra trees or bagging estimator
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows, of which ``row`` is drawn (its values label the bars).
    row : int, default=0
        The row's position in ``X``.
    shap_values : ndarray, optional
        ``model.shap_values(X)`` computed before (else the row's are computed here).
    class_index : int, optional
        As in :func:`plot_shap_summary`.
    top : int, default=10
        Columns drawn one by one; the rest share a bar.
    feature_names : sequence of str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    ax : matplotlib Axes
    """
    n = X.shape[0]
    if not -n <= row < n:
        raise ValueError(f"row must be in 0..{n - 1}; got {row}.")
    row = row % n
    if top < 1:
        raise ValueError(f"top must be at least 1; got {top}.")
    rows = X.iloc[[row]] if hasattr(X, "iloc") else X[row:row + 1]
    if shap_values is not None:
        shap_values = np.asarray(shap_values)[row:row + 1]
    values, k, Xv = _explained(model, rows, shap_values, class_index)
    phi = values[0]
    p = phi.size
    names = _names(model, p, feature_names)
    base = float(np.atleast_1d(model.expected_value_)[0 if k is None else k])
    order = np.argsort(-np.abs(phi), kind="stable")
    shown = order[:top]
    labels = [f"{names[j]} = {_shown_value(rows, 0, j, Xv)}" for j in shown]
    steps = list(phi[shown])
    if p > top:
        labels.append(f"{p - top} other column" + ("s" if p - top > 1 else ""))
        steps.append(float(phi[order[top:]].sum()))
    ax = _axes(ax, figsize=(7, 0.45 * len(steps) + 1.5))
    start = base
    for pos, step in enumerate(steps):
        y = len(steps) - 1 - pos
        ax.barh(y, step, left=start, height=0.7,
                color="tab:red" if step >= 0 else "tab:blue")
        ax.text(start + step, y, f" {step:+.4g} ", va="center",
                ha="left" if step >= 0 else "right", fontsize=8)
        start += step
    ends = base + np.concatenate([[0.0], np.cumsum(steps)])
    lo, hi = float(ends.min()), float(ends.max())
    pad = 0.2 * (hi - lo) if hi > lo else 0.1 * max(1.0, abs(hi))
    ax.set_xlim(lo - pad, hi + pad)  # room for the numbers beside the bars
    ax.axvline(base, color="#444444", linewidth=0.8, linestyle=":")
    ax.axvline(start, color="#444444", linewidth=0.8)
    ax.set_yticks(np.arange(len(steps)))
    ax.set_yticklabels(labels[::-1])
    what = "prediction" if k is None else f"probability of {model.classes_[k]}"
    ax.set_xlabel(f"{what}: expected value {base:.4g} -> {start:.4g}")
    ax.set_title(f"SHAP values of row {row}")
    return ax
