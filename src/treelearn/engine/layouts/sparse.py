"""Sparse input (CSR, e.g. CountVectorizer's output): a layout of its own, never densified.

Why a separate layout: the exact splitter's presorted lists hold every entry of every feature,
which for a document-term matrix is the dense matrix itself (20,000 documents x 50,000 terms
would need 10^9 entries). Here a node owns a range of a sample buffer instead; for each node
the non-zero entries of its rows are bucketed per feature and each bucket sorted
(:func:`bucket_sparse`), and a feature's implicit zeros enter the scan of
:func:`treelearn.engine.exact.scan_numeric` as one block whose statistics are the node's minus
the non-zeros'. Splitting partitions the sample range stably by threshold. Node numbering,
the node search (:mod:`treelearn.engine.search`, with this layout's step for one feature),
the scan rules and the stopping rules are the dense engine's, so the trees
are scikit-learn's (its sparse splitter grows the same trees as its dense one).

Sparse input is numeric: no categorical features and no missing values (NaN in a CSR matrix
raises an error before fitting).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .. import fit
from .. import levels as lvl
from .. import nodes as nd
from ..abserr import (
    F_GHI,
    F_GLO,
    F_IW,
    F_IY,
    J_IC,
    abs_cost,
    search_codes_abs,
    weighted_median,
)
from ..builder import (
    always,
    handed_over,
    layout,
    no_slot,
    no_slots,
    nothing_to_release,
    two_kids,
)
from ..columns import sparse_value
from ..config import EPSILON, FEATURE_THRESHOLD, njit, tiny
from ..criteria import ABSOLUTE_ERROR, SQUARED_ERROR, impurity_improvement, midpoint
from ..exact import scan_numeric
from ..fit import GrowParams
from ..levels import keep_best
from ..nodes import open_bounds, pop_node, split_bounds, splittable
from ..random import random_threshold
from ..search import Config, node_search
from .samples import (
    open_samples,
    partition_samples,
    record_split,
    refused,
    sample_stats,
    sample_targets,
    two_way,
    two_way_improvement,
)

if TYPE_CHECKING:  # the engine builds trees; Tree itself sits above it
    from ..._tree import Tree


@njit
def bucket_sparse(indptr, indices, data, samples, lo, hi, n_features):
    """Group the non-zeros of rows ``samples[lo:hi]`` by feature, each group sorted by value.

    Returns ``(offsets, bvals, bsamps)``: the entries of feature ``f`` are
    ``bvals[offsets[f]:offsets[f+1]]`` (increasing, ties in row order) with their rows
    ``bsamps``."""
    offsets = np.zeros(n_features + 1, dtype=np.int64)
    for i in range(lo, hi):
        s = samples[i]
        for p in range(indptr[s], indptr[s + 1]):
            offsets[indices[p] + 1] += 1
    for f in range(n_features):
        offsets[f + 1] += offsets[f]
    nnz = offsets[n_features]
    bvals = np.empty(nnz, dtype=np.float32)
    bsamps = np.empty(nnz, dtype=np.int32)
    fill = offsets[:-1].copy()
    for i in range(lo, hi):
        s = samples[i]
        for p in range(indptr[s], indptr[s + 1]):
            f = indices[p]
            bvals[fill[f]] = data[p]
            bsamps[fill[f]] = s
            fill[f] += 1
    for f in range(n_features):
        a = offsets[f]
        b = offsets[f + 1]
        if b - a > 1:
            order = np.argsort(bvals[a:b], kind="mergesort")
            v = bvals[a:b].copy()
            t = bsamps[a:b].copy()
            for i in range(b - a):
                bvals[a + i] = v[order[i]]
                bsamps[a + i] = t[order[i]]
    return offsets, bvals, bsamps


@njit
def sparse_feature_range(offsets, bvals, f, nn):
    """Return ``(min, max)`` of feature ``f`` over a node of ``nn`` samples (zeros included)."""
    a = offsets[f]
    b = offsets[f + 1]
    zero = np.float32(0.0)
    if b == a:
        return zero, zero
    mn = bvals[a]
    mx = bvals[b - 1]
    if b - a < nn:
        if zero < mn:
            mn = zero
        if zero > mx:
            mx = zero
    return mn, mx


@njit
def _abs_of(samples, lo, hi, yreg, w, wn, afs, ajs):
    """Absolute-error impurity and weighted median of the samples ``[lo, hi)``."""
    ys = afs[F_IY]
    yw = afs[F_IW]
    m = hi - lo
    for i in range(m):
        ys[i] = yreg[samples[lo + i]]
        yw[i] = w[samples[lo + i]]
    return abs_cost(ys, yw, m, afs) / wn, weighted_median(ys, yw, m, afs, ajs)


@tiny
def value_group(x, g, prev, first, last):
    """Group of the value ``x`` in a scan of increasing values (``g``: the group so far,
    -1 before the first; ``prev``: the value before): a new group when ``x`` exceeds
    ``prev`` by more than FEATURE_THRESHOLD. Records the group's first and last value."""
    if g < 0 or x > prev + FEATURE_THRESHOLD:
        g += 1
        first[g] = x
    last[g] = x
    return g


