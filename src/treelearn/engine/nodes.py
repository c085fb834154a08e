"""The node table every grower fills, its growth, the queues of open nodes, the stopping rules.

The table is three growable arrays with one row per node: ``ti`` (int64 columns ``N_*``),
``tf`` (float64 columns ``T_*``) and ``tv`` (the node's value: class fractions, or the mean or
median). Categorical splits store their level -> branch maps in ``cats`` (int64, one slice
per node: ``N_CATOFF``, ``N_CATLEN``). A node knows its parent and its branch number there;
:func:`treelearn.engine.fit.assemble` turns the table into a :class:`treelearn._tree.Tree`.

Monotonic constraints (scikit-learn's rule) live here, in the one place every layout and both
growth orders pass: a node's bounds ``T_LOWER``/``T_UPPER`` are set when the node is created
(:func:`inherit_bounds`, from its parent's bounds, the parent's split's constraint ``N_MONO``
and the middle of its children's values ``T_MIDDLE``, which :func:`split_bounds` records when
the parent is split), and :func:`store_values` clips the node's value to them. The layouts only
hand the bounds and the feature's constraint to their scans, which skip a cut that breaks them
(:func:`treelearn.engine.criteria.monotone_ok`). Without constraints every bound is infinite:
the clip never fires, each scan's test is one comparison of ``cst`` with 0 on an improving cut,
and nothing is compiled apart (measured: full-size fits within 0.94-1.07 of before).

Growth order (scikit-learn's, so that trees are numbered as its are):

* depth-first: an explicit stack of pending nodes, the first branch on top, so nodes are
  numbered in preorder (no recursion: a chain 10,000 deep grows like any other tree);
* best-first (``max_leaf_nodes``): a max-heap on the weighted impurity decrease of a node's
  best split, the binary heap of libstdc++ that scikit-learn uses, so that equal
  improvements come out in its order; expanding a node numbers its children in branch order.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import levels as lvl
from .config import njit, noref, tiny
from .criteria import SDR, SQUARED_ERROR, node_impurity
from .scratch import flat_array, give_back_flat

TREE_LEAF = -1
TREE_UNDEFINED = -2

# int columns of the node table (N_MONO: the monotonic constraint of the split's feature)
(N_PARENT, N_BRANCH, N_FEATURE, N_NSAMP, N_LO, N_HI, N_DEPTH, N_NCONST, N_NB, N_MB, N_CATOFF,
 N_CATLEN, N_KIND, N_KIDS, N_SLOT, N_SEEN, N_MONO) = range(17)
N_ICOLS = 17
# float columns (T_LOWER, T_UPPER: the node's bounds under monotonic constraints; T_MIDDLE:
# the bound its split hands its children)
T_THRESHOLD, T_IMPURITY, T_WEIGHT, T_IMPROVEMENT, T_LOWER, T_UPPER, T_MIDDLE = range(7)
N_FCOLS = 7

# The Numba types of the scalars the node loops compute and pass to their kernels, by
# parameter name (every loop uses these names for them): what lets
# treelearn._compiling.signature derive a kernel's signature before the loop calls it.
SCALAR_TYPES = dict.fromkeys(
    ("node", "lo", "hi", "depth", "k", "d", "nconst", "slot", "arena_top", "n_total",
     "n_parent", "codes_max", "kmax"), "int64") | dict.fromkeys(("wn", "imp"), "float64")

#: The grow parameters every kernel reads, as one named tuple of scalars (built by
#: :meth:`treelearn.engine.fit.GrowParams.scalars`): integers ``max_depth``, ``min_split``
#: (min_samples_split), ``min_leaf`` (min_samples_leaf), ``max_features`` (features drawn per
#: node), ``max_leaf_nodes`` (0: depth-first), ``random`` (1: one random threshold per feature,
#: extra trees), ``seed``, ``mode`` (the missing-value method, ``levels.MISSING_*``),
#: ``multiway`` (1: one branch per category), ``cost_mode`` (``COST_*``), ``min_count`` (C4.5's
#: fewest cases in two branches), ``selection`` (``SELECT_*``), ``average_gain`` and
#: ``penalty`` (C4.5's rules, 0/1), ``chunk`` (work per call of a node loop); floats
#: ``min_weight_leaf``, ``min_impurity_decrease``, ``total_weight`` (the root's weight),
#: ``cost_weight``, ``smooth`` (M5's), ``alpha`` and ``screen`` (the selection tests' levels),
#: ``min_impurity`` (M5's stopping impurity). Numba passes it as a struct and reads a field as
#: a register: it replaced two arrays read through 23 slot constants (``iparams[P_MIN_LEAF]``).
Scalars = namedtuple("Scalars", (
    "max_depth", "min_split", "min_leaf", "max_features", "max_leaf_nodes", "random", "seed",
    "mode", "multiway", "cost_mode", "min_count", "selection", "average_gain", "penalty",
    "chunk", "min_weight_leaf", "min_impurity_decrease", "total_weight", "cost_weight",
    "smooth", "alpha", "min_impurity", "screen"))
#: Which fields of :data:`Scalars` are integers (the rest are floats).
INT_SCALARS = Scalars._fields[:15]

# Slots of the grower's persistent state ``gs`` (int64): counts and tops of the tables, the
# work left in the current chunk (G_BUDGET), and a node left half-done by a depth-first
# runner for its caller (G_P*: node, rows, depth, arena top, histogram slot, constants).
(G_NODES, G_TOP, G_ARENA, G_CATS, G_HEAP, G_KIDS, G_DEPTH, G_LEAVES, G_DONE, G_NEED,
 G_BUDGET, G_PNODE, G_PLO, G_PHI, G_PDEPTH, G_PARENA, G_PSLOT, G_PTOTAL) = range(18)
N_GSTATE = 18

# What a depth-first runner (a node loop compiled without reference counting) returns: the
# stack is empty, the chunk's work is done, or its caller must act before it goes on: grow
# the node table or the stack, process a node on all threads (popped, not yet opened), or
# finish a node whose fractional split needs larger row buffers (left in G_P*).
RUN_DONE, RUN_BUDGET, RUN_ROOM, RUN_LARGE, RUN_ARENA = range(5)

# Columns of a stack row: the pending node's range, depth, parent, branch, constants inherited,
# arena top to restore when it is popped, and histogram slot.
S_LO, S_HI, S_DEPTH, S_PARENT, S_BRANCH, S_NCONST, S_ARENA, S_SLOT = range(8)
N_SCOLS = 8


@njit
def grow_rows(a, needed):
    """``a`` with at least ``needed`` rows (doubled when full; the new rows uninitialised)."""
    cap = a.shape[0]
    if needed <= cap:
        return a
    new = np.empty((max(2 * cap, needed), a.shape[1]), dtype=a.dtype)
    for i in range(cap):
        for c in range(a.shape[1]):
            new[i, c] = a[i, c]
    return new


def tree_arrays(ti: np.ndarray, tf: np.ndarray, cats: np.ndarray, count: int,
                scratch=None) -> tuple:
    """The arrays of a :class:`treelearn._tree.Tree` from the first ``count`` rows of the node
    table: ``(left, right, branch_ptr, branch_child, feature, threshold, impurity, n_samples,
    weight, cat_ptr, cat_branch, missing_branch, missing_seen)``.

    The outputs are allocated here and filled by one compiled pass without the GIL
    (:func:`fill_tree_arrays`): built with NumPy they took 13 ms per 68k-node tree under the
    GIL (a tenth of a forest's fit on two threads), and a compiled function that allocates
    and returns thirteen arrays took 3.1 s to compile, paid by every first fit; the fill
    kernel compiles in a fraction of that. ``scratch``
    (:class:`~treelearn.engine.scratch.Scratch`): the outputs share no array with ``cats``
    (a store an ensemble's next tree reuses) and are views of this thread's arrays from an
    earlier tree, which :func:`release_tree_arrays` gives back once the tree is packed and
    dropped."""
    def new(key, shape, dtype):
        return flat_array(scratch, f"tree.{key}", shape, dtype)

    ptr = new("ptr", (count + 1,), np.intp)
    cptr = new("cptr", (count + 1,), np.intp)
    in_order = tree_offsets(ti, np.int64(count), ptr, cptr)
    child = new("child", (ptr[count],), np.intp)
    if scratch is None and in_order and cats.dtype == np.intp:
        # The maps were stored in node order (depth-first growth): the store's prefix is the
        # tree's array as it is. A new array would be written page by page: a fully grown tree
        # on the flights-shaped table (300-level columns) holds 148 MB of maps, whose copy took
        # 0.47 s of a 1.9 s fit. (The fill below then copies each map onto itself.)
        cat = cats[: cptr[count]]
    else:
        cat = new("cat", (cptr[count],), np.intp)
    ints = new("ints", (5, count), np.intp)  # left, right, feature, n_samples, missing
    floats = new("floats", (3, count), np.float64)  # threshold, impurity, weight
    seen = new("seen", (count,), np.bool_)
    fill_tree_arrays(ti, tf, cats, np.int64(count), ptr, cptr, child, cat, ints, floats, seen)
    return (ints[0], ints[1], ptr, child, ints[2], floats[0], floats[1], ints[3], floats[2],
            cptr, cat, ints[4], seen)


#: The arrays of a :class:`~treelearn._tree.Tree` that :func:`tree_arrays` takes from a
#: scratch, by the tree's attribute that views each, and the assembled values.
TREE_SCRATCH = {"children_left": "ints", "threshold": "floats", "branch_ptr": "ptr",
                "cat_ptr": "cptr", "branch_child": "child", "cat_branch": "cat",
                "missing_seen": "seen", "value": "tv"}


def release_tree_arrays(tree, scratch) -> None:
    """Give ``tree``'s arrays that came from ``scratch`` (:func:`tree_arrays` and the
    values of :func:`treelearn.engine.fit.assemble`) back to it: the caller has packed the
    tree and drops it, so nothing reads them any more."""
    for attr, key in TREE_SCRATCH.items():
        give_back_flat(scratch, f"tree.{key}", getattr(tree, attr))


@noref
def tree_offsets(ti, count, ptr, cptr):
    """``ptr``/``cptr``: where each of the first ``count`` nodes' children and level map
    start in the tree's arrays (a leaf has neither); True when every map sits in the table's
    store ``cats`` at that very offset (depth-first growth), so the store's prefix is the
    tree's array. One pass (NumPy's cumulative sums and checks took 1 ms of a forest's
    47k-node tree, under the GIL)."""
    ptr[0] = 0
    cptr[0] = 0
    in_order = True
    for i in range(count):
        nb = ti[i, N_NB]
        maps = ti[i, N_CATLEN] if nb > 0 else 0
        if maps > 0 and ti[i, N_CATOFF] != cptr[i]:
            in_order = False
        ptr[i + 1] = ptr[i] + nb
        cptr[i + 1] = cptr[i] + maps
    return in_order


@noref
def fill_tree_arrays(ti, tf, cats, count, ptr, cptr, child, cat, ints, floats, seen):
    """Fill :func:`tree_arrays`' outputs (``ptr``/``cptr`` given): ``ints`` rows left, right,
    feature, n_samples, missing branch; ``floats`` rows threshold, impurity, weight."""
    for i in range(count):
        parent = ti[i, N_PARENT]
        if parent >= 0:
            child[ptr[parent] + ti[i, N_BRANCH]] = i
        floats[1, i] = tf[i, T_IMPURITY]
        floats[2, i] = tf[i, T_WEIGHT]
        ints[3, i] = ti[i, N_NSAMP]
        if ti[i, N_NB] > 0:
            ints[2, i] = ti[i, N_FEATURE]
            floats[0, i] = tf[i, T_THRESHOLD]
            ints[4, i] = ti[i, N_MB]
            seen[i] = ti[i, N_SEEN] != 0
            off = ti[i, N_CATOFF]
            for j in range(cptr[i + 1] - cptr[i]):
                cat[cptr[i] + j] = cats[off + j]
        else:
            ints[2, i] = TREE_UNDEFINED
            floats[0, i] = TREE_UNDEFINED
            ints[4, i] = TREE_UNDEFINED
            seen[i] = False
    for i in range(count):  # every child is placed now
        if ptr[i + 1] > ptr[i]:
            ints[0, i] = child[ptr[i]]
            ints[1, i] = child[ptr[i + 1] - 1]
        else:
            ints[0, i] = TREE_LEAF
            ints[1, i] = TREE_LEAF


@njit
def grow_vector(a, needed):
    """``a`` with at least ``needed`` entries (doubled when full)."""
    cap = a.shape[0]
    if needed <= cap:
        return a
    new = np.empty(max(2 * cap, needed), dtype=a.dtype)
    for i in range(cap):
        new[i] = a[i]
    return new


@tiny
def new_node(ti, tf, gs, parent, branch, depth, lo, hi, nconst):
    """Append a node to the table (which must have room: :func:`ensure_rows`); returns it."""
    node = gs[G_NODES]
    gs[G_NODES] = node + 1
    make_leaf(ti, tf, node)
    ti[node, N_PARENT] = parent
    ti[node, N_BRANCH] = branch
    ti[node, N_NSAMP] = hi - lo
    ti[node, N_LO] = lo
    ti[node, N_HI] = hi
    ti[node, N_DEPTH] = depth
    ti[node, N_NCONST] = nconst
    ti[node, N_KIND] = 0
    ti[node, N_KIDS] = -1
    ti[node, N_SLOT] = -1
    ti[node, N_MONO] = 0
    tf[node, T_IMPURITY] = 0.0
    tf[node, T_WEIGHT] = 0.0
    tf[node, T_IMPROVEMENT] = -np.inf
    inherit_bounds(ti, tf, node, parent, branch)
    if depth > gs[G_DEPTH]:
        gs[G_DEPTH] = depth
    return node


@tiny
def inherit_bounds(ti, tf, node, parent, branch):
    """The node's bounds under monotonic constraints (scikit-learn's rule): the parent's,
    and where the parent split on a constrained feature the middle of its children's values
    (``T_MIDDLE``) as the upper bound of the side that must stay lower and the lower bound
    of the other. Without constraints every bound stays infinite."""
    lower = -np.inf
    upper = np.inf
    if parent >= 0:
        lower = tf[parent, T_LOWER]
        upper = tf[parent, T_UPPER]
        c = ti[parent, N_MONO]
        if c != 0:
            mid = tf[parent, T_MIDDLE]
            if (c > 0) == (branch == 0):
                upper = mid
            else:
                lower = mid
    tf[node, T_LOWER] = lower
    tf[node, T_UPPER] = upper


@tiny
def split_bounds(ti, tf, node, cst, left0, wl, total0, wn):
    """Record that the node's split is on a feature with monotonic constraint ``cst`` (-1, 0,
    1; for classifiers on the first class's fraction) and the middle of its two children's
    values, ``left0 / wl`` and ``(total0 - left0) / (wn - wl)`` (class-0 weight or weighted
    target sums), as scikit-learn's ``middle_value``."""
    ti[node, N_MONO] = cst
    if cst != 0:
        wr = wn - wl
        tf[node, T_MIDDLE] = left0 / (2.0 * wl) + (total0 - left0) / (2.0 * wr)


