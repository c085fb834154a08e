"""The ranked splitter: exact splits found by sorting the drawn features at each node (forests).

Why a third dense layout. The presorted lists (:mod:`.exact`) keep every feature's rows in
order at every node, so splitting a node moves all ``p`` features' entries (values, row ids,
class codes, weights), whatever the node searches. A forest searches ``max_features`` of them
(``sqrt(p)`` by default), so most of that work serves nothing: measured on one bootstrap tree
of ``make_classification`` 800k x 28 (505k distinct rows, fully grown, one thread), the
presorted engine took 3.1 s and scikit-learn 5.8 s, and on the covertype-shaped table (221k
rows, 12 columns of 4 to 460 values) 0.87 s against scikit-learn's 0.85 s. Sorting only the
drawn features at the node, as scikit-learn does, costs ``max_features x rows x log rows``
instead; sorting *ranks* lets a radix sort do it in two or three linear passes.

Data (prepared once per forest by :func:`rank_columns`, read by every tree):

* ``ranks[f, row]``: the dense rank of the row's value among the distinct values of feature
  ``f`` (uint32, one contiguous row per feature);
* ``values[offsets[f] + r]``: the distinct values of feature ``f`` in increasing order (float32,
  ``-0.0`` and ``0.0`` one value); NaN, when the feature has any, is the last rank
  (``nan_rank[f]``, else -1), so missing values sort last as in the presorted lists.

A tree's rows are its samples of positive weight in a buffer (:mod:`.samples`); a node owns a
range of it. For each drawn feature the node's ranks are gathered; a feature constant at the
node is recognised from the smallest and largest rank before anything is sorted (scikit-learn's
rule: values within 1e-7 are equal). Otherwise the ranks are sorted with the node's class codes
(or targets) and weights riding along (up to :data:`INSERTION_MAX` rows, an insertion sort of
rank and place packed in one integer, the payload put in order after it; else a
least-significant-digit radix sort of at most three passes over the node's span of ranks),
turned back into values, and searched by :func:`treelearn.engine.exact.search_numeric`, the
presorted engine's own search: the same cuts, thresholds, missing-value passes and random
thresholds, in the same order, so both engines grow the same trees (the tests compare them,
and scikit-learn's). The split partitions the sample range stably.

Measured and not kept: growing a small node's whole subtree from a compact copy of its rows
(every feature's ranks, targets and weights gathered once, then the same node kernels run on
the copy, the same trees). Ten trees, one thread, nodes of at most 64 / 256 / 2048 rows in
the copy against none: diamonds-shaped (54k x 9) 3.13-3.25 / 3.07-3.25 / 3.01-3.09 us per node
against 3.20-3.27; covertype-shaped (221k x 12), 256 / 2048 rows, 7.62-8.31 / 7.49 against
7.75-8.02: within the run's noise. The rows of such tables already sit in the caches; a node's
time is its sorts and scans, not its reads.

Scope (checked by :func:`treelearn.engine.fit.ranked_applies`): depth-first growth, numeric
features, binary splits, the criteria scanned from sums (not absolute error), missing values
learned or imputed (not C4.5's fractional cases), no feature costs, C4.5 rules or statistical
selection.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import compiling, fit
from .. import levels as lvl
from .. import nodes as nd
from ..builder import layout, never_hands_over, no_slots, nothing_to_resume, two_kids
from ..config import EPSILON, FEATURE_THRESHOLD, inlined, njit, noref, tiny
from ..criteria import ABSOLUTE_ERROR, SQUARED_ERROR
from ..exact import search_numeric
from ..fit import GrowParams
from ..levels import keep_best
from ..nodes import open_bounds, split_bounds, splittable
from ..random import draw_finish, draw_next, draw_result, draw_start, random_threshold
from ..scratch import Scratch, flat_array, give_back_flat
from .samples import (
    open_samples,
    record_split,
    refused,
    sample_targets,
    two_way,
    two_way_improvement,
)

if TYPE_CHECKING:  # the engine builds trees; Tree itself sits above it
    from ..._tree import Tree

#: Nodes of at most this many rows are sorted by insertion (a radix pass costs its buckets).
INSERTION_MAX = 32
#: Widest radix digit (2048 buckets) and the row count from which it is used (narrower digits,
#: 256 buckets, below: clearing the buckets costs more than an extra pass saves).
WIDE_BITS = 11
WIDE_FROM = 4096


@njit
def _same(a, b):
    return a == b or (np.isnan(a) and np.isnan(b))


@njit
def rank_columns(sval, sidx):
    """Ranks and distinct values of every feature from its presorted values ``sval`` and row
    ids ``sidx`` (:func:`treelearn.engine.columns.presort`); returns ``(ranks, values,
    offsets, nan_rank)`` as described in the module docstring."""
    p, n = sval.shape
    offsets = np.zeros(p + 1, dtype=np.int64)
    for f in range(p):
        c = 0
        for k in range(n):
            if k == 0 or not _same(sval[f, k], sval[f, k - 1]):
                c += 1
        offsets[f + 1] = offsets[f] + c
    values = np.empty(offsets[p], dtype=np.float32)
    ranks = np.empty((p, n), dtype=np.uint32)
    nan_rank = np.full(p, -1, dtype=np.int64)
    for f in range(p):
        r = -1
        base = offsets[f]
        for k in range(n):
            v = sval[f, k]
            if k == 0 or not _same(v, sval[f, k - 1]):
                r += 1
                values[base + r] = v
            ranks[f, sidx[f, k]] = r
        if n > 0 and np.isnan(sval[f, n - 1]):
            nan_rank[f] = r
    return ranks, values, offsets, nan_rank


#: A tree's scratch for sorting and searching a node (:func:`ranked_buffers`): the node's
#: ranks ``keys`` (and ``tk``, the radix sort's other side), its sorted values ``bV``, class
#: codes ``bC``/``tC``, targets ``bR``/``tR`` and weights ``bW``/``tW`` in a feature's order,
#: the same in sample order ``nC``/``nR``/``nW``, the radix buckets ``cnt`` (the packed keys
#: of an insertion sort) and the partition's ``tmp``.
SortBuffers = namedtuple("SortBuffers", ("keys", "tk", "bV", "bC", "tC", "bR", "tR", "bW",
                                         "tW", "nC", "nR", "nW", "cnt", "tmp"))

#: A tree's ``data``: the shared ranking (:func:`rank_columns`) and its :data:`SortBuffers`.
RankedData = namedtuple("RankedData", ("ranks", "values", "offsets", "nan_rank")
                        + SortBuffers._fields)


def ranked_buffers(n: int, classification: bool, weighted: bool,
                   scratch=None) -> SortBuffers:
    """The per-tree scratch of a node's sort and search, for nodes of up to ``n`` rows
    (:data:`SortBuffers`); the payload a fit does not have (targets of a classifier, class
    codes of a regressor, unit weights) is None. ``scratch``
    (:class:`~treelearn.engine.scratch.Scratch`): taken from an ensemble's earlier tree on
    this thread where it can: each buffer is then a view of the first entries of a kept
    array (C-contiguous, as the kernels are compiled for), whose ``base`` goes back
    (:func:`give_back`)."""
    def new(name, shape, dtype, present=True):
        return flat_array(scratch, f"ranked.{name}", shape, dtype) if present else None

    one = (1, n)
    out = SortBuffers(
        new("keys", (n,), np.uint32), new("tk", (n,), np.uint32), new("bV", one, np.float32),
        new("bC", one, np.int32, classification), new("tC", one, np.int32, classification),
        new("bR", one, np.float64, not classification),
        new("tR", one, np.float64, not classification), new("bW", one, np.float64, weighted),
        new("tW", one, np.float64, weighted), new("nC", (n,), np.int32, classification),
        new("nR", (n,), np.float64, not classification), new("nW", (n,), np.float64, weighted),
        new("cnt", (1 << WIDE_BITS,), np.int64), new("tmp", (n,), np.int32))
    out.cnt[:] = 0
    return out


def give_back(buffers: SortBuffers, scratch) -> None:
    """Return the arrays of :func:`ranked_buffers` taken from ``scratch``, for the thread's
    next tree."""
    for name, a in zip(buffers._fields, buffers, strict=True):
        give_back_flat(scratch, f"ranked.{name}", a)


@noref
def _node_payload(samples, lo, m, tgt, nC, nR, nW):
    """The node's class codes, targets and weights in sample order (gathered once per node,
    copied for each feature sorted)."""
    ycls, yreg, w = tgt
    for j in range(m):
        s = samples[lo + j]
        if nC is not None:
            nC[j] = ycls[s]
        if nR is not None:
            nR[j] = yreg[s]
        if nW is not None:
            nW[j] = w[s]


@noref
@inlined
def _gather(ranks, f, samples, lo, m, nan_r, keys, nC, nR, nW, bC, bR, bW, packed):
    """The node's ranks of feature ``f`` with their payload; returns the smallest and largest
    rank of a known value and the number of missing values. A node of at most
    :data:`INSERTION_MAX` rows gets ``packed[j] = rank << 8 | j`` instead, its payload placed
    after the sort (:func:`sort_by_rank`)."""
    small = m <= INSERTION_MAX
    kmin = np.int64(1) << 40
    kmax = np.int64(-1)
    nm = 0
    for j in range(m):
        k = np.int64(ranks[f, samples[lo + j]])
        if k == nan_r:
            nm += 1
        else:
            kmin = min(kmin, k)
            kmax = max(kmax, k)
        if small:
            packed[j] = (k << 8) | j
            continue
        keys[j] = k
        _place(nC, nR, nW, j, bC, bR, bW, j)
    return kmin, kmax, nm


@tiny
def _place(nC, nR, nW, j, bC, bR, bW, a):
    """The payload of the node's row ``j`` (class, target, weight) to place ``a`` of the
    sort's buffers."""
    if bC is not None:
        bC[0, a] = nC[j]
    if bR is not None:
        bR[0, a] = nR[j]
    if bW is not None:
        bW[0, a] = nW[j]


