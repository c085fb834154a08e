"""Binning: real feature values to small integer bins for the histogram splitter.

A :class:`Binner` learns, per feature, increasing *edges* ``e_0 < e_1 < ... < e_{k-2}`` that
cut the values into ``k <= max_bins`` bins: bin ``b`` holds the values ``x`` with
``e_{b-1} < x <= e_b``. A split "bin <= b" of the histogram splitter is therefore the real
threshold ``x <= e_b``: trees store real thresholds and predict on raw X.

* A feature with at most ``max_bins`` distinct values gets one bin per value (edges at the
  midpoints between neighbours, with scikit-learn's float32 rounding rule), so low-cardinality
  data loses nothing: every cut the exact splitter can make is available.
* Otherwise edges are quantiles: cut points at equal shares of the (sub)sample's weight of rows,
  placed at the midpoint between the two distinct values they fall between.
* Edges are learned from a random subsample of ``subsample`` rows (default 200,000, as LightGBM
  and scikit-learn's histogram boosting do). When the subsample shows a feature with few
  distinct values, the full column is checked, so a rare value missed by the subsample still
  gets its own bin.
* NaN goes to a bin of its own, ``missing_bin = max_bins`` (so bins fit in uint8 with
  ``max_bins <= 255``); it is above every value bin, so "bin <= b" sends it right.

The bin matrix is uint8 in row-major (C) order: the histogram splitter reads a node's rows
sequentially, one cache line holding a whole row of 28 features.
"""

from __future__ import annotations

import os
from collections import namedtuple
from numbers import Integral

import numpy as np

from .._interrupt import check as check_interrupt
from .._interrupt import map_threads
from .config import X_DTYPE, njit, pjit, prange, tiny
from .layouts.ranked import radix_pass

#: Width of the padded edge table: 255 real edges at most, then +inf, so the branch-free search
#: below takes exactly eight steps.
EDGE_TABLE_WIDTH = 256
_BLOCK = 4096


@tiny
def edge_bin(edges, f, x):
    """The bin of value ``x`` (not NaN) of feature ``f``: how many of its edges (row ``f`` of
    the padded (n_features, 256) table, flattened) lie below ``x``. Eight branch-free steps (a
    comparison added, not branched on: the outcome is unpredictable, and a mispredicted branch
    costs more than the whole step). Every offset is unsigned, so no index needs a negative-index
    test (a signed ``f * 256`` made the sums signed: 1M x 28 on two threads, 0.38 s -> 0.33 s)."""
    e = np.uint64(f) * np.uint64(256)
    pos = np.uint64(edges[e + np.uint64(127)] < x) << np.uint64(7)
    pos |= np.uint64(edges[e + pos + np.uint64(63)] < x) << np.uint64(6)
    pos |= np.uint64(edges[e + pos + np.uint64(31)] < x) << np.uint64(5)
    pos |= np.uint64(edges[e + pos + np.uint64(15)] < x) << np.uint64(4)
    pos |= np.uint64(edges[e + pos + np.uint64(7)] < x) << np.uint64(3)
    pos |= np.uint64(edges[e + pos + np.uint64(3)] < x) << np.uint64(2)
    pos |= np.uint64(edges[e + pos + np.uint64(1)] < x) << np.uint64(1)
    pos |= np.uint64(edges[e + pos] < x)
    return np.uint8(pos)


@pjit
def bin_matrix(X, edges, missing_bins, out):
    """``out[i, f]`` = number of ``edges[f]`` below ``X[i, f]`` (NaN: ``missing_bins[f]``).

    ``edges`` is the padded (n_features, 256) float32 table, flattened; rows of X are processed
    in blocks on all threads, each value by an eight-step branch-free binary search (unsigned
    offsets: no negative-index checks). Without the per-cell category and width tests of
    :func:`table_bins` (1M x 28: the bin matrix in 0.35 s, 0.59 s through them).
    """
    n, p = X.shape
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        stop = min(n, (blk + 1) * _BLOCK)
        for i in range(blk * _BLOCK, stop):
            for f in range(p):
                x = X[i, f]
                out[i, f] = missing_bins[f] if np.isnan(x) else edge_bin(edges, f, x)


