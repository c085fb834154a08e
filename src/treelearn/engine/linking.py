"""Kernels that call the kernels beneath them instead of carrying copies of them (opt-in:
``TREELEARN_LINK=called``), for processes that compile once and fit little, such as CI jobs
on an empty cache.

Numba links into every compiled kernel a copy of the optimised LLVM module of each kernel it
calls (and so, transitively, of the whole chain beneath it), then optimises and assembles the
result again, so that LLVM may inline across kernels. A node loop six calls above the split
scans therefore optimises and assembles the scans six times, once per level
(:mod:`treelearn.engine.config` has the measurements that found it). With
``TREELEARN_LINK=called`` a kernel that itself calls other treelearn kernels (a *chain*
kernel: a search, a split, a node step) is no longer copied into its callers: they call its
one compiled copy in Numba's code engine, as functions in separate object files call each
other. Leaf kernels (the scans and per-row helpers, which call no treelearn kernel) are still
copied, so the loops over rows keep LLVM's inlining.

Measured (2026-12-02, Numba 0.68, this project's 2-core machine):

==========================================================  ==========  ==========
case (empty cache, fresh process; ``bench_coldstart``)        copies      called
==========================================================  ==========  ==========
``import`` + first numeric ``DecisionTreeClassifier`` fit    12.4 s      9.5 s
first ``RandomForestClassifier`` fit                         11.8 s      8.5 s
first table fit (categories, holes) after a numeric one      17.3 s      9.6 s
first ``splitter="hist"`` fit after a numeric one            17.1 s      12.9 s
``treelearn demo``                                           27.0 s      18.4 s
warm fit, hist, fully grown, diamonds-shaped (best of 5)     0.136 s     0.211 s
warm fit, exact, fully grown, diamonds-shaped                0.107 s     0.120 s
warm forest, hist, adult-shaped, 100 trees, 2 threads        1.57 s      2.05 s
==========================================================  ==========  ==========

A call between kernels passes every array as a struct of 7-9 words, and the node steps take
the layout's tuple of some 30 arrays (300-400 words), so the calls made per node (and per
node and feature) cost what the inlined code did not: 4-55% on warm fits of many small nodes.
Calling only the kernels with short argument lists (at most 64 words; node steps copied)
kept a third of the gain (numeric 12.1 s, hist 18.0 s against 14.2 s and 22.3 s copied, with
the background compiler off) and still cost 10-15% on the hist cases; calling only the
kernels run once per chunk (the depth-first runner, table growth) gained nothing. A first run
is paid once per cache and warm fits every time, so Numba's copies stay the default.

What it takes, since Numba assumes every kernel carries its callees:

- **In a process that compiles**, a chain kernel's library is finalised (added to the engine)
  before its callers, as Numba already does for every library it links; the caller's module
  keeps the declaration Numba wrote for the call, which the engine resolves to that copy.
- **In a process that loads from the cache**, a kernel's cached object refers to the chain
  kernels it calls by symbol, which must be in the engine before the object is loaded, or
  LLVM stops the process. The cached data therefore lists, beside the object code, each
  symbol's kernel (module and qualified name, as registered by the decorators of
  :mod:`treelearn.engine.config`) and argument types; loading it first loads those kernels
  (from the cache, or compiling them). Numba names a compiled function with a counter of its
  process, so a kernel compiled again in another process (the cache entry replaced) has
  another symbol: the caller's entry is then stale, and is compiled anew instead of loaded
  (:class:`StaleCallee`, a cache miss, never a wrong call).

It wraps a code library's object-code serialisation and loading, the cache's
``load_overload`` and a dispatcher's ``add_overload`` (all private to Numba) in every process,
so that a cache filled either way serves both, and a code library's ``finalize`` only when
asked; where Numba's API has moved, nothing is wrapped. Loading one of treelearn's kernels
starts Numba's runtime but skips the refresh of the compiler's registries that Numba's own
loading runs first: a warm process that compiles nothing no longer imports them (the first
fit of a warm process 0.54-0.71 s -> 0.20-0.30 s, 2026-12-03); a compilation still does.
A cache keeps the code it was filled with: clear it after switching to get the other's warm
speed.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

#: Every kernel made by the decorators of :mod:`treelearn.engine.config`, by
#: ``(module, qualified name)``: where a cached caller finds the kernels it calls.
KERNELS: dict[tuple[str, str], Any] = {}

#: The prefix of the symbols Numba gives treelearn's functions (its mangling of the module).
_PREFIX = "_ZN9treelearn"


class StaleCallee(Exception):
    """A cached kernel calls a symbol its callee's current compilation does not define."""


def register(dispatcher):
    """Record a kernel where a cached caller can find it (the decorators call this)."""
    fn = getattr(dispatcher, "py_func", None)
    if fn is not None:
        key = (fn.__module__, fn.__qualname__)
        KERNELS[key] = dispatcher
        try:
            dispatcher._treelearn_key = key
        except AttributeError:  # pragma: no cover - a dispatcher without a __dict__
            pass
    return dispatcher


#: ``{symbol: (symbol, kernel key, argument types)}`` of every registered kernel compiled or
#: loaded in this process.
_ENTRIES: dict[str, tuple] = {}


def _chain(library) -> bool:
    """Whether ``library`` is a registered kernel's that calls other treelearn kernels."""
    return (getattr(library, "_treelearn_entry", None) is not None
            and getattr(library, "_treelearn_calls", False))