@tiny
def _move(sk, sC, sR, sW, a, dk, dC, dR, dW, b):
    """Entry ``a`` of the source (key and payload) to place ``b`` of the destination."""
    dk[b] = sk[a]
    if sC is not None:
        dC[0, b] = sC[0, a]
    if sR is not None:
        dR[0, b] = sR[0, a]
    if sW is not None:
        dW[0, b] = sW[0, a]


@noref
def _insertion(packed, m):
    """Insertion sort of ``packed[:m]`` (each entry its rank and its place, so equal ranks
    keep their order: a stable sort that moves one integer, not a key and its payload)."""
    for a in range(1, m):
        v = packed[a]
        b = a - 1
        while b >= 0 and packed[b] > v:
            packed[b + 1] = packed[b]
            b -= 1
        packed[b + 1] = v


@noref
def radix_pass(sk, sC, sR, sW, dk, dC, dR, dW, m, kmin, shift, mask, cnt):
    """One stable counting pass on the digit ``(key - kmin) >> shift & mask``."""
    for d in range(mask + 1):
        cnt[d] = 0
    for a in range(m):
        cnt[((np.int64(sk[a]) - kmin) >> shift) & mask] += 1
    total = 0
    for d in range(mask + 1):
        c = cnt[d]
        cnt[d] = total
        total += c
    for a in range(m):
        d = ((np.int64(sk[a]) - kmin) >> shift) & mask
        pos = cnt[d]
        cnt[d] = pos + 1
        _move(sk, sC, sR, sW, a, dk, dC, dR, dW, pos)