@tiny
def open_bounds(bounds, tf, node):
    """The node's bounds into the search's scratch ``bounds`` (``work.bounds``)."""
    bounds[0] = tf[node, T_LOWER]
    bounds[1] = tf[node, T_UPPER]


@noref
def store_values(tf, tv, node, nstats, wn, crit):
    """A node's impurity and value (class fractions, or the mean) from its statistics and
    weight, written to the table with the weight; returns the impurity (not for absolute
    error, whose value is a median)."""
    imp = node_impurity(nstats, wn, crit)
    if crit == SQUARED_ERROR or crit == SDR:
        tv[node, 0] = nstats[0] / wn
    else:
        for k in range(nstats.shape[0]):
            tv[node, k] = nstats[k] / wn
    # monotonic constraints: the value clipped to the node's bounds (for two classes the
    # first class's fraction, the other its complement), as scikit-learn clips it
    v = tv[node, 0]
    lower = tf[node, T_LOWER]
    upper = tf[node, T_UPPER]
    if v < lower or v > upper:
        v = min(max(v, lower), upper)
        tv[node, 0] = v
    if (tv.shape[1] == 2 and not (crit == SQUARED_ERROR or crit == SDR)
            and (lower != -np.inf or upper != np.inf)):
        # the complement of every bounded node, clipped or not: a count's fraction beside a
        # clipped node's complement broke the order by a rounding step (1 - 0.8 against 0.2)
        tv[node, 1] = 1.0 - v
    tf[node, T_IMPURITY] = imp
    tf[node, T_WEIGHT] = wn
    return imp


