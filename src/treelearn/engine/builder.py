"""The node loop, once: depth-first and best-first growth for every data layout.

A data layout (:mod:`.layouts`: presorted lists, bins, the shared ranking, sparse rows) is a
named tuple of everything its node steps read, made by :func:`layout` from those steps. The
loops here are written once, against the steps only; :func:`layout` compiles a copy of
them per layout whose globals are the layout's steps, as a C++ template is instantiated per
type, so the compiled loop calls its layout's steps directly and the compiled chain is as
deep as when each layout had loops of its own. What a layout supplies (:data:`STEPS`), and
nothing else:

* ``process``: open a node, search it, split it, on one thread and allocating nothing
  (the depth-first runner is compiled without reference counting); the children's row
  ranges in ``L.kid_lo``/``L.kid_hi``;
* ``children``: what the children carry with them (the histogram grower's histograms in
  ``L.kid_slot``), on one thread; ``children_any``: the same where threads are allowed;
* ``hand_over``: whether the node on top of the stack must be processed by the counting
  driver instead (a large node's threads; a layout that allocates per node);
* ``resume``: finish in the counting driver what the runner handed back (``RUN_LARGE``,
  ``RUN_ARENA``: a fractional split that needs larger buffers);
* ``step``: open, search and split a node of best-first growth (it may allocate);
* ``keep`` / ``release``: a node's histogram slot kept for its children, or given back.

The shared part: the frontier (stack or heap), the node table and level-map store and their
growth, the stopping rule of ``max_leaf_nodes``, the level maps of categorical splits, the
chunk of work per call (``params.chunk``, charged ``L.charge`` per row of a node), and the
protocol between the runner and its driver (``RUN_*`` of :mod:`.nodes`). The chunked driver in
Python (Ctrl-C between chunks) is :func:`treelearn.engine.fit.drive`.

Why copies, not function arguments or overloads (measured 2026-11-28, empty cache): Numba's
cache keeps no kernel that takes a function, and a loop over a tuple of alternatives would
compile every layout into every fit. Overloads picked by the layout's class worked, but Numba
compiles an inlined overload's implementation in full before it inlines it: one more level
of the chain re-optimising the whole search below it, and every first fit took 3-5 s longer
(numeric 11.6 -> 14.9 s, table 18.7 -> 23.5 s). A copy of a function shares its code object,
so Numba caches it beside this file under the layout's name, and nothing is compiled twice.

Why the depth-first runner is not a :func:`~treelearn.engine.config.driver` (not compiled at
the drivers' low optimisation level, measured 2026-11-28): at ``-O1`` the runner that reads a
layout's fields ran as fast as before on one thread, but two trees grown side by side each
took 1.7 times their CPU time (a histogram forest of 100 trees on adult, two threads: 3.4 s
against 1.9 s before the builder; ``perf`` put half of it in the runner's own code), which
the runners that took arrays did not do. At full optimisation the forest takes 2.0 s, and
first fits on an empty cache are unchanged within their noise (numeric 14.1 -> 13.6 s,
forest 13.1 -> 13.9 s, hist 21.5 -> 21.8 s, best of two). The counting driver and the
best-first loops stay drivers (their time is in the kernels they call).

How a layout's per-node step must be written: without copies by value (the forest-speed
issue, measured 2026-12-05). Numba passes a tuple or record of arrays to a kernel it does not
inline as a flat struct of 7-9 words per array, pushed on the stack at every call: the
ranked layout's runner pushed 336 words per node into ``process_ranked``, which pushed 301
into ``search_ranked``, and ``perf`` found 18% of a fully grown forest's samples on those
pushes. A step called once per node with the layout's tuples is therefore either ``tiny``
(few lines, inlined at Numba's level) or marked
:func:`~treelearn.engine.config.inlined` (LLVM's ``alwaysinline``: one body in the runner,
no call), and a kernel called per drawn feature gets only the arrays and scalars it reads.
Marking the ranked layout's chain (``process_ranked``, ``search_ranked``, ``_gather``,
``sort_by_rank``, ``samples.two_way_improvement``): a 100-tree forest on ggplot2's diamonds
(40,000 x 9, ``max_features=1/3``) 4.35 -> 3.78 s at one thread, 2.54 -> 1.97 s at two.
Measured and not kept: also inlining ``exact.search_numeric`` and ``radix_pass`` (3.79 s, no
change), and the histogram layout's ``_process``, ``open_rows``, ``split_rows`` or its
``search_node_hist`` (its forest 5.47 -> 5.29-5.70 s at one thread: noise; its drivers are
optimised at ``-O1``, where the calls were never the cost).
"""

