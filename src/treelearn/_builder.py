"""Growing a tree: node queue, stopping rules, split choice, partitioning.

Two growers share one node routine (:func:`_open_node`), which adds a node, computes its
statistics, impurity and value, applies the stopping rules and searches its best split:

* depth-first (``max_leaf_nodes=None``): an explicit stack, left child first, so nodes are numbered
  in preorder exactly as scikit-learn's ``DepthFirstTreeBuilder`` numbers them;
* best-first (``max_leaf_nodes`` set): a max-heap on the impurity improvement of the best split;
  expanding a node adds both children at once (numbered in expansion order, like scikit-learn's
  ``BestFirstTreeBuilder``), until ``max_leaf_nodes - 1`` splits were made.

Neither recurses, so a chain 10,000 nodes deep grows like any other tree.

Stopping rules (scikit-learn's): a node is a leaf when ``depth >= max_depth``, it has fewer than
``min_samples_split`` samples (or ``2 * min_samples_leaf``), less than ``2 * min_weight_leaf``
weight, an impurity ``<= EPSILON``, no valid split, or its best split improves the weighted
impurity by less than ``min_impurity_decrease - EPSILON``.

The node table lives in two growable arrays: ``inode`` (int64 columns ``I_*``) and ``fnode``
(float64 columns ``F_*``), plus ``value`` (one row per node).
"""

from __future__ import annotations

import numba
import numpy as np

from ._config import EPSILON, FEATURE_THRESHOLD, PARALLEL_MIN_WORK, njit
from ._criteria import SQUARED_ERROR, impurity_improvement, node_impurity
from ._split_exact import (
    abs_impurity,
    bucket_sparse,
    eval_dense,
    eval_dense_parallel,
    eval_sparse,
    partition_dense,
    partition_dense_parallel,
    partition_samples,
    sparse_feature_range,
    sparse_value,
    weighted_median,
)

I_LEFT, I_RIGHT, I_FEATURE, I_NSAMP, I_LO, I_HI, I_DEPTH, I_NLEFT, I_NCONST = range(9)
F_THRESHOLD, F_IMPURITY, F_WEIGHT, F_IMPROVEMENT = range(4)
N_ICOLS = 9
N_FCOLS = 4

TREE_LEAF = -1
TREE_UNDEFINED = -2

# Integer parameters, in this order, in the ``iparams`` array given to :func:`build`.
P_MAX_DEPTH, P_MIN_SPLIT, P_MIN_LEAF, P_MAX_FEATURES, P_MAX_LEAF_NODES, P_RANDOM, P_SEED = range(7)
# Float parameters in ``fparams``.
P_MIN_WEIGHT_LEAF, P_MIN_IMPURITY_DECREASE, P_TOTAL_WEIGHT = range(3)


RAND_R_MAX = 0x7FFFFFFF


@njit
def rand_r(state):
    """scikit-learn's ``our_rand_r``: a 32-bit xorshift step on ``state[0]``, in [0, RAND_R_MAX]."""
    s = state[0]
    if s == 0:
        s = 1
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    state[0] = s
    return s % (RAND_R_MAX + 1)


@njit
def rand_int(low, high, state):
    """Random integer in ``[low, high)`` (scikit-learn's ``rand_int``)."""
    return low + rand_r(state) % (high - low)


@njit
def rand_uniform(low, high, state):
    """Random float in ``[low, high)`` (scikit-learn's ``rand_uniform``)."""
    return (high - low) * np.float64(rand_r(state)) / np.float64(RAND_R_MAX) + low


@njit
def _new_table(V):
    """An empty node table (int columns, float columns, values) with room for 64 nodes."""
    cap = 64
    return (np.empty((cap, N_ICOLS), dtype=np.int64), np.empty((cap, N_FCOLS)),
            np.empty((cap, V)))


