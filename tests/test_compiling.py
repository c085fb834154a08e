"""The first run: the compile notice and the background compilations
(:mod:`treelearn.engine.compiling`), a call's signature (:mod:`treelearn._compiling`) and the
warm-up (:mod:`treelearn._warmup`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
import types

import numba
import numpy as np
import pytest
from numba.core import event

import treelearn as tl
from treelearn import _compiling
from treelearn.engine import compiling


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _dispatcher(name: str, module: str):
    fn = types.FunctionType((lambda: None).__code__, {}, name)
    fn.__module__ = module
    return types.SimpleNamespace(py_func=fn)


def _compile(name: str, module: str = "treelearn.engine.layouts.presorted"):
    return event.trigger_event("numba:compile", data={"dispatcher": _dispatcher(name, module)})


@pytest.fixture
def terminal(monkeypatch):
    out = _Terminal()
    monkeypatch.setattr(compiling._notice, "stream", out)
    monkeypatch.setattr(compiling._notice, "enabled", True)
    monkeypatch.setattr(compiling, "_DELAY", 0.2)
    return out


def test_a_long_compilation_shows_one_line_with_seconds_and_the_typical_total(terminal):
    # the builder's loop, compiled for the histogram layout
    with _compile("grow_depth_first_Hist", "treelearn.engine.builder"):
        with _compile("search_node"):  # nested: the same line
            time.sleep(1.3)
    text = terminal.getvalue()
    assert text.startswith("\rcompiling treelearn's kernels for this machine, once: ")
    typical = compiling.TYPICAL_SECONDS[("grow_depth_first_Hist", "numbers")]
    assert f"of about {typical} s" in text
    assert text.endswith(", done\n") and text.count("\n") == 1
    last = text.rsplit("\r", 1)[1]
    assert 1 <= int(last.split(": ")[1].split(" s")[0]) <= 3, last
    assert len(last) < 80


def test_the_typical_totals_name_the_builder_and_a_layout():
    """The notice knows the builder's loops by the name of their copy for a layout: every
    key of TYPICAL_SECONDS is such a loop."""
    from treelearn.engine.layouts import bins as grow_hist
    from treelearn.engine.layouts import presorted as grow_exact
    from treelearn.engine.layouts import ranked, sparse

    loops = {getattr(getattr(c, loop), "__name__", None)
             for c in (grow_exact.Exact, grow_hist.Hist, ranked.Ranked, sparse.Sparse)
             for loop in ("grow_depth_first", "grow_best_first")}
    assert {name for name, _ in compiling.TYPICAL_SECONDS} <= loops
    assert {kind for _, kind in compiling.TYPICAL_SECONDS} == {"numbers", "table"}
    assert "grow_depth_first_Ranked" in loops


def test_a_table_compilation_is_told_from_a_numeric_one_by_its_argument_types():
    """The level search compiled into the loop doubles its time: the notice quotes the
    table's total when the layout's Config carries a category search."""
    from treelearn.engine.search import Config

    is_cat = np.zeros(3, dtype=np.bool_)
    numbers = Config(is_cat=is_cat, n_search=np.ones(3, dtype=np.int64), category=None,
                     extras=None)
    table = numbers._replace(category=(is_cat, np.zeros(2)))
    # as a layout holds it: inside the layout's own named tuple, next to other tuples
    outer = (numba.typeof((np.zeros(2), (np.zeros(1), numbers))), numba.typeof(np.zeros(1)))
    assert compiling.data_kind(outer) == "numbers"
    assert compiling.data_kind((numba.typeof((np.zeros(1), table)),)) == "table"
    assert compiling.data_kind((numba.typeof(np.zeros(1)),)) == "numbers"
    assert compiling.data_kind(()) == "numbers"
    assert compiling.data_kind(None) == "numbers"


def test_the_notice_quotes_the_table_total_for_a_table_compilation(terminal):
    from treelearn.engine.search import Config

    table = Config(is_cat=np.ones(1, dtype=np.bool_), n_search=np.ones(1, dtype=np.int64),
                   category=(np.ones(1, dtype=np.bool_),), extras=None)
    data = {"dispatcher": _dispatcher("grow_depth_first_Exact", "treelearn.engine.builder"),
            "args": (numba.typeof(table),)}
    with event.trigger_event("numba:compile", data=data):
        time.sleep(1.3)
    typical = compiling.TYPICAL_SECONDS[("grow_depth_first_Exact", "table")]
    assert f"of about {typical} s" in terminal.getvalue()
    assert typical > compiling.TYPICAL_SECONDS[("grow_depth_first_Exact", "numbers")]


def test_short_foreign_quiet_or_piped_compilations_print_nothing(terminal, monkeypatch):
    with _compile("apply"):  # under the delay
        pass
    with _compile("user_kernel", module="mypackage.kernels"):  # not ours
        with _compile("grow_depth_first"):  # ours inside someone else's: theirs to report
            time.sleep(0.5)
    assert terminal.getvalue() == ""
    assert tl.compile_notice() is True
    assert tl.compile_notice(False) is False
    with _compile("grow_depth_first"):
        time.sleep(0.5)
    assert terminal.getvalue() == ""
    tl.compile_notice(True)
    monkeypatch.setattr(terminal, "isatty", lambda: False)  # a pipe or a file: silent
    with _compile("grow_depth_first"):
        time.sleep(0.5)
    assert terminal.getvalue() == ""
    with pytest.raises(TypeError, match="a bool or None"):
        tl.compile_notice("off")


def test_the_environment_and_quiet_switch_the_notice_off(monkeypatch):
    monkeypatch.setenv("TREELEARN_COMPILE_NOTICE", "0")
    assert not compiling._Notice().enabled
    monkeypatch.setenv("TREELEARN_COMPILE_NOTICE", "1")
    assert compiling._Notice().enabled
    with compiling.silenced():
        assert not tl.compile_notice()
    assert tl.compile_notice()


def test_compile_kernels_refuses_what_is_not_a_treelearn_estimator():
    from sklearn.tree import DecisionTreeClassifier

    with pytest.raises(TypeError, match="not a treelearn estimator"):
        tl.compile_kernels([DecisionTreeClassifier()])
    with pytest.raises(TypeError, match="takes estimators"):
        tl.compile_kernels(["cart"])


_AFTER_WARM_UP = r"""
import collections, json, sys
import numpy as np, pandas as pd
from numba.core import event
import treelearn as tl