from __future__ import annotations

import inspect
import sys
from collections import namedtuple
from types import FunctionType

import numpy as np

from . import levels as lvl
from . import nodes as nd
from .config import driver, njit, noref, tiny
from .nodes import (
    grow_rows,
    grow_vector,
    heap_pop,
    heap_push,
    lacks_room,
    make_leaf,
    new_node,
    pend_node,
    pop_node,
    push,
    store_cats,
)

#: What a split returns when the arena of fractional cases must grow first.
NEED_ARENA = -1

#: The fields every layout has, which the loops read: the parameters, the children's row
#: ranges and histogram slots, the search's scratch (``work.best_map``: a split's level map), the
#: level counts and level tables of categorical features, and the work charged per row.
COMMON_FIELDS = ("params", "kid_lo", "kid_hi", "kid_slot", "work", "n_levels", "luts",
                 "lutoff", "charge")


def layout(name: str, fields: tuple[str, ...], **steps) -> type:
    """A layout class: a named tuple of :data:`COMMON_FIELDS` and ``fields``, with the
    builder's loops compiled for its ``steps`` (``process=...``, see :data:`STEPS`) as class
    attributes (``grow_depth_first``, ``grow_best_first``; call them on the class). A layout
    that grows depth-first only gives None for ``step``, ``keep`` and ``release``.

    Each loop is a copy of the function written here (its code object, so Numba caches it
    beside this file, under the layout's name) whose globals hold the layout's steps: the
    compiled loop calls them directly, as if written for the layout (see the module notes)."""
    check_steps(f"layout {name}", steps, STEPS)
    # the caller's module, where pickle (the background compiler's signatures) finds it
    module = sys._getframe(1).f_globals["__name__"]
    base = namedtuple(f"{name}Fields", COMMON_FIELDS + tuple(fields), module=module)
    cls = type(name, (base,), {"__slots__": (), "__module__": module})
    space = globals() | steps
    # a node's end, twice: in the runner (children on one thread) and in the driver
    space["finish"] = tiny(_copy(finish, space, name))
    space["finish_any"] = tiny(_copy(finish, space | {"children": steps["children_any"]},
                                     f"any_{name}"))
    for loop, (jit, low) in _LOOPS.items():
        copy = _copy(globals()[loop], space, name)
        space[loop] = jit(driver(copy) if low else copy)
        setattr(cls, loop, space[loop])
    return cls


def _copy(plain, space: dict, name: str):
    """A copy of ``plain`` for the layout ``name``, in this module."""
    return copy_function(plain, space, f"{plain.__name__}_{name}", __name__)


def copy_function(plain, space: dict, name: str, module: str):
    """A copy of the function ``plain`` whose globals are ``space``, named ``name`` (its
    qualified name too) in ``module``. Its code object is shared: Numba caches the copy
    beside ``plain``'s file under ``name``, apart from every other copy."""
    copy = FunctionType(plain.__code__, space, name, plain.__defaults__)
    copy.__qualname__ = name
    copy.__module__ = module
    copy.__doc__ = plain.__doc__
    return copy


def check_steps(what: str, steps: dict, names) -> None:
    """Raise TypeError naming the steps of ``names`` that ``steps`` lacks; where ``names`` is
    a dict of stubs (:data:`STEPS`), also a step whose parameters are not its stub's (a step
    may be None where the stub says so: a layout that grows depth-first only)."""
    missing = set(names) - set(steps)
    if missing:
        raise TypeError(f"{what} lacks the steps {sorted(missing)}")
    if not isinstance(names, dict):
        return
    for name, stub in names.items():
        given = steps[name]
        if given is None:
            if name not in OPTIONAL_STEPS:
                raise TypeError(f"{what}: the step {name!r} is required (not None)")
            continue
        want = list(inspect.signature(stub).parameters)
        got = list(inspect.signature(getattr(given, "py_func", given)).parameters)
        if got != want:
            raise TypeError(f"{what}: the step {name!r} takes {got}, not the builder's {want} "
                            f"(see treelearn.engine.builder.{name})")