@noref
@inlined
def sort_by_rank(keys, bC, bR, bW, m, kmin, span, tk, tC, tR, tW, cnt, nC, nR, nW):
    """Sort ``keys[:m]`` (ranks in ``[kmin, kmin + span]``) stably, their payload with them;
    the result is in ``keys``, ``bC``, ``bR``, ``bW``. A node of at most
    :data:`INSERTION_MAX` rows comes packed in ``cnt`` (:func:`_gather`): sorted by
    insertion, then its ranks and the payload of the node's rows ``nC``, ``nR``, ``nW`` put
    in order."""
    if m <= INSERTION_MAX:
        _insertion(cnt, m)
        for a in range(m):
            j = cnt[a] & 255
            keys[a] = np.uint32(cnt[a] >> 8)
            _place(nC, nR, nW, j, bC, bR, bW, a)
        return
    bits = 0
    while (span >> bits) > 0:
        bits += 1
    if bits == 0:
        return
    width = WIDE_BITS if m >= WIDE_FROM else 8
    passes = (bits + width - 1) // width
    width = (bits + passes - 1) // passes
    mask = (np.int64(1) << width) - 1
    for q in range(passes):
        if q % 2 == 0:
            radix_pass(keys, bC, bR, bW, tk, tC, tR, tW, m, kmin, q * width, mask, cnt)
        else:
            radix_pass(tk, tC, tR, tW, keys, bC, bR, bW, m, kmin, q * width, mask, cnt)
    if passes % 2 == 1:
        for a in range(m):
            _move(tk, tC, tR, tW, a, keys, bC, bR, bW, a)