@tiny
def _put_entry(codes, ys, yw, c, g, s, yreg, w):
    """Writes sample ``s`` as entry ``c`` of value group ``g``; returns the next entry."""
    codes[c] = g
    ys[c] = yreg[s]
    yw[c] = w[s]
    return c + 1


@njit
def _search_abs(offsets, bvals, bsamps, f, samples, lo, hi, yreg, w, mark, imp, min_leaf,
                min_wleaf, out, afs, ajs, fmap):
    """Absolute error needs every sample in order: codes of the node's distinct values
    (negatives, zeros, positives) and the exact prefix/suffix costs (``fmap``: the level map
    the search writes for categorical features, unused here; the search allocates nothing,
    as a kernel called from the node search must not)."""
    a = offsets[f]
    b = offsets[f + 1]
    m = hi - lo
    codes = ajs[J_IC]
    ys = afs[F_IY]
    yw = afs[F_IW]
    first = afs[F_GLO]  # first and last value of each code
    last = afs[F_GHI]
    for p in range(a, b):
        mark[bsamps[p]] = True
    g = -1
    c = 0
    prev = np.float32(0.0)
    zpos = a
    while zpos < b and bvals[zpos] < 0.0:
        zpos += 1
    # entries: negatives, then the zeros (the node's samples without a non-zero), positives
    for p in range(a, zpos):
        g = value_group(bvals[p], g, prev, first, last)
        prev = bvals[p]
        c = _put_entry(codes, ys, yw, c, g, bsamps[p], yreg, w)
    zero_code = -1
    for i in range(lo, hi):
        s = samples[i]
        if not mark[s]:
            if zero_code < 0:
                g = value_group(np.float32(0.0), g, prev, first, last)
                zero_code = g
                prev = np.float32(0.0)
            c = _put_entry(codes, ys, yw, c, zero_code, s, yreg, w)
    for p in range(zpos, b):
        g = value_group(bvals[p], g, prev, first, last)
        prev = bvals[p]
        c = _put_entry(codes, ys, yw, c, g, bsamps[p], yreg, w)
    for p in range(a, b):
        mark[bsamps[p]] = False
    # the search takes its input from the scratch's input rows, which it does not write
    sc, real, kind, nb, mb, clo, chi, usable = search_codes_abs(
        codes, ys, yw, m, max(g + 1, 1), np.bool_(False), imp, np.int64(0), np.bool_(False),
        min_leaf, min_wleaf, fmap, afs, ajs)
    out[lvl.R_SCORE] = sc
    if sc > -np.inf:
        out[lvl.R_THR] = midpoint(np.float32(last[clo]), np.float32(first[chi]))
    _ = nb, mb, kind, real, usable
    return sc


@njit
def node_entries(csr, samples, lo, hi, tgt, n_features, crit, mark):
    """What the node search reads of the node ``[lo, hi)``: its rows' non-zeros bucketed per
    feature (:func:`bucket_sparse`) with their targets and weights copied in bucket order (a
    scan then reads them one after the other), the rows, the targets and the row marks:
    ``(offsets, bvals, bsamps, V, bC, bR, bW, samples, tgt, mark)``."""
    indptr, indices, data = csr
    ycls, yreg, w = tgt
    offsets, bvals, bsamps = bucket_sparse(indptr, indices, data, samples, lo, hi, n_features)
    nnz = bvals.shape[0]
    is_reg = crit >= SQUARED_ERROR
    bC = np.zeros((1, nnz if not is_reg else 0), dtype=np.int32)
    bR = np.zeros((1, nnz if is_reg else 0))
    bW = np.empty((1, nnz))
    for p in range(nnz):
        s = bsamps[p]
        bW[0, p] = w[s]
        if is_reg:
            bR[0, p] = yreg[s]
        else:
            bC[0, p] = ycls[s]
    return offsets, bvals, bsamps, bvals.reshape(1, nnz), bC, bR, bW, samples, tgt, mark