def unbound(*args):
    raise TypeError("a step is called outside its layout (see builder.layout and "
                    "search.node_search, which bind the steps in each copy)")


_UNBOUND = ("a layout's step is called outside its layout (builder.layout binds the steps in "
            "each copy of the loops)")


# -- the steps a layout supplies ------------------------------------------------------------------
# Written once, here, with the parameters the loops pass them: the loops call these names,
# layout() binds each to the layout's own step in the loop's copy and checks, when the layout
# class is made (at import), that the layout's step takes exactly these parameters. A
# reader's go-to-definition from a loop lands on the stub, which says what the step does.

def process(L, data, ti, tf, tv, gs, node, lo, hi, depth, nconst, arena_top, slot):
    """Open node ``node`` (rows ``lo:hi``), search it and split it, on one thread and
    allocating nothing (the depth-first runner is compiled without reference counting); the
    children's row ranges in ``L.kid_lo``/``L.kid_hi``. Returns ``(k, n_total, arena_top,
    slot)``: the number of children (0: a leaf; :data:`NEED_ARENA`: a fractional split needs
    larger buffers, handed to :func:`resume`), the node's entries with fractional ones, the
    arena's top after the children, the node's histogram slot."""
    raise TypeError(_UNBOUND)


def children(L, data, ti, node, k, depth, slot):
    """What the ``k`` children of ``node`` carry with them (the histogram layout's
    histograms, in ``L.kid_slot``), on one thread."""
    raise TypeError(_UNBOUND)


def children_any(L, data, ti, node, k, depth, slot):
    """:func:`children` where the threads may be used (the counting driver)."""
    raise TypeError(_UNBOUND)


def hand_over(L, stack, gs):
    """Whether the node on top of the stack must be processed by the counting driver (a
    large node's threads; a layout whose search allocates)."""
    raise TypeError(_UNBOUND)


def resume(L, data, ti, tf, tv, gs, stack, status):
    """Finish in the counting driver what the runner handed back (``status``: ``RUN_LARGE``,
    ``RUN_ARENA``). Returns ``(data, node, k, depth, n_total, arena_top, slot)``, as
    :func:`process` leaves them for the node's end."""
    raise TypeError(_UNBOUND)


def step(L, data, ti, tf, tv, gs, node, lo, hi, depth, slot, arena_top):
    """Open, search and split a node of best-first growth (it may allocate). Returns
    ``(data, k, arena_top, slot)``."""
    raise TypeError(_UNBOUND)


def keep(L, slot):
    """The histogram slot a best-first node keeps for its children (-1: none)."""
    raise TypeError(_UNBOUND)


def release(L, slot):
    """Give a best-first node's histogram slot back."""
    raise TypeError(_UNBOUND)


# bound in each copy by layout(): a node's end with children_any
finish_any = unbound

#: The steps a layout supplies, by name: the stubs above, whose parameters each layout's step
#: must take (checked by :func:`layout`).
STEPS = {f.__name__: f for f in (process, children, children_any, hand_over, resume, step,
                                 keep, release)}

#: The steps a layout that grows depth-first only gives as None.
OPTIONAL_STEPS = ("step", "keep", "release")


# -- steps shared by layouts --------------------------------------------------------------------

@tiny
def no_slots(L, data, ti, node, k, depth, slot):
    """``children`` of a layout whose children carry nothing: no histogram slots."""
    for b in range(k):
        L.kid_slot[b] = -1


@tiny
def never_hands_over(L, stack, gs):
    """``hand_over`` of a layout that processes every node in the runner."""
    return False


@tiny
def no_slot(L, slot):
    """``keep`` of a layout without histogram slots."""
    return np.int64(-1)


@tiny
def nothing_to_release(L, slot):
    """``release`` of a layout without histogram slots."""
    return None


@tiny
def nothing_to_resume(L, data, ti, tf, tv, gs, stack, status):
    """``resume`` of a layout whose runner hands nothing back (never called)."""
    z = np.int64(0)
    return data, z, z, z, z, z, z - 1


