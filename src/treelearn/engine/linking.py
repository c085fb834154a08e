"""How a compiled kernel reaches the kernels it calls (``TREELEARN_LINK``): through one
compiled copy of each in Numba's code engine, not a copy compiled again inside every caller.

Numba links into every compiled kernel a copy of the optimised LLVM module of each kernel it
calls (and so, transitively, of the whole chain beneath it), then optimises and assembles the
result again, so that LLVM may inline across kernels. A node loop six calls above the split
scans therefore optimises and assembles the scans six times, once per level
(:mod:`treelearn.engine.config` has the measurements that found it). Four modes:

- ``shared`` (the default): the linked-in copies of treelearn's kernels become
  ``available_externally`` definitions. LLVM's inliner sees them exactly as before and
  inlines what it inlined before, but assembles none of them: a call it keeps goes to the
  kernel's own compiled copy in the engine, compiled once (the calls kept are the same ones
  as with copies: the searches still call the scans, the node loops the node steps).
- ``copies``: Numba's own linking, every caller carrying compiled copies (the cache's
  loading side still wrapped, so a cache filled in another mode serves it).
- ``called``: a kernel that itself calls other treelearn kernels (a *chain* kernel: a search,
  a split, a node step) is not even linked into its callers: they can only call it. Leaf
  kernels (the scans and per-row helpers) are still copied, so the loops over rows keep
  LLVM's inlining.
- ``numba``: nothing of Numba wrapped (what the fallback below does, without its warning).

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

Everything treelearn does with Numba's private internals is here (and only here): it wraps
a dispatcher's ``add_overload``, a code library's ``finalize``, module optimisation (also
where :func:`treelearn.engine.config.driver` kernels get their LLVM level), object-code
serialisation, loading and module for linking, and the cache's ``load_overload``. Each
wrapper calls Numba's own method for everything that is not one of treelearn's kernels and
for the rest of its own work: none copies a method of Numba's (the copy of ``finalize`` this
module held until 2026-12-05 read an attribute Numba added in 0.63 and crashed every first
fit on 0.59-0.62). The wrappers are guarded three ways (the Numba-versions issue):

- **A window.** They are installed only on the Numba releases CI tests at both ends
  (:data:`WINDOW`, ``.ci/numba-ends``; ``pyproject.toml`` accepts no other), and only when
  every private name they use exists.
- **A self-test on first use.** At import a thread runs two small processes
  (:mod:`treelearn.engine.linkcheck`): one compiles a leaf, a chain kernel and a driver into
  an empty cache, the other loads them back; both must compute the right value, the second
  without compiling. A process waits for the verdict (:func:`active`) only when it first
  loads one of treelearn's kernels from the cache or compiles one that calls another: a
  cache miss needs no verdict, and a kernel that calls none of treelearn's is stored in
  Numba's own form, which both ways of loading read. Measured (2026-12-05, Numba 0.68, empty
  cache and no kept verdict): the self-test takes 1.2 s on the other core, starts at the top
  of ``import treelearn`` (1.4 s), and a first fit met its verdict without waiting (it had
  waited 1.2-1.3 s before these two rules and the early start). The verdict is kept per
  environment (Numba, llvmlite, Python, mode and these sources) in the user's cache folder,
  so later processes only read it, and background compilers inherit it
  (:func:`verdict_env`; a process forked meanwhile waits for the kept file).
- **A fallback.** Outside the window, without a name, or when the self-test fails, the
  wrappers are removed before any kernel uses them and Numba links its own way: one
  :class:`LinkingWarning` per process says so and what it costs (first fits compile longer;
  warm fits do not change). ``TREELEARN_LINK=numba`` asks for that without a warning.

Measured on the window's ends with the wrappers (2026-12-05, ``tools/numba_end_fits.py`` on an
empty cache; the README has the figures): Numba 0.59.1 and 0.62.1 now work in the default
mode, where the copied ``finalize`` had failed.

Loading one of treelearn's kernels starts Numba's runtime but skips the refresh of the
compiler's registries that Numba's own loading runs first: a warm process that compiles
nothing no longer imports them (the first fit of a warm process 0.54-0.71 s -> 0.20-0.30 s,
2026-12-03); a compilation still does. A cache filled in any mode serves every mode (the
loading side is the same), but keeps the code it was filled with: clear it after switching
to get the other's warm speed. A cache filled with the wrappers on is read only by processes
that have them on (an entry lists its callees beside Numba's data); since the verdict is kept
per environment and Numba's cache index is keyed on Numba's version, processes sharing a
cache agree.
"""

