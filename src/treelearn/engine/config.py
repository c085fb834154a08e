"""One place for Numba options and the dtypes the kernels are compiled for.

Every kernel is compiled for exactly one signature (float32 feature values, float64 targets and
weights, int32 sample indices, int64 node indices) so that the on-disk cache is small and the first
fit in a fresh process only loads, never compiles.

Caveat for developers: Numba's cache checks only the source file of the cached function itself,
not of the kernels it calls, so after editing a kernel delete ``src/treelearn/**/__pycache__/*.nb?``
(installs are unaffected: installing rewrites every file).

Setting the environment variable ``NUMBA_DISABLE_JIT=1`` turns every kernel into plain Python;
the test suite uses that mode to measure coverage of the kernel lines.
"""

from __future__ import annotations

import os

import numba
import numpy as np

from .linking import DRIVERS, register


def _kernel(**options):
    """A decorator compiling a function with ``options`` and registering the kernel (its
    cached callers find it by name: :mod:`treelearn.engine.linking`)."""
    def decorate(function=None, **more):
        # ``@njit`` or ``@njit(inline="always", ...)``: more options for one kernel
        if function is None:
            return lambda f: register(numba.njit(f, **(options | more)))
        return register(numba.njit(function, **(options | more)))

    return decorate


njit = _kernel(cache=True, nogil=True)
"""Serial kernels.

A kernel calling another passes integer and boolean constants as ``np.int64(0)`` or
``np.bool_(False)`` (or a variable ``z = np.int64(0)``), never as literals: Numba compiles
the callee, and everything it calls with that argument, once more for each literal value
(``Literal[int](0)`` is a type of its own). Before this rule 260 of the 718 compiled
versions the test suite left in the cache were such duplicates, most of them the root node's
``lo = 0, depth = 0, slot = -1`` travelling down the node loops."""

pjit = _kernel(cache=True, nogil=True, parallel=True)
"""Kernels with a ``prange`` loop over features, used only for large nodes of large data: their
compilation (several seconds) happens only in fits that can use them."""

prange = numba.prange
get_thread_id = numba.get_thread_id
get_num_threads = numba.get_num_threads

#: A node is searched and partitioned on all threads when (samples x features) reaches this;
#: below it waking the thread pool (~4 us) costs more than it saves.
PARALLEL_MIN_WORK = 20_000

#: Feature values are stored as float32, exactly as scikit-learn's trees do, so that thresholds
#: (midpoints computed in float64 from float32 neighbours) are identical to scikit-learn's.
X_DTYPE = np.float32
#: Node indices and counts.
NODE_DTYPE = np.int64

#: Two feature values closer than this are treated as equal (scikit-learn's FEATURE_THRESHOLD);
#: the comparison is done in float32 like scikit-learn's.
FEATURE_THRESHOLD = np.float32(1e-7)
#: Impurities at or below this are treated as pure; improvements within it of the minimum as equal.
EPSILON = float(np.finfo(np.float64).eps)