@tiny
def handed_over(L, data, ti, tf, tv, gs, node, lo, hi, depth, nconst, arena_top, slot):
    """``process`` of a layout that hands every node over to the counting driver (its
    search allocates): never called, and compiles nothing of the layout's into the runner."""
    return np.int64(0), nconst, arena_top, slot


@tiny
def always(L, stack, gs):
    """``hand_over`` of a layout whose every node is processed by the counting driver."""
    return True


@tiny
def two_kids(L, lo, mid, hi):
    """The children's ranges of a two-way split at ``mid`` (``mid < 0``: a leaf); returns
    the number of branches."""
    if mid < 0:
        return np.int64(0)
    L.kid_lo[0] = lo
    L.kid_hi[0] = mid
    L.kid_lo[1] = mid
    L.kid_hi[1] = hi
    return np.int64(2)


# -- the tables -----------------------------------------------------------------------------------

@noref
def max_levels(n_levels):
    """The most levels of any feature (at least 1): the longest level map a split stores."""
    m = 1
    for f in range(n_levels.shape[0]):
        m = max(m, n_levels[f])
    return m


@njit
def room(ti, tf, tv, cats, gs, extra_nodes, n_codes_max):
    """The node table and level-map store with room for ``extra_nodes`` more nodes and one
    more level map."""
    need = gs[nd.G_NODES] + extra_nodes
    if need > ti.shape[0]:
        ti = grow_rows(ti, need)
        tf = grow_rows(tf, need)
        tv = grow_rows(tv, need)
    if gs[nd.G_CATS] + n_codes_max > cats.shape[0]:
        cats = grow_vector(cats, gs[nd.G_CATS] + n_codes_max)
    return ti, tf, tv, cats


@njit
def room_depth_first(ti, tf, tv, cats, stack, gs, codes_max, kmax):
    """The node table, level-map store and stack with room for one more node and its
    ``kmax`` children (see :func:`treelearn.engine.nodes.lacks_room`)."""
    if gs[nd.G_NODES] + 1 > ti.shape[0] or gs[nd.G_CATS] + codes_max > cats.shape[0]:
        ti, tf, tv, cats = room(ti, tf, tv, cats, gs, np.int64(1), codes_max)
    if gs[nd.G_TOP] + kmax > stack.shape[0]:
        stack = grow_rows(stack, gs[nd.G_TOP] + kmax)
    return ti, tf, tv, cats, stack


@noref
@driver
def settle(ti, tf, cats, gs, node, k, level_map, n_levels, luts, lutoff):
    """After a node's split into ``k`` branches (0: a leaf): a leaf made, or the level ->
    branch map of a categorical split stored (``cats`` must have room; ``level_map``: the
    split's map, a layout's ``work.best_map``; ``luts[lutoff[f]:lutoff[f + 1]]``: a feature's level
    table)."""
    if k == 0:
        make_leaf(ti, tf, node)
    elif ti[node, nd.N_KIND] != lvl.KIND_NUMERIC:
        f = ti[node, nd.N_FEATURE]
        store_cats(cats, gs, ti, node, level_map, n_levels[f], luts[lutoff[f]:lutoff[f + 1]])


@noref
@driver
def push_kids(stack, gs, node, k, depth, n_total, arena_top, kid_lo, kid_hi, kid_slot):
    """Push a node's ``k`` children (first branch on top) with their histogram slots.
    (Kernels the loops call per node take the layout's fields, not the layout: Numba passes
    a tuple member by member, some two hundred words for a layout.)"""
    for b in range(k - 1, -1, -1):
        push(stack, gs, kid_lo[b], kid_hi[b], depth + 1, node, b, n_total, arena_top,
             kid_slot[b])


# -- depth-first growth ---------------------------------------------------------------------------

def finish(L, data, ti, tf, cats, stack, gs, node, k, depth, n_total, arena_top, slot):
    """A node's end in depth-first growth: a leaf made or its level map stored, and the
    children's histograms (``children``; the counting driver's copy, ``finish_any``, calls
    ``children_any``) and ranges pushed."""
    settle(ti, tf, cats, gs, node, k, L.work.best_map, L.n_levels, L.luts, L.lutoff)
    if k > 0:
        children(L, data, ti, node, k, depth, slot)
        push_kids(stack, gs, node, k, depth, n_total, arena_top, L.kid_lo, L.kid_hi,
                  L.kid_slot)