from __future__ import annotations

import importlib
import os
import threading
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
if MODE not in ("shared", "copies", "called", "numba"):
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


# ---------------------------------------------------------------------------------------------
# The gate: which Numba the wrappers below are tested on, and the self-test that proves them
# right on this machine before any of treelearn's kernels is compiled or loaded with them.

#: The oldest and newest Numba releases (major, minor) the wrappers are tested on: CI runs the
#: linking tests and fits on both ends (``.ci/numba-ends``), and ``pyproject.toml`` accepts no
#: other. Outside it nothing of Numba is wrapped (:data:`STATE` says why).
WINDOW = ((0, 59), (0, 68))

#: What the fallback costs, as the warning tells it (the module notes' table, copies against
#: shared; warm fits are the same either way).
_COST = ("first fits on an empty kernel cache compile longer (on a 2-core machine with Numba "
         "0.68: a first tree 16 s instead of 15 s, a first table with category columns 27 s "
         "instead of 12 s, `treelearn demo` 34 s instead of 25 s); warm fits are not affected")


class LinkingWarning(UserWarning):
    """treelearn's linking of kernels is off in this process: Numba links them its own way,
    and first fits compile longer."""


def _numba_version() -> tuple[int, int] | None:
    import numba

    try:
        major, minor = numba.__version__.split(".")[:2]
        return int(major), int(minor)
    except (AttributeError, ValueError):
        return None


#: ``"on"`` once the wrappers are proved right in this process; None while undecided
#: (installed, the self-test running); otherwise why Numba's own linking is used.
STATE: str | None = None
_state_lock = threading.Lock()
_selftest: dict[str, Any] = {}


def active() -> bool:
    """Whether treelearn's wrappers of Numba are on in this process. The first call waits for
    the self-test (started at import, beside the rest of the import); when it fails, the
    wrappers are removed again, before any of treelearn's kernels is compiled or loaded
    with them, and one :class:`LinkingWarning` says what that costs."""
    global STATE
    if STATE is not None:
        return STATE == "on"
    with _state_lock:
        if STATE is None:
            verdict = _wait_for_selftest()
            if verdict != "on":
                _uninstall()
                _warn(f"the self-test of its kernel linking failed on Numba "
                      f"{_numba_text()} ({verdict})")
            STATE = verdict
    return STATE == "on"


def verdict_env() -> dict[str, str]:
    """The environment a child process inherits so that it takes this process's verdict
    instead of testing again (the background compilers of :mod:`treelearn.engine.compiling`). It
    does not wait: while the self-test runs, the child waits for the verdict this process
    keeps (:func:`_marker`) when it first needs it, as this process does."""
    if STATE is not None or "verdict" in _selftest:
        return {_VERDICT: "on" if (STATE or _selftest.get("verdict")) == "on" else "off"}
    if _selftest.get("path"):
        return {_VERDICT: "pending", _VERDICT_FILE: _selftest["path"]}
    return {}


def _numba_text() -> str:
    import numba

    return str(getattr(numba, "__version__", "?"))


def _warn(why: str) -> None:
    import warnings

    warnings.warn(f"treelearn: {why}; Numba links the kernels its own way: {_COST}.",
                  LinkingWarning, stacklevel=3)


#: Set in a child process to this process's verdict (``on`` or ``off``): no self-test there;
#: ``pending``: wait for the verdict the parent keeps in :data:`_VERDICT_FILE`.
_VERDICT = "TREELEARN_LINK_VERDICT"
_VERDICT_FILE = "TREELEARN_LINK_VERDICT_FILE"