@njit
def _grow(inode, fnode, value, needed):
    cap = inode.shape[0]
    if needed <= cap:
        return inode, fnode, value
    new_cap = max(2 * cap, needed)
    i2 = np.empty((new_cap, inode.shape[1]), dtype=np.int64)
    f2 = np.empty((new_cap, fnode.shape[1]), dtype=np.float64)
    v2 = np.empty((new_cap, value.shape[1]), dtype=np.float64)
    for i in range(cap):
        for c in range(inode.shape[1]):
            i2[i, c] = inode[i, c]
        for c in range(fnode.shape[1]):
            f2[i, c] = fnode[i, c]
        for c in range(value.shape[1]):
            v2[i, c] = value[i, c]
    return i2, f2, v2


@njit
def _open_node(node, lo, hi, depth, dense, sparse, samples, tgt, crit, iparams, fparams, inode,
               fnode, value, scratch, absolute, par):
    """Fill row ``node`` of the table for samples ``[lo, hi)`` and search its split.

    On return ``inode[node, I_FEATURE]`` is the split feature (or TREE_UNDEFINED for a leaf),
    with ``fnode[node, F_THRESHOLD]``, ``inode[node, I_NLEFT]`` and ``fnode[node, F_IMPROVEMENT]``.
    """
    ycls, yreg, w = tgt
    (feats, perm, const_feats, rng, rand_thrs, res_score, res_thr, res_nl, res_wl, res_left,
     goes_left, mark) = scratch
    n_features = perm.shape[0]
    S = res_left.shape[1]
    # ``samps[lo:hi]`` are the node's samples: sparse fits keep their own buffer, dense fits read
    # the first presorted row (any row holds the node's samples).
    samps = samples
    nn = hi - lo

    stats = np.zeros(S)
    wn = 0.0
    is_reg = crit >= SQUARED_ERROR
    for i in range(lo, hi):  # add_sample written out: calls here pay reference counting
        s = samps[i]
        ws = w[s]
        if is_reg:
            y = yreg[s]
            stats[0] += ws * y
            stats[1] += ws * y * y
        else:
            stats[ycls[s]] += ws
        wn += ws
    if absolute is not None:
        imp = abs_impurity(samps, lo, hi, tgt, wn)
    else:
        imp = node_impurity(stats, wn, crit)

    inode[node, I_LEFT] = TREE_LEAF
    inode[node, I_RIGHT] = TREE_LEAF
    inode[node, I_FEATURE] = TREE_UNDEFINED
    inode[node, I_NSAMP] = nn
    inode[node, I_LO] = lo
    inode[node, I_HI] = hi
    inode[node, I_DEPTH] = depth
    inode[node, I_NLEFT] = 0
    fnode[node, F_THRESHOLD] = TREE_UNDEFINED
    fnode[node, F_IMPURITY] = imp
    fnode[node, F_WEIGHT] = wn
    fnode[node, F_IMPROVEMENT] = 0.0
    if absolute is not None:
        ys = np.empty(nn)
        ws = np.empty(nn)
        for i in range(nn):
            ys[i] = yreg[samps[lo + i]]
            ws[i] = w[samps[lo + i]]
        value[node, 0] = weighted_median(ys, ws)
    elif crit == SQUARED_ERROR:
        value[node, 0] = stats[0] / wn
    else:
        for k in range(S):
            value[node, k] = stats[k] / wn

    min_leaf = iparams[P_MIN_LEAF]
    min_wleaf = fparams[P_MIN_WEIGHT_LEAF]
    if (
        depth >= iparams[P_MAX_DEPTH]
        or nn < iparams[P_MIN_SPLIT]
        or nn < 2 * min_leaf
        or wn < 2.0 * min_wleaf
        or imp <= EPSILON
    ):
        return

    # Which features to examine, in which order (and, for the random splitter, at which threshold).
    if sparse is not None:
        offsets, bvals, bsamps = bucket_sparse(sparse[0], sparse[1], sparse[2], samples, lo, hi,
                                               n_features)
    # Which features to examine, in which order (and, for the random splitter, at which
    # threshold): scikit-learn's Fisher-Yates draw, so equal splits are broken as it breaks them.
    random_split = iparams[P_RANDOM] != 0
    max_features = iparams[P_MAX_FEATURES]
    n_known = inode[node, I_NCONST]
    f_i = n_features
    n_visited = 0
    n_found = 0
    n_drawn = 0
    n_total = n_known
    m = 0
    while f_i > n_total and (n_visited < max_features or n_visited <= n_found + n_drawn):
        n_visited += 1
        f_j = rand_int(n_drawn, f_i - n_found, rng)
        if f_j < n_known:
            perm[n_drawn], perm[f_j] = perm[f_j], perm[n_drawn]
            n_drawn += 1
            continue
        f_j += n_found
        f = perm[f_j]
        mn = np.float32(0.0)
        mx = np.float32(0.0)
        if sparse is not None:
            mn, mx = sparse_feature_range(offsets, bvals, f, nn)
        if dense is not None:
            mn = dense[0][f, lo]
            mx = dense[0][f, hi - 1]
        if mx <= mn + FEATURE_THRESHOLD:
            perm[f_j], perm[n_total] = perm[n_total], perm[f_j]
            n_found += 1
            n_total += 1
            continue
        f_i -= 1
        perm[f_i], perm[f_j] = perm[f_j], perm[f_i]
        feats[m] = f
        if random_split:
            t = rand_uniform(np.float64(mn), np.float64(mx), rng)
            if t == np.float64(mx):
                t = np.float64(mn)
            rand_thrs[m] = t
        else:
            rand_thrs[m] = np.nan
        m += 1
    # Known constants keep their order for siblings and children; newly found ones are recorded.
    for q in range(n_known):
        perm[q] = const_feats[q]
    for q in range(n_known, n_total):
        const_feats[q] = perm[q]
    inode[node, I_NCONST] = n_total
    if m == 0:
        return

    if sparse is not None:
        eval_sparse(feats, m, offsets, bvals, bsamps, samples, lo, hi, tgt, stats, wn, crit,
                    imp, min_leaf, min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl,
                    res_left, mark, absolute)
    if dense is not None:
        serial = True
        if par is not None:  # pruned unless the fit is large enough to use threads
            if nn * m >= PARALLEL_MIN_WORK:
                eval_dense_parallel(feats, m, dense, lo, hi, stats, wn, crit, imp, min_leaf,
                                    min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl,
                                    res_left)
                serial = False
        if serial:
            eval_dense(feats, m, dense, lo, hi, tgt, stats, wn, crit, imp, min_leaf,
                       min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl, res_left,
                       absolute)

    best = -1
    best_score = -np.inf
    for j in range(m):
        if res_score[j] > best_score:
            best_score = res_score[j]
            best = j
    if best < 0:
        return
    f = feats[best]
    nl = res_nl[best]
    wl = res_wl[best]
    wr = wn - wl
    thr = res_thr[best]

    if absolute is not None:
        _mark_left(dense, sparse, samples, lo, hi, f, thr, nl, goes_left)
        imp_l, imp_r = _children_abs_impurity(samps, lo, hi, tgt, goes_left, wl, wr)
        _unmark(samps, lo, hi, goes_left)
    else:
        left = res_left[best]
        right = np.empty(S)
        for k in range(S):
            right[k] = stats[k] - left[k]
        imp_l = node_impurity(left, wl, crit)
        imp_r = node_impurity(right, wr, crit)
    improvement = impurity_improvement(fparams[P_TOTAL_WEIGHT], wn, imp, wl, imp_l, wr, imp_r)
    if improvement + EPSILON < fparams[P_MIN_IMPURITY_DECREASE]:
        return
    inode[node, I_FEATURE] = f
    inode[node, I_NLEFT] = nl
    fnode[node, F_THRESHOLD] = thr
    fnode[node, F_IMPROVEMENT] = improvement


