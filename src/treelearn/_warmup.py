"""The warm-up for deployments: compile treelearn's kernels ahead of the first real fit.

:func:`compile_kernels` (``treelearn compile`` on the command line) fits and applies each
given estimator on small generated data of every kind the estimator accepts (numbers,
weights, a table with a category column and holes, sparse rows; large enough to reach the
multi-threaded paths), so a Docker image or a CI cache built with it starts warm. Each
estimator is warmed up in a Python process of its own, one per CPU at a time, all storing
into Numba's cache, because Numba compiles one kernel at a time in a process
(``treelearn compile``: 329 s -> 214 s on this project's 2-core machine).

Why apart from :mod:`treelearn.engine.compiling` (the notice and the background
compilations): the warm-up fits the estimators, so it sits above them; the engine's part
sits in the engine, and nothing below imports this module.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from ._interrupt import check, interruptible_function
from .engine import compiling

__all__ = ["compile_kernels"]

#: Rows of the warm-up's larger tables: enough for the multi-threaded paths of the growers
#: (:data:`treelearn.engine.config.PARALLEL_MIN_WORK` cells per thread), small enough to fit
#: in well under a second once compiled.
WARM_ROWS = 30_000


def _data(n: int, classify: bool, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)).round(2)
    signal = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)
    y = (np.digitize(signal, [-0.5, 0.5])) if classify else signal
    return X, y


def _table(X, seed: int = 0, numeric_holes: bool = True):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["c"] = pd.Categorical(rng.choice(list("abcdefg"), size=len(df)))
    if numeric_holes:
        df.loc[df.index[::9], "x2"] = np.nan
    df.loc[df.index[::11], "c"] = np.nan
    return df


def _variants(est, classify: bool):
    """(name, X, y, sample_weight) of the warm-up's inputs for one estimator."""
    import numpy as np
    import scipy.sparse as sp

    small = _data(300, classify)
    large = _data(WARM_ROWS, classify, seed=1)
    tags = est.__sklearn_tags__().input_tags
    yield "numbers", small[0], small[1], None
    yield "many rows", large[0], large[1], None
    yield "weights", small[0], small[1], np.linspace(0.5, 2.0, small[0].shape[0])
    if tags.allow_nan and getattr(tags, "categorical", False):
        yield "table", _table(small[0]), small[1], None
        yield "table, many rows", _table(large[0], seed=1), large[1], None
    elif getattr(tags, "categorical", False):  # categories (with holes), numbers without
        yield "categories", _table(small[0], numeric_holes=False), small[1], None
    if tags.sparse:
        Xs = sp.csr_matrix(np.where(np.abs(small[0]) > 1.0, small[0], 0.0))
        yield "sparse", Xs, small[1], None


def _checked(estimators: Iterable[Any]) -> list[Any]:
    """The estimators, each refused with a TypeError unless it is a treelearn estimator."""
    models = list(estimators)
    for est in models:
        if not hasattr(est, "fit") or not hasattr(est, "get_params"):
            raise TypeError(f"compile_kernels takes estimators; got {est!r}.")
        if not type(est).__module__.startswith("treelearn."):
            raise TypeError(f"compile_kernels compiles treelearn's kernels; "
                            f"{type(est).__name__} is not a treelearn estimator.")
    return models


def _warm_up(est: Any) -> list[str]:
    """Fit and apply a copy of ``est`` on every input of :func:`_variants`, in this process."""
    import warnings

    from sklearn.base import clone, is_classifier

    model = clone(est)
    if "n_estimators" in model.get_params():
        model.set_params(n_estimators=2)
    # an estimator's settings for its warm-up (the optimal tree: one kernel for every depth,
    # so the shallowest search that compiles it, and no progress bar)
    model.set_params(**getattr(model, "warm_up_params", {}))
    classify = is_classifier(model)
    lines = []
    for kind, X, y, w in _variants(model, classify):
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tiny forests warn of their OOB rows
            fitted = clone(model).fit(X, y, sample_weight=w)
            fitted.predict(X)
            if classify and hasattr(fitted, "predict_proba"):
                fitted.predict_proba(X)
        lines.append(f"{type(est).__name__}: {kind}: {time.perf_counter() - t:.1f} s")
        check()
    return lines


#: What a warm-up process runs: one pickled estimator on standard input, its lines (JSON) out.
_CHILD = ("import json, pickle, sys; from treelearn._warmup import _warm_up; "
          "print(json.dumps(_warm_up(pickle.load(sys.stdin.buffer))))")