#: The self-test's kernels (:mod:`treelearn.engine.linkcheck`) and its two processes: the
#: first compiles them and stores them in an empty cache, the second loads them back.
_CHILD = """
import os, sys, types, json
pkg = types.ModuleType("treelearn")  # the engine alone, not the estimators' imports
pkg.__path__ = [{package!r}]
sys.modules["treelearn"] = pkg
from treelearn.engine import linkcheck
print(json.dumps(linkcheck.run(sys.argv[1])))
"""


def _marker() -> str | None:
    """Where this environment's verdict is kept (a small JSON file in the user's cache
    folder), keyed on Numba, llvmlite, Python, the linking mode and these sources: the
    self-test runs once per environment, not per process. None: nowhere to keep it."""
    import hashlib
    import sys

    import llvmlite

    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for part in (_numba_text(), llvmlite.__version__, sys.version, sys.executable, MODE):
        digest.update(part.encode() + b"\0")
    for name in ("linking.py", "linkcheck.py", "config.py"):
        try:
            with open(os.path.join(here, name), "rb") as f:
                digest.update(f.read())
        except OSError:
            return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "treelearn", f"linking-{digest.hexdigest()[:20]}.json")


def _start_selftest() -> None:
    """Start the self-test in a thread (its two processes run on the other core while this
    process imports the rest of treelearn), unless the verdict is inherited or kept."""
    inherited = os.environ.get(_VERDICT, "").strip().lower()
    if inherited == "pending" and os.environ.get(_VERDICT_FILE):
        _selftest["wait_for"] = os.environ[_VERDICT_FILE]
        return
    if inherited:
        _selftest["verdict"] = "on" if inherited == "on" else "off in the parent process"
        return
    path = _marker()
    kept = _read_marker(path, final=False) if path is not None else None
    if kept is not None:
        _selftest["verdict"] = kept
        return
    if path is not None:
        try:  # a child is told to wait for this file only if it can be written
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.access(os.path.dirname(path), os.W_OK):
                path = None
        except OSError:
            path = None
    _selftest["path"] = path
    thread = threading.Thread(target=_run_selftest, name="treelearn-linking-selftest",
                              daemon=True)
    _selftest["thread"] = thread
    thread.start()


#: Seconds the self-test may take before it counts as failed (it takes about 1.2 s).
SELFTEST_TIMEOUT = 300.0


def _after_fork_in_child() -> None:
    """A process forked while the self-test runs has no thread to wait for: it waits for the
    verdict its parent keeps instead (or, with nowhere to keep it, falls back)."""
    if "thread" in _selftest and "verdict" not in _selftest:
        del _selftest["thread"]
        if _selftest.get("path"):
            _selftest["wait_for"] = _selftest["path"]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _run_selftest() -> None:
    import json
    import subprocess
    import sys
    import tempfile

    verdict, keep = "on", True
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _CHILD.format(package=package)
    try:
        with tempfile.TemporaryDirectory(prefix="treelearn-linkcheck-") as cache:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache, _VERDICT: "on",
                   "TREELEARN_LINK": MODE, "NUMBA_DISABLE_JIT": "0"}
            for step in ("fill", "load"):
                out = subprocess.run([sys.executable, "-c", code, step], env=env,
                                     capture_output=True, text=True,
                                     timeout=SELFTEST_TIMEOUT, stdin=subprocess.DEVNULL)
                lines = out.stdout.strip().splitlines()
                if out.returncode != 0 or not lines:
                    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
                    verdict = f"its {step} process failed: {err[:300]}"
                    break
                problem = json.loads(lines[-1])
                if problem:
                    verdict = f"its {step} process: {problem}"
                    break
    except subprocess.TimeoutExpired:
        # told to the children waiting for it, but not kept: a busy machine is no verdict
        verdict, keep = f"it took more than {SELFTEST_TIMEOUT:.0f} s", False
    except Exception as exc:  # the self-test itself could not run: Numba's own linking
        verdict = f"it could not run: {type(exc).__name__}: {exc}"
    _selftest["verdict"] = verdict
    path = _selftest.get("path")
    if path is not None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                json.dump({"verdict": verdict, "keep": keep, "numba": _numba_text(),
                           "mode": MODE}, f)
            os.replace(tmp, path)
        except OSError:
            pass  # nowhere to keep it: the next process tests again


