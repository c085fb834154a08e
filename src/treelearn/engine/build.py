"""The engine's one way in: grow a tree from prepared data and its parameters.

The estimators (and through them the ensembles and boosting) call :func:`grow` with the rows
of one tree and a :class:`~treelearn.engine.fit.GrowParams`, and :meth:`Shared.prepare` once
for the many trees of an ensemble; they read the records and constants listed in
``__all__``. Which data layout grows the tree is decided here, once:

============================  ====================================================
data                          layout (:mod:`treelearn.engine.layouts`)
============================  ====================================================
sparse rows (CSR)             ``grow_sparse`` (the criterion alone; the caller
                              makes a dense copy for the other searches)
shared bins (a forest)        ``grow_binned``: the bin matrix of all rows
shared ranks (a forest)       ``grow_ranked``, when :func:`ranked_applies`: ranks of
                              all rows, each node sorting only the features it draws
shared presort (a forest)     ``grow_presorted``: the sorted lists of all rows
a fitted binner               ``grow_hist``: histograms
anything else                 ``grow_ranked`` on ranks of this tree's rows when
                              :func:`ranked_applies`, else ``grow_presorted`` on
                              its presorted lists (both from one presort)
============================  ====================================================

Why a module of its own: the choice used to sit in the estimators' module, which then
imported eight engine modules to make it; now a caller outside the engine imports this
module and, for preparing columns, :mod:`~treelearn.engine.binning` and
:mod:`~treelearn.engine.columns` (``tests/test_layers.py`` counts them).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .binning import Binner, table_layout
from .columns import presort, subset_sorted
from .criteria import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA, node_impurity
from .fit import GrowParams, assemble, category_search, fit_extras, search_work
from .layouts.bins import HIST_POOL_BYTES, grow_binned, grow_hist
from .layouts.presorted import grow_presorted
from .layouts.ranked import RANKED_FRACTION, grow_ranked, rank_columns, ranked_applies
from .layouts.sparse import grow_sparse
from .levels import KIND_NUMERIC, MISSING_C45, MISSING_IMPUTE, MISSING_LEARN, MISSING_M5
from .random import RAND_R_MAX
from .scratch import Scratch
from .search import (
    COST_NONE,
    COST_NUNEZ,
    COST_TAN,
    SELECT_CRITERION,
    SELECT_SCREENED,
    SELECT_TEST,
    Config,
)

if TYPE_CHECKING:  # the engine builds trees; Tree itself sits above it
    from .._tree import Tree

__all__ = [
    "CLASSIFICATION_CRITERIA", "COST_NONE", "KIND_NUMERIC", "COST_NUNEZ", "COST_TAN", "MISSING_C45",
    "MISSING_IMPUTE", "MISSING_LEARN", "MISSING_M5", "RAND_R_MAX", "RANKED_FRACTION",
    "REGRESSION_CRITERIA", "SELECT_CRITERION", "SELECT_SCREENED", "SELECT_TEST", "Config",
    "GrowParams", "Scratch", "Shared", "assemble", "category_search", "fit_bytes",
    "fit_extras", "grow", "memory_alternatives", "node_impurity", "ranked_bytes", "search_work",
]


@dataclasses.dataclass
class Shared:
    """Data prepared once for many trees grown on the rows of one X (a forest, bagging): the
    presorted lists of all rows (exact splitters) or the bin matrix of all rows and its
    binner (``"hist"``); each tree takes its rows of positive weight out of them. When the
    trees' settings suit the ranked splitter, the first tree ranks the presorted columns once
    for all (:meth:`ranked_columns`) and the presort is let go."""

    sorted_: tuple | None
    binned: tuple | None
    binner: Binner | None
    has_missing: bool
    parallel: bool  # False: trees are grown side by side, one thread each
    ranked: tuple | None = None
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    #: Each thread's node tables and buffers, reused from one tree to its next
    scratch: Scratch = dataclasses.field(default_factory=Scratch, repr=False)

    @classmethod
    def prepare(cls, X: np.ndarray, binner: Binner | None, is_categorical: np.ndarray,
                n_levels: np.ndarray, parallel: bool) -> Shared:
        """Prepare the validated, encoded dense ``X``: bins with a fitted ``binner``, else
        the presorted lists."""
        has_missing = bool(np.isnan(X).any())
        if binner is not None:
            binned = table_layout(X, binner, is_categorical, n_levels) + (binner._table,)
            return cls(None, binned, binner, has_missing, parallel)
        return cls(presort(X), None, None, has_missing, parallel)

    def ranked_columns(self) -> tuple:
        """The ranked columns of all rows (:func:`~treelearn.engine.layouts.ranked.rank_columns`),
        made from the presort by the first tree that asks (the trees of an ensemble share
        their settings, so all of them grow with the ranked splitter)."""
        with self._lock:
            if self.ranked is None:
                self.ranked = rank_columns(*self.sorted_)
                self.sorted_ = None
            return self.ranked


def grow(X, is_categorical: np.ndarray, n_levels: np.ndarray, ycls: np.ndarray,
         yreg: np.ndarray, w: np.ndarray, prm: GrowParams, *, has_missing: bool,
         binner: Binner | None = None, shared: Shared | None = None,
         keep: np.ndarray | None = None, rows: tuple | None = None) -> Tree:
    """Grow one tree in the layout its data calls for (the module docstring's table).

    ``X``: this tree's rows (dense, or CSR for the sparse layout), unless ``shared`` holds
    every row; then ``keep`` marks this tree's rows of ``shared`` and ``rows = (ycls, yreg,
    w)`` are the targets and weights of every row (the ranked layout reads them by row id),
    while ``ycls``/``yreg``/``w`` are this tree's. ``has_missing``: whether ``X`` holds a
    missing value."""
    if shared is None and sp.issparse(X):
        return grow_sparse(X, ycls, yreg, w, prm)
    if shared is not None and shared.binned is not None:
        binned = (shared.binned[0][keep],) + shared.binned[1:]  # partitioned in place: a copy
        return grow_binned(binned, is_categorical, n_levels, ycls, yreg, w, prm, has_missing,
                           shared.parallel, shared.scratch)
    if shared is not None and ranked_applies(prm, is_categorical, has_missing):
        samples = np.flatnonzero(keep).astype(np.int32)
        return grow_ranked(shared.ranked_columns(), samples, *rows, prm, shared.scratch)
    if shared is not None:
        return grow_presorted(subset_sorted(*shared.sorted_, keep), is_categorical, n_levels,
                              ycls, yreg, w, prm, shared.parallel, shared.scratch)
    if binner is not None:
        return grow_hist(X, binner, is_categorical, n_levels, ycls, yreg, w, prm)
    sorted_ = presort(X)
    # the presort puts NaN last: the one place that knows whether this tree's rows have holes
    if ranked_applies(prm, is_categorical, bool(np.isnan(sorted_[0][:, -1]).any())):
        return grow_ranked(rank_columns(*sorted_), np.arange(X.shape[0], dtype=np.int32),
                           ycls, yreg, w, prm)
    return grow_presorted(sorted_, is_categorical, n_levels, ycls, yreg, w, prm)


# -- memory -----------------------------------------------------------------------------------

def fit_bytes(n: int, p: int, splitter: str, n_stats: int, weighted: bool,
              nnz: int | None = None, max_bins: int = 255) -> int:
    """Estimated bytes of the big buffers a fit of ``n`` rows and ``p`` features allocates
    (``n_stats``: classes of a classifier, 0 for a regressor; ``nnz``: stored entries of
    sparse input), for :func:`treelearn._memory.check`.

    Both scan X for NaN (a byte per cell). Exact (``"best"``/``"random"``): the transposed
    float32 copy the features are sorted from, the sorted values and row indices, the class
    codes (or targets) and the weights in each feature's order (12 + 4 or 8 + 8 bytes per
    cell), and ~100 bytes per row of work buffers. Histograms: the bin matrix and its partner
    of the partition (a byte per cell, rows padded to 8), the target and weight copies, and
    the histogram pool (:data:`~treelearn.engine.layouts.bins.HIST_POOL_BYTES` at most), the
    binner's sorted subsample. Measured with tracemalloc (classification, fully grown, 2
    cores): 1M x 40 exact 622 MB (estimate 780 MB), hist 239 MB (estimate 262 MB); 300k x 10
    exact 76 MB (77 MB), hist 115 MB (99 MB). Sparse: the CSR copy and per-row
    buffers. The fractional cases of C4.5's missing values grow an arena as needed, not
    counted here.
    """
    target = 4 if n_stats else 8
    wbytes = 8 if weighted else 0
    if nnz is not None:
        return 8 * nnz + n * (24 + target + wbytes)
    if splitter == "hist":
        width = max(-(-p // 8) * 8, 8)
        hists = min(HIST_POOL_BYTES, 1024 * p * (max_bins + 1) * (max(n_stats, 2) + 2) * 8)
        binning = 8 * p * min(n, 200_000)  # the binner's sorted subsample
        return n * (2 * width + p) + n * (2 * target + 2 * wbytes + 16) + hists + binning
    return n * p * (13 + target + wbytes) + 100 * n


def ranked_bytes(n: int, p: int, n_stats: int, trees: int) -> int:
    """Estimated bytes of an ensemble whose trees grow with the ranked splitter on ``trees``
    threads: the presorted values and row ids the columns are ranked from, the ranks and the
    distinct values (16 bytes per cell at the peak), and per tree its sample list and the
    sort's buffers (about 60 bytes per row for a classifier, 70 for a regressor). Measured
    (peak resident memory, 1M x 40, 4 trees on 2 threads): 450 MB; estimate 760 MB."""
    return 16 * n * p + trees * n * (60 if n_stats else 70)


def memory_alternatives(splitter: str, n: int, p: int, n_stats: int, weighted: bool) -> str:
    """What to change when a fit does not fit in memory (for the MemoryError's message)."""
    from .._memory import format_size

    if splitter == "hist":
        return ("Fit on fewer rows (a sample) or fewer features, or on a machine with more "
                "memory.")
    hist = fit_bytes(n, p, "hist", n_stats, weighted)
    rest = "fit on fewer rows (a sample) or fewer features, or on a machine with more memory."
    if hist >= fit_bytes(n, p, splitter, n_stats, weighted):
        return rest[0].upper() + rest[1:]
    return (f'splitter="hist" needs about {format_size(hist)} (it bins each feature into at '
            f"most max_bins values); or {rest}")