def _warm_up_in_processes(models: list[Any], processes: int,
                          done: Callable[[int, list[str]], None]) -> None:
    """:func:`_warm_up` of each model in its own Python process, ``processes`` at a time,
    calling ``done(index, lines)`` as each ends; a Ctrl-C (or an error) stops them all."""
    import json
    import pickle
    import subprocess
    import tempfile

    pending = list(enumerate(models))
    running: dict[int, tuple[subprocess.Popen, Any, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < processes:
                i, model = pending.pop(0)
                out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
                proc = subprocess.Popen([sys.executable, "-c", _CHILD],
                                        stdin=subprocess.PIPE, stdout=out, stderr=err,
                                        env=compiling.child_env())
                proc.stdin.write(pickle.dumps(model))
                proc.stdin.close()
                running[i] = (proc, out, err)
            for i, (proc, out, err) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[i]
                out.seek(0)
                err.seek(0)
                text, problem = out.read().decode(), err.read().decode()
                out.close()
                err.close()
                if proc.returncode != 0:
                    raise RuntimeError(f"the warm-up of {type(models[i]).__name__} failed in "
                                       f"its process (exit {proc.returncode}):\n"
                                       f"{problem[-2000:]}")
                done(i, json.loads(text.strip().splitlines()[-1]))
            time.sleep(0.05)
            check()
    finally:
        for proc, out, err in running.values():
            proc.kill()
            proc.wait()
            out.close()
            err.close()


@interruptible_function
def compile_kernels(estimators: Iterable[Any] | None = None, *, verbose: bool = False,
                    processes: int | None = None,
                    done: Callable[[int, list[str]], None] | None = None) -> list[str]:
    """Compile (or load from the cache) every kernel the given estimators need.

    Fits a copy of each estimator (forests and boosting with two members) on small generated
    data of every kind it accepts: numbers, sample weights, a table with a category column
    and missing values, sparse rows, and a table large enough for the multi-threaded paths;
    then predicts with it. Run it once when building a Docker image or a CI cache
    (``treelearn compile`` on the command line) so that the first real fit starts warm. The
    estimators' own parameters are kept (``splitter``, ``max_leaf_nodes``, ``criterion``, ...
    and ``n_jobs`` decide which kernels are compiled: a forest grown on one thread uses the
    multi-threaded node kernels, one grown on several threads the single-threaded ones),
    except the number of members.

    Numba compiles one kernel at a time in a process, so with several estimators each is
    warmed up in a Python process of its own, ``processes`` at a time, all storing into
    Numba's cache (this process then loads what they compiled when it needs it).

    Parameters
    ----------
    estimators : iterable of estimators, default=None
        Unfitted treelearn estimators; None: a :class:`~treelearn.DecisionTreeClassifier` and
        a :class:`~treelearn.DecisionTreeRegressor`, each with the exact and the histogram
        splitter.
    verbose : bool, default=False
        Print a line per estimator and kind of input, with its seconds, to standard error.
    processes : int, default=None
        Warm-up processes at a time; None: one per CPU, at most one per estimator. 1, and
        whenever Numba's cache is off, warms up in this process.
    done : callable, default=None
        Called as ``done(index, lines)`` when the warm-up of ``estimators[index]`` ends.

    Returns
    -------
    list of str
        One line per warm-up fit, in the order of the estimators: the estimator, the input
        and the seconds it took.
    """
    from numba import config

    from ._estimators import DecisionTreeClassifier, DecisionTreeRegressor

    if estimators is None:
        estimators = [DecisionTreeClassifier(), DecisionTreeRegressor(),
                      DecisionTreeClassifier(splitter="hist"),
                      DecisionTreeRegressor(splitter="hist")]
    models = _checked(estimators)
    if processes is not None and (not isinstance(processes, int) or processes < 1):
        raise ValueError(f"processes must be a positive int or None; got {processes!r}.")
    results: dict[int, list[str]] = {}

    def finish(i: int, lines: list[str]) -> None:
        results[i] = lines
        if verbose:
            for line in lines:
                print(line, file=sys.stderr, flush=True)
        if done is not None:
            done(i, lines)

    workers = min(processes or os.cpu_count() or 1, len(models))
    if config.DISABLE_JIT:  # kernels run as Python: nothing to compile
        for i, est in enumerate(models):
            finish(i, [f"{type(est).__name__}: nothing to compile (NUMBA_DISABLE_JIT)"])
    elif workers > 1 and compiling.caching():
        _warm_up_in_processes(models, workers, finish)
    else:
        for i, est in enumerate(models):
            finish(i, _warm_up(est))
    return [line for i in range(len(models)) for line in results[i]]