noref = _kernel(cache=True, nogil=True, _nrt=False)
"""Kernels that allocate nothing, compiled without reference counting of their array
arguments and views. A kernel compiled with reference counting increments every array it is
given (members of argument tuples included) on entry and decrements it on exit, so a node
loop that called such a kernel per node spent a third of a fully grown tree's fit on atomic
increments (measured with ``perf``); the per-node kernels are therefore ``noref``, and the
few that allocate or start threads (growing tables, the threaded kernels of large nodes)
are called only when needed.

How Numba applies the flag, and the rules that follow: a callee is compiled without
reference counting when its caller is (the flag propagates down, whatever the callee's own
decorator says), so everything a ``noref`` kernel calls must allocate nothing; Numba keeps
one compiled version per argument types whatever the caller's flags (and one cache entry per
Python function), so a kernel that returns arrays (or tuples holding arrays) is either
called only from ``noref`` kernels or only from counting ones, or is inlined (``tiny``,
:func:`treelearn.engine.layouts.bins._side`); and one Python function is never compiled with
both decorators. ``TREELEARN_DEBUG_NRT=1`` compiles every kernel with reference counting
(to tell a counting bug from another)."""
tiny = _kernel(cache=True, nogil=True, _nrt=False, inline="always")
"""A few-line ``noref`` helper inlined into its callers' Numba IR: it is then typed with each
caller's argument types instead of being compiled once per distinct literal argument (Numba
specialises a callee on literal integers and booleans, which multiplied compile time)."""
# Where a first fit's compile time goes (measured 2026-11-26 with Numba 0.68 and its
# ``numba:compile`` events, empty cache, one DecisionTreeClassifier fit on 5,000 x 10 numbers,
# 118 s of compilation): Numba compiles every kernel into an LLVM module of its own and links
# into it the optimised code of every kernel it calls, then optimises and assembles the whole
# again (so LLVM may inline across kernels). A chain of kernels each called by the one above
# therefore compiles the code at its bottom once per level: the exact grower's chain
# (grow_depth_first > run_depth_first > open_and_search > search_node >
# levels.search_summary > ...) cost 6-13 s per level. Inlining the single-caller levels into
# their callers at Numba's IR level (``inline="always"``, as ``tiny`` does for few-line
# helpers) is not the cure: with search_node, open_and_search, search_numeric and six category
# kernels inlined, the same fit compiled for 455 s (Numba's typing of the large inlined body
# dominated). The levers left are fewer levels in the chain by construction (one builder) and
# not compiling the category code a numeric fit never runs (done for the exact and histogram
# growers: the last member of ``cfg``, ``fit.category_search``; first hist fit 151 s -> 122 s).
# Measured and not taken: inlining only ``open_and_search`` (exact fit 68 s -> 71 s, noise);
# inlining the hist grower's ``_process`` (Numba cannot type it inlined); compiling the
# ``selection="test"`` p-values only when asked (2.8 s of kernels, 79.0 s -> 78.4 s in all,
# below the machine's 10-20% spread between runs).
# Not compiling what a plain fit never runs (2026-11-27, same fit, ``numba:compile`` events):
# ``fit.fit_extras`` is None unless C4.5's missing-value scoring, feature costs, C4.5's rules
# or the statistical selection are asked for, and the exact, ranked and histogram kernels
# branch on ``extras is not None``. Numba prunes a branch on ``arg is None`` before typing
# when the argument's type is NoneType, so a plain fit compiles none of C4.5's scoring, the
# p-values, the fractional cases or M5's routing (a runtime flag would not do: both sides of
# an ``if`` are typed and compiled). That took the kernels a first numeric fit compiles from
# 68 to 49 and its compile seconds from ~58 to ~45; then the few-line node-table helpers
# (``nodes.new_node``, ``pop_node``, ``push``, ...) and ``open_and_search`` inlined as
# ``tiny`` (one level less in the chain that relinks the search): 31 kernels, ~35 s. A first
# hist fit: 97 kernels, 85 s of compilation in its grower, to 71 and 65 s. Inlining the random
# draw's helpers as well measured no gain (34.5 s against 35.3 s, within the noise: Numba's
# IR inlining retypes a nested helper at each call site), so they stay separate kernels.
# Both cores (2026-11-27, empty cache, whole process, one run each): Numba compiles one kernel
# at a time in a process, and a grower types its callees in source order, so the kernels it
# calls after the node search (split, children, table growth; the histogram grower's threaded
# steps in fits of 80,000 row-features or more) waited for the search's long chain while the
# second core idled. ``treelearn.engine.compiling.signatures_beside`` compiles them in a background
# process from signatures derived from the fit's arguments, and the fit loads them from the
# cache: first numeric fit 17.8 -> 12.7 s, hist 33.3 -> 29.5 s, hist on 100k rows
# 53.2 -> 39.1 s. The search chain itself cannot be split so: the fit needs it first.
# The drivers at a low LLVM optimisation level (2026-11-27, same fit, empty cache,
# ``numba:compile`` events and Numba's LLVM pass timings): of the exact grower's 20.4-21.0 s
# of compilation, 8.5 s were LLVM's optimisation and code generation (``NUMBA_OPT=0`` for
# everything: 11.2 s), most of it in the top levels of the chain, which optimise again, at
# -O3, the code of every kernel below them (grow_depth_first alone: 3.6 s). Those levels
# only orchestrate: they run once per node or per chunk and call the kernels that do the
# work, already optimised in their own modules. ``driver`` marks them, and
# :func:`.linking.driver_level` has Numba optimise their modules at -O1
# (``TREELEARN_DRIVER_OPT``; 3 is Numba's own): exact fit 15.7 s of compilation (-O0:
# 15.0-16.1 s), first hist fit 53.5 -> 44.9 s at -O0 (this machine's spread between runs
# is 10-25%). -O0 cost warm fits 10-25% where the per-feature step is small (histogram
# fits of fully grown trees: flights 0.096 -> 0.116 s, adult 0.0104 -> 0.0129 s); -O1
# matched -O3 within the noise (0.0945 s, 0.0106 s). Whole first-run processes against the
# commit before (``bench_coldstart``, one run each; see the README): table 0.80-0.87x, hist
# 0.73-0.81x, hist on 100k rows 0.80-0.83x, numeric 0.85-1.04x, forest unchanged (the
# ranked grower's search and partition hold row loops, so only its two loops are drivers;
# marking them as well measured no first-run gain and 0-14% slower forests).
# Chain kernels called, not copied (2026-12-02, opt-in ``TREELEARN_LINK=called``): without
# the relinking above (each level of a chain optimising and assembling again every kernel
# beneath it) first numeric fit 12.4 -> 9.5 s, table 17.3 -> 9.6 s, hist 17.1 -> 12.9 s,
# demo 27.0 -> 18.4 s, but warm fits of many small nodes 4-55% slower: the calls per node
# pass the layouts' tuples of arrays that inlined code did not (:mod:`.linking`).
# Copies LLVM may inline but never assembles (2026-12-04, the default ``shared``): the
# linked-in copies made ``available_externally``, so inlining is as before and a kept call
# goes to the callee's one compiled copy; the same calls are kept as with copies, and warm
# fits measured the same within the noise. First runs against copies, same run: numeric
# 0.94, forest 0.69, table 0.45, hist 0.81, demo 0.75 (:mod:`.linking` has the table).


