"""What the kernels see of X: prepared once per fit.

Dense X (float32) is presorted per feature (NumPy's sort releases the GIL, so the features are
sorted on a small thread pool without any compiled kernel); the trees of a forest take their
rows out of one shared presort (:func:`subset_sorted`, linear time); sparse X stays CSR
(float32 data, int32 column indices, int64 row pointers, sorted indices) with a buffer of
sample ids.
The result is read by :mod:`treelearn.engine.fit`.

Tables (second half of the module): which columns are categorical (``categorical_features``:
"auto", indices, names or a mask), their levels (learned at fit: a pandas categorical's own
order, else sorted), and the float32 matrix every engine and every prediction reads, with
categorical columns as level codes and NaN for missing values and for levels unseen at fit.
"""

from __future__ import annotations

import os

import numpy as np

from .._interrupt import check as check_interrupt
from .._interrupt import map_threads
from .config import X_DTYPE, njit, pjit, prange

try:  # optional: vectorised missing-value tests and level lookups for tables
    import pandas as _pd
except ImportError:  # pragma: no cover - pandas is a test dependency
    _pd = None

_SIGN = np.uint32(0x80000000)


def _sorted_feature(col: np.ndarray, sval_row: np.ndarray, sidx_row: np.ndarray) -> None:
    """Stable argsort of one float32 column into ``sidx_row`` and the sorted values.

    The value's bits are mapped to a uint32 that orders like the float, joined with the sample
    id into unique uint64 keys, and sorted (6x faster than a stable argsort, same result: ties
    come out in increasing sample order). -0.0 is first made +0.0 so that the two zeros tie.
    """
    u = (col + np.float32(0.0)).view(np.uint32)
    key = np.where(u & _SIGN, ~u, u | _SIGN).astype(np.uint64)
    key <<= np.uint64(32)
    key |= np.arange(col.shape[0], dtype=np.uint64)
    key.sort()
    sidx_row[:] = key & np.uint64(0xFFFFFFFF)
    top = (key >> np.uint64(32)).astype(np.uint32)
    sval_row[:] = np.where(top & _SIGN, top ^ _SIGN, ~top).view(np.float32)


