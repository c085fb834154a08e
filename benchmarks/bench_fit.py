"""Fit and predict time of treelearn's exact splitter against scikit-learn, same data, same run.

    python benchmarks/bench_fit.py            # the issue's table (100k and 1M rows; minutes)
    python benchmarks/bench_fit.py --quick    # 100k rows only
    python benchmarks/bench_fit.py --compile  # also cold/warm compile overhead (clears the cache)

Each case: median of ``--repeats`` runs (default 3) of ``fit`` on 80% of the rows, then the
held-out score; predict time is measured on 1M rows. A table is printed and JSON written to
``benchmarks/results/bench_fit.json``. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from sklearn import tree as sktree
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

import treelearn as tl

HERE = Path(__file__).resolve().parent


def _data(kind: str, n: int):
    if kind == "classification":
        X, y = make_classification(n_samples=n, n_features=28, n_informative=14,
                                   random_state=0)
    else:
        X, y = make_regression(n_samples=n, n_features=28, n_informative=14, noise=10.0,
                               random_state=0)
    X = X.astype(np.float32)
    return train_test_split(X, y, test_size=0.2, random_state=0)


def _median_time(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def bench_case(kind: str, n: int, max_depth, repeats: int) -> dict:
    Xtr, Xte, ytr, yte = _data(kind, n)
    if kind == "classification":
        ours, theirs = tl.DecisionTreeClassifier, sktree.DecisionTreeClassifier
    else:
        ours, theirs = tl.DecisionTreeRegressor, sktree.DecisionTreeRegressor
    row = {"kind": kind, "n_rows": n, "max_depth": max_depth}
    for name, cls in (("treelearn", ours), ("sklearn", theirs)):
        t, est = _median_time(lambda cls=cls: cls(max_depth=max_depth, random_state=0)
                              .fit(Xtr, ytr), repeats)
        row[f"{name}_fit_s"] = t
        row[f"{name}_score"] = float(est.score(Xte, yte))
        row[f"{name}_nodes"] = int(est.tree_.node_count)
        print(f"  {kind} n={n} depth={max_depth} {name}: {t:.2f} s", file=sys.stderr)
    row["speedup"] = row["sklearn_fit_s"] / row["treelearn_fit_s"]
    return row


def bench_predict(repeats: int) -> dict:
    Xtr, _, ytr, _ = _data("classification", 200_000)
    X = np.random.default_rng(0).normal(size=(1_000_000, 28)).astype(np.float32)
    ours = tl.DecisionTreeClassifier(random_state=0).fit(Xtr, ytr)
    theirs = sktree.DecisionTreeClassifier(random_state=0).fit(Xtr, ytr)
    ours.predict(X[:10])
    t_ours, p1 = _median_time(lambda: ours.predict(X), repeats)
    t_theirs, p2 = _median_time(lambda: theirs.predict(X), repeats)
    assert np.array_equal(p1, p2), "predictions differ"
    return {"kind": "predict 1M rows", "treelearn_s": t_ours, "sklearn_s": t_theirs,
            "speedup": t_theirs / t_ours, "nodes": int(ours.tree_.node_count)}


COMPILE_SCRIPT = """
import time
t = time.perf_counter()
import numpy as np
import treelearn
from sklearn.datasets import load_iris
t_import = time.perf_counter() - t
X, y = load_iris(return_X_y=True)
t = time.perf_counter()
treelearn.DecisionTreeClassifier(random_state=0).fit(X, y)
print(t_import, time.perf_counter() - t)
"""


def bench_compile() -> dict:
    """Cold (empty Numba cache) and warm (cache present) import + first fit, new processes."""
    import treelearn

    pkg = Path(treelearn.__file__).parent
    for f in list(pkg.rglob("*.nbi")) + list(pkg.rglob("*.nbc")):
        f.unlink()
    out = {}
    for label in ("cold", "warm", "warm_again"):
        t = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], capture_output=True,
                             text=True, check=True)
        total = time.perf_counter() - t
        t_import, t_fit = map(float, res.stdout.split())
        out[label] = {"process_s": total, "import_s": t_import, "first_fit_s": t_fit}
    bare = subprocess.run([sys.executable, "-c", "import sklearn.base, numba, numpy"],
                          capture_output=True)
    assert bare.returncode == 0
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sklearn.base, sklearn.utils.validation, numba"],
                   check=True)
    out["dependencies_import_process_s"] = time.perf_counter() - t
    return out


def print_table(rows: list[dict], predict: dict | None, compile_: dict | None) -> None:
    head = (f"{'case':<34}{'treelearn s':>12}{'sklearn s':>12}{'speedup':>9}"
            f"{'score tl':>10}{'score sk':>10}{'nodes tl':>10}{'nodes sk':>10}")
    print(head)
    print("-" * len(head))
    for r in rows:
        case = f"{r['kind'][:5]} {r['n_rows']:>9,} depth={r['max_depth']}"
        print(f"{case:<34}{r['treelearn_fit_s']:>12.2f}{r['sklearn_fit_s']:>12.2f}"
              f"{r['speedup']:>8.1f}x{r['treelearn_score']:>10.4f}{r['sklearn_score']:>10.4f}"
              f"{r['treelearn_nodes']:>10}{r['sklearn_nodes']:>10}")
    if predict:
        print(f"{'predict 1M rows':<34}{predict['treelearn_s']:>12.3f}{predict['sklearn_s']:>12.3f}"
              f"{predict['speedup']:>8.1f}x  ({predict['nodes']} nodes)")
    if compile_:
        for label in ("cold", "warm", "warm_again"):
            c = compile_[label]
            print(f"{label + ' import + first fit':<34}{c['import_s'] + c['first_fit_s']:>12.2f}"
                  f"   (import {c['import_s']:.2f} s, first fit {c['first_fit_s']:.2f} s, "
                  f"whole process {c['process_s']:.2f} s)")
        print(f"{'importing sklearn+numba alone':<34}"
              f"{compile_['dependencies_import_process_s']:>12.2f}   (whole process)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100k rows only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--compile", action="store_true", help="measure compile overhead too")
    ap.add_argument("--no-predict", action="store_true")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    compile_ = bench_compile() if args.compile else None
    # compile the kernels used below once, outside the timings
    Xw, _, yw, _ = _data("classification", 40_000)
    tl.DecisionTreeClassifier(max_depth=3).fit(Xw, yw)
    tl.DecisionTreeRegressor(max_depth=3).fit(Xw, yw.astype(float))
    cases = [("classification", 100_000, None), ("classification", 100_000, 10)]
    if not args.quick:
        cases += [("classification", 1_000_000, None), ("classification", 1_000_000, 10),
                  ("regression", 1_000_000, 10)]
    rows = [bench_case(kind, n, depth, args.repeats) for kind, n, depth in cases]
    predict = None if args.no_predict else bench_predict(args.repeats)
    print_table(rows, predict, compile_)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_fit.json").write_text(json.dumps(
        {"rows": rows, "predict": predict, "compile": compile_, "cpus": os.cpu_count()},
        indent=2))


if __name__ == "__main__":
    main()