@njit
def _mark_left(dense, sparse, samples, lo, hi, f, thr, nl, goes_left):
    """Set ``goes_left[s] = True`` for the node's samples with ``X[s, f] <= thr``."""
    if sparse is not None:
        indptr, indices, xdata = sparse
        for i in range(lo, hi):
            s = samples[i]
            goes_left[s] = sparse_value(indptr, indices, xdata, s, f) <= thr
    if dense is not None:
        sidx = dense[1]
        for i in range(lo, lo + nl):
            goes_left[sidx[f, i]] = True


@njit
def _unmark(samps, lo, hi, goes_left):
    for i in range(lo, hi):
        goes_left[samps[i]] = False


@njit
def _children_abs_impurity(samps, lo, hi, tgt, goes_left, wl, wr):
    _, yreg, w = tgt
    nn = hi - lo
    order = np.empty(nn, dtype=np.int32)
    a = 0
    for i in range(lo, hi):
        if goes_left[samps[i]]:
            order[a] = samps[i]
            a += 1
    b = a
    for i in range(lo, hi):
        if not goes_left[samps[i]]:
            order[b] = samps[i]
            b += 1
    # Arguments are never literal constants: each literal would compile a specialisation.
    imp_l = abs_impurity(order, np.int64(0), a, tgt, wl)
    imp_r = abs_impurity(order, a, nn, tgt, wr)
    return imp_l, imp_r