@tiny
def store_split(ti, tf, node, f, k, kind, mb, seen, thr, improvement):
    """Store a node's split: feature ``f``, ``k`` branches of a ``kind`` (``KIND_*`` of
    :mod:`.levels`), the branch of missing values ``mb`` (-1: none), whether any were met at
    the node, the threshold of a numeric split and the improvement."""
    ti[node, N_FEATURE] = f
    ti[node, N_NB] = k
    ti[node, N_MB] = mb
    ti[node, N_KIND] = kind
    ti[node, N_SEEN] = 1 if seen else 0
    tf[node, T_THRESHOLD] = thr
    tf[node, T_IMPROVEMENT] = improvement


@tiny
def make_leaf(ti, tf, node):
    """Forget a node's split (it stays a leaf)."""
    ti[node, N_FEATURE] = TREE_UNDEFINED
    ti[node, N_NB] = 0
    ti[node, N_MB] = TREE_UNDEFINED
    ti[node, N_CATOFF] = -1
    ti[node, N_CATLEN] = 0
    ti[node, N_SEEN] = 0
    tf[node, T_THRESHOLD] = TREE_UNDEFINED


@tiny
def may_split(n, depth, params):
    """The rules of :func:`splittable` that a node's row count and depth alone decide:
    below ``max_depth``, at least ``min_samples_split`` and ``2 * min_samples_leaf`` rows.
    Written once for every layout and Dask's level loop, which ask it of a child before
    searching it (a child that fails it is a leaf whatever its rows)."""
    return (depth < params.max_depth and n >= params.min_split
            and n >= 2 * params.min_leaf)