@noref
@inlined
def search_ranked(data, samples, lo, hi, tgt, nconst, wn, imp, crit, params, work,
                  extras):
    """Best split of the node ``[lo, hi)``: features drawn as scikit-learn draws them, each
    sorted and searched as described in the module docstring. Returns ``(found,
    n_constants, missing_seen)`` with the winner in ``work`` (feature in ``best[R_SCORE]``)."""
    (ranks, values, offsets, nan_rank, keys, tk, bV, bC, tC, bR, tR, bW, tW, nC, nR, nW, cnt,
     _) = data
    st, ws, nstats, out = work.st, work.ws, work.nstats, work.out
    fmap, best_map, best, best_left = work.fmap, work.best_map, work.best, work.best_left
    draw, perm, const_feats, rng = work.draw, work.perm, work.const_feats, work.rng
    m = hi - lo
    S = nstats.shape[0]
    mode = params.mode
    random_split = params.random != 0
    z = np.int64(0)  # not the literal 0: see treelearn.engine.config
    _node_payload(samples, lo, m, tgt, nC, nR, nW)
    draw_start(draw, perm.shape[0], nconst)
    best_score = -np.inf
    found = False
    seen = False
    while True:
        f = draw_next(draw, perm, rng, params.max_features)
        if f < 0:
            break
        kmin, kmax, nm = _gather(ranks, f, samples, lo, m, nan_rank[f], keys, nC, nR, nW, bC,
                                 bR, bW, cnt)
        off = offsets[f]
        if nm == m:  # nothing known at the node
            draw_result(draw, perm, np.bool_(False))
            continue
        mn = values[off + kmin]
        mx = values[off + kmax]
        one_value = mx <= mn + FEATURE_THRESHOLD
        # the presorted engine's checks: the random splitter's, then search_numeric's
        if one_value and (random_split or not (mode == lvl.MISSING_LEARN and nm > 0)):
            draw_result(draw, perm, np.bool_(False))
            continue
        rand_thr = np.nan
        if random_split:
            rand_thr = random_threshold(mn, mx, rng)
        top = nan_rank[f] if nm > 0 else kmax  # missing values: the last rank
        sort_by_rank(keys, bC, bR, bW, m, kmin, top - kmin, tk, tC, tR, tW, cnt, nC, nR, nW)
        for a in range(m):
            bV[0, a] = values[off + keys[a]]
        usable = search_numeric(bV, bC, bR, bW, z, z, m, nm, st, ws, nstats, wn, crit, imp,
                                mode, params.min_leaf, params.min_weight_leaf,
                                rand_thr, np.bool_(False), out, extras, work.mono[f],
                                work.bounds)
        draw_result(draw, perm, usable)
        if not usable or out[lvl.R_SCORE] == -np.inf:
            continue
        if out[lvl.R_SCORE] > best_score:
            best_score = out[lvl.R_SCORE]
            found = True
            seen = nm > 0
            keep_best(best, out, f, best_left, st, S, best_map, fmap, z)
    return found, draw_finish(draw, perm, const_feats), seen


