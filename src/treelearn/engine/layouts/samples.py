"""What the growers over a list of samples share: a node's statistics from its samples, the
scikit-learn improvement of a two-way split, and the stable partition of the list.

Two growers keep a node's rows as a range ``[lo, hi)`` of one buffer of sample ids instead of
per-feature sorted lists: the sparse grower (:mod:`.sparse`, CSR input) and the ranked
splitter (:mod:`.ranked`, forests). Both search a node's features their own way; before and
after the search they do the same thing, written once here, and their node loops are one pair
(:mod:`.grow_samples`).
"""

from __future__ import annotations

import numpy as np

from .. import levels as lvl
from ..config import EPSILON, inlined, njit
from ..criteria import SQUARED_ERROR, two_way_decrease
from ..nodes import Scalars, store_split, store_values
from ..search import Work


@njit
def sample_stats(samples, lo, hi, ycls, yreg, w, stats, is_reg):
    """``stats`` = the statistics (class weights, or weighted sums of y and y**2) of the
    samples ``samples[lo:hi]``, summed in their order; returns their weight."""
    for k in range(stats.shape[0]):
        stats[k] = 0.0
    wn = 0.0
    for i in range(lo, hi):
        s = samples[i]
        x = w[s]
        if is_reg:
            y = yreg[s]
            stats[0] += x * y
            stats[1] += x * y * y
        else:
            stats[ycls[s]] += x
        wn += x
    return wn


@njit
def open_samples(samples, lo, hi, tgt, tf, tv, node, crit, nstats):
    """The node's statistics, weight, impurity and value (class fractions or mean) from its
    samples, written to the node table; returns ``(weight, impurity)``."""
    ycls, yreg, w = tgt
    wn = sample_stats(samples, lo, hi, ycls, yreg, w, nstats, crit >= SQUARED_ERROR)
    return wn, store_values(tf, tv, node, nstats, wn, crit)


@njit
@inlined
def two_way_improvement(work, wn, imp, crit, params):
    """The weighted impurity decrease (scikit-learn's definition) of the best split in
    ``work`` (its left statistics from the scan, the right ones the node's minus them)."""
    # the right child's statistics in the stats workspace's second row (the statistics' width)
    return two_way_decrease(work.nstats, work.best_left, work.st[1], work.best[lvl.R_WLEFT], wn,
                            imp, crit, params.total_weight)


@njit
def refused(improvement, params):
    """Whether a split's improvement falls short of ``min_impurity_decrease``."""
    return improvement + EPSILON < params.min_impurity_decrease


@njit
def record_split(ti, tf, node, f, thr, mb, seen, improvement):
    """Store the node's numeric two-way split: feature, threshold, the branch of missing
    values (0 left, 1 right), whether any were met at the node, and the improvement."""
    store_split(ti, tf, node, f, 2, lvl.KIND_NUMERIC, mb, seen, thr, improvement)


@njit
def partition_samples(samples, lo, hi, goes_left, tmp):
    """Stable in-place partition of ``samples[lo:hi]``; returns the number going left."""
    a = lo
    b = 0
    for i in range(lo, hi):
        s = samples[i]
        if goes_left[s]:
            samples[a] = s
            a += 1
        else:
            tmp[b] = s
            b += 1
    for i in range(b):
        samples[a + i] = tmp[i]
    return a - lo


# -- what the layouts over a sample list (sparse, ranked) set up alike, from Python ------

def two_way(params: Scalars, work: Work) -> dict:
    """The builder's fields of a layout of two-way numeric splits over a sample list: room
    for two children, no level maps, a row's work charged as 8 features'."""
    kids = {name: np.zeros(2, dtype=np.int64) for name in ("kid_lo", "kid_hi", "kid_slot")}
    return kids | {"params": params, "work": work, "n_levels": np.ones(1, dtype=np.int64),
                   "luts": np.zeros(0, dtype=np.int64),
                   "lutoff": np.zeros(2, dtype=np.int64), "charge": np.int64(8)}


def sample_targets(ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray) -> tuple:
    """``(class codes, targets, weights)`` as the growers over a sample list read them (an
    absent one as a one-entry placeholder)."""
    return (ycls.astype(np.int32) if ycls.size else np.zeros(1, dtype=np.int32),
            yreg.astype(np.float64) if yreg.size else np.zeros(1), w.astype(np.float64))
