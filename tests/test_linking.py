"""Kernels that call their callees in Numba's engine instead of carrying compiled copies of
them (:mod:`treelearn.engine.linking`): the compiled modules of each linking mode, and the
cache across processes, stale entries included."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import treelearn
from treelearn.engine import linking
from treelearn.engine.builder import copy_function
from treelearn.engine.config import driver, inlined

jit_only = pytest.mark.jit_only

#: A fit in a fresh process that prints its tree's digest and the kernels it compiled.
_FIT = """
import json, sys, numpy as np
from numba.core import event
compiled = []
class Listen(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listen())
import treelearn as tl
rng = np.random.default_rng(0)
X = rng.normal(size=(400, 5)); y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
t = tl.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
print(json.dumps({"digest": [t.node_count, float(t.threshold.sum()), int(t.feature.sum())],
                  "compiled": compiled,
                  # Numba's registries, imported by a refresh of its contexts
                  "refreshed": "numba.np.arraymath" in sys.modules}))
"""


#: Appended to :data:`_FIT`: the compiled modules of the exact search and its callers.
_MODULES = """
import llvmlite.binding as ll
from treelearn.engine import exact, linking
def functions(cres):
    # the module a library gives its callers (compiled here or loaded from the cache):
    # "declared", "shared" (available_externally: inlinable, never compiled) or "copied"
    return {fn.name: "declared" if fn.is_declaration else
            "shared" if fn.linkage == ll.Linkage.available_externally else "copied"
            for fn in cres.library._get_module_for_linking().functions}
(search,) = exact.search_numeric.overloads.values()
symbol = search.fndesc.mangled_name
scans = [how for n, how in functions(search).items() if "8scan_two" in n]
callers = [functions(c) for d in linking.KERNELS.values()
           for c in getattr(d, "overloads", {}).values()
           if c.library is not None and c.library is not search.library]
callers = [f[symbol] for f in callers if symbol in f]
print(json.dumps({"scans": scans, "callers": len(callers),
                  **{how: callers.count(how) for how in ("declared", "shared", "copied")}}))