@tiny
def _feature_search(X, cfg, work, f, lo, hi, wn, crit, imp, params, rand_thr, need_real,
                    absolute):
    """Feature ``f``'s best split at the node (the ``feature_search`` step of
    :mod:`treelearn.engine.search`): its bucket of non-zeros scanned with the node's zeros as
    one block whose statistics are the node's minus the non-zeros' (absolute error: every row
    in order, :func:`_search_abs`). False for a feature constant at the node."""
    offsets, bvals, bsamps, V, bC, bR, bW, samples, tgt, mark = X
    ycls, yreg, w = tgt
    st, ws, nstats, out = work.st, work.ws, work.nstats, work.out
    nn = hi - lo
    mn, mx = sparse_feature_range(offsets, bvals, f, nn)
    if mx <= mn + FEATURE_THRESHOLD:
        return False
    out[lvl.R_SCORE] = -np.inf
    out[lvl.R_TRIES] = 0.0
    if absolute is not None:
        _search_abs(offsets, bvals, bsamps, f, samples, lo, hi, yreg, w, mark, imp,
                    params.min_leaf, params.min_weight_leaf, out, work.afs, work.ajs,
                    work.fmap)
        return True
    is_reg = crit >= SQUARED_ERROR
    a = offsets[f]
    b = offsets[f + 1]
    zpos = a
    while zpos < b and bvals[zpos] <= 0.0:
        zpos += 1
    for k in range(nstats.shape[0]):
        st[lvl.SR_TOTAL, k] = nstats[k]
        st[lvl.SR_MISS, k] = nstats[k]
    zw = wn
    for p in range(a, b):
        s = bsamps[p]
        x = w[s]
        if is_reg:
            y = yreg[s]
            st[lvl.SR_MISS, 0] -= x * y
            st[lvl.SR_MISS, 1] -= x * y * y
        else:
            st[lvl.SR_MISS, ycls[s]] -= x
        zw -= x
    z = np.int64(0)  # not the literal 0: see treelearn.engine.config
    if is_reg:
        scan_numeric(V, None, bR, bW, z, a, b, st, ws, wn, nn, 0.0, z, zpos, np.float32(0.0),
                     zw, nn - (b - a), crit, imp, params.min_leaf, params.min_weight_leaf,
                     rand_thr, None, 0.0, -np.inf, out, work.mono[f], work.bounds[0],
                     work.bounds[1])
    else:
        scan_numeric(V, bC, None, bW, z, a, b, st, ws, wn, nn, 0.0, z, zpos, np.float32(0.0),
                     zw, nn - (b - a), crit, imp, params.min_leaf, params.min_weight_leaf,
                     rand_thr, None, 0.0, -np.inf, out, work.mono[f], work.bounds[0],
                     work.bounds[1])
    return True


@tiny
def _random_cut(X, f, lo, hi, rng):
    """scikit-learn's random splitter: the constant check over the non-zeros and the zeros,
    then one threshold drawn (``(usable, threshold)``)."""
    mn, mx = sparse_feature_range(X[0], X[1], f, hi - lo)
    if mx <= mn + FEATURE_THRESHOLD:
        return False, np.nan
    return True, random_threshold(mn, mx, rng)


@tiny
def _no_pvalue(X, cfg, work, f, lo, hi, wn, crit):
    """Never called: sparse input grows with the criterion alone (``extras`` None), so the
    search compiles none of the selection tests."""
    return 0.0


@tiny
def _keep_best(X, cfg, work, f):
    """The feature's split (``out``) kept as the node's best, with its left statistics."""
    keep_best(work.best, work.out, f, work.best_left, work.st, work.nstats.shape[0],
              work.best_map, work.fmap, np.int64(0))


#: The node search (:mod:`treelearn.engine.search`, the one every layout uses) over a node's
#: bucketed non-zeros (:func:`node_entries`).
search_node_sparse = node_search("search_node_sparse", feature_search=_feature_search,
                                 random_cut=_random_cut, log_pvalue=_no_pvalue,
                                 keep=_keep_best)