@noref
@inlined
def process_ranked(data, samples, tgt, ti, tf, tv, node, lo, hi, depth, nconst, crit, params,
                   work, extras):
    """Open, search and split one node; returns ``(mid, n_constants)`` (``mid < 0``: leaf)."""
    ranks, values, offsets, nan_rank, tmp = (data.ranks, data.values, data.offsets,
                                             data.nan_rank, data.tmp)
    nstats = work.nstats
    best = work.best
    wn, imp = open_samples(samples, lo, hi, tgt, tf, tv, node, crit, nstats)
    open_bounds(work.bounds, tf, node)
    if not splittable(hi - lo, wn, imp, depth, params, EPSILON):
        return -1, nconst
    found, n_total, seen = search_ranked(data, samples, lo, hi, tgt, nconst, wn, imp, crit,
                                         params, work, extras)
    if not found:
        return -1, n_total
    improvement = two_way_improvement(work, wn, imp, crit, params)
    if refused(improvement, params):
        return -1, n_total
    f = int(best[lvl.R_SCORE])
    thr = best[lvl.R_THR]
    mb = int(best[lvl.R_MB])
    off = offsets[f]
    nan_r = nan_rank[f]
    # stable partition: left the known values at most the threshold, and the missing ones
    # when their branch is the left one
    a = lo
    b = 0
    for i in range(lo, hi):
        s = samples[i]
        k = np.int64(ranks[f, s])
        right = mb != 0 if k == nan_r else np.float64(values[off + k]) > thr
        g = np.int64(right)
        samples[a] = s
        tmp[b] = s
        a += 1 - g
        b += g
    for i in range(b):
        samples[a + i] = tmp[i]
    record_split(ti, tf, node, np.int64(f), thr, np.int64(mb), seen, improvement)
    split_bounds(ti, tf, node, work.mono[f], work.best_left[0], best[lvl.R_WLEFT], nstats[0],
                 wn)
    return a, n_total


@tiny
def _process(L, data, ti, tf, tv, gs, node, lo, hi, depth, nconst, arena_top, slot):
    """Open, search and split a node (the builder's runner): ``(k, n_total, arena_top,
    slot)``."""
    mid, n_total = process_ranked(data, L.samples, L.tgt, ti, tf, tv, node, lo, hi, depth,
                                  nconst, L.crit, L.params, L.work, L.extras)
    return two_kids(L, lo, mid, hi), n_total, arena_top, slot


#: The shared ranking (``data``: :func:`rank_columns` and :func:`ranked_buffers`) as a
#: layout of the builder: the tree's rows ``samples``, its targets ``tgt``; depth-first only.
Ranked = layout("Ranked", ("samples", "tgt", "crit", "extras"), process=_process,
                children=no_slots, children_any=no_slots, hand_over=never_hands_over,
                resume=nothing_to_resume, step=None, keep=None, release=None)


def later_kernels(values: dict) -> list[tuple]:
    """The kernels :func:`treelearn.engine.compiling.signatures_beside` compiles beside
    :func:`treelearn.engine.builder.grow_depth_first` of this layout, with the signatures it
    calls them with, given its parameters by name (``values``): the numeric search
    (:func:`_numeric_search`), then the kernels typed after the node search (the constant
    features kept, the split recorded, the children pushed, the tables grown; the ``tiny``
    ones are typed inside their callers)."""
    from ..._compiling import signature
    from ..builder import fields
    from ..builder import later_kernels as builder_kernels
    from ..nodes import SCALAR_TYPES

    values = fields(values)
    work = values["work"]
    data = values["data"]
    given = values | work._asdict()
    scalars = SCALAR_TYPES | dict.fromkeys(("f", "mb", "needed"), "int64") | {
        "thr": "float64", "improvement": "float64", "seen": "boolean"}
    # first the numeric search, whose scans the grower reaches seconds after it starts
    jobs = [_numeric_search(values, data.bV, (data.bC, data.bR, data.bW))]
    jobs += [(kernel, signature(kernel, given, scalars))
             for kernel in (draw_finish, two_way_improvement, refused, record_split)]
    return jobs + builder_kernels(values)