def _read_marker(path: str, final: bool) -> str | None:
    """The verdict kept at ``path``; None when there is none (or, unless ``final``, when the
    one there is not to be kept: a self-test that ran out of time)."""
    import json

    try:
        with open(path) as f:
            kept = json.load(f)
        if final or kept.get("keep", True):
            return str(kept["verdict"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _wait_for_selftest() -> str:
    import time

    thread = _selftest.get("thread")
    if thread is not None:
        thread.join()
    path = _selftest.get("wait_for")
    if path is not None:  # a child of a process whose self-test is running: its verdict
        deadline = time.monotonic() + SELFTEST_TIMEOUT + 30
        parent = os.getppid()
        while (verdict := _read_marker(path, final=True)) is None:
            if time.monotonic() > deadline or os.getppid() != parent:
                return "the parent process's self-test gave no verdict"
            time.sleep(0.05)
        return verdict
    return _selftest.get("verdict", "the self-test did not run")


# ---------------------------------------------------------------------------------------------
# The wrappers. Each one leaves Numba's behaviour alone for anything that is not one of
# treelearn's kernels, and calls Numba's own method for the rest of its work: none of them
# copies a method of Numba's.

#: ``{(class, name): Numba's own attribute}`` of everything wrapped, for :func:`_uninstall`.
_ORIGINALS: dict[tuple[Any, str], Any] = {}

#: ``{library name: mangled-name prefixes}`` of the kernels marked by
#: :func:`treelearn.engine.config.driver`: their modules are optimised at
#: :func:`driver_level`.
DRIVERS: dict[str, set[str]] = {}

#: Mangled-name prefixes of the kernels marked by :func:`treelearn.engine.config.inlined`:
#: every module that holds a definition of one (its own, or a copy linked into a caller)
#: gives that definition LLVM's ``alwaysinline``.
INLINED: set[str] = set()


_CAN_INLINE: bool | None = None


def can_mark_inlined() -> bool:
    """Whether this llvmlite sets a function attribute on the function: llvmlite 0.42
    (Numba 0.59's) puts ``add_function_attribute``'s attribute on the return value, which
    LLVM's verifier rejects (every ranked forest failed to compile there). Tried once on a
    one-line function; where it fails the :data:`INLINED` kernels are left to LLVM's own
    inlining (the same trees, the forests slower)."""
    global _CAN_INLINE
    if _CAN_INLINE is None:
        try:
            module = ll.parse_assembly("define i32 @f(i32 %a) {\n  ret i32 %a\n}\n")
            module.get_function("f").add_function_attribute("alwaysinline")
            module.verify()
            _CAN_INLINE = True
        except Exception:  # RuntimeError from the verifier, or an older binding's error
            _CAN_INLINE = False
    return _CAN_INLINE


def _mark_inlined(module) -> None:
    """``alwaysinline`` on the definitions of :data:`INLINED` kernels in ``module``."""
    if not can_mark_inlined():
        return
    for fn in module.functions:
        if not fn.is_declaration and any(fn.name.startswith(p) for p in INLINED):
            fn.add_function_attribute("alwaysinline")


def driver_level(default: int = 1) -> int | None:
    """The LLVM optimisation level of the drivers: ``TREELEARN_DRIVER_OPT`` (0 to 3, default
    1), never above Numba's own (``NUMBA_OPT``); None: leave them to Numba."""
    import numba

    try:
        level = int(os.environ.get("TREELEARN_DRIVER_OPT", default))
        return min(level, int(numba.config.OPT)) if 0 <= level < 3 else None
    except (TypeError, ValueError):
        return None


_INHERITED = object()


def _own(owner: Any, name: str) -> Any:
    """Numba's attribute ``name`` of class ``owner``, as defined there or inherited (the raw
    attribute: a classmethod stays one); KeyError when no class defines it."""
    for cls in owner.__mro__:
        if name in cls.__dict__:
            return cls.__dict__[name]
    raise KeyError(name)


def _set(owner: Any, name: str, value: Any) -> None:
    _ORIGINALS.setdefault((owner, name), owner.__dict__.get(name, _INHERITED))
    setattr(owner, name, value)


def _uninstall() -> None:
    """Give Numba its own methods back."""
    global INSTALLED
    for (owner, name), original in _ORIGINALS.items():
        if original is _INHERITED:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    _ORIGINALS.clear()
    INSTALLED = False


def _links_ours(library) -> bool:
    return any(getattr(lib, "_treelearn_entry", None) is not None
               for lib in library._linking_libraries)


def _install() -> bool:
    """Wrap Numba's compilation, caching and loading (see the module notes); False, and
    nothing wrapped, where one of the private names used is missing."""
    try:
        from numba.core import caching, dispatcher
        from numba.core.codegen import CPUCodeLibrary
        from numba.core.runtime import rtsys

        numba_add_overload = _own(dispatcher.Dispatcher, "add_overload")
        numba_finalize = _own(CPUCodeLibrary, "finalize")
        numba_optimize = _own(CPUCodeLibrary, "_optimize_final_module")
        numba_serialize = _own(CPUCodeLibrary, "serialize_using_object_code")
        numba_unserialize = _own(CPUCodeLibrary, "_unserialize").__func__
        numba_load = _own(caching.Cache, "load_overload")
        numba_module_for_linking = _own(CPUCodeLibrary, "_get_module_for_linking")
        for owner, name in ((caching.Cache, "_load_overload"),
                            (caching.Cache, "_guard_against_spurious_io_errors"),
                            (CPUCodeLibrary, "_finalize_final_module"),
                            (CPUCodeLibrary, "_set_compiled_object"),
                            (CPUCodeLibrary, "enable_object_caching")):
            getattr(owner, name)
        if not hasattr(ll.Linkage, "available_externally") or not callable(rtsys.initialize):
            return False
    except (ImportError, AttributeError, KeyError):
        return False
    if getattr(numba_add_overload, "_treelearn", False):
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
        # Numba's own; when chain kernels are called, after taking them out of what it links
        if CALLED and _links_ours(self) and active():
            self._treelearn_links = self._treelearn_called = True
            kept = []
            for library in self._linking_libraries:
                library._ensure_finalized()
                if _chain(library):  # called in the engine, not copied
                    inherited = getattr(library, "_reload_init", None)
                    if inherited:  # Numba 0.63+: what the caller must run again on reload
                        self._reload_init.update(inherited)
                else:
                    kept.append(library)
            self._linking_libraries = kept
        return numba_finalize(self)

    def optimize(self) -> None:
        # runs inside Numba's finalize, once the callees are linked in: share the copies of
        # treelearn's kernels, and optimise a driver's module at the drivers' level
        prefixes = DRIVERS.get(self.name)
        module = self._final_module
        links = getattr(self, "_treelearn_links", False) or any(
            fn.name in _ENTRIES for fn in module.functions)
        if not (links or prefixes) or not active():
            return numba_optimize(self)
        if INLINED:
            _mark_inlined(module)
        if links:
            self._treelearn_links = True
            calls = (getattr(self, "_treelearn_called", False) if CALLED
                     else _share(self) if MODE == "shared" else False)
            self._treelearn_calls = calls or bool(_declared(self))
        level = driver_level() if prefixes else None
        if level is not None and any(fn.name.startswith(prefix) for fn in module.functions
                                     for prefix in prefixes):
            _optimize_at(self, level)
            return None
        return numba_optimize(self)

    def serialize(self):
        name, kind, data = numba_serialize(self)
        ours = getattr(self, "_treelearn_entry", None) is not None
        if not (ours or getattr(self, "_treelearn_links", False)):
            return name, kind, data
        calls = _declared(self)
        if STATE is None and not calls:
            # a kernel that calls none of treelearn's, stored before the self-test's verdict:
            # in Numba's own form, which both ways of loading read (no wait for the verdict)
            return name, kind, data
        if not active():
            return name, kind, data
        if ours and kind == "object":
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
        if not _ours(self):
            return numba_load(self, sig, target_context)
        if STATE is None and not _in_index(self, sig, target_context):
            return None  # nothing cached: compiled, without waiting for the verdict yet
        if not active():
            return numba_load(self, sig, target_context)
        try:
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

    add_overload._treelearn = True
    _set(dispatcher.Dispatcher, "add_overload", add_overload)
    if MODE != "copies":
        _set(CPUCodeLibrary, "finalize", finalize)
    _set(CPUCodeLibrary, "_optimize_final_module", optimize)
    _set(CPUCodeLibrary, "serialize_using_object_code", serialize)
    _set(CPUCodeLibrary, "_unserialize", classmethod(unserialize))
    _set(caching.Cache, "load_overload", load_overload)
    _set(CPUCodeLibrary, "_get_module_for_linking", module_for_linking)
    return True


# ---------------------------------------------------------------------------------------------
# Reading Numba's cache (for treelearn.engine.compiling: is a kernel cached, where): private names
# too, read only, each with an answer for when they have moved.

def keeps_cache(kernel) -> bool:
    """Whether Numba compiles ``kernel`` and keeps it in its cache here (not with
    ``NUMBA_DISABLE_JIT``, nor where caching is off)."""
    try:
        from numba.core.caching import NullCache
    except ImportError:  # pragma: no cover - Numba's private names moved
        return False
    cache = getattr(kernel, "_cache", None)
    return cache is not None and not isinstance(cache, NullCache)


def cached_keys(kernel) -> set:
    """The keys of ``kernel``'s cache index (its compiled signatures and machines); empty
    when there are none or they cannot be read."""
    try:
        return set(kernel._cache._cache_file._load_index())
    except Exception:  # Numba's private index API moved: nothing known to be cached
        return set()


def is_cached(kernel, sig: tuple) -> bool:
    """Whether ``kernel`` is in Numba's cache for ``sig`` (an index that cannot be read
    counts as cached: the caller starts no compilation for it)."""
    return _in_index(getattr(kernel, "_cache", None), sig, getattr(kernel, "targetctx", None))


def cache_folder(kernel) -> str | None:
    """The folder Numba keeps ``kernel``'s cache in (None without one)."""
    path = getattr(getattr(kernel, "_cache", None), "_cache_path", None)
    return str(path) if path else None


#: How many modules :func:`_optimize_at` has optimised in this process (the self-test's check).
OPTIMIZED_AT_LOW_LEVEL = 0


def _in_index(cache, sig, target_context) -> bool:
    """Whether Numba's cache index lists ``sig`` (True when the index cannot be read: the
    caller then loads as usual)."""
    try:
        return cache._index_key(sig, target_context.codegen()) in (
            cache._cache_file._load_index())
    except Exception:  # Numba's private index API moved
        return True


def _optimize_at(library, level: int) -> None:
    """Optimise ``library``'s final module once at LLVM level ``level`` (Numba offers no
    per-function level): with Numba's new pass manager (0.62+) or its legacy one."""
    global OPTIMIZED_AT_LOW_LEVEL
    made = library._codegen._module_pass_manager(opt=level)
    OPTIMIZED_AT_LOW_LEVEL += 1
    if isinstance(made, tuple):  # the new pass manager: (manager, pass builder)
        manager, builder = made
        manager.run(library._final_module, builder)
    else:
        made.run(library._final_module)


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


#: Whether treelearn's wrappers of Numba are installed in this process (the self-test may
#: still remove them: :func:`active`).
INSTALLED = False


def _start() -> None:
    """At import: wrap Numba inside the tested window and start the self-test; otherwise
    leave Numba alone and say why, once."""
    global INSTALLED, STATE
    import numba

    version = _numba_version()
    if numba.config.DISABLE_JIT:
        STATE = "the JIT is disabled (NUMBA_DISABLE_JIT)"  # nothing is compiled: no warning
    elif MODE == "numba":
        STATE = "TREELEARN_LINK=numba asks for Numba's own linking"
    elif version is None or not WINDOW[0] <= version <= WINDOW[1]:
        STATE = (f"Numba {_numba_text()} is outside the versions its kernel linking is "
                 f"tested on ({WINDOW[0][0]}.{WINDOW[0][1]} to {WINDOW[1][0]}.{WINDOW[1][1]})")
        _warn(STATE)
    elif not _install():
        STATE = f"Numba {_numba_text()} lacks a private name its kernel linking wraps"
        _warn(STATE)
    else:
        INSTALLED = True
        _start_selftest()


_start()