models = [tl.DecisionTreeClassifier(), tl.DecisionTreeRegressor(splitter="hist"),
          tl.RandomForestClassifier(n_jobs=2)]
lines = tl.compile_kernels(models, processes=int(sys.argv[1]))
compiled = collections.Counter()

class Compiled(event.Listener):  # numba:compile is sent on a cache miss only
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        compiled[f"{d.py_func.__module__}.{d.py_func.__name__}"] += 1
    def on_end(self, ev):
        pass

event.register("numba:compile", Compiled())
rng = np.random.default_rng(7)
X = rng.normal(size=(60_000, 5)).astype(np.float32)
y = np.where(X[:, 0] + rng.normal(size=len(X)) > 0, "yes", "no")
df = pd.DataFrame(X[:2_000], columns=list("abcde"))
df["kind"] = pd.Categorical(rng.choice(["p", "q", "r"], size=len(df)))
df.loc[::5, "b"] = np.nan
# other sizes, dtypes, labels and tables than the warm-up's
tl.DecisionTreeClassifier().fit(X[:1_000], y[:1_000]).predict_proba(X[:10])
tl.DecisionTreeClassifier(max_depth=4).fit(X, y).predict(X)
tl.DecisionTreeClassifier().fit(df, y[:2_000]).predict(df)
tl.DecisionTreeRegressor(splitter="hist").fit(X, X[:, 1], sample_weight=np.ones(len(X)))
tl.DecisionTreeRegressor(splitter="hist").fit(df, np.arange(2_000.0)).predict(df)
tl.RandomForestClassifier(n_estimators=4, n_jobs=2).fit(X[:20_000], y[:20_000]).predict(X)
print(json.dumps({"lines": lines,
                  "new": {k: n for k, n in compiled.items() if k.startswith("treelearn")}}))