def run_depth_first(L, data, ti, tf, tv, cats, stack, gs):
    """The depth-first node loop, compiled without reference counting (a counting loop
    increments and decrements some fifty arrays on every node: a tenth to a third of a fit).
    Returns a ``RUN_*`` code when it must stop: the chunk's work is done, the stack is
    empty, or its caller must act (grow the tables, ``RUN_ROOM``; process the node on top,
    ``RUN_LARGE``; finish a node whose fractional split needs larger buffers, ``RUN_ARENA``,
    the node in ``G_P*``): everything that allocates is the caller's."""
    kmax = L.kid_lo.shape[0]
    codes_max = max_levels(L.n_levels)
    while gs[nd.G_TOP] > 0:
        if gs[nd.G_BUDGET] <= 0:
            return nd.RUN_BUDGET
        if lacks_room(ti, cats, stack, gs, codes_max, kmax):
            return nd.RUN_ROOM
        if hand_over(L, stack, gs):
            return nd.RUN_LARGE
        node, lo, hi, depth, nconst, arena_top, slot = pop_node(ti, tf, gs, stack, L.charge)
        k, n_total, arena_top2, slot = process(L, data, ti, tf, tv, gs, node, lo, hi, depth,
                                                nconst, arena_top, slot)
        if k == NEED_ARENA:
            pend_node(gs, node, lo, hi, depth, arena_top, slot, n_total)
            return nd.RUN_ARENA
        finish(L, data, ti, tf, cats, stack, gs, node, k, depth, n_total, arena_top2, slot)
    return nd.RUN_DONE


def grow_depth_first(L, data, ti, tf, tv, cats, stack, gs):
    """Depth-first growth (preorder numbering), until the stack is empty or the chunk's
    work is done: :func:`run_depth_first`, and what it hands back. Returns the arrays that
    may have been reallocated: ``(data, ti, tf, tv, cats, stack)``."""
    gs[nd.G_BUDGET] = L.params.chunk
    kmax = L.kid_lo.shape[0]
    codes_max = max_levels(L.n_levels)
    while True:
        status = run_depth_first(L, data, ti, tf, tv, cats, stack, gs)
        if status == nd.RUN_DONE or status == nd.RUN_BUDGET:
            break
        if status == nd.RUN_ROOM:
            ti, tf, tv, cats, stack = room_depth_first(ti, tf, tv, cats, stack, gs, codes_max,
                                                       kmax)
            continue
        data, node, k, depth, n_total, arena_top, slot = resume(L, data, ti, tf, tv, gs,
                                                                 stack, status)
        finish_any(L, data, ti, tf, cats, stack, gs, node, k, depth, n_total, arena_top, slot)
    if gs[nd.G_TOP] == 0:
        gs[nd.G_DONE] = 1
    return data, ti, tf, tv, cats, stack


# -- best-first growth ----------------------------------------------------------------------------