@tiny
def splittable(n, wn, imp, depth, params, eps):
    """scikit-learn's stopping rules: a node is a leaf at ``max_depth``, with fewer than
    ``min_samples_split`` (or ``2 * min_samples_leaf``) rows, less than twice the minimum leaf
    weight, or an impurity at most ``eps``; and M5's: an impurity below ``params.min_impurity``
    (for regression the variance, so M5's "standard deviation under 5% of the root's" is
    ``0.05**2`` times the root's variance).

    With C4.5's fractional cases also below twice ``min_samples_leaf`` in weight: every C4.5
    test needs two branches of at least that weight (Quinlan's MINOBJS), so no split exists,
    and the rows counted include the fractional copies of missing values, which a split on a
    many-level feature hands to each of its branches (at 100k rows and a 1,000-level column,
    146k such children were searched in vain: 10.8M entries)."""
    if params.mode == lvl.MISSING_C45 and \
            wn < 2.0 * params.min_leaf * lvl.C45_SLACK * (1.0 - 1e-12):
        return False
    return may_split(n, depth, params) and not (
        wn < 2.0 * params.min_weight_leaf or imp <= eps or imp < params.min_impurity)


@tiny
def push(stack, gs, lo, hi, depth, parent, branch, nconst, arena, slot):
    """Push a pending node on the depth-first stack (which must have room)."""
    top = gs[G_TOP]
    stack[top, S_LO] = lo
    stack[top, S_HI] = hi
    stack[top, S_DEPTH] = depth
    stack[top, S_PARENT] = parent
    stack[top, S_BRANCH] = branch
    stack[top, S_NCONST] = nconst
    stack[top, S_ARENA] = arena
    stack[top, S_SLOT] = slot
    gs[G_TOP] = top + 1