"""


@pytest.mark.jit_only
@pytest.mark.parametrize("processes", [1, 2])
def test_after_the_warm_up_the_same_estimators_compile_nothing_new(processes):
    """The warm-up's promise, checked in a fresh process: once ``compile_kernels`` has run
    (in that process, or in processes of its own that store into Numba's cache), fits of
    the same estimators on other data (sizes, dtypes, labels, tables with holes, weights)
    compile none of treelearn's kernels."""
    run = subprocess.run([sys.executable, "-c", _AFTER_WARM_UP, str(processes)],
                         capture_output=True,
                         text=True, timeout=1800, env={**os.environ,
                                                       "TREELEARN_COMPILE_NOTICE": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["new"] == {}, out["new"]
    kinds = {line.split(": ")[1] for line in out["lines"]}
    assert {"numbers", "many rows", "weights", "table", "table, many rows"} <= kinds
    assert "sparse" in kinds  # the exact tree and the forest take sparse rows; hist does not


def _record_popen(monkeypatch) -> list:
    started = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        proc = real(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen)
    return started


def test_compiled_beside_runs_the_target_and_stops_it_with_the_block(monkeypatch):
    """On a first run the target runs in a background process, which the end of the block
    stops (here a target that would wait for ever)."""
    started = _record_popen(monkeypatch)
    monkeypatch.setattr(compiling, "caching", lambda: True)
    monkeypatch.setattr(compiling, "first_run", lambda: True)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("TREELEARN_COMPILE_BESIDE", raising=False)
    with compiling.compiled_beside("threading:Event().wait"):
        assert len(started) == 1
        time.sleep(0.2)
        assert started[0].poll() is None  # still waiting: running beside the block
    assert started[0].poll() is not None
    with pytest.raises(KeyboardInterrupt), compiling.compiled_beside("threading:Event().wait"):
        raise KeyboardInterrupt
    assert len(started) == 2 and started[1].poll() is not None


@pytest.mark.parametrize("case", ["warm cache", "one CPU", "no cache", "switched off"])
def test_compiled_beside_starts_nothing_when_it_cannot_help(monkeypatch, case):
    started = _record_popen(monkeypatch)
    monkeypatch.setattr(compiling, "caching", lambda: case != "no cache")
    monkeypatch.setattr(compiling, "first_run", lambda: case != "warm cache")
    monkeypatch.setattr(os, "cpu_count", lambda: 1 if case == "one CPU" else 2)
    monkeypatch.setenv("TREELEARN_COMPILE_BESIDE", "0" if case == "switched off" else "1")
    with compiling.compiled_beside("threading:Event().wait"):
        pass
    assert started == []


@pytest.mark.jit_only
def test_the_cache_witness_is_the_exact_grower():
    """The kernel whose cache stands for all, found by its registered name (the layouts
    import the compiling module, so it does not import them back)."""
    from treelearn.engine.layouts.presorted import Exact

    assert compiling.witness() is Exact.grow_depth_first


@pytest.mark.jit_only
def test_a_fresh_cache_is_a_first_run_and_this_one_is_not(tmp_path):
    """_first_run reads the exact grower's cache index: empty in a new cache folder; after a
    fit, filled (the fit here uses the cache of the test run, which earlier fits filled)."""
    code = "from treelearn.engine.compiling import first_run; print(first_run())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    fresh = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True)
    assert fresh.stdout.strip() == "True"
    tl.DecisionTreeClassifier().fit([[0.0], [1.0]], [0, 1])
    assert compiling.first_run() is False


def _in_cache_index(kernel, sig) -> bool:
    cache = kernel._cache
    return cache._index_key(sig, kernel.targetctx.codegen()) in cache._cache_file._load_index()


@pytest.mark.jit_only
def test_signatures_beside_compiles_a_missing_signature_into_the_cache(monkeypatch):
    """The background process receives the kernel and its Numba signature, compiles it and
    stores it in the cache this process reads (signatures nothing else uses: the maximum
    of a uint8 vector; of a uint16 one, asked for by an enclosing ``beside_also``)."""
    from numba import types as nb

    from treelearn.engine.builder import max_levels

    sig = (nb.Array(nb.uint8, 1, "C"),)
    also = (nb.Array(nb.uint16, 1, "C"),)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("TREELEARN_COMPILE_BESIDE", raising=False)
    started = _record_popen(monkeypatch)
    # as "grower", a kernel this process has not compiled for these values
    unseen = {"n_levels": np.zeros(1, dtype=np.int16)}
    with compiling.beside_also(lambda: [(max_levels, also)]), \
            compiling.signatures_beside(max_levels, unseen, lambda: unseen,
                                         lambda values: [(max_levels, sig)]):
        # an earlier run's cache
        assert len(started) == 1 or _in_cache_index(max_levels, sig)
        deadline = time.monotonic() + 120
        while not (_in_cache_index(max_levels, sig) and _in_cache_index(max_levels, also)) \
                and time.monotonic() < deadline:
            assert not started or started[0].poll() in (None, 0)
            time.sleep(0.2)
    assert _in_cache_index(max_levels, sig) and _in_cache_index(max_levels, also)
    assert compiling._also == []  # the block's jobs are gone with it
    with compiling.signatures_beside(max_levels, unseen, lambda: unseen,
                                      lambda values: [(max_levels, sig)]):
        pass
    assert len(started) <= 1  # compiled: nothing started for it again


@pytest.mark.jit_only
@pytest.mark.parametrize("case", ["switched off", "grower compiled", "another running"])
def test_signatures_beside_starts_nothing_when_it_cannot_help(monkeypatch, case):
    """Switched off, the grower already compiled or loaded for these values in this process
    (then the kernels' signatures are not even computed), or another background compilation
    of this process running (``treelearn demo``'s)."""
    from treelearn.engine.builder import max_levels

    started = _record_popen(monkeypatch)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setenv("TREELEARN_COMPILE_BESIDE", "0" if case == "switched off" else "1")
    values = {"n_levels": np.zeros(1, dtype=np.int64 if case == "grower compiled" else np.int8)}
    max_levels(np.zeros(1, dtype=np.int64))
    if case == "another running":
        monkeypatch.setattr(compiling, "_running", {"a process"})

    def jobs(values):
        raise AssertionError("computed")

    def frame():
        if case != "grower compiled":
            raise AssertionError("built")
        return values

    with compiling.signatures_beside(max_levels, values, frame, jobs):
        pass
    assert started == []


def test_processes_compiling_beside_start_none_of_their_own():
    assert compiling.child_env()["TREELEARN_COMPILE_BESIDE"] == "0"


def test_a_signature_names_the_parameter_it_has_no_type_for():
    from treelearn.engine.builder import max_levels

    with pytest.raises(KeyError, match="'n_levels' of max_levels"):
        _compiling.signature(max_levels, {}, {})


@pytest.mark.jit_only
@pytest.mark.parametrize("kind", ["exact classifier", "exact weighted regressor",
                                  "hist classifier", "hist weighted regressor, best-first",
                                  "ranked forest", "ranked weighted regressor forest",
                                  "exact table classifier"])
def test_the_kernels_compiled_beside_are_those_the_fit_calls(monkeypatch, kind):
    """The signatures derived from a fit's arguments (``later_kernels``,
    ``threaded_kernels``) are the ones its grower compiles: the test run compiles nothing
    beside its fits (conftest.py), and CI runs on an empty cache, so the fits themselves put
    them in the cache index. A wrong one would only waste the other core, so check here."""
    jobs = []

    def record(top, args, frame, given):
        jobs.extend(given(frame()))
        jobs.extend(job for more in compiling._also for job in more())  # beside_also
        return contextlib.nullcontext()

    monkeypatch.setattr(compiling, "signatures_beside", record)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12_000, 8))
    splitter = "hist" if kind.startswith("hist") else "best"
    if "forest" in kind:  # a few features drawn of many: the ranked grower
        X = rng.normal(size=(3_000, 30))
        forest = (tl.ensemble.RandomForestRegressor if "regressor" in kind
                  else tl.ensemble.RandomForestClassifier)
        y = X[:, 0] if "regressor" in kind else X[:, 0] > 0
        model = forest(n_estimators=1, max_depth=5, max_features="sqrt", random_state=0).fit(
            X, y, sample_weight=rng.uniform(1, 2, len(X)) if "weighted" in kind else None)
        # what the fit no longer needs but a reader then calls: the member rebuilt from its
        # records (preorder ids, class impurities), its depth, the leaves of rows
        model.apply(X[:5])
        model = model.estimators_[0]
    elif "table" in kind:  # a category column with holes
        import pandas as pd

        df = pd.DataFrame(X[:, :4], columns=list("abcd"))
        df["kind"] = pd.Categorical(rng.choice(list("pqrst"), size=len(df)))
        df.loc[::7, "a"] = np.nan
        model = tl.DecisionTreeClassifier(max_depth=3).fit(df, X[:, 0] > 0)
    elif "classifier" in kind:
        model = tl.DecisionTreeClassifier(splitter=splitter, max_depth=3).fit(X, X[:, 0] > 0)
    else:
        model = tl.DecisionTreeRegressor(splitter=splitter, max_leaf_nodes=6 if splitter == "hist"
                                         else None, max_depth=4).fit(
            X, X[:, 0], sample_weight=rng.uniform(1, 2, len(X)))
    model.get_depth()  # the depth is computed when first read
    names = [k.__name__ for k, _ in jobs]
    if "forest" in kind:  # the trees packed
        assert names[-5:] == ["pack_binary", "split_decreases", "join_records",
                              "class_impurities", "preorder_ids"]
        names = names[:-5]
        if "regressor" in kind:  # no class counts to score
            jobs = [job for job in jobs if job[0].__name__ != "class_impurities"]
    assert names[-3:] == ["tree_offsets", "fill_tree_arrays", "node_depths"]  # assembled
    names = names[:-3]
    builder = ["settle", "push_kids", "room_depth_first"]  # the children pushed, tables grown
    if "forest" in kind:
        assert names == ["search_numeric", "draw_finish", "two_way_improvement", "refused",
                         "record_split", *builder]
    elif splitter == "best":
        if "table" in kind:  # the category search's subset scans first
            assert names[:3] == ["scan_order", "_subset_exhaustive", "_real_two"]
            names = names[3:]
        assert names == ["split_node", *builder, "_split"]
    else:  # 96,000 row-features: the threaded steps too
        assert names[:6] == ["hist_feature_rows", "mask_order", "scan_hist_two",
                             "scan_hist_classes", "summarize_hist", "search_summary_numeric"]
        names = names[6:]
        assert names[:4] == ["split_rows", "_process_large", "_children_large",
                             "_children_serial"]
        assert names[4:] == ([] if "best-first" in kind else
                             [*builder, "_resume_node", "_split_again"])
    for kernel, sig in jobs:
        assert sig in kernel.overloads or _in_cache_index(kernel, sig), kernel.__name__


@pytest.mark.jit_only
def test_warm_up_processes_report_in_order_and_fail_loudly():
    models = [tl.DecisionTreeRegressor(max_depth=3), tl.DecisionTreeClassifier(max_depth=3)]
    seen = []
    lines = tl.compile_kernels(models, processes=2, done=lambda i, got: seen.append(i))
    assert sorted(seen) == [0, 1]
    names = [line.split(":")[0] for line in lines]
    assert names == sorted(names, key=lambda n: n != "DecisionTreeRegressor")  # input order
    assert {line.split(": ")[1] for line in lines} >= {"numbers", "table", "sparse"}
    with pytest.raises(RuntimeError, match="warm-up of DecisionTreeClassifier failed"):
        tl.compile_kernels([tl.DecisionTreeClassifier(max_depth=-1), tl.MajorityClassifier()],
                           processes=2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2"])
def test_compile_kernels_refuses_a_bad_process_count(bad):
    with pytest.raises(ValueError, match="processes must be a positive int"):
        tl.compile_kernels([tl.MajorityClassifier()], processes=bad)


def test_import_leaves_the_ensembles_readers_and_model_files_until_used():
    code = ("import sys, treelearn as tl; "
            "before = sorted(m for m in ('treelearn.ensemble', 'treelearn.export', "
            "'treelearn.io', 'treelearn.optimal', 'treelearn.interop', 'sklearn.tree') "
            "if m in sys.modules); "
            "missing = [n for n in tl.__all__ if not hasattr(tl, n)]; "
            "print(before, missing, tl.RandomForestClassifier.__module__, "
            "set(tl.__all__) <= set(dir(tl)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.split() == ["[]", "[]", "treelearn.ensemble._forest", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tl.nope  # noqa: B018