"""


def _fit(cache: Path, link: str = "shared", extra: str = "") -> dict:
    """A fresh process's fit on ``cache``: its JSON lines (the fit's, then ``extra``'s) merged."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "TREELEARN_COMPILE_BESIDE": "0",
           "TREELEARN_COMPILE_NOTICE": "0", "TREELEARN_LINK": link}
    out = subprocess.run([sys.executable, "-c", _FIT + extra], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    return {k: v for line in lines[-1 - bool(extra):] for k, v in json.loads(line).items()}


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """``cold(link)``: one cold process's cache filled in linking mode ``link``, and its
    report. A cold compilation takes 15-60 s, so the tests below share one per mode and
    work on copies."""
    made: dict[str, tuple[Path, dict]] = {}

    def fill(link: str) -> tuple[Path, dict]:
        if link not in made:
            cache = tmp_path_factory.mktemp(link) / "cache"
            made[link] = cache, _fit(cache, link, _MODULES)
        return made[link]

    return fill


def _copy_of(filled: tuple[Path, dict], tmp_path: Path) -> tuple[Path, dict]:
    cache, out = filled
    shutil.copytree(cache, tmp_path / "cache")
    return tmp_path / "cache", out


@jit_only
def test_the_decorators_register_every_kernel_by_module_and_name():
    from treelearn.engine import exact
    from treelearn.engine.layouts import presorted as grow_exact

    assert linking.active() and linking.STATE == "on" and linking.INSTALLED
    assert linking.MODE == "shared" and not linking.CALLED  # the default
    assert linking.KERNELS[("treelearn.engine.exact", "search_numeric")] is exact.search_numeric
    # a layout's copy of a builder loop is registered under its own name
    key = ("treelearn.engine.builder", "grow_depth_first_Exact")
    assert linking.KERNELS[key] is grow_exact.Exact.grow_depth_first


@jit_only
@pytest.mark.parametrize("link", ["called", "shared", "copies"])
def test_a_chain_kernel_is_called_shared_or_copied_and_a_leaf_is_copied(
        tmp_path, link, cold):
    out = cold(link)[1] if link != "copies" else _fit(tmp_path / "cache", link, _MODULES)
    # the scans are leaves: copied into the search unless shared (the search then calls the
    # scan's one compiled copy where LLVM did not inline it, as it did not in copies)
    assert out["scans"] and set(out["scans"]) <= ({"shared", "declared"} if link == "shared"
                                                  else {"copied"})
    assert out["callers"] >= 1
    # the search is a chain kernel: its callers only declare it when called; when shared they
    # hold it available to LLVM's inliner only (or declare it, once LLVM has dropped that)
    assert out["copied"] == (out["callers"] if link == "copies" else 0)
    assert out["declared"] == (out["callers"] if link == "called" else
                               out["callers"] - out["shared"] if link == "shared" else 0)


@jit_only
@pytest.mark.parametrize("link", ["called", "shared"])
def test_a_cached_caller_of_a_callee_compiled_again_calls_the_new_compilation(tmp_path, cold,
                                                                             link):
    cache, first = _copy_of(cold(link), tmp_path)
    assert "search_numeric" in first["compiled"] and first["refreshed"]
    warm = _fit(cache, link)
    # a process that only loads kernels skips Numba's refresh of its registries (0.6 s)
    assert warm == {"digest": first["digest"], "compiled": [], "refreshed": False}
    # the callee's cache entry goes: a new process compiles it again under another symbol
    # (Numba counts compilations in a process), and the cached kernels that call it are
    # loaded with their calls resolved to that compilation, not compiled again
    gone = [p for p in cache.rglob("exact.search_numeric-*")]
    assert gone
    for p in gone:
        p.unlink()
    again = _fit(cache, link)
    assert again["digest"] == first["digest"]
    assert "search_numeric" in again["compiled"]
    from treelearn.engine.layouts import presorted  # noqa: F401  (its kernels registered here)

    ours = {name for _, name in linking.KERNELS}
    assert "search_node" in ours
    assert not (set(again["compiled"]) - {"search_numeric"}) & ours  # Numba's own only
    assert _fit(cache, link) == {"digest": first["digest"], "compiled": [],  # healed
                                 "refreshed": False}


@jit_only
def test_a_kernel_compiled_over_a_resolved_call_is_loaded_by_the_next_process(tmp_path, cold):
    """The scan compiled again (another symbol) and the node search gone from the cache: a
    process loads the numeric search, whose call to the scan resolves to the new scan, and
    compiles the node search over the search's module; the next process loads everything."""
    cache, first = _copy_of(cold("shared"), tmp_path)
    for name in ("exact.scan_two", "search.search_node"):
        gone = [p for p in cache.rglob(f"{name}-*")]
        assert gone
        for p in gone:
            p.unlink()
    again = _fit(cache, "shared")
    assert again["digest"] == first["digest"]
    assert {"scan_two", "search_node"} <= set(again["compiled"])
    assert "search_numeric" not in again["compiled"]  # loaded, its call resolved
    assert _fit(cache, "shared") == {"digest": first["digest"], "compiled": [],
                                     "refreshed": False}


@jit_only
@pytest.mark.parametrize("link", ["called", "shared"])
def test_a_cache_filled_calling_serves_a_process_that_copies(tmp_path, cold, link):
    cache, first = _copy_of(cold(link), tmp_path)
    assert _fit(cache, "copies") == {"digest": first["digest"], "compiled": [],
                                     "refreshed": False}


def test_a_call_to_a_kernel_not_compiled_here_is_a_stale_entry():
    """A cached object's call resolves to this process's compilation of the same kernel and
    argument types, or the object is stale (a cache miss: compiled again), never loaded
    with a call to nothing."""
    class Engine:
        def is_symbol_defined(self, name):
            return name == "here"

    with pytest.raises(linking.StaleCallee):
        linking._alias(Engine(), "elsewhere", None)
    with pytest.raises(linking.StaleCallee):
        linking._alias(Engine(), "elsewhere", "not loaded")


def test_a_resolved_call_names_its_kernel_for_the_callers_compiled_over_it(monkeypatch):
    """A kernel compiled here over a loaded one (inlining it) may call the other process's
    symbol too: that symbol then names the kernel and argument types in the cache entry of
    the new kernel, so a later process can load it instead of finding it stale."""
    import llvmlite.binding as ll

    class Engine:
        _defined_symbols = {"here"}

        def is_symbol_defined(self, name):
            return name in self._defined_symbols

        def get_function_address(self, name):
            return 4096

    added = []
    monkeypatch.setattr(ll, "add_symbol", lambda name, address: added.append((name, address)))
    monkeypatch.setitem(linking._ENTRIES, "here", ("here", ("m", "k"), ("int64",)))
    engine = Engine()
    linking._alias(engine, "elsewhere", "here")
    try:
        assert added == [("elsewhere", 4096)] and engine.is_symbol_defined("elsewhere")
        assert linking._ENTRIES["elsewhere"] == ("elsewhere", ("m", "k"), ("int64",))
    finally:
        linking._ENTRIES.pop("elsewhere", None)


def test_only_treelearns_caches_skip_numbas_refresh():
    class Cache:
        def __init__(self, module):
            self._py_func = type("F", (), {"__module__": module})

    assert linking._ours(Cache("treelearn.engine.exact")) and linking._ours(Cache("treelearn"))
    assert not linking._ours(Cache("treelearnish")) and not linking._ours(Cache("umap"))
    assert not linking._ours(object())


@numba.njit  # not cached: compiled afresh in each test run
@driver
def _a_driver(x):
    return x + 1


@numba.njit
def _not_a_driver(x):
    return x + 2


@pytest.mark.jit_only
@pytest.mark.parametrize("setting, expect", [(None, [1]), ("0", [0]), ("3", "numba"),
                                             ("fast", "numba")])
def test_a_driver_module_is_optimised_at_the_driver_level(monkeypatch, setting, expect):
    """engine.config.driver: the marked kernel's module is optimised once, at
    TREELEARN_DRIVER_OPT (default 1); 3 or a word leaves it to Numba (its cheap pass at 0,
    then the full one at its own level); an unmarked kernel is always Numba's."""
    from numba.core import codegen

    # Numba's own optimisation asks for its cheap pass at 0, then the full one at its own
    # level; before its new pass manager (0.62) it used two made when it started
    numbas_own = [0, None] if linking._numba_version() >= (0, 62) else []
    expect = numbas_own if expect == "numba" else expect

    levels = []
    numba_managers = codegen.CPUCodegen._module_pass_manager

    def spy(self, **kwargs):
        levels.append(kwargs.get("opt"))
        return numba_managers(self, **kwargs)

    monkeypatch.setattr(codegen.CPUCodegen, "_module_pass_manager", spy)
    if setting is None:
        monkeypatch.delenv("TREELEARN_DRIVER_OPT", raising=False)
    else:
        monkeypatch.setenv("TREELEARN_DRIVER_OPT", setting)
    # a type of its own for each case, so that each compiles afresh
    mine, other = {None: (np.int8, np.int32), "0": (np.int16, np.uint32),
                   "3": (np.float32, np.float64), "fast": (np.uint8, np.uint16)}[setting]
    assert _a_driver(mine(3)) == 4
    # (the first compilation of a process also optimises Numba's runtime library, before)
    if expect:
        assert levels[-len(expect):] == expect and 1 not in levels[:-len(expect)]
    else:
        assert 1 not in levels
    levels.clear()
    assert _not_a_driver(other(3)) == 5
    assert levels[len(levels) - len(numbas_own):] == numbas_own and 1 not in levels


def _long_step(a, k):
    # long enough that LLVM's inliner keeps a call made twice (the control below shows it)
    s = 0.0
    for i in range(a.shape[0]):
        v = a[i]
        if v > k:
            s += np.sqrt(v) * np.log1p(v) - np.tanh(v * k)
        elif v < -k:
            s -= np.exp(-v * k) + np.arctan(v) * np.cos(v)
        elif v > 0:
            s += np.sin(v) / (1.0 + np.abs(k)) + np.expm1(v) * np.cosh(v)
        else:
            s += np.arcsinh(v) * np.sinh(k) - np.log(1.0 + v * v)
        if s > 1e6:
            s = np.fmod(s, 1e3) + np.hypot(s, v)
    return s


# registered (so that linking handles them) but not cached: compiled afresh in each run; the
# marked one is the same code under another name (engine.builder.copy_function)
_kept = linking.register(numba.njit(_long_step, _nrt=False))
_forced = linking.register(numba.njit(inlined(copy_function(
    _long_step, globals(), "_long_step_marked", __name__)), _nrt=False))


@linking.register
@numba.njit(_nrt=False)
def _calls_kept(a):
    return _kept(a, 1.0) + _kept(a, 2.0)


@linking.register
@numba.njit(_nrt=False)
def _calls_forced(a):
    return _forced(a, 1.0) + _forced(a, 2.0)


def _calls_to(caller, callee) -> int:
    """How many calls to ``callee`` ``caller``'s optimised module still makes."""
    (cres,) = caller.overloads.values()
    (target,) = callee.overloads.values()
    ir = cres.library.get_llvm_str()
    return ir.count(f"@{target.fndesc.mangled_name}(")


@pytest.mark.jit_only
def test_an_inlined_kernel_leaves_no_call_in_its_callers():
    """engine.config.inlined: LLVM inlines the marked kernel into every caller (no arrays
    passed by value on a call per node); the same body unmarked stays a call."""
    a = np.linspace(-3.0, 3.0, 50)
    assert _calls_forced(a) == pytest.approx(_calls_kept(a))
    assert _calls_to(_calls_kept, _kept) >= 1
    # llvmlite 0.42 (Numba 0.59) cannot set the attribute (linking.can_mark_inlined): there
    # the call stays, and nothing fails
    forced = _calls_to(_calls_forced, _forced)
    assert forced == 0 if linking.can_mark_inlined() else forced >= 1
    import llvmlite

    if tuple(int(v) for v in llvmlite.__version__.split(".")[:2]) >= (0, 50):  # Numba 0.68's
        assert linking.can_mark_inlined()
    from treelearn.engine.layouts import ranked

    # the ranked layout's per-node steps are marked (engine.builder's rule for node steps)
    assert {f"{len(n)}{n}" for n in ("process_ranked", "search_ranked", "_gather",
                                     "sort_by_rank")} <= {
        p.rsplit("6ranked", 1)[-1] for p in linking.INLINED if "6ranked" in p}
    assert ranked.process_ranked.py_func.__name__ == "process_ranked"


@pytest.mark.jit_only
def test_the_drivers_are_found_by_their_compiled_names():
    """The mangled-name prefix driver() derives is the one Numba gives the kernel (else the
    low level would silently never apply)."""
    from treelearn.engine.layouts.bins import Hist
    from treelearn.engine.layouts.presorted import Exact
    from treelearn.engine.linking import DRIVERS as _DRIVERS

    X = np.random.default_rng(0).normal(size=(300, 4))
    for splitter in ("best", "hist"):
        treelearn.DecisionTreeClassifier(splitter=splitter).fit(X, X[:, 0] > 0)
    # the builder's loop, compiled for each layout (a copy of the function under the
    # layout's name: engine.builder.layout)
    for kernel in (Exact.grow_depth_first, Hist.grow_depth_first):
        names = [cres.fndesc.mangled_name for cres in kernel.overloads.values()]
        prefixes = _DRIVERS[kernel.__name__]
        assert names and all(any(n.startswith(p) for p in prefixes) for n in names)
    # ... but not the runner: at the drivers' level two trees grown side by side each took
    # 1.7 times their time (measured in engine.builder's notes)
    assert not {Exact.run_depth_first.__name__, Hist.run_depth_first.__name__} & set(_DRIVERS)


# ---------------------------------------------------------------------------------------------
# The gate: the window, the self-test, and Numba's own linking when either says no.

def test_the_window_is_the_one_pyproject_accepts():
    """pyproject.toml accepts exactly the Numba releases the wrappers are tested on."""
    text = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    (low, high) = linking.WINDOW
    assert f'"numba>={low[0]}.{low[1]},<{high[0]}.{high[1] + 1}"' in text
    assert linking.WINDOW[0] <= linking._numba_version() <= linking.WINDOW[1]


def _gate_env(tmp_path: Path, simulate: str = "") -> dict[str, str]:
    """A fresh process's environment: empty kernel cache, no kept verdict, and (when
    ``simulate`` is given) a ``sitecustomize`` that changes Numba before anything imports it,
    as another Numba release would be."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "XDG_CACHE_HOME": str(tmp_path / "home"), "TREELEARN_COMPILE_BESIDE": "0",
           "TREELEARN_COMPILE_NOTICE": "0"}
    for name in ("TREELEARN_LINK", "TREELEARN_LINK_VERDICT", "TREELEARN_LINK_VERDICT_FILE"):
        env.pop(name, None)
    if simulate:
        site = tmp_path / "site"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(simulate)
        env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return env


#: Two fits in a fresh process, compared with scikit-learn's trees; the LinkingWarnings seen.
_GATED_FITS = """
import json, warnings
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import treelearn as tl
    from sklearn.tree import DecisionTreeClassifier
    from treelearn.engine import linking
    rng = np.random.default_rng(0)
    same = []
    for n in (300, 500):
        X = rng.normal(size=(n, 4)); y = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0)
        ours = tl.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
        theirs = DecisionTreeClassifier(random_state=0).fit(X, y).tree_
        same.append(bool(ours.node_count == theirs.node_count
                         and np.array_equal(ours.feature, theirs.feature)
                         and np.array_equal(ours.threshold, theirs.threshold)))