def presort(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per feature, the sample ids in increasing order of value and the sorted values.

    Returns ``(sval, sidx)`` of shape (n_features, n_samples), float32 and int32. Ties keep
    increasing sample order (a stable sort), so the result does not depend on the thread count
    or on NumPy's sorting algorithm.
    """
    n, F = X.shape
    Xt = np.ascontiguousarray(X.T, dtype=np.float32)
    sval = np.empty((F, n), dtype=np.float32)
    sidx = np.empty((F, n), dtype=np.int32)

    def one(f: int) -> None:
        check_interrupt()  # pool threads stop between columns on Ctrl-C
        _sorted_feature(Xt[f], sval[f], sidx[f])

    if n * F < 200_000:
        for f in range(F):
            one(f)
    else:
        map_threads(one, range(F), min(F, os.cpu_count() or 1))
    return sval, sidx


@njit
def _subset_sorted(sval, sidx, rid, out_val, out_idx):
    F, n = sval.shape
    for f in range(F):
        j = 0
        for k in range(n):
            r = rid[sidx[f, k]]
            if r >= 0:
                out_val[f, j] = sval[f, k]
                out_idx[f, j] = r
                j += 1


def subset_sorted(sval: np.ndarray, sidx: np.ndarray,
                  keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The presorted lists of the rows ``keep`` (a boolean mask) out of those of all rows,
    with the kept rows renumbered ``0, 1, ...`` in their order: exactly :func:`presort` of
    ``X[keep]`` (ties stay in increasing row order), in O(rows x features) instead of a sort.
    """
    m = int(np.count_nonzero(keep))
    if m == keep.shape[0]:
        return sval.copy(), sidx.copy()  # every row (AdaBoost's rounds): a plain copy
    rid = np.cumsum(keep, dtype=np.int32) - 1
    rid[~keep] = -1
    F = sval.shape[0]
    out_val = np.empty((F, m), dtype=np.float32)
    out_idx = np.empty((F, m), dtype=np.int32)
    step = max(1, CHUNK_ENTRIES // max(keep.shape[0], 1))
    for f in range(0, F, step):  # a Ctrl-C is taken between blocks of features
        g = min(F, f + step)
        _subset_sorted(sval[f:g], sidx[f:g], rid, out_val[f:g], out_idx[f:g])
        check_interrupt()
    return out_val, out_idx


#: Entries (rows x features) from which :func:`in_sorted_order` gathers on all threads.
PARALLEL_GATHER = 2_000_000
#: Entries per uninterrupted step of :func:`subset_sorted` and :func:`in_sorted_order` on one
#: thread (a tree of a forest takes its rows' lists out of the shared ones; ~30 ms).
CHUNK_ENTRIES = 4_000_000


@pjit
def _gather_codes(sidx, codes, out):
    for f in prange(sidx.shape[0]):
        for i in range(sidx.shape[1]):
            out[f, i] = codes[sidx[f, i]]


@pjit
def _gather_floats(sidx, values, out):
    for f in prange(sidx.shape[0]):
        for i in range(sidx.shape[1]):
            out[f, i] = values[sidx[f, i]]


def in_sorted_order(sidx: np.ndarray, values: np.ndarray, parallel: bool = True) -> np.ndarray:
    """``values[sidx]`` (class codes as int32, else float64), each feature's list on its own
    thread: a forest or boosting round lays its targets and weights out in every feature's
    order, 28 gathers of a million rows for 1M x 28. Small lists are gathered by NumPy (no
    thread start, and the threaded kernels compile only in fits that use them), and so are
    the lists of trees grown side by side (``parallel=False``)."""
    if sidx.size < PARALLEL_GATHER or not parallel:
        out = np.empty(sidx.shape, dtype=np.int32 if values.dtype.kind in "iub" else np.float64)
        step = max(1, CHUNK_ENTRIES // max(sidx.shape[1], 1))
        for f in range(0, sidx.shape[0], step):  # a Ctrl-C is taken between blocks
            out[f:f + step] = values[sidx[f:f + step]]
            check_interrupt()
        return out
    if values.dtype.kind in "iub":
        out = np.empty(sidx.shape, dtype=np.int32)
        _gather_codes(sidx, np.ascontiguousarray(values, dtype=np.int32), out)
    else:
        out = np.empty(sidx.shape, dtype=np.float64)
        _gather_floats(sidx, np.ascontiguousarray(values, dtype=np.float64), out)
    return out


# -- columns of a table: numeric or categorical, with missing values ------------------------------

def _is_dataframe(X) -> bool:
    return hasattr(X, "dtypes") and hasattr(X, "columns") and hasattr(X, "iloc")


def _auto_categorical(X) -> np.ndarray:
    """"auto": pandas category, object, string and bool columns; none for other inputs."""
    if not _is_dataframe(X):
        return np.zeros(np.shape(X)[1] if np.ndim(X) == 2 else 0, dtype=bool)
    out = []
    for dt in X.dtypes:
        kind = getattr(dt, "kind", "O")
        name = str(dt)
        out.append(name in ("category", "bool", "boolean") or name.startswith("string")
                   or kind in "OSUb")
    return np.asarray(out, dtype=bool)


def categorical_mask(spec, X, n_features: int, names=None) -> np.ndarray:
    """Boolean mask of the categorical columns from the ``categorical_features`` parameter.

    ``spec`` is None (no categorical column), "auto", a boolean mask, or a list of indices or
    column names. Errors name the offending entry.
    """
    if spec is None:
        return np.zeros(n_features, dtype=bool)
    if isinstance(spec, str):
        if spec != "auto":
            raise ValueError('categorical_features must be "auto", None, a boolean mask, or a '
                             f'list of column indices or names; got {spec!r}.')
        return _auto_categorical(X)
    items = list(spec)
    mask = np.zeros(n_features, dtype=bool)
    if items and all(isinstance(v, bool | np.bool_) for v in items):
        if len(items) != n_features:
            raise ValueError(f"categorical_features is a boolean mask of length {len(items)}, "
                             f"but X has {n_features} features.")
        return np.asarray(items, dtype=bool)
    for v in items:
        if isinstance(v, str):
            if names is None or v not in list(names):
                raise ValueError(f"categorical_features names column {v!r}, which X does not "
                                 "have (column names are known only for DataFrames).")
            mask[list(names).index(v)] = True
        elif isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
            if not -n_features <= v < n_features:
                raise ValueError(f"categorical_features index {v} is out of range for "
                                 f"{n_features} features.")
            mask[v] = True
        else:
            raise ValueError("categorical_features entries must be column indices or names; "
                             f"got {v!r}.")
    return mask


def _column(X, j: int) -> np.ndarray:
    if _is_dataframe(X):
        return X.iloc[:, j]
    return X[:, j]


def _missing_mask(values) -> np.ndarray:
    """True for None, NaN and pandas' NA in an array of any dtype."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    if arr.dtype.kind in "biuUS":
        return np.zeros(arr.shape[0], dtype=bool)
    if _pd is not None:
        return np.asarray(_pd.isna(arr), dtype=bool)
    out = np.empty(arr.shape[0], dtype=bool)
    for i, v in enumerate(arr):
        out[i] = v is None or (isinstance(v, float) and v != v) or type(v).__name__ == "NAType"
    return out


def _levels(col, present: np.ndarray) -> np.ndarray:
    """The levels of a categorical column: a pandas categorical's own order, else sorted (by
    type name then value when the types do not compare)."""
    cats = getattr(getattr(col, "cat", None), "categories", None)
    vals = np.asarray(col, dtype=object)[present]
    seen = set(vals.tolist())
    if cats is not None:
        return np.asarray([c for c in cats if c in seen], dtype=object)
    try:
        ordered = sorted(seen)
    except TypeError:
        ordered = sorted(seen, key=lambda v: (type(v).__name__, str(v)))
    return np.asarray(ordered, dtype=object)


def _codes(col, levels: np.ndarray) -> np.ndarray:
    """float32 level codes of a column (NaN: missing or a level not in ``levels``)."""
    if _pd is not None and levels.shape[0] > 0:
        # hash lookups in C; -1 for missing values and unseen levels (never in ``levels``)
        index = _pd.Index(levels, dtype=object)
        if isinstance(getattr(col, "dtype", None), _pd.CategoricalDtype):
            mapping = index.get_indexer(col.cat.categories.astype(object))
            codes = col.cat.codes.to_numpy()
            idx = np.where(codes >= 0, mapping[np.maximum(codes, 0)], -1)
        else:
            idx = index.get_indexer(np.asarray(col, dtype=object))
        out = idx.astype(np.float32)
        out[idx < 0] = np.nan
        return out
    vals = np.asarray(col, dtype=object)
    missing = _missing_mask(vals)
    lookup = {v: i for i, v in enumerate(levels.tolist())}
    out = np.full(vals.shape[0], np.nan, dtype=np.float32)
    for i in np.flatnonzero(~missing):
        code = lookup.get(vals[i])
        if code is not None:
            out[i] = code
    return out


def _numeric(col, name: str) -> np.ndarray:
    arr = np.asarray(col)
    if arr.dtype.kind in "biuf":
        return arr.astype(X_DTYPE)
    missing = _missing_mask(arr)
    out = np.full(arr.shape[0], np.nan, dtype=X_DTYPE)
    try:
        out[~missing] = np.asarray(arr[~missing], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"feature {name} holds non-numeric values; declare it in "
                         "categorical_features (or use categorical_features='auto' with a "
                         "DataFrame).") from None
    return out


def learn_levels(X, mask: np.ndarray) -> list:
    """Levels of every categorical column (None for numeric columns)."""
    out: list = []
    for j in range(mask.shape[0]):
        if not mask[j]:
            out.append(None)
            continue
        col = _column(X, j)
        if _pd is not None and isinstance(getattr(col, "dtype", None), _pd.CategoricalDtype):
            # a pandas categorical: the categories that occur, in its own order
            present = np.unique(col.cat.codes.to_numpy())
            cats = col.cat.categories
            out.append(np.asarray([cats[c] for c in present if c >= 0], dtype=object))
            continue
        out.append(_levels(col, ~_missing_mask(np.asarray(col, dtype=object))))
    return out


def encode_table(X, mask: np.ndarray, levels: list, names=None) -> np.ndarray:
    """The float32 matrix the trees read: numeric columns as values, categorical columns as
    level codes ``0 .. L-1`` in the order of ``levels``; NaN for a missing value or a level not
    seen at fit (a level unseen at fit is therefore routed as a missing value)."""
    n = X.shape[0]
    out = np.empty((n, mask.shape[0]), dtype=X_DTYPE)
    for j in range(mask.shape[0]):
        col = _column(X, j)
        name = repr(names[j]) if names is not None else str(j)
        if mask[j]:
            out[:, j] = _codes(col, levels[j])
        else:
            out[:, j] = _numeric(col, name)
    return out


@njit
def sparse_value(indptr, indices, data, s, f):
    """``X[s, f]`` of a CSR matrix with sorted column indices (binary search)."""
    a = indptr[s]
    b = indptr[s + 1]
    while a < b:
        mid = (a + b) // 2
        c = indices[mid]
        if c == f:
            return data[mid]
        if c < f:
            a = mid + 1
        else:
            b = mid
    return np.float32(0.0)