def _declared(library) -> tuple:
    """The treelearn functions ``library``'s module calls in the engine: ``(symbol, kernel
    key, argument types)`` each (key and types None for a symbol of no registered kernel,
    which a later process cannot load: its cached caller is then compiled anew)."""
    out = []
    for fn in library._final_module.functions:
        if fn.is_declaration and fn.name.startswith(_PREFIX):
            out.append(_ENTRIES.get(fn.name, (fn.name, None, None)))
    return tuple(out)


#: Whether chain kernels are called rather than copied in this process (``TREELEARN_LINK``).
CALLED = os.environ.get("TREELEARN_LINK", "copies").strip().lower() == "called"


def _install() -> bool:
    """Wrap Numba's caching and loading, and with :data:`CALLED` its linking (see the module
    notes); False where Numba's API has moved. The loading side is always on, so that a
    cache filled either way serves both."""
    try:
        from numba.core import caching, dispatcher
        from numba.core.codegen import CPUCodeLibrary, require_global_compiler_lock
        from numba.core.runtime import rtsys

        numba_add_overload = dispatcher.Dispatcher.add_overload
        numba_serialize = CPUCodeLibrary.serialize_using_object_code
        numba_unserialize = CPUCodeLibrary._unserialize.__func__
        numba_load = caching.Cache.load_overload
    except (ImportError, AttributeError):  # pragma: no cover - Numba's private API moved
        return False
    if getattr(dispatcher.Dispatcher.add_overload, "_treelearn", False):
        return True

    def add_overload(self, cres) -> None:
        numba_add_overload(self, cres)
        key = getattr(self, "_treelearn_key", None)
        if key is not None and not cres.objectmode and cres.library is not None:
            entry = (cres.fndesc.mangled_name, key, tuple(cres.signature.args))
            cres.library._treelearn_entry = entry
            _ENTRIES[entry[0]] = entry

    def finalize(self) -> None:
        # Numba's CPUCodeLibrary.finalize, but for the chain kernels it links
        require_global_compiler_lock()
        self._codegen._check_llvm_bugs()
        self._raise_if_finalized()
        seen = set()
        calls = False
        for library in self._linking_libraries:
            if library in seen:
                continue
            seen.add(library)
            self._reload_init.update(library._reload_init)
            library._ensure_finalized()
            calls = calls or getattr(library, "_treelearn_entry", None) is not None
            if _chain(library):
                continue  # called in the engine, not copied
            self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._treelearn_calls = calls or bool(_declared(self))
        self._optimize_final_module()
        self._final_module.verify()
        self._finalize_final_module()

    def serialize(self):
        name, kind, data = numba_serialize(self)
        calls = _declared(self)
        return name, kind, (data + (calls,)) if calls else data

    def unserialize(cls, codegen, state):
        name, kind, data = state
        calls = ()
        if kind == "object" and len(data) == 3:
            object_code, shared_bitcode, calls = data
            _load_callees(codegen, calls)
            state = (name, kind, (object_code, shared_bitcode))
        library = numba_unserialize(cls, codegen, state)
        library._treelearn_calls = bool(calls)
        return library

    def load_overload(self, sig, target_context):
        try:
            if not _ours(self):
                return numba_load(self, sig, target_context)
            # Numba's load_overload, without its refresh of the target context: a loaded
            # kernel needs Numba's runtime (allocation, reference counts), started here,
            # but none of the lowering and typing registries the refresh imports and
            # installs (0.6-0.75 s of a warm process's first fit); a compilation refreshes
            # them itself (numba.core.compiler.compile_extra).
            rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None  # the guard swallowed a spurious I/O error: compile it
        except StaleCallee:
            return None  # a cache miss: the kernel is compiled again and its entry replaced

    add_overload._treelearn = finalize._treelearn = True
    dispatcher.Dispatcher.add_overload = add_overload
    if CALLED:
        CPUCodeLibrary.finalize = finalize
    CPUCodeLibrary.serialize_using_object_code = serialize
    CPUCodeLibrary._unserialize = classmethod(unserialize)
    caching.Cache.load_overload = load_overload
    return True


def _ours(cache: Any) -> bool:
    """Whether a Numba cache holds one of treelearn's kernels (other libraries' caches keep
    Numba's own loading)."""
    module = getattr(getattr(cache, "_py_func", None), "__module__", None) or ""
    return module == "treelearn" or module.startswith("treelearn.")


def _load_callees(codegen, calls) -> None:
    """Load (or compile) each kernel a cached object calls before the object is loaded;
    :class:`StaleCallee` when one's current compilation lacks the symbol."""
    ee = codegen._engine
    for symbol, key, args in calls:
        if ee.is_symbol_defined(symbol):
            continue
        if key is None:
            raise StaleCallee(symbol)
        kernel = KERNELS.get(key)
        if kernel is None:
            try:
                importlib.import_module(key[0])
            except ImportError as exc:  # pragma: no cover - a module gone since
                raise StaleCallee(symbol) from exc
            kernel = KERNELS.get(key)
        if kernel is None:
            raise StaleCallee(symbol)  # a layout's kernel not built in this process
        kernel.compile(args)
        if not ee.is_symbol_defined(symbol):
            raise StaleCallee(symbol)


INSTALLED = _install()