print(json.dumps({"same": same, "state": linking.STATE, "installed": linking.INSTALLED,
                  "tested": "thread" in linking._selftest,
                  "warnings": [str(w.message) for w in caught
                               if w.category.__name__ == "LinkingWarning"]}))
"""

#: Numba as a later release might differ, each simulated in a ``sitecustomize``.
_OTHER_NUMBAS = {
    # a release outside the tested window
    "outside the window": "import numba\nnumba.__version__ = '0.99.0'\n",
    # a private helper the wrappers use, renamed (Numba's own method uses the new name)
    "a private name renamed": """
from numba.core import caching
caching.Cache._load_entry = caching.Cache._load_overload
del caching.Cache._load_overload
def load_overload(self, sig, target_context):
    target_context.refresh()
    with self._guard_against_spurious_io_errors():
        return self._load_entry(sig, target_context)
caching.Cache.load_overload = load_overload
""",
    # a cached library with one more member: every name is there, the self-test fails
    "another cache format": """
from numba.core.codegen import CPUCodeLibrary
serialize = CPUCodeLibrary.serialize_using_object_code
unserialize = CPUCodeLibrary._unserialize.__func__
def serialize_more(self):
    name, kind, data = serialize(self)
    return name, kind, ((*data, "next") if kind == "object" else data)