def _numeric_search(values: dict, V: np.ndarray, CRW: tuple) -> tuple:
    """:func:`search_numeric` with the signature the node search calls it with, given the
    grower's parameters by name (``values``, with ``extras``), the sorted values ``V`` and
    ``CRW = (C, R, W)`` as the search passes them."""
    from ..._compiling import signature

    work = values["work"]
    given = values | dict(zip(("C", "R", "W"), CRW, strict=True)) | {
        "V": V, "st": work.st, "ws": work.ws, "stats": work.nstats, "out": work.out,
        "need_real": np.bool_(False), "bounds": work.bounds}
    scalars = nd.SCALAR_TYPES | dict.fromkeys(("f", "nm", "mode", "min_leaf", "cst"),
                                              "int64") | \
        dict.fromkeys(("pimp", "min_wleaf", "rand_thr"), "float64")
    return search_numeric, signature(search_numeric, given, scalars)

# -- growing a tree in this layout, from Python (the driver: treelearn.engine.fit) ----------

#: The ranked splitter grows a tree whose nodes draw at most one in this many features.
RANKED_FRACTION = 3


def ranked_applies(prm: GrowParams, is_cat: np.ndarray, has_missing: bool) -> bool:
    """Whether the ranked splitter (:mod:`treelearn.engine.layouts.ranked`) grows trees of these
    settings: depth-first growth, numeric features, a criterion scanned from sums, no C4.5
    fractional cases, costs, C4.5 rules or statistical selection, and nodes that draw at most
    one in :data:`RANKED_FRACTION` features (otherwise the presorted lists, which keep every
    feature sorted, do less work)."""
    p = is_cat.shape[0]
    return (p > 0 and prm.max_leaf_nodes == 0 and not bool(is_cat.any())
            and prm.crit != ABSOLUTE_ERROR
            and not (prm.missing in (lvl.MISSING_C45, lvl.MISSING_M5) and has_missing)
            and prm.criterion_only and RANKED_FRACTION * prm.max_features <= p)


def grow_ranked(ranked: tuple, samples: np.ndarray, ycls: np.ndarray, yreg: np.ndarray,
                w: np.ndarray, prm: GrowParams, scratch: Scratch | None = None) -> Tree:
    """Grow a tree with the ranked splitter on the rows ``samples`` (increasing row ids of
    positive weight) of ``ranked = (ranks, values, offsets, nan_rank)``
    (:func:`~treelearn.engine.layouts.ranked.rank_columns`); ``ycls``/``yreg`` and ``w`` are indexed
    by row id. ``scratch``: an ensemble's per-thread arrays (node tables, sort buffers)."""
    p = ranked[0].shape[0]
    n = samples.shape[0]
    weighted = not bool(np.all(w[samples] == 1.0))
    buffers = ranked_buffers(n, prm.crit < SQUARED_ERROR, weighted, scratch)
    data = RankedData(*ranked, *buffers)
    tgt = sample_targets(ycls, yreg, w)
    work = fit.search_work(n, p, prm.n_stats, 4, prm.seed, False, mono=prm.monotonic)
    # a node's row costs 8 units and sorts about max_features features: chunks of ~0.1 s
    params = prm.scalars(float(tgt[2][samples].sum()),
                        max(1, 8 * fit.CHUNK_WORK // max(4 * prm.max_features, 1)))
    L = Ranked(samples=samples, tgt=tgt, crit=np.int64(prm.crit),
               extras=fit.fit_extras(prm), **two_way(params, work))
    args = {"L": L, "data": data}
    # depth-first only (ranked_applies)
    with compiling.signatures_beside(Ranked.grow_depth_first, args,
                                     lambda: fit.loop_frame(args, prm, False),
                                     lambda v: later_kernels(v) + fit.assembly_kernels(v)):
        tree = fit.drive(args, prm, n, p, scratch)
    if scratch is not None:
        give_back(buffers, scratch)
    return tree