@njit
def _split_node(node, dense, sparse, samples, inode, fnode, goes_left, par):
    """Partition the node's samples by its split; return the boundary index."""
    lo = inode[node, I_LO]
    hi = inode[node, I_HI]
    f = inode[node, I_FEATURE]
    _mark_left(dense, sparse, samples, lo, hi, f, fnode[node, F_THRESHOLD],
               inode[node, I_NLEFT], goes_left)
    mid = lo + inode[node, I_NLEFT]
    if sparse is not None:
        mid = lo + partition_samples(samples, lo, hi, goes_left)
    if dense is not None:
        serial = True
        if par is not None:
            if (hi - lo) * dense[0].shape[0] >= PARALLEL_MIN_WORK:
                partition_dense_parallel(dense[0], dense[1], dense[2], dense[3], dense[4], lo,
                                         hi, goes_left, par[0], par[1], par[2], par[3], par[4])
                serial = False
        if serial:
            partition_dense(dense[0], dense[1], dense[2], dense[3], dense[4], lo, hi,
                            goes_left)
    _unmark(samples, lo, hi, goes_left)
    return mid


@njit
def push_children(stack, top, lo, mid, hi, depth, node, extra_left, extra_right):
    """Push a split node's children on a depth-first stack of rows ``(lo, hi, depth, parent,
    is_left, extra)``, right first so that the left child is opened next (preorder); the
    stack doubles when full. Returns ``(stack, top)``."""
    if top + 2 > stack.shape[0]:
        s2 = np.empty((2 * stack.shape[0], 6), dtype=np.int64)
        for i in range(stack.shape[0]):
            for c in range(6):
                s2[i, c] = stack[i, c]
        stack = s2
    stack[top, 0] = mid
    stack[top, 1] = hi
    stack[top, 2] = depth + 1
    stack[top, 3] = node
    stack[top, 4] = 0
    stack[top, 5] = extra_right
    stack[top + 1, 0] = lo
    stack[top + 1, 1] = mid
    stack[top + 1, 2] = depth + 1
    stack[top + 1, 3] = node
    stack[top + 1, 4] = 1
    stack[top + 1, 5] = extra_left
    return stack, top + 2


def make_scratch(n_samples: int, n_features: int, S: int, seed: int) -> tuple:
    """Work arrays of a fit, allocated in Python (a tuple built inside Numba costs ~2 s of
    compilation): feature slots, the feature permutation and known constants, the generator
    state, random thresholds, per-feature results, and two per-sample masks."""
    rng = np.array([seed], dtype=np.int64)
    return (
        np.empty(n_features, dtype=np.int64),
        np.arange(n_features),
        np.zeros(n_features, dtype=np.int64),
        rng,
        np.empty(n_features),
        np.empty(n_features),
        np.empty(n_features),
        np.empty(n_features, dtype=np.int64),
        np.empty(n_features),
        np.empty((n_features, S)),
        np.zeros(n_samples, dtype=np.bool_),
        np.zeros(n_samples, dtype=np.bool_),
    )


@njit
def _sift_up(heap, hole, top, node, key):
    """libstdc++ ``__push_heap``: move ``node`` up from ``hole`` towards ``top``."""
    parent = (hole - 1) // 2
    while hole > top and key[heap[parent]] < key[node]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = node