def unserialize_more(cls, codegen, state):
    name, kind, data = state
    if kind == "object":
        if data[-1] != "next":
            raise ValueError("not this Numba's cache format")
        data = data[:-1]
    return unserialize(cls, codegen, (name, kind, data))
CPUCodeLibrary.serialize_using_object_code = serialize_more
CPUCodeLibrary._unserialize = classmethod(unserialize_more)
""",
}


@jit_only
@pytest.mark.parametrize("other", list(_OTHER_NUMBAS))
def test_another_numba_gets_numbas_own_linking_the_same_trees_and_one_warning(tmp_path, other):
    env = _gate_env(tmp_path, _OTHER_NUMBAS[other])
    runs = []
    for _ in range(2):  # cold, then warm on the cache the first filled
        out = subprocess.run([sys.executable, "-c", _GATED_FITS], env=env, capture_output=True,
                             text=True, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for run in runs:
        assert run["same"] == [True, True]
        assert run["state"] != "on" and not run["installed"]
        assert len(run["warnings"]) == 1  # once per process, with what it costs
        assert "first fits" in run["warnings"][0] and "warm fits are not affected" in (
            run["warnings"][0])
    if other == "another cache format":  # the self-test ran once; its verdict was kept
        assert "self-test" in runs[0]["warnings"][0] and "load process" in runs[0]["state"]
        assert runs[0]["tested"] and not runs[1]["tested"]
    elif other == "outside the window":
        assert "0.99.0 is outside" in runs[0]["state"]
    else:
        assert "lacks a private name" in runs[0]["state"]


_VERDICT = """
import json, treelearn
from treelearn.engine import linking
before = linking.verdict_env()
print(json.dumps({"before": before, "active": linking.active(), "after": linking.verdict_env(),
                  "tested": "thread" in linking._selftest}))
