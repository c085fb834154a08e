"""How a compiled kernel reaches the kernels it calls (``TREELEARN_LINK``): through one
compiled copy of each in Numba's code engine, not a copy compiled again inside every caller.

Numba links into every compiled kernel a copy of the optimised LLVM module of each kernel it
calls (and so, transitively, of the whole chain beneath it), then optimises and assembles the
result again, so that LLVM may inline across kernels. A node loop six calls above the split
scans therefore optimises and assembles the scans six times, once per level
(:mod:`treelearn.engine.config` has the measurements that found it). Three modes:

- ``shared`` (the default): the linked-in copies of treelearn's kernels become
  ``available_externally`` definitions. LLVM's inliner sees them exactly as before and
  inlines what it inlined before, but assembles none of them: a call it keeps goes to the
  kernel's own compiled copy in the engine, compiled once (the calls kept are the same ones
  as with copies: the searches still call the scans, the node loops the node steps).
- ``copies``: Numba's own linking, every caller carrying compiled copies.
- ``called``: a kernel that itself calls other treelearn kernels (a *chain* kernel: a search,
  a split, a node step) is not even linked into its callers: they can only call it. Leaf
  kernels (the scans and per-row helpers) are still copied, so the loops over rows keep
  LLVM's inlining.

Measured (``bench_coldstart``, empty cache, fresh process, one run each, same run; 2-core
machine, Numba 0.68):

==========================================================  =========  =========  ========
case                                                          copies     shared     called
==========================================================  =========  =========  ========
``import`` + first numeric ``DecisionTreeClassifier`` fit    15.8 s     14.8 s     9.5 s
first ``RandomForestClassifier`` fit                         18.3 s     12.7 s     8.5 s
first table fit (categories, holes) after a numeric one      26.5 s     11.8 s     9.6 s
first ``splitter="hist"`` fit after a numeric one            22.4 s     18.1 s     12.9 s
``treelearn demo``                                           33.7 s     25.4 s     18.4 s
==========================================================  =========  =========  ========

(copies and shared 2026-12-04, in one run; copies alone had taken 12.5/13.7/18.7/18.6/
30.5 s an hour before, this machine's spread; called 2026-12-02, when copies took
12.4/11.8/17.3/17.1/27.0 s). With the background
compiler off, the exact grower's first fit compiled in 12.9 s shared against 18.2 s copied,
the histogram grower's in 18.8 s against 29.7 s. Warm fits (``compare.py`` against the
commit before, best of 5 and of 9): 0.95-1.08 on exact, hist, table and forest cases, within
this machine's noise; ``called`` cost 4-55% on warm fits of many small nodes (a call between
kernels passes every array as a struct of 7-9 words, the node steps the layout's tuple of
some 30 arrays, and a call that is not inlined keeps the reference counting of its
arguments), so it stays opt-in, for processes that start on an empty cache and fit little.

What it takes, since Numba assumes every kernel carries its callees:

- **In a process that compiles**, every callee's library is finalised (added to the engine)
  before its callers, as Numba already does for every library it links; the caller's module
  keeps the declaration or ``available_externally`` definition of each call, which the
  engine resolves to that copy.
- **In a process that loads from the cache**, a kernel's cached object refers to the kernels
  it calls by symbol, which must be in the engine before the object is loaded, or LLVM stops
  the process. The cached data therefore lists, beside the object code, each symbol's
  kernel (module and qualified name, as registered by the decorators of
  :mod:`treelearn.engine.config`) and argument types, and the symbols the object defines;
  loading it first loads those kernels (from the cache, or compiling them). Numba names a
  compiled function with a counter of its process, so a kernel compiled in another process
  (the background compiler's, the warm-up's, or a cache entry replaced) has another symbol:
  the call then resolves to this process's compilation of the same kernel and argument
  types, the same source and calling convention (:func:`_alias`), and when there is none
  the caller's entry is stale and compiled anew (:class:`StaleCallee`, a cache miss, never a
  wrong call).
- A loaded kernel's module for linking (its LLVM bitcode, which only a new compilation that
  calls it reads) is parsed when first linked, and the symbols it defines come from the
  cache: parsing and walking the modules of the 57 kernels a warm numeric and hist fit load
  took 0.29 of that process's 0.63 s of loading (0.44 s since; 0.25 s for the 7
  self-contained kernels of copies).

It wraps a code library's finalisation, object-code serialisation and loading and its module
for linking, the cache's ``load_overload`` and a dispatcher's ``add_overload`` (all private
to Numba) in every process, so that a cache filled in any mode serves every mode; where
Numba's API has moved, nothing is wrapped. Loading one of treelearn's kernels starts Numba's
runtime but skips the refresh of the compiler's registries that Numba's own loading runs
first: a warm process that compiles nothing no longer imports them (the first fit of a warm
process 0.54-0.71 s -> 0.20-0.30 s, 2026-12-03); a compilation still does. A cache keeps the
code it was filled with: clear it after switching to get the other's warm speed.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import llvmlite.binding as ll

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
        if fn.name.startswith(_PREFIX) and (
                fn.is_declaration or fn.linkage == ll.Linkage.available_externally):
            out.append(_ENTRIES.get(fn.name, (fn.name, None, None)))
    return tuple(out)


#: How this process links the kernels a kernel calls (``TREELEARN_LINK``): ``"shared"``
#: (the default: copies LLVM may inline, one compiled copy in the engine for the calls it
#: keeps), ``"copies"`` (Numba's own: a compiled copy in every caller) or ``"called"`` (chain
#: kernels never copied).
MODE = os.environ.get("TREELEARN_LINK", "shared").strip().lower()
if MODE not in ("shared", "copies", "called"):
    MODE = "shared"
#: Whether chain kernels are called rather than copied in this process.
CALLED = MODE == "called"

#: ``{(kernel key, argument types): symbol}`` of the kernels compiled or loaded in this process:
#: what a cached caller's call to the same kernel under another process's symbol resolves to.
_CURRENT: dict[tuple, str] = {}


def _share(library) -> bool:
    """Turn the linked-in copies of registered kernels in ``library``'s module into
    ``available_externally`` definitions: LLVM may still inline them, but a call it keeps
    goes to the kernel's own compiled copy in the engine, so no caller compiles them again.
    Whether any was turned."""
    shared = False
    for fn in library._final_module.functions:
        if (not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr
                and fn.name in _ENTRIES):
            fn.linkage = ll.Linkage.available_externally
            shared = True
    return shared


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
        numba_module_for_linking = CPUCodeLibrary._get_module_for_linking
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
            _CURRENT[entry[1:]] = entry[0]

    def finalize(self) -> None:
        # Numba's CPUCodeLibrary.finalize, but the kernels it links are shared (or, when
        # called, chain kernels not linked at all)
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
            if CALLED and _chain(library):
                continue  # called in the engine, not copied
            self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        if not CALLED:
            calls = _share(self)
        self._treelearn_calls = calls or bool(_declared(self))
        self._optimize_final_module()
        self._final_module.verify()
        self._finalize_final_module()

    def serialize(self):
        name, kind, data = numba_serialize(self)
        calls = _declared(self)
        if getattr(self, "_treelearn_entry", None) is not None and kind == "object":
            return name, kind, data + (calls, _defined(self._get_module_for_linking()))
        return name, kind, (data + (calls,)) if calls else data

    def unserialize(cls, codegen, state):
        name, kind, data = state
        calls = ()
        if kind == "object" and len(data) == 4:  # one of treelearn's kernels
            object_code, shared_bitcode, calls, defined = data
            _load_callees(codegen, calls)
            library = _loaded(cls, codegen, name, object_code, shared_bitcode, defined)
            library._treelearn_calls = bool(calls)
            return library
        if kind == "object" and len(data) == 3:
            object_code, shared_bitcode, calls = data
            _load_callees(codegen, calls)
            state = (name, kind, (object_code, shared_bitcode))
        library = numba_unserialize(cls, codegen, state)
        library._treelearn_calls = bool(calls)
        return library

    def module_for_linking(self):
        bitcode = getattr(self, "_treelearn_bitcode", None)
        if bitcode is not None and self._shared_module is None:
            self._shared_module = ll.parse_bitcode(bitcode)
            self._treelearn_bitcode = None
        return numba_module_for_linking(self)

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
    if MODE != "copies":
        CPUCodeLibrary.finalize = finalize
    CPUCodeLibrary.serialize_using_object_code = serialize
    CPUCodeLibrary._unserialize = classmethod(unserialize)
    caching.Cache.load_overload = load_overload
    CPUCodeLibrary._get_module_for_linking = module_for_linking
    return True


def _defined(module) -> tuple[str, ...]:
    """The symbols Numba records as defined when it loads a library whose module for linking
    is ``module`` (stored beside the object code, so loading reads no module)."""
    return tuple(gv.name for gvs in (module.functions, module.global_variables) for gv in gvs
                 if not gv.is_declaration)


def _loaded(cls, codegen, name, object_code, shared_bitcode, defined):
    """Numba's loading of a cached library from its object code, except that the module for
    linking is parsed only when a new compilation links it, and the defined symbols come
    from the cache (parsing and walking every loaded module was most of a warm first fit:
    0.11 and 0.18 s of 0.63 s for 57 kernels)."""
    library = codegen.create_library(name)
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._shared_module = None
    library._treelearn_bitcode = shared_bitcode
    library._finalize_final_module()
    codegen._engine._defined_symbols.update(defined)
    return library


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
            _alias(ee, symbol, _CURRENT.get((key, tuple(args))))


def _alias(ee, symbol: str, current: str | None) -> None:
    """Resolve a cached object's call to ``symbol`` (the kernel as another process named it)
    to ``current``, the same kernel and argument types as compiled or loaded here: the same
    source (Numba's cache is keyed on it) and the same calling convention, under another
    process's counter. :class:`StaleCallee` when there is none."""
    if current is None or not ee.is_symbol_defined(current):
        raise StaleCallee(symbol)
    ll.add_symbol(symbol, ee.get_function_address(current))
    ee._defined_symbols.add(symbol)
    # a kernel compiled here that links this object's module calls ``symbol`` too: its own
    # cached entry must name the kernel behind it, or every later process finds it stale
    _ENTRIES[symbol] = (symbol, *_ENTRIES[current][1:])


INSTALLED = _install()
