"""Random forests on real tables against scikit-learn (the forest-speed issue's tables).

    python benchmarks/bench_forest_speed.py --diamonds PATH/diamonds.csv [--quick]
                                            [--repeats 3] [-o results.json]

Tables (each split 40,000 / the rest at random, seed 0, or 80 / 20 when smaller):

- ``diamonds-price``: ggplot2's diamonds (53,940 rows; ``--diamonds``, a CSV as in the
  ``diamonds.csv`` of github.com/mwaskom/seaborn-data, ggplot2's data), target ``price``, its
  text columns as ordinal codes; without the file, ``realshaped.diamonds`` (the same shape,
  generated) stands in and the table says so. Three regimes: bootstrap with
  ``max_features=1/3`` (scikit-learn's regression default before 1.1, what the issue
  measured), ``bootstrap=False``, and ``max_features=1.0``.
- ``diamonds-cut``: the same rows, target ``cut`` (5 classes), ``max_features="sqrt"``.
- ``credit-status``: modeldata's ``credit_data`` (4,454 loans, holes), target ``Status``,
  from the copy the tests read (``tests/data/modeldata``), text columns as codes.

Every forest has 100 fully grown trees (10 with ``--quick``). Each (table, regime, library,
threads) runs in a fresh process: one untimed fit on 2,000 rows (kernels load, threads
start), then ``--repeats`` fits on the training rows, the forest dropped between them; the
best time is kept, with the process's peak memory (``ru_maxrss``: the largest fit's peak,
data included; and before the timed fits: imports, data, the untimed fit), the forest's
node count, the held-out score (RMSE or accuracy), and for treelearn the time inside the
builder's node loops. Derived columns: microseconds per node
(fit time / nodes, one thread), the per-tree work outside the node loop ((fit - loop) /
trees, one thread), scikit-learn's time over ours, and two-thread scaling.

``--sizes 500,2000,8000,40000``: the per-node table instead, microseconds per node of
one-thread forests on the first N training rows of diamonds-price (bootstrap,
``max_features=1/3``), scikit-learn beside: a fully grown tree on fewer rows has smaller
nodes throughout, so the rows stand in for the node sizes (scikit-learn's time cannot be
split by node). Not a test.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
CREDIT_CSV = HERE.parent / "tests" / "data" / "modeldata" / "credit_data.csv"
LIBS = ("sklearn", "exact", "hist")
REGIMES = {"bootstrap": {"max_features": 1 / 3},
           "no-bootstrap": {"max_features": 1 / 3, "bootstrap": False},
           "all-features": {"max_features": 1.0}}


def _codes(df: pd.DataFrame) -> np.ndarray:
    out = np.empty(df.shape)
    for j, c in enumerate(df.columns):
        col = df[c]
        if not pd.api.types.is_numeric_dtype(col):
            codes = col.astype("category").cat.codes.to_numpy().astype(float)
            codes[codes < 0] = np.nan
            out[:, j] = codes
        else:
            out[:, j] = col.to_numpy(dtype=float)
    return out


def table(name: str, diamonds: str | None) -> tuple[np.ndarray, np.ndarray, str, str]:
    """``(X, y, task, source)`` of a table."""
    if name.startswith("diamonds"):
        if diamonds:
            df = pd.read_csv(diamonds)
            source = "ggplot2's diamonds"
        else:
            sys.path.insert(0, str(HERE))
            from realshaped import diamonds as shaped

            df, price, _ = shaped()
            df["price"] = price
            source = "diamonds-shaped (generated: pass --diamonds for the real table)"
        if name == "diamonds-price":
            return _codes(df.drop(columns="price")), df["price"].to_numpy(float), \
                "regression", source
        y = df["cut"].astype("category").cat.codes.to_numpy()
        return _codes(df.drop(columns="cut")), y, "classification", source
    df = pd.read_csv(CREDIT_CSV)
    y = (df.pop("Status") == "bad").to_numpy(np.int64)
    return _codes(df), y, "classification", "modeldata's credit_data"


def _split(n: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.random.default_rng(0).permutation(n)
    cut = 40_000 if n > 50_000 else int(0.8 * n)
    return idx[:cut], idx[cut:]


def worker(spec: dict) -> dict:
    """One (table, regime, library, threads) in this process (see the module notes)."""
    X, y, task, source = table(spec["table"], spec["diamonds"])
    tr, te = _split(len(y))
    if spec.get("rows"):  # the per-node table: the first rows of the training rows
        tr = tr[:spec["rows"]]
    kw = dict(REGIMES.get(spec["regime"], {"max_features": "sqrt"}),
              n_estimators=spec["trees"], n_jobs=spec["threads"], random_state=0)
    loop = [0.0]
    if spec["lib"] == "sklearn":
        from sklearn import ensemble as lib
    else:
        import treelearn as lib
        from treelearn.engine import fit

        kw["splitter"] = "hist" if spec["lib"] == "hist" else "best"

        def timed(kernel, sign):  # the node loops: fit.drive less its assembly of the Tree
            def call(*a, **k):
                t = time.perf_counter()
                try:
                    return kernel(*a, **k)
                finally:
                    loop[0] += sign * (time.perf_counter() - t)
            return call

        fit.drive = timed(fit.drive, 1.0)  # the layouts call it through the module
        fit.assemble = timed(fit.assemble, -1.0)
    cls = lib.RandomForestRegressor if task == "regression" else lib.RandomForestClassifier
    cls(**{**kw, "n_estimators": 2}).fit(X[tr[:2000]], y[tr[:2000]])
    best, best_loop = np.inf, 0.0
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for _ in range(spec["repeats"]):
        gc.collect()
        loop[0] = 0.0
        t = time.perf_counter()
        model = cls(**kw).fit(X[tr], y[tr])
        took = time.perf_counter() - t
        if took < best:
            best, best_loop = took, loop[0]
            pred = model.predict(X[te])
            score = (float(np.sqrt(np.mean((pred - y[te]) ** 2))) if task == "regression"
                     else float(np.mean(pred == y[te])))
            nodes = int(sum(e.tree_.node_count for e in model.estimators_))
        del model
    return {"fit_s": best, "loop_s": best_loop, "score": score, "nodes": nodes,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "before_mb": before,
            "source": source, "task": task}


def run(spec: dict, timeout: float) -> dict | None:
    out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)],
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        print(f"  failed: {spec}\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--diamonds", help="ggplot2's diamonds as CSV (see the module notes)")
    ap.add_argument("--cases", default="diamonds-price,diamonds-cut,credit-status")
    ap.add_argument("--regimes", default=",".join(REGIMES),
                    help="diamonds-price's regimes, separated by commas")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10-tree forests")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--sizes", help="instead: the per-node table, us per node of one-thread "
                    "forests on the first N training rows of diamonds-price (bootstrap, "
                    "max_features=1/3) for each N given, separated by commas "
                    "(e.g. 500,2000,8000,40000): smaller tables, smaller nodes")
    ap.add_argument("-o", "--output")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    trees = 10 if args.quick else 100
    rows = []
    if args.sizes:
        print(f"{'rows':>7} " + " ".join(f"{lib + ' us/node':>16}" for lib in
                                         args.libs.split(",")) + "   nodes (sklearn)")
        for size in (int(v) for v in args.sizes.split(",")):
            cells, nodes = [], 0
            for lib in args.libs.split(","):
                spec = {"table": "diamonds-price", "regime": "bootstrap", "lib": lib,
                        "threads": 1, "trees": trees, "repeats": args.repeats,
                        "diamonds": args.diamonds, "rows": size}
                got = run(spec, args.timeout)
                if got is None:
                    cells.append(f"{'failed':>16}")
                    continue
                rows.append(spec | got)
                nodes = nodes or got["nodes"]
                cells.append(f"{1e6 * got['fit_s'] / got['nodes']:16.3f}")
            print(f"{size:7d} " + " ".join(cells) + f"   {nodes:,}", flush=True)
        if args.output:
            Path(args.output).write_text(json.dumps(rows, indent=1))
        return
    for case in args.cases.split(","):
        regimes = args.regimes.split(",") if case == "diamonds-price" else ["sqrt"]
        for regime in regimes:
            res = {}
            for threads in (int(t) for t in args.threads.split(",")):
                for lib in args.libs.split(","):
                    spec = {"table": case, "regime": regime, "lib": lib, "threads": threads,
                            "trees": trees, "repeats": args.repeats, "diamonds": args.diamonds}
                    got = run(spec, args.timeout)
                    if got is None:
                        continue
                    res[lib, threads] = got
                    rows.append(spec | got)
                    extra = ""
                    if lib != "sklearn" and threads == 1:
                        outside = 1e3 * (got["fit_s"] - got["loop_s"]) / trees
                        extra = (f"  {1e6 * got['fit_s'] / got['nodes']:.2f} us/node, "
                                 f"outside the loop {outside:.1f} ms/tree")
                    ratio = ""
                    if ("sklearn", threads) in res and lib != "sklearn":
                        theirs = res["sklearn", threads]["fit_s"]
                        ratio = f"  sklearn/ours {theirs / got['fit_s']:.2f}"
                    print(f"{case:15s} {regime:13s} {lib:7s} {threads} thr  {got['fit_s']:7.2f} s"
                          f"  {got['peak_mb']:5.0f} MB (before {got['before_mb']:4.0f})  "
                          f"nodes {got['nodes']:>9,}  score "
                          f"{got['score']:.4f}{ratio}{extra}", flush=True)
            for lib in args.libs.split(","):
                if (lib, 1) in res and (lib, 2) in res:
                    print(f"{'':15s} {'':13s} {lib:7s} scaling 1->2 threads "
                          f"{res[lib, 1]['fit_s'] / res[lib, 2]['fit_s']:.2f}x", flush=True)
    if rows:
        print(f"source of diamonds: {rows[0]['source']}" if args.cases.startswith("diamonds")
              else "")
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
