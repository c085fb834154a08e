"""Kernels call the kernels beneath them instead of carrying copies of them.

Numba links into every compiled kernel a copy of the optimised LLVM module of each kernel it
calls (and so, transitively, of the whole chain beneath it), then optimises and assembles the
result again, so that LLVM may inline across kernels. A node loop six calls above the
split scans therefore optimised and assembled the scans six times, once per level
(:mod:`treelearn.engine.config` has the measurements that found it). This module changes
that for treelearn's own kernels: a kernel that itself calls other treelearn kernels (a
*chain* kernel: a search, a split, a node loop) is no longer copied into its callers; they
call its one compiled copy in Numba's code engine, as C functions in separate object files
call each other. Leaf kernels (the scans, the per-row helpers, which call no treelearn kernel)
are still copied into their callers, so the loops that run per row keep LLVM's inlining.

Measured (2026-12-02, Numba 0.68, this project's 2-core machine, empty cache, one process,
``DecisionTreeClassifier().fit`` on 5,000 x 10 numbers with the background compiler off):
the first fit 14.9 s -> 11.6 s; a warm fully grown fit on 200,000 x 10, 0.397 s -> 0.403 s
(within the noise). The README's first-run table has the whole processes.

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

It wraps four of Numba's private methods (a code library's ``finalize``, its object-code
serialisation and loading, and the cache's ``load_overload``) and a dispatcher's
``add_overload``; where Numba's API has moved, or with ``TREELEARN_LINK=copies``, nothing is
wrapped and Numba's own linking stands.
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


def _install() -> bool:
    """Wrap Numba's linking, caching and loading (see the module notes); False where it
    cannot."""
    if os.environ.get("TREELEARN_LINK", "").strip().lower() == "copies":
        return False
    try:
        from numba.core import caching, dispatcher
        from numba.core.codegen import CPUCodeLibrary, require_global_compiler_lock

        numba_add_overload = dispatcher.Dispatcher.add_overload
        numba_serialize = CPUCodeLibrary.serialize_using_object_code
        numba_unserialize = CPUCodeLibrary._unserialize.__func__
        numba_load = caching.Cache.load_overload
    except (ImportError, AttributeError):  # pragma: no cover - Numba's private API moved
        return False
    if getattr(CPUCodeLibrary.finalize, "_treelearn", False):
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
            return numba_load(self, sig, target_context)
        except StaleCallee:
            return None  # a cache miss: the kernel is compiled again and its entry replaced

    add_overload._treelearn = finalize._treelearn = True
    dispatcher.Dispatcher.add_overload = add_overload
    CPUCodeLibrary.finalize = finalize
    CPUCodeLibrary.serialize_using_object_code = serialize
    CPUCodeLibrary._unserialize = classmethod(unserialize)
    caching.Cache.load_overload = load_overload
    return True


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