@njit
def heap_push(heap, size, key, node):
    """``push_back`` + ``std::push_heap`` on a max-heap of node ids ordered by ``key[node]``.

    The frontier of best-first growth is the same binary heap scikit-learn keeps with the C++
    standard library, so that splits of equal improvement are expanded in the same order.
    """
    heap[size] = node
    _sift_up(heap, size, 0, node, key)
    return size + 1


@njit
def heap_pop(heap, size, key):
    """``std::pop_heap`` + ``back`` + ``pop_back``: remove and return the maximum."""
    top = heap[0]
    n = size - 1
    value = heap[n]
    heap[n] = top
    # libstdc++ __adjust_heap on heap[0:n] with the hole at 0
    hole = 0
    child = 0
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if key[heap[child]] < key[heap[child - 1]]:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if (n & 1) == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    if n > 0:
        _sift_up(heap, hole, 0, value, key)
    return top, n


def parallel_buffers(dense, n_samples: int) -> tuple | None:
    """Per-thread partition buffers for a large dense fit on several threads, else None.

    None keeps the parallel kernels out of the compiled code (they cost seconds to compile);
    they are used only when some node can reach ``PARALLEL_MIN_WORK``.
    """
    T = numba.config.NUMBA_NUM_THREADS
    if dense is None or T < 2 or n_samples * dense[0].shape[0] < 4 * PARALLEL_MIN_WORK:
        return None
    n = n_samples
    return (
        np.empty((T, n), dtype=np.float32),
        np.empty((T, n), dtype=np.int32),
        np.empty((T, n if dense[2] is not None else 0), dtype=np.int32),
        np.empty((T, n if dense[3] is not None else 0)),
        np.empty((T, n if dense[4] is not None else 0)),
    )


def build(dense, sparse, samples, tgt, n_samples, n_features, crit, S, V, iparams, fparams,
          absolute):
    """Grow a tree; return ``(inode, fnode, value, node_count, max_depth)``.

    Dispatches to :func:`build_depth_first`, or to :func:`build_best_first` when
    ``max_leaf_nodes`` is set; each is its own compiled entry point, so a fit compiles only
    the grower it uses.

    Parameters
    ----------
    dense : tuple or None
        ``(sval, sidx, C, R, W)``: the presorted values and sample ids, shape
        (n_features, n_samples), with class codes ``C`` or targets ``R`` and weights ``W`` in
        the same order (None where absent: ``W`` is None for unit weights).
    sparse : tuple or None
        ``(indptr, indices, data)``: CSR arrays. Exactly one of ``dense`` and ``sparse`` is
        given; every access to either sits under ``if <it> is not None``, so Numba prunes the
        absent one's code at compile time.
    samples : ndarray
        int32 sample ids whose ranges ``[lo, hi)`` are the nodes: for dense data the first row
        of ``sidx`` (partitioned along with it), for sparse data a buffer of its own.
    tgt : tuple
        ``(ycls, yreg, w)``: int32 class codes, float64 targets, float64 sample weights.
    crit, S, V : int
        Criterion code, length of the statistics vector, number of values per node.
    iparams, fparams : ndarray
        Integer and float parameters indexed by the ``P_*`` constants of this module.
    absolute : ndarray or None
        Any array for the absolute-error criterion, else None (its code is then not compiled).
    """
    grower = build_depth_first if iparams[P_MAX_LEAF_NODES] <= 0 else build_best_first
    scratch = make_scratch(n_samples, n_features, S, int(iparams[P_SEED]))
    par = parallel_buffers(dense, n_samples) if absolute is None else None
    return grower(dense, sparse, samples, tgt, n_features, crit, V, iparams, fparams, absolute,
                  scratch, par)