def grow_best_first(L, data, ti, tf, tv, cats, kids, heap, gs):
    """Best-first growth up to ``max_leaf_nodes`` leaves (a multiway split adds ``k - 1``),
    until the heap is empty or the chunk's work is done. A node is searched and split when it
    is created (scikit-learn's frontier holds nodes with their best split); its children's
    ranges wait in ``kids`` until it is expanded, and are opened then, in branch order.
    Returns ``(data, ti, tf, tv, cats, kids, heap)``."""
    budget = L.params.chunk
    limit = L.params.max_leaf_nodes
    codes_max = max_levels(L.n_levels)
    if gs[nd.G_NODES] == 0:
        z = np.int64(0)  # not the literal 0: see treelearn.engine.config
        ti, tf, tv, cats = room(ti, tf, tv, cats, gs, z + 1, codes_max)
        node = new_node(ti, tf, gs, z - 1, z, z, z, gs[nd.G_ARENA], z)
        data, cats, kids, heap = open_best_first(L, data, ti, tf, tv, cats, kids, heap, gs,
                                                 node, z, gs[nd.G_ARENA], z, z - 1)
        gs[nd.G_LEAVES] = 1
    while gs[nd.G_HEAP] > 0 and budget > 0:
        node, size = heap_pop(heap, gs[nd.G_HEAP], tf[:, nd.T_IMPROVEMENT])
        gs[nd.G_HEAP] = size
        k = ti[node, nd.N_NB]
        slot = ti[node, nd.N_SLOT]
        ti[node, nd.N_SLOT] = -1
        if k == 0:
            release(L, slot)
            continue
        if gs[nd.G_LEAVES] + k - 1 > limit:
            release(L, slot)
            make_leaf(ti, tf, node)
            continue
        gs[nd.G_LEAVES] += k - 1
        off = ti[node, nd.N_KIDS]
        depth = ti[node, nd.N_DEPTH]
        ti, tf, tv, cats = room(ti, tf, tv, cats, gs, k, codes_max * k)
        for b in range(k):
            L.kid_lo[b] = kids[off + b, 0]
            L.kid_hi[b] = kids[off + b, 1]
        children_any(L, data, ti, node, k, depth, slot)
        for b in range(k):
            # kid_lo/kid_hi are reused by the children's own splits: read from ``kids``
            lo = kids[off + b, 0]
            hi = kids[off + b, 1]
            cslot = L.kid_slot[b]
            budget -= (hi - lo) * L.charge + 64
            child = new_node(ti, tf, gs, node, b, depth + 1, lo, hi, np.int64(0))
            data, cats, kids, heap = open_best_first(L, data, ti, tf, tv, cats, kids, heap, gs,
                                                     child, lo, hi, depth + 1, cslot)
    if gs[nd.G_HEAP] == 0:
        gs[nd.G_DONE] = 1
    return data, ti, tf, tv, cats, kids, heap


def open_best_first(L, data, ti, tf, tv, cats, kids, heap, gs, node, lo, hi, depth, slot):
    """Open, search and split a new node of best-first growth and put it on the heap (leaves
    too, with improvement 0, as scikit-learn's frontier holds them)."""
    data, k, arena_top, slot = step(L, data, ti, tf, tv, gs, node, lo, hi, depth, slot,
                                     gs[nd.G_ARENA])
    gs[nd.G_ARENA] = arena_top
    settle(ti, tf, cats, gs, node, k, L.work.best_map, L.n_levels, L.luts, L.lutoff)
    if k == 0:
        tf[node, nd.T_IMPROVEMENT] = 0.0
    else:
        off = gs[nd.G_KIDS]
        kids = grow_rows(kids, off + k)
        for b in range(k):
            kids[off + b, 0] = L.kid_lo[b]
            kids[off + b, 1] = L.kid_hi[b]
        ti[node, nd.N_KIDS] = off
        gs[nd.G_KIDS] = off + k
        ti[node, nd.N_SLOT] = keep(L, slot)
    heap = grow_vector(heap, gs[nd.G_HEAP] + 1)
    gs[nd.G_HEAP] = heap_push(heap, gs[nd.G_HEAP], tf[:, nd.T_IMPROVEMENT], node)
    return data, cats, kids, heap


#: The loops written above, and how each copy is compiled: ``(decorator, driver)``: the
#: depth-first runner without reference counting (see its notes), the rest with it (they
#: allocate); the runner at full optimisation, the rest as drivers (see the module notes).
_LOOPS = {"run_depth_first": (noref, False), "open_best_first": (njit, True),
          "grow_depth_first": (njit, True), "grow_best_first": (njit, True)}


def later_kernels(values: dict) -> list[tuple]:
    """The builder's kernels that depth-first growth types after a layout's node search (the
    split settled, the children pushed, the tables grown), with the signatures it calls them
    with, given its parameters by name (``values``), for a layout's list of kernels to
    compile beside a fit (:func:`treelearn.engine.compiling.signatures_beside`)."""
    from .._compiling import signature
    from .nodes import SCALAR_TYPES

    values = values | {"level_map": values["L"].work.best_map}
    return [(kernel, signature(kernel, values, SCALAR_TYPES))
            for kernel in (settle, push_kids, room_depth_first)]


def fields(values: dict) -> dict:
    """A grower's parameters by name (``values``, with the layout ``L``) and the layout's
    fields by name."""
    return values | values["L"]._asdict()


__all__ = ["COMMON_FIELDS", "NEED_ARENA", "STEPS", "copy_function", "layout"]