"""


@jit_only
def test_the_self_test_runs_once_per_environment_and_children_take_its_verdict(tmp_path):
    env = _gate_env(tmp_path)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _VERDICT], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["tested"] and first["active"]
    # a child started while it runs waits for the verdict this process keeps
    assert first["before"]["TREELEARN_LINK_VERDICT"] == "pending"
    kept = Path(first["before"]["TREELEARN_LINK_VERDICT_FILE"])
    assert kept.is_relative_to(tmp_path / "home")
    assert json.loads(kept.read_text())["verdict"] == "on"
    assert first["after"] == {"TREELEARN_LINK_VERDICT": "on"}
    assert not second["tested"] and second["active"] and second["before"] == first["after"]


def test_a_child_waits_for_the_verdict_its_parent_keeps(tmp_path, monkeypatch):
    import threading

    path = tmp_path / "verdict.json"
    monkeypatch.setattr(linking, "_selftest", {"wait_for": str(path)})
    writer = threading.Timer(0.3, lambda: path.write_text('{"verdict": "off: x", "keep": false}'))
    writer.start()
    assert linking._wait_for_selftest() == "off: x"  # a verdict not kept still ends the wait
    writer.join()


@pytest.mark.parametrize("other", ["", "another cache format"])
def test_the_self_test_passes_on_this_numba_and_fails_on_another(tmp_path, monkeypatch, other):
    """The self-test's two processes (compiled whatever this process does: they test the
    JIT), and its verdict kept where later processes read it."""
    env = _gate_env(tmp_path, _OTHER_NUMBAS.get(other, ""))
    for name in ("PYTHONPATH", "XDG_CACHE_HOME"):
        if name in env:
            monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "0")
    kept = tmp_path / "kept.json"
    monkeypatch.setattr(linking, "_selftest", {"path": str(kept)})
    linking._run_selftest()
    verdict = linking._selftest["verdict"]
    if other:
        assert "load process failed" in verdict and "not this Numba's cache format" in verdict
    else:
        assert verdict == "on"
    assert linking._read_marker(str(kept), final=False) == verdict
    monkeypatch.setattr(linking, "_selftest", {})
    assert linking._wait_for_selftest() == "the self-test did not run"


def test_a_kept_verdict_is_read_and_a_timed_out_one_only_by_waiting_children(tmp_path):
    path = tmp_path / "v.json"
    assert linking._read_marker(str(path), final=True) is None  # none yet
    path.write_text('{"verdict": "on", "keep": true}')
    assert linking._read_marker(str(path), final=False) == "on"
    path.write_text('{"verdict": "it took more than 300 s", "keep": false}')
    assert linking._read_marker(str(path), final=False) is None  # a new process tests again
    assert linking._read_marker(str(path), final=True) == "it took more than 300 s"
    path.write_text("not json")
    assert linking._read_marker(str(path), final=True) is None


def test_the_verdict_is_kept_per_environment_in_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = Path(linking._marker())
    assert path.parent == tmp_path / "treelearn" and path.suffix == ".json"
    monkeypatch.setattr(linking, "MODE", "called")  # another mode, another verdict
    assert Path(linking._marker()) != path


@pytest.mark.parametrize("inherited, expect", [("on", "on"), ("off", "off in the parent process")])
def test_a_child_takes_its_parents_verdict(monkeypatch, inherited, expect):
    monkeypatch.setattr(linking, "_selftest", {})
    monkeypatch.setenv("TREELEARN_LINK_VERDICT", inherited)
    linking._start_selftest()
    assert linking._selftest == {"verdict": expect}


def test_a_child_of_a_process_still_testing_waits_for_its_file(monkeypatch, tmp_path):
    monkeypatch.setattr(linking, "_selftest", {})
    monkeypatch.setenv("TREELEARN_LINK_VERDICT", "pending")
    monkeypatch.setenv("TREELEARN_LINK_VERDICT_FILE", str(tmp_path / "v.json"))
    linking._start_selftest()
    assert linking._selftest == {"wait_for": str(tmp_path / "v.json")}


def test_what_a_child_is_told(monkeypatch, tmp_path):
    monkeypatch.setattr(linking, "STATE", None)
    monkeypatch.setattr(linking, "_selftest", {"path": str(tmp_path / "v.json")})
    assert linking.verdict_env() == {"TREELEARN_LINK_VERDICT": "pending",
                                     "TREELEARN_LINK_VERDICT_FILE": str(tmp_path / "v.json")}
    monkeypatch.setattr(linking, "_selftest", {"path": None})
    assert linking.verdict_env() == {}  # nowhere to wait: the child tests for itself
    monkeypatch.setattr(linking, "_selftest", {"verdict": "its load process failed"})
    assert linking.verdict_env() == {"TREELEARN_LINK_VERDICT": "off"}
    monkeypatch.setattr(linking, "STATE", "on")
    assert linking.verdict_env() == {"TREELEARN_LINK_VERDICT": "on"}


def test_a_process_forked_during_the_self_test_waits_for_its_parents_verdict(monkeypatch):
    monkeypatch.setattr(linking, "_selftest", {"thread": object(), "path": "/kept.json"})
    linking._after_fork_in_child()
    assert linking._selftest == {"path": "/kept.json", "wait_for": "/kept.json"}
    monkeypatch.setattr(linking, "_selftest", {"thread": object(), "verdict": "on"})
    linking._after_fork_in_child()  # decided before the fork: nothing to wait for
    assert linking._selftest == {"thread": linking._selftest["thread"], "verdict": "on"}


_INSTALL = """
import json
from numba.core import caching, dispatcher
from numba.core.codegen import CPUCodeLibrary
from treelearn.engine import linking
names = [(dispatcher.Dispatcher, "add_overload"), (CPUCodeLibrary, "finalize"),
         (CPUCodeLibrary, "_optimize_final_module"), (CPUCodeLibrary, "_unserialize"),
         (CPUCodeLibrary, "serialize_using_object_code"), (caching.Cache, "load_overload"),
         (CPUCodeLibrary, "_get_module_for_linking")]