def driver(function):
    """Mark a kernel (beneath its ``@njit``/``@noref``) as a driver: a node loop or a
    per-node step whose time is in the kernels it calls, compiled at a low LLVM
    optimisation level (see the notes above; :func:`treelearn.engine.linking.driver_level`,
    applied by the wrapper of Numba's module optimisation in :mod:`.linking`). It must hold
    no loop over a node's rows."""
    prefix = "_ZN" + "".join(f"{len(part)}{part}" for part in
                             f"{function.__module__}.{function.__qualname__}".split("."))
    DRIVERS.setdefault(function.__qualname__, set()).add(prefix)
    return function


def inlined(function):
    """Mark a kernel (beneath its ``@noref``) for LLVM to inline into every caller
    (``alwaysinline``, applied by :mod:`.linking` where its copies are linked in), unlike
    ``tiny``, which inlines at Numba's level and types the body anew at every call site.
    Where llvmlite cannot set the attribute (0.42, Numba 0.59's:
    :func:`.linking.can_mark_inlined`) LLVM inlines as it sees fit: the same trees, slower
    forests."""
    from .linking import INLINED

    INLINED.add("_ZN" + "".join(f"{len(part)}{part}" for part in
                                f"{function.__module__}.{function.__qualname__}".split(".")))
    return function


if os.environ.get("TREELEARN_DEBUG_NRT") == "1":  # pragma: no cover - a debugging switch
    noref = njit
    tiny = _kernel(cache=True, nogil=True, inline="always")


def if_present(kernel):
    """``kernel(a, cap)`` for an array ``a``, None for None, typed per argument in compiled
    callers: an absent array stays ``None`` (not Optional), so that the caller keeps one
    signature (``None if a is None else ...`` in a kernel would make the result Optional and
    compile every kernel it reaches a second time). Plain Python with the JIT off."""
    from numba.core import types
    from numba.extending import overload

    def plain(a, cap):
        return None if a is None else kernel(a, cap)

    @overload(plain)
    def _typed(a, cap):
        if isinstance(a, types.NoneType):
            return lambda a, cap: None
        return lambda a, cap: kernel(a, cap)

    plain.__name__ = plain.__qualname__ = f"{kernel.__name__}_if_present"
    return plain
