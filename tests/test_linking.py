"""Kernels that call their callees in Numba's engine instead of carrying copies of them
(:mod:`treelearn.engine.linking`): the compiled modules, and the cache across processes,
stale entries included."""

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
    # the module a library gives its callers (compiled here or loaded from the cache)
    return {fn.name: fn.is_declaration for fn in cres.library._get_module_for_linking().functions}
(search,) = exact.search_numeric.overloads.values()
symbol = search.fndesc.mangled_name
scans = [n for n, declared in functions(search).items() if "8scan_two" in n and not declared]
callers = [functions(c) for d in linking.KERNELS.values()
           for c in getattr(d, "overloads", {}).values()
           if c.library is not None and c.library is not search.library]
callers = [f[symbol] for f in callers if symbol in f]
print(json.dumps({"scans_copied": len(scans), "callers_declaring": sum(callers),
                  "callers": len(callers)}))
"""


def _fit(cache: Path, link: str = "called", extra: str = "") -> dict:
    """A fresh process's fit on ``cache``: its JSON lines (the fit's, then ``extra``'s) merged."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "TREELEARN_COMPILE_BESIDE": "0",
           "TREELEARN_COMPILE_NOTICE": "0", "TREELEARN_LINK": link}
    out = subprocess.run([sys.executable, "-c", _FIT + extra], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    return {k: v for line in lines[-1 - bool(extra):] for k, v in json.loads(line).items()}


@pytest.fixture(scope="module")
def called_cache(tmp_path_factory) -> tuple[Path, dict]:
    """One cold process's cache filled with called chain kernels, and its report: a cold
    compilation takes 15-60 s, so the tests below share this one and work on copies."""
    cache = tmp_path_factory.mktemp("called") / "cache"
    return cache, _fit(cache, "called", _MODULES)


def _copy_of(called_cache, tmp_path: Path) -> tuple[Path, dict]:
    cache, out = called_cache
    shutil.copytree(cache, tmp_path / "cache")
    return tmp_path / "cache", out


@jit_only
def test_the_decorators_register_every_kernel_by_module_and_name():
    from treelearn.engine import exact, grow_exact

    assert linking.INSTALLED
    assert not linking.CALLED  # Numba's copies unless asked
    assert linking.KERNELS[("treelearn.engine.exact", "search_numeric")] is exact.search_numeric
    # a layout's copy of a builder loop is registered under its own name
    key = ("treelearn.engine.builder", "grow_depth_first_Exact")
    assert linking.KERNELS[key] is grow_exact.Exact.grow_depth_first


@jit_only
@pytest.mark.parametrize("link", ["called", "copies"])
def test_a_chain_kernel_is_called_from_the_engine_or_copied_and_a_leaf_is_copied(
        tmp_path, link, request):
    if link == "called":
        out = request.getfixturevalue("called_cache")[1]
    else:
        out = _fit(tmp_path / "cache", link, _MODULES)
    assert out["scans_copied"] >= 1  # the scans are leaves: copied into the search either way
    assert out["callers"] >= 1
    # the search is a chain kernel: only declared by its callers when called
    assert out["callers_declaring"] == (out["callers"] if link == "called" else 0)


@jit_only
def test_a_cached_caller_of_a_callee_compiled_again_is_compiled_again(tmp_path, called_cache):
    cache, first = _copy_of(called_cache, tmp_path)
    assert "search_numeric" in first["compiled"] and first["refreshed"]
    warm = _fit(cache)
    # a process that only loads kernels skips Numba's refresh of its registries (0.6 s)
    assert warm == {"digest": first["digest"], "compiled": [], "refreshed": False}
    # the callee's cache entry goes: a new process compiles it again under another symbol,
    # so every cached kernel that calls it is stale and is compiled again, not loaded
    gone = [p for p in cache.rglob("exact.search_numeric-*")]
    assert gone
    for p in gone:
        p.unlink()
    again = _fit(cache)
    assert again["digest"] == first["digest"]
    assert "search_numeric" in again["compiled"]
    assert "search_node" in again["compiled"]  # its caller, stale
    assert _fit(cache) == {"digest": first["digest"], "compiled": [],  # healed
                           "refreshed": False}


@jit_only
def test_a_cache_filled_with_called_kernels_serves_a_process_that_copies(tmp_path,
                                                                         called_cache):
    cache, first = _copy_of(called_cache, tmp_path)
    assert _fit(cache, "copies") == {"digest": first["digest"], "compiled": [],
                                     "refreshed": False}


def test_only_treelearns_caches_skip_numbas_refresh():
    class Cache:
        def __init__(self, module):
            self._py_func = type("F", (), {"__module__": module})

    assert linking._ours(Cache("treelearn.engine.exact")) and linking._ours(Cache("treelearn"))
    assert not linking._ours(Cache("treelearnish")) and not linking._ours(Cache("umap"))
    assert not linking._ours(object())