def numbas():
    return [getattr(owner, name) for owner, name in names]
own = numbas()
before = linking.STATE
installed = linking._install()
wrapped = [a is not b for a, b in zip(numbas(), own)]
linking._uninstall()
print(json.dumps({"before": before, "installed": installed, "wrapped": wrapped,
                  "restored": numbas() == own, "flag": linking.INSTALLED,
                  "inherited": "add_overload" not in dispatcher.Dispatcher.__dict__}))
"""


def test_the_wrappers_go_on_and_come_off_leaving_numbas_own_methods():
    """Installing wraps each of Numba's methods named in the module notes; removing them (the
    fallback) gives Numba back exactly its own, inherited ones included."""
    env = {**os.environ, "TREELEARN_LINK": "numba", "NUMBA_DISABLE_JIT": "0"}
    out = subprocess.run([sys.executable, "-c", _INSTALL], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert "TREELEARN_LINK=numba" in got["before"]  # nothing wrapped at import in that mode
    assert got["installed"] and all(got["wrapped"])
    assert got["restored"] and not got["flag"] and got["inherited"]


def test_ci_runs_the_windows_two_ends():
    """.ci/numba-ends installs the oldest and the newest release of the window."""
    import re

    script = (Path(__file__).parents[1] / ".ci" / "numba-ends").read_text()
    ends = re.search(r"^ENDS=\(([^)]*)\)", script, re.M).group(1).split()
    assert [tuple(int(p) for p in end.split(".")[:2]) for end in ends] == list(linking.WINDOW)


def test_ci_runs_the_oldest_end_on_the_lower_bound_of_every_dependency():
    import re

    root = Path(__file__).parents[1]
    script = (root / ".ci" / "numba-ends").read_text()
    pins = dict(re.findall(r'"([a-z-]+)==([0-9.]+)"', re.search(r"^OLDEST=\(([^)]*)\)",
                                                               script, re.M).group(1)))
    text = (root / "pyproject.toml").read_text()
    deps = text[text.index("dependencies = ["):text.index("[project.optional-dependencies]")]
    lower = dict(re.findall(r'"([a-z-]+)>=([0-9.]+)', deps))
    lower.pop("numba"), lower.pop("llvmlite")  # the window's own end, pinned by .ci/numba-ends
    assert set(pins) == set(lower)
    for name, version in pins.items():  # the bound's release, at its newest patch
        assert version.split(".")[:len(lower[name].split("."))] == lower[name].split("."), name