@tiny
def lacks_room(ti, cats, stack, gs, codes_max, kmax):
    """Whether the node table, the level-map store or the depth-first stack must grow before
    the next node (one node, one level map of ``codes_max`` codes, ``kmax`` children)."""
    return (gs[G_NODES] + 1 > ti.shape[0] or gs[G_CATS] + codes_max > cats.shape[0]
            or gs[G_TOP] + kmax > stack.shape[0])


@tiny
def pop_node(ti, tf, gs, stack, p):
    """Take the top of the depth-first stack as a new node; returns ``(node, lo, hi, depth,
    nconst, arena_top, slot)`` and charges its work (rows x ``p`` features) to the chunk."""
    top = gs[G_TOP] - 1
    gs[G_TOP] = top
    lo = stack[top, S_LO]
    hi = stack[top, S_HI]
    depth = stack[top, S_DEPTH]
    nconst = stack[top, S_NCONST]
    node = new_node(ti, tf, gs, stack[top, S_PARENT], stack[top, S_BRANCH], depth, lo, hi,
                    nconst)
    gs[G_BUDGET] -= (hi - lo) * p + 64
    return node, lo, hi, depth, nconst, stack[top, S_ARENA], stack[top, S_SLOT]


@tiny
def pend_node(gs, node, lo, hi, depth, arena_top, slot, n_total):
    """Leave a half-done node for the caller of a depth-first runner (``G_P*``)."""
    gs[G_PNODE] = node
    gs[G_PLO] = lo
    gs[G_PHI] = hi
    gs[G_PDEPTH] = depth
    gs[G_PARENA] = arena_top
    gs[G_PSLOT] = slot
    gs[G_PTOTAL] = n_total


@noref
def store_cats(cats, gs, ti, node, fmap, n_codes, lut):
    """Keep a categorical node's level -> branch map (``cats`` must have room); ``lut`` maps
    level codes to the codes ``fmap`` is indexed by (identity when empty)."""
    off = gs[G_CATS]
    if lut.shape[0] == 0:
        for c in range(n_codes):
            cats[off + c] = fmap[c]
    else:
        for c in range(n_codes):
            cats[off + c] = fmap[lut[c]]
    ti[node, N_CATOFF] = off
    ti[node, N_CATLEN] = n_codes
    gs[G_CATS] = off + n_codes


@noref
def _sift_up(heap, hole, top, node, key):
    """libstdc++ ``__push_heap``: move ``node`` up from ``hole`` towards ``top``."""
    parent = (hole - 1) // 2
    while hole > top and key[heap[parent]] < key[node]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = node


@noref
def heap_push(heap, size, key, node):
    """``push_back`` + ``std::push_heap`` on a max-heap of node ids ordered by ``key[node]``."""
    heap[size] = node
    _sift_up(heap, size, np.int64(0), node, key)
    return size + 1


@noref
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
        _sift_up(heap, hole, np.int64(0), value, key)
    return top, n
