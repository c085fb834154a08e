"""The first run: what a new user waits for, each case in a fresh process.

    python benchmarks/bench_coldstart.py [--repeats 1] [--cases a,b,...] [--base REV]
                                         [-o results.json]

Every case runs in a new Python process with its own empty kernel cache (``NUMBA_CACHE_DIR``
pointed at a new folder) and user cache folder (``XDG_CACHE_HOME``: no kept verdict of the
linking self-test), which is what a user meets after installing, after an upgrade and in
every CI job; "warm" cases reuse the cache a cold case filled. Cases (the first-run issue's
table):

- ``numeric``: ``import treelearn`` and a first ``DecisionTreeClassifier`` fit on 5,000 x 10
  numbers (whole process, interpreter start included);
- ``forest``: a first ``RandomForestClassifier(n_estimators=10)`` fit (the fit alone);
- ``table``: a first fit on a DataFrame with a category column and holes, after a numeric fit
  in the same process (the table fit alone);
- ``hist``: a first ``splitter="hist"`` fit after a numeric fit (the hist fit alone);
- ``numeric-large``, ``hist-large``: ``import treelearn`` and a first fit (exact,
  ``splitter="hist"``) on 100,000 x 10 numbers (whole process): data large enough for the
  kernels that search or split a large node on all threads, which a fit on 5,000 rows never
  compiles (the histogram splitter's node loop is then compiled a second time, with the
  threads' buffers: 47 s for 5,000 rows, 68 s for 100,000, on an empty cache);
- ``optimal``: ``import treelearn`` and a first ``OptimalTreeClassifier(max_depth=3)`` fit on
  1,000 x 10 numbers (whole process);
- ``oblique``, ``oblique-forest``: ``import treelearn`` and a first ``ObliqueTreeClassifier``
  fit, or ``ObliqueRandomForestClassifier(n_estimators=10)``, on 5,000 x 10 numbers (whole
  process);
- ``demo``: ``treelearn demo`` (the whole command);
- ``warmup``: ``treelearn compile`` (its defaults), then a new process's first fit of the
  default CART tree on the same cache (the fit alone);
- ``warm``: the ``numeric`` process again on a filled cache, beside the same process with
  scikit-learn's tree (the ratio of the two).

Timings of a single run vary by 10-25% on the project's 2-core machine; ``--repeats`` takes
the best. ``--base REV`` times the commit ``REV`` (exported as ``compare.py`` does) beside the
working tree, the two runs of each repeat one after the other, and prints their ratio.
Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

_DATA = ("import numpy as np; rng = np.random.default_rng(0); "
         "X = rng.normal(size=(5000, 10)); y = (X[:, 0] + rng.normal(size=5000) > 0).astype(int)")
_DATA_LARGE = _DATA.replace("5000", "100_000")
_TABLE = ("import pandas as pd; df = pd.DataFrame(X[:, :4], columns=list('abcd')); "
          "df['kind'] = pd.Categorical(rng.choice(list('pqrst'), size=len(df))); "
          "df.loc[::7, 'a'] = np.nan")
_TIMED = "import time; t = time.perf_counter(); {code}; print('TIMED', time.perf_counter() - t)"

CASES = {
    "numeric": (f"import treelearn as tl; {_DATA}; tl.DecisionTreeClassifier().fit(X, y)",
                None),
    "forest": (f"import treelearn as tl; {_DATA}",
               "tl.RandomForestClassifier(n_estimators=10).fit(X, y)"),
    "table": (f"import treelearn as tl; {_DATA}; {_TABLE}; tl.DecisionTreeClassifier().fit(X, y)",
              "tl.DecisionTreeClassifier().fit(df, y)"),
    "hist": (f"import treelearn as tl; {_DATA}; tl.DecisionTreeClassifier().fit(X, y)",
             "tl.DecisionTreeClassifier(splitter='hist').fit(X, y)"),
    "numeric-large": (f"import treelearn as tl; {_DATA_LARGE}; "
                      "tl.DecisionTreeClassifier().fit(X, y)", None),
    "hist-large": (f"import treelearn as tl; {_DATA_LARGE}; "
                   "tl.DecisionTreeClassifier(splitter='hist').fit(X, y)", None),
    "optimal": (f"import treelearn as tl; {_DATA}; "
                "tl.OptimalTreeClassifier(max_depth=3, verbose=False).fit(X[:1000], y[:1000])",
                None),
    "oblique": (f"import treelearn as tl; {_DATA}; tl.ObliqueTreeClassifier().fit(X, y)",
                None),
    "oblique-forest": (f"import treelearn as tl; {_DATA}; "
                       "tl.ObliqueRandomForestClassifier(n_estimators=10).fit(X, y)", None),
}


#: The package timed: None for the installed one (the working tree), else a folder holding a
#: ``treelearn`` package put first on ``PYTHONPATH`` (``--base``).
_PACKAGE: str | None = None


def _python(setup: str, timed: str | None, cache: str) -> float:
    """Seconds of ``timed`` (or of the whole process when None) in a new process."""
    code = setup if timed is None else f"{setup}; " + _TIMED.format(code=timed)
    return _process([sys.executable, "-c", code], cache, timed is not None)


def _process(cmd: list[str], cache: str, timed: bool = False) -> float:
    # a new user's folder for what treelearn keeps per environment (the verdict of its
    # linking self-test, engine/linking.py): the first process of a case runs the self-test
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "TREELEARN_COMPILE_NOTICE": "0",
           "XDG_CACHE_HOME": os.path.join(cache, "user-cache")}
    if _PACKAGE is not None:
        env["PYTHONPATH"] = os.pathsep.join([_PACKAGE, env.get("PYTHONPATH", "")])
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    whole = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... failed:\n{out.stderr[-2000:]}")
    if timed:
        return float(out.stdout.split("TIMED")[-1].split()[0])
    return whole


def _treelearn() -> list[str]:
    return [sys.executable, "-m", "treelearn.cli"]


def run_case(name: str) -> dict:
    cache = tempfile.mkdtemp(prefix="tl-cold-")
    try:
        if name in CASES:
            return {"cold_s": _python(*CASES[name], cache)}
        if name == "demo":
            return {"cold_s": _process(_treelearn() + ["demo"], cache)}
        if name == "warmup":
            compile_s = _process(_treelearn() + ["compile"], cache)
            fit_s = _python(f"import treelearn as tl; {_DATA}",
                            "tl.CARTClassifier(n_jobs=-1).fit(X, y)", cache)
            return {"compile_s": compile_s, "first_fit_after_s": fit_s}
        if name == "warm":
            _python(CASES["numeric"][0], None, cache)  # fills the cache
            ours = _python(CASES["numeric"][0], None, cache)
            theirs = _python("from sklearn.tree import DecisionTreeClassifier; "
                             f"{_DATA}; DecisionTreeClassifier().fit(X, y)", None, cache)
            return {"treelearn_s": ours, "sklearn_s": theirs, "ratio": ours / theirs}
        raise ValueError(f"unknown case {name!r}; the cases: {', '.join(ORDER)}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)


ORDER = (*CASES, "demo", "warmup", "warm")


def main() -> None:
    global _PACKAGE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="runs per case; the best is kept")
    ap.add_argument("--cases", default=",".join(ORDER), help="cases, separated by commas")
    ap.add_argument("--base", help="a commit timed beside the working tree")
    ap.add_argument("-o", "--output", help="write the results as JSON")
    args = ap.parse_args()
    versions: dict[str, str | None] = {"tree": None}
    if args.base:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from compare import install

        versions = {args.base: str(install(args.base)), "tree": None}
    results: dict = {}
    for name in args.cases.split(","):
        runs: dict[str, list[dict]] = {v: [] for v in versions}
        for _ in range(max(1, args.repeats)):
            for version, package in versions.items():
                _PACKAGE = package
                runs[version].append(run_case(name))
        for version, got in runs.items():
            key = next(iter(got[0]))
            best = min(got, key=lambda r: r[key])
            results.setdefault(name, {})[version] = {
                **best, "runs": [round(r[key], 1) for r in got]}
            shown = ", ".join(f"{k} {v:.2f}" for k, v in best.items())
            print(f"{name:<8} {version:<8} {shown}  (runs {results[name][version]['runs']})",
                  flush=True)
        if args.base:
            key = next(iter(results[name]["tree"]))
            ratio = results[name]["tree"][key] / results[name][args.base][key]
            print(f"{name:<8} tree/base {key} {ratio:.2f}", flush=True)
    if args.output:
        with open(args.output, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    from treelearn._progress import run_main

    run_main(main)
