"""The first run: the compile notice and the warm-up (:mod:`treelearn._compiling`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import types

import pytest
from numba.core import event

import treelearn as tl
from treelearn import _compiling


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _dispatcher(name: str, module: str):
    fn = types.FunctionType((lambda: None).__code__, {}, name)
    fn.__module__ = module
    return types.SimpleNamespace(py_func=fn)


def _compile(name: str, module: str = "treelearn.engine.grow_exact"):
    return event.trigger_event("numba:compile", data={"dispatcher": _dispatcher(name, module)})


@pytest.fixture
def terminal(monkeypatch):
    out = _Terminal()
    monkeypatch.setattr(_compiling._notice, "stream", out)
    monkeypatch.setattr(_compiling._notice, "enabled", True)
    monkeypatch.setattr(_compiling, "_DELAY", 0.2)
    return out


def test_a_long_compilation_shows_one_line_with_seconds_and_the_typical_total(terminal):
    with _compile("grow_depth_first"):
        with _compile("search_node"):  # nested: the same line
            time.sleep(1.3)
    text = terminal.getvalue()
    assert text.startswith("\rcompiling treelearn's kernels for this machine, once: ")
    assert "of about 80 s" in text  # TYPICAL_SECONDS of the exact grower
    assert text.endswith(", done\n") and text.count("\n") == 1
    last = text.rsplit("\r", 1)[1]
    assert 1 <= int(last.split(": ")[1].split(" s")[0]) <= 3, last
    assert len(last) < 80


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
    assert not _compiling._Notice().enabled
    monkeypatch.setenv("TREELEARN_COMPILE_NOTICE", "1")
    assert _compiling._Notice().enabled
    with _compiling.silenced():
        assert not tl.compile_notice()
    assert tl.compile_notice()


def test_compile_kernels_refuses_what_is_not_a_treelearn_estimator():
    from sklearn.tree import DecisionTreeClassifier

    with pytest.raises(TypeError, match="not a treelearn estimator"):
        tl.compile_kernels([DecisionTreeClassifier()])
    with pytest.raises(TypeError, match="takes estimators"):
        tl.compile_kernels(["cart"])


_AFTER_WARM_UP = r"""
import json, sys
import numpy as np, pandas as pd
from numba.core.dispatcher import Dispatcher
import treelearn as tl

def overloads():
    return {f"{m}.{k}": len(v.overloads) for m, mod in list(sys.modules.items())
            if m.startswith("treelearn") for k, v in vars(mod).items()
            if isinstance(v, Dispatcher)}

models = [tl.DecisionTreeClassifier(), tl.DecisionTreeRegressor(splitter="hist"),
          tl.RandomForestClassifier(n_jobs=2)]
lines = tl.compile_kernels(models)
before = overloads()
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
after = overloads()
print(json.dumps({"lines": lines,
                  "new": {k: after[k] - before.get(k, 0) for k in after
                          if after[k] != before.get(k, 0)}}))
"""


@pytest.mark.jit_only
def test_after_the_warm_up_the_same_estimators_compile_nothing_new():
    """The warm-up's promise, checked in a fresh process: once ``compile_kernels`` has run,
    fits of the same estimators on other data (sizes, dtypes, labels, tables with holes,
    weights) add no specialisation to any of treelearn's kernels."""
    run = subprocess.run([sys.executable, "-c", _AFTER_WARM_UP], capture_output=True,
                         text=True, timeout=1800, env={**os.environ,
                                                       "TREELEARN_COMPILE_NOTICE": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["new"] == {}, out["new"]
    kinds = {line.split(": ")[1] for line in out["lines"]}
    assert {"numbers", "many rows", "weights", "table", "table, many rows"} <= kinds
    assert "sparse" in kinds  # the exact tree and the forest take sparse rows; hist does not