@njit
def build_depth_first(dense, sparse, samples, tgt, n_features, crit, V, iparams, fparams,
                      absolute, scratch, par):
    """Depth-first growth (preorder numbering); arguments and result as :func:`build`."""
    inode, fnode, value = _new_table(V)
    goes_left = scratch[10]
    # Typed, non-literal counters: a literal passed to a kernel compiles a specialisation.
    node_count = np.int64(0)
    max_depth = np.int64(0)

    # Depth-first: (lo, hi, depth, parent, is_left, n_constant_features) per pending node.
    stack = np.empty((64, 6), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = samples.shape[0]
    stack[0, 2] = 0
    stack[0, 3] = -1
    stack[0, 4] = 0
    stack[0, 5] = 0
    top = 1
    while top > 0:
        top -= 1
        lo, hi, depth, parent, is_left, nconst = stack[top]
        inode, fnode, value = _grow(inode, fnode, value, node_count + 1)
        node = node_count
        node_count += 1
        if parent >= 0:
            inode[parent, I_LEFT if is_left else I_RIGHT] = node
        inode[node, I_NCONST] = nconst
        _open_node(node, lo, hi, depth, dense, sparse, samples, tgt, crit, iparams, fparams,
                   inode, fnode, value, scratch, absolute, par)
        if depth > max_depth:
            max_depth = depth
        if inode[node, I_FEATURE] == TREE_UNDEFINED:
            continue
        mid = _split_node(node, dense, sparse, samples, inode, fnode, goes_left, par)
        stack, top = push_children(stack, top, lo, mid, hi, depth, node,
                                   inode[node, I_NCONST], inode[node, I_NCONST])
    return inode[:node_count].copy(), fnode[:node_count].copy(), value[:node_count].copy(), \
        node_count, max_depth


@njit
def build_best_first(dense, sparse, samples, tgt, n_features, crit, V, iparams, fparams,
                     absolute, scratch, par):
    """Best-first growth up to ``max_leaf_nodes`` leaves; arguments and result as :func:`build`."""
    inode, fnode, value = _new_table(V)
    goes_left = scratch[10]
    # Typed, non-literal counters: a literal passed to a kernel compiles a specialisation.
    node_count = np.int64(0)
    max_depth = np.int64(0)

    max_splits = iparams[P_MAX_LEAF_NODES] - 1
    heap = np.empty(inode.shape[0], dtype=np.int64)
    root = np.int64(0)
    inode[root, I_NCONST] = 0
    _open_node(root, root, samples.shape[0], root, dense, sparse, samples, tgt, crit, iparams,
               fparams, inode, fnode, value, scratch, absolute, par)
    node_count = np.int64(1)
    key = fnode[:, F_IMPROVEMENT]
    hsize = heap_push(heap, root, key, root)
    while hsize > 0:
        key = fnode[:, F_IMPROVEMENT]
        node, hsize = heap_pop(heap, hsize, key)
        depth = inode[node, I_DEPTH]
        if depth > max_depth:
            max_depth = depth
        if inode[node, I_FEATURE] == TREE_UNDEFINED:
            continue
        if max_splits <= 0:
            inode[node, I_FEATURE] = TREE_UNDEFINED
            fnode[node, F_THRESHOLD] = TREE_UNDEFINED
            continue
        max_splits -= 1
        lo = inode[node, I_LO]
        hi = inode[node, I_HI]
        mid = _split_node(node, dense, sparse, samples, inode, fnode, goes_left, par)
        inode, fnode, value = _grow(inode, fnode, value, node_count + 2)
        if heap.shape[0] < node_count + 2:
            h2 = np.empty(2 * (node_count + 2), dtype=np.int64)
            for i in range(hsize):
                h2[i] = heap[i]
            heap = h2
        left = node_count
        right = node_count + 1
        node_count += 2
        inode[node, I_LEFT] = left
        inode[node, I_RIGHT] = right
        # scikit-learn's best-first builder starts every node with no known constants.
        inode[left, I_NCONST] = 0
        inode[right, I_NCONST] = 0
        _open_node(left, lo, mid, depth + 1, dense, sparse, samples, tgt, crit, iparams, fparams,
                   inode, fnode, value, scratch, absolute, par)
        _open_node(right, mid, hi, depth + 1, dense, sparse, samples, tgt, crit, iparams, fparams,
                   inode, fnode, value, scratch, absolute, par)
        key = fnode[:, F_IMPROVEMENT]
        hsize = heap_push(heap, hsize, key, left)
        hsize = heap_push(heap, hsize, key, right)
    return inode[:node_count].copy(), fnode[:node_count].copy(), value[:node_count].copy(), \
        node_count, max_depth
