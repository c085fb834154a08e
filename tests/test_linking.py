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

import pytest

from treelearn.engine import linking

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
from treelearn.engine import exact, linking
def functions(cres):
    # the module a library gives its callers (compiled here or loaded from the cache):
    # "declared", "shared" (available_externally: inlinable, never compiled) or "copied"
    return {fn.name: "declared" if fn.is_declaration else
            "shared" if str(fn.linkage) == "Linkage.available_externally" else "copied"
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
    from treelearn.engine import exact, grow_exact

    assert linking.INSTALLED
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
    from treelearn.engine import grow_exact  # noqa: F401  (its kernels registered here)

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