@pjit
def gather_columns(X, rows, out):
    """``out[f, j] = X[rows[j], f]``: the subsample, one contiguous row per feature."""
    m = rows.shape[0]
    n_blocks = (m + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        for j in range(blk * _BLOCK, min(m, (blk + 1) * _BLOCK)):
            r = rows[j]
            for f in range(X.shape[1]):
                out[f, j] = X[r, f]


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """float32 midpoints of neighbours ``lo < hi``; where rounding reaches ``hi``, ``lo``."""
    mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2.0).astype(np.float32)
    return np.where(mid >= hi, lo, mid)


def feature_edges(v: np.ndarray, max_bins: int) -> tuple[np.ndarray, bool]:
    """Edges of one feature from its values sorted increasingly, NaN last (ignored); also
    whether they are exact (one bin per distinct value: at most ``max_bins`` of them)."""
    if v.size and np.isnan(v[-1]):
        v = v[~np.isnan(v)]
    if v.size == 0:
        return np.empty(0, dtype=np.float32), True
    new = np.empty(v.size, dtype=bool)
    new[0] = True
    np.not_equal(v[1:], v[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    distinct = v[starts]
    if distinct.size <= max_bins:
        return _midpoints(distinct[:-1], distinct[1:]), True
    # Rows up to and including distinct value j: the cut after j leaves that many rows left.
    upto = np.append(starts[1:], v.size)
    targets = np.arange(1, max_bins) * (v.size / max_bins)
    j = np.unique(np.minimum(np.searchsorted(upto, targets), distinct.size - 2))
    return _midpoints(distinct[j], distinct[j + 1]), False


#: Bits of each digit of :func:`sort_floats` (three passes cover 32 bits).
_DIGIT_BITS = (11, 11, 10)


@njit
def sort_floats(a):
    """Sort the float32 vector ``a`` in place, increasing, NaN last (as NumPy's sort; -0.0
    before 0.0, which NumPy leaves in either order and every comparison treats alike).

    A least-significant-digit radix sort of the values' bit patterns made monotonic (sign bit
    flipped for positives, every bit for negatives; NaN mapped above +inf): three counting
    passes of 11, 11 and 10 bits (the ranked splitter's pass, without payload). The binner
    sorts its 200,000-row subsample of every feature: 1.3 ms a column against NumPy's 5.0 ms
    (its AVX-512 quicksort), 1M x 28 binned in about 50 ms less."""
    m = a.shape[0]
    bits = a.view(np.uint32)
    keys = np.empty(m, dtype=np.uint32)
    tmp = np.empty(m, dtype=np.uint32)
    top = np.uint32(0x80000000)
    ones = np.uint32(0xFFFFFFFF)
    for i in range(m):
        b = bits[i]
        if np.isnan(a[i]):
            keys[i] = ones
        elif b & top:
            keys[i] = ~b
        else:
            keys[i] = b | top
    cnt = np.empty(1 << 11, dtype=np.int64)
    src, dst = keys, tmp
    shift = 0
    for width in _DIGIT_BITS:
        radix_pass(src, None, None, None, dst, None, None, None, m, np.int64(0),
                    np.int64(shift), np.int64((1 << width) - 1), cnt)
        src, dst = dst, src
        shift += width
    for i in range(m):
        k = src[i]
        if k == ones:
            a[i] = np.nan
        elif k & top:
            bits[i] = k & ~top
        else:
            bits[i] = ~k


def _sorted_columns(X: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Columns of ``X[rows]`` (all rows if None), each sorted, as rows of a (p, m) array."""
    if rows is None:
        rows = np.arange(X.shape[0])
    cols = np.empty((X.shape[1], rows.size), dtype=X_DTYPE)
    gather_columns(X, rows, cols)

    def one(f: int) -> None:
        check_interrupt()  # pool threads stop between columns on Ctrl-C
        sort_floats(cols[f])  # compiled without the GIL: the features sort on all cores

    if cols.size < 200_000:
        for f in range(cols.shape[0]):
            one(f)
    else:
        map_threads(one, range(cols.shape[0]), min(cols.shape[0], os.cpu_count() or 1))
    return cols


class Binner:
    """Per-feature bin edges, learned once and reusable across fits.

    Parameters
    ----------
    max_bins : int, default=255
        Number of bins for values, 2..255 (a further bin, number ``max_bins``, holds NaN).
    subsample : int or None, default=200_000
        Rows used to find quantile edges (None: all rows). Features with at most ``max_bins``
        distinct values always get one bin per value of the full column.
    random_state : int, default=0
        Seed of the subsample.

    Attributes
    ----------
    bin_edges_ : list of ndarray
        Edges of each feature (float32, increasing); bin ``b`` holds ``e[b-1] < x <= e[b]``.
    n_bins_ : ndarray of shape (n_features,)
        Number of value bins of each feature (``len(bin_edges_[f]) + 1``).
    exact_ : ndarray of bool
        Whether a feature has one bin per distinct value.
    missing_bin : int
        The bin of NaN (``max_bins``).

    Notes
    -----
    The binner is a plain object rather than a scikit-learn estimator on purpose: ``clone`` of a
    tree then deep-copies a fitted binner given as its ``binner`` parameter (keeping the edges)
    instead of resetting it, so grid searches and repeated fits bin with the same edges.
    """

    def __init__(self, max_bins: int = 255, subsample: int | None = 200_000,
                 random_state: int = 0):
        if not isinstance(max_bins, Integral) or isinstance(max_bins, bool) \
                or not 2 <= max_bins <= 255:
            raise ValueError(f"max_bins must be an int in [2, 255]; got {max_bins!r}.")
        if subsample is not None and (not isinstance(subsample, Integral) or subsample < 1):
            raise ValueError(f"subsample must be a positive int or None; got {subsample!r}.")
        self.max_bins = int(max_bins)
        self.subsample = subsample
        self.random_state = random_state

    @property
    def missing_bin(self) -> int:
        """The bin of NaN: ``max_bins``, above every value bin."""
        return self.max_bins

    @property
    def is_fitted(self) -> bool:
        """Whether :meth:`fit` has learned the edges."""
        return hasattr(self, "bin_edges_")

    def __repr__(self) -> str:
        state = f", n_features={len(self.bin_edges_)}" if self.is_fitted else ""
        return f"Binner(max_bins={self.max_bins}, subsample={self.subsample}{state})"

    def fit(self, X) -> Binner:
        """Learn the edges of each column of a 2-D float array X (NaN allowed)."""
        X = self._check(X)
        n, p = X.shape
        rows = None
        if self.subsample is not None and n > self.subsample:
            rng = np.random.default_rng(self.random_state)
            # the drawn rows in increasing order (a mask: sorting them took 9 ms at 1M rows)
            keep = np.zeros(n, dtype=bool)
            keep[rng.choice(n, self.subsample, replace=False)] = True
            rows = np.flatnonzero(keep)
        cols = _sorted_columns(X, rows)
        edges, exact = [], np.zeros(p, dtype=bool)
        for f in range(p):
            e, ex = feature_edges(cols[f], self.max_bins)
            if ex and rows is not None:
                # The subsample may miss rare values: check that every value of the column is
                # one the edges were made from (the value of its bin), else use the full column.
                col = X[:, f]
                u = cols[f][np.r_[True, cols[f][1:] != cols[f][:-1]]]
                u = u[~np.isnan(u)]
                if u.size:
                    b = np.minimum(np.searchsorted(e, col, side="left"), u.size - 1)
                    ok = np.isnan(col) | (u[b] == col)
                else:
                    ok = np.isnan(col)
                if not ok.all():
                    e, ex = feature_edges(np.sort(col), self.max_bins)
            edges.append(e)
            exact[f] = ex
        return self.set_edges(edges, exact)

    def set_edges(self, edges: list, exact) -> Binner:
        """Make this binner fitted with the given edges (one increasing float32 array of at
        most ``max_bins - 1`` finite values per feature) and exactness flags; used by
        :meth:`fit` and by model files. Raises ValueError for edges that break this."""
        exact = np.asarray(exact, dtype=bool).reshape(-1)
        if len(edges) != exact.shape[0] or not edges:
            raise ValueError("a binner needs one edge array and one exactness flag per feature")
        table = np.full((len(edges), EDGE_TABLE_WIDTH), np.inf, dtype=np.float32)
        for f, e in enumerate(edges):
            e = np.asarray(e)
            if e.ndim != 1 or e.dtype != np.float32 or e.size > self.max_bins - 1 \
                    or not np.all(np.isfinite(e)) or np.any(e[1:] <= e[:-1]):
                raise ValueError(f"bin edges of feature {f} are not an increasing float32 array "
                                 f"of at most {self.max_bins - 1} finite values")
            table[f, : e.size] = e
        self.bin_edges_ = [np.asarray(e) for e in edges]
        self.n_bins_ = np.array([e.size + 1 for e in edges], dtype=np.int64)
        self.exact_ = exact
        self.n_features_in_ = len(edges)
        self._table = table
        return self

    def transform(self, X) -> np.ndarray:
        """The uint8 bin matrix of X, shape (n_samples, n_features), C order."""
        X = self._check_fitted(X)
        out = np.empty(X.shape, dtype=np.uint8)
        bin_matrix(X, self._table.ravel(), np.full(X.shape[1], self.missing_bin, dtype=np.int64),
                   out)
        return out

    def transform_padded(self, X) -> np.ndarray:
        """:meth:`transform` with each row padded to a multiple of 8 bins (the padding is
        unspecified): the layout the histogram splitter moves rows in, eight bins at a time.
        Column ``f < n_features`` is feature ``f``."""
        X = self._check_fitted(X)
        width = -(-X.shape[1] // 8) * 8
        out = np.empty((X.shape[0], width), dtype=np.uint8)
        bin_matrix(X, self._table.ravel(), np.full(X.shape[1], self.missing_bin, dtype=np.int64),
                   out)
        return out

    def fit_transform(self, X) -> np.ndarray:
        """``fit(X)`` then ``transform(X)``."""
        return self.fit(X).transform(X)

    def threshold(self, feature: int, b: int) -> float:
        """The real threshold of the cut "bin <= b" of ``feature``."""
        return float(self._table[feature, b])

    def _check_fitted(self, X) -> np.ndarray:
        if not self.is_fitted:
            raise ValueError("This Binner is not fitted yet; call fit first.")
        X = self._check(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the Binner was fitted with "
                f"{self.n_features_in_} features."
            )
        return X

    @staticmethod
    def _check(X) -> np.ndarray:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"Binner expects a 2-D array; got {X.ndim} dimension(s).")
        if X.dtype.kind not in "biuf":
            raise TypeError(f"Binner expects numeric X; got dtype {X.dtype}.")
        return np.ascontiguousarray(X, dtype=X_DTYPE)


# -- the histogram splitter's bin matrix for tables ----------------------------------------------

#: Most bins a categorical feature can have (two bytes, the last for missing values); levels
#: beyond the most frequent ``MAX_LEVEL_BINS - 1`` share one bin.
MAX_LEVEL_BINS = 65535


@tiny
def _cell_bin(x, f, edges, is_cat, nbins, luts, lutoff):
    """The bin of value ``x`` of feature ``f`` (:func:`table_bins`)."""
    if np.isnan(x):
        return nbins[f]
    if not is_cat[f]:
        return np.int64(edge_bin(edges, f, x))
    if lutoff[f + 1] > lutoff[f]:
        return luts[lutoff[f] + np.int64(x)]
    return np.int64(x)


@pjit
def table_bins(X, edges, is_cat, fcol, fwide, nbins, luts, lutoff, out):
    """The engine's bin matrix: ``out[i, fcol[f]]`` (two bytes when ``fwide[f]``) is the bin of
    ``X[i, f]``: a numeric feature's bin from its edges (the padded (n_features, 256) table,
    flattened), a categorical feature's level code (through ``luts`` where levels are pooled),
    ``nbins[f]`` for a missing value."""
    n, p = X.shape
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for blk in prange(n_blocks):
        # row by row: a feature at a time within the block was 1.3-2x slower (1M x 28)
        for i in range(blk * _BLOCK, min(n, (blk + 1) * _BLOCK)):
            for f in range(p):
                b = _cell_bin(X[i, f], f, edges, is_cat, nbins, luts, lutoff)
                out[i, fcol[f]] = np.uint8(b & 255)
                if fwide[f]:
                    out[i, fcol[f] + 1] = np.uint8(b >> 8)


#: Where each feature's bins are: ``hoff[f]``, its first bin in a node's histogram (its
#: ``nbins[f]`` value bins, then its missing bin); ``fcol[f]``, its first byte in a row of the
#: bin matrix; ``fwide[f]``, 1 when it takes two bytes (more than 255 bins).
BinLayout = namedtuple("BinLayout", ("hoff", "nbins", "fcol", "fwide"))


def table_layout(X: np.ndarray, binner: Binner, is_cat: np.ndarray, n_levels: np.ndarray):
    """Bin matrix and layout of the histogram splitter for a table (see
    :mod:`treelearn.engine.hist`): returns ``(bins, layout, luts, lutoff)``, ``layout`` a
    :data:`BinLayout`.

    Numeric features get the binner's bins; a categorical feature with ``L`` levels gets one
    bin per level (two bytes when ``L > 255``; beyond :data:`MAX_LEVEL_BINS` - 1 levels the
    rarest share one bin, through a lookup table). Every feature's missing bin follows its
    value bins.
    """
    n, p = X.shape
    nbins = np.empty(p, dtype=np.int64)
    fwide = np.zeros(p, dtype=np.int64)
    luts: list[np.ndarray] = []
    lutoff = np.zeros(p + 1, dtype=np.int64)
    for f in range(p):
        lut = np.zeros(0, dtype=np.int64)
        if is_cat[f]:
            L = max(int(n_levels[f]), 1)
            nb = L
            if L > MAX_LEVEL_BINS - 1:
                codes = X[:, f]
                counts = np.bincount(codes[~np.isnan(codes)].astype(np.int64), minlength=L)
                keep = np.argsort(-counts, kind="stable")[:MAX_LEVEL_BINS - 1]
                lut = np.full(L, MAX_LEVEL_BINS - 1, dtype=np.int64)
                lut[np.sort(keep)] = np.arange(MAX_LEVEL_BINS - 1)
                nb = MAX_LEVEL_BINS
            fwide[f] = int(nb + 1 > 256)
        else:
            nb = int(binner.n_bins_[f])
        nbins[f] = nb
        luts.append(lut)
        lutoff[f + 1] = lutoff[f] + lut.size
    # narrow features first (one byte each, in index order), then the two-byte ones
    fcol = np.empty(p, dtype=np.int64)
    c = 0
    for f in np.flatnonzero(fwide == 0):
        fcol[f] = c
        c += 1
    for f in np.flatnonzero(fwide):
        fcol[f] = c
        c += 2
    width = max(-(-c // 8) * 8, 8)
    hoff = np.zeros(p + 1, dtype=np.int64)
    hoff[1:] = np.cumsum(nbins + 1)
    bins = np.empty((n, width), dtype=np.uint8)
    bins[:, c:] = 0
    flat_luts = np.concatenate(luts) if luts else np.zeros(0, dtype=np.int64)
    X = np.ascontiguousarray(X, dtype=X_DTYPE)
    if not is_cat.any() and not fwide.any():  # numeric: column f is feature f
        bin_matrix(X, binner._table.ravel(), nbins, bins)
    else:
        table_bins(X, binner._table.ravel(), is_cat.astype(np.bool_), fcol, fwide, nbins,
                   flat_luts.astype(np.int64), lutoff, bins)
    return bins, BinLayout(hoff, nbins, fcol, fwide), flat_luts.astype(np.int64), lutoff
