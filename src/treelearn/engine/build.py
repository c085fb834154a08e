"""The engine's one way in: grow a tree from prepared data and its parameters.

The estimators (and through them the ensembles and boosting) call :func:`grow` with the rows
of one tree and a :class:`~treelearn.engine.fit.GrowParams`, and :meth:`Shared.prepare` once
for the many trees of an ensemble; they read the records and constants listed in
``__all__``. Which data layout grows the tree is decided here, once:

============================  ====================================================
data                          layout (:mod:`treelearn.engine.fit`)
============================  ====================================================
sparse rows (CSR)             ``grow_sparse`` (the criterion alone; the caller
                              makes a dense copy for the other searches)
shared bins (a forest)        ``grow_binned``: the bin matrix of all rows
shared ranks (a forest)       ``grow_ranked``, when :func:`ranked_applies`: ranks of
                              all rows, each node sorting only the features it draws
shared presort (a forest)     ``grow_presorted``: the sorted lists of all rows
a fitted binner               ``grow_hist``: histograms
anything else                 ``grow_exact``: presorted lists of this tree's rows
============================  ====================================================

Why a module of its own: the choice used to sit in the estimators' module, which then
imported eight engine modules to make it; now a caller outside the engine imports this
module and, for preparing columns, :mod:`~treelearn.engine.binning` and
:mod:`~treelearn.engine.columns` (``tests/test_layers.py`` counts them).
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import scipy.sparse as sp

from .._tree import Tree
from .binning import Binner, table_layout
from .columns import presort, subset_sorted
from .criteria import CLASSIFICATION_CRITERIA, REGRESSION_CRITERIA
from .fit import (
    RANKED_FRACTION,
    GrowParams,
    Scratch,
    category_search,
    fit_bytes,
    fit_extras,
    grow_binned,
    grow_exact,
    grow_hist,
    grow_presorted,
    grow_ranked,
    grow_sparse,
    memory_alternatives,
    ranked_applies,
    ranked_bytes,
)
from .levels import MISSING_C45, MISSING_IMPUTE, MISSING_LEARN, MISSING_M5
from .random import RAND_R_MAX
from .ranked import rank_columns
from .search import (
    COST_NONE,
    COST_NUNEZ,
    COST_TAN,
    SELECT_CRITERION,
    SELECT_SCREENED,
    SELECT_TEST,
    Config,
)

__all__ = [
    "CLASSIFICATION_CRITERIA", "COST_NONE", "COST_NUNEZ", "COST_TAN", "MISSING_C45",
    "MISSING_IMPUTE", "MISSING_LEARN", "MISSING_M5", "RAND_R_MAX", "RANKED_FRACTION",
    "REGRESSION_CRITERIA", "SELECT_CRITERION", "SELECT_SCREENED", "SELECT_TEST", "Config",
    "GrowParams", "Scratch", "Shared", "category_search", "fit_bytes", "fit_extras", "grow",
    "memory_alternatives", "ranked_bytes",
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
        """The ranked columns of all rows (:func:`~treelearn.engine.ranked.rank_columns`),
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
    return grow_exact(X, is_categorical, n_levels, ycls, yreg, w, prm)