@njit
def process_sparse(data, samples, tgt, ti, tf, tv, node, lo, hi, depth, nconst, crit, params,
                   work, cfg, absolute):
    """Open, search and split one node of CSR data ``data = (indptr, indices, values, mark,
    tmp)``; returns ``(mid, n_constants)`` (``mid < 0``: leaf)."""
    indptr, indices, values, mark, tmp = data
    csr = (indptr, indices, values)
    ycls, yreg, w = tgt
    nstats = work.nstats
    best = work.best
    afs = work.afs
    ajs = work.ajs
    if absolute is not None:
        wn = sample_stats(samples, lo, hi, ycls, yreg, w, nstats, np.bool_(True))
        imp, med = _abs_of(samples, lo, hi, yreg, w, wn, afs, ajs)
        tv[node, 0] = med
        tf[node, nd.T_IMPURITY] = imp
        tf[node, nd.T_WEIGHT] = wn
    else:
        wn, imp = open_samples(samples, lo, hi, tgt, tf, tv, node, crit, nstats)
    open_bounds(work.bounds, tf, node)
    if not splittable(hi - lo, wn, imp, depth, params, EPSILON):
        return -1, nconst
    entries = node_entries(csr, samples, lo, hi, tgt, work.perm.shape[0], crit, mark)
    found, n_total = search_node_sparse(entries, cfg, None, lo, hi, nconst, wn, imp, crit,
                                        params, work, absolute, None)
    if not found:
        return -1, n_total
    f = int(best[lvl.R_SCORE])
    thr = best[lvl.R_THR]
    for i in range(lo, hi):
        s = samples[i]
        mark[s] = sparse_value(indptr, indices, values, s, f) <= thr
    if absolute is not None:
        order = ajs[J_IC]  # the children's samples, left ones first
        a = 0
        for i in range(lo, hi):
            if mark[samples[i]]:
                order[a] = samples[i]
                a += 1
        nl = a
        for i in range(lo, hi):
            if not mark[samples[i]]:
                order[a] = samples[i]
                a += 1
        wl = 0.0
        for q in range(nl):
            wl += w[order[q]]
        wr = wn - wl
        imp_l, _ = _abs_of(order, np.int64(0), nl, yreg, w, wl, afs, ajs)
        imp_r, _ = _abs_of(order, nl, hi - lo, yreg, w, wr, afs, ajs)
        improvement = impurity_improvement(params.total_weight, wn, imp, wl, imp_l, wr,
                                           imp_r)
    else:
        improvement = two_way_improvement(work, wn, imp, crit, params)
    if refused(improvement, params):
        for i in range(lo, hi):
            mark[samples[i]] = False
        return -1, n_total
    mid = lo + partition_samples(samples, lo, hi, mark, tmp)
    for i in range(lo, hi):
        mark[samples[i]] = False
    record_split(ti, tf, node, f, thr, np.int64(0 if mid - lo > hi - mid else 1),
                 np.bool_(False), improvement)
    split_bounds(ti, tf, node, work.mono[f], work.best_left[0], best[lvl.R_WLEFT], nstats[0],
                 wn)
    return mid, n_total


@tiny
def _resume(L, data, ti, tf, tv, gs, stack, status):
    """The node on top of the stack (every node is handed over: the search allocates)."""
    # a sparse row's work is charged as 8 features' (its non-zeros are few)
    node, lo, hi, depth, nconst, arena_top, slot = pop_node(ti, tf, gs, stack, L.charge)
    mid, n_total = process_sparse(data, L.samples, L.tgt, ti, tf, tv, node, lo, hi, depth,
                                  nconst, L.crit, L.params, L.work, L.cfg, L.absolute)
    return data, node, two_kids(L, lo, mid, hi), depth, n_total, arena_top, slot


@tiny
def _step(L, data, ti, tf, tv, gs, node, lo, hi, depth, slot, arena_top):
    """Open, search and split a node of best-first growth."""
    mid, _ = process_sparse(data, L.samples, L.tgt, ti, tf, tv, node, lo, hi, depth,
                            np.int64(0), L.crit, L.params, L.work, L.cfg,
                            L.absolute)
    return data, two_kids(L, lo, mid, hi), arena_top, slot


#: CSR rows (``data = (indptr, indices, values, mark, tmp)``) as a layout of the builder:
#: the tree's rows ``samples``, its targets ``tgt``. Its search allocates per node, so the
#: builder's runner hands every node over to the counting driver.
Sparse = layout("Sparse", ("samples", "tgt", "crit", "cfg", "absolute"),
                process=handed_over, children=no_slots, children_any=no_slots,
                hand_over=always, resume=_resume, step=_step, keep=no_slot,
                release=nothing_to_release)

# -- growing a tree in this layout, from Python (the driver: treelearn.engine.fit) ----------

def grow_sparse(X, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, prm: GrowParams) -> Tree:
    """Grow a tree on a CSR matrix (numeric features, no missing values; see
    :mod:`treelearn.engine.layouts.sparse`); rows of zero weight must be removed."""
    X = sp.csr_matrix(X, dtype=np.float32)
    X.sort_indices()
    n, p = X.shape
    data = (X.indptr.astype(np.int64), X.indices.astype(np.int32),
            np.ascontiguousarray(X.data, dtype=np.float32), np.zeros(n, dtype=np.bool_),
            np.empty(n, dtype=np.int32))
    absolute = prm.crit == ABSOLUTE_ERROR
    work = fit.search_work(n, p, prm.n_stats, 4, prm.seed, absolute, mono=prm.monotonic)
    params = prm.scalars(float(w.sum()))
    L = Sparse(samples=np.arange(n, dtype=np.int32), tgt=sample_targets(ycls, yreg, w),
               crit=np.int64(prm.crit),
               cfg=Config(is_cat=np.zeros(p, dtype=np.bool_), n_search=np.zeros(p, dtype=np.int64),
                          category=None, extras=None),
               absolute=np.zeros(0) if absolute else None,
               **two_way(params, work))
    return fit.drive({"L": L, "data": data}, prm, n, p)
