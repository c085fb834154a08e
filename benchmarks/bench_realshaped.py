"""Real-shaped tables: treelearn against scikit-learn and LightGBM's single tree, same run.

    python benchmarks/bench_realshaped.py                      # every table, both configs
    python benchmarks/bench_realshaped.py --tables diamonds adult --configs depth=None

The tables (``realshaped.py``) have the shape of real ones: 9-16 features with 2 to a few
hundred distinct values (a few thousand for some), text categories, holes, continuous targets.
Fully grown trees on them are made of many tiny nodes, where the constant cost per node
decides, the opposite of ``make_classification`` (every value distinct, few large nodes).

Methods, each on 80% of the rows (fit median of ``--repeats`` runs; treelearn is fitted once
before timing, so compilation is not timed), held-out score on the other 20%:

* ``tl exact`` / ``tl hist``: treelearn on the ordinal-coded matrix (categories as integer
  codes, NaN for holes), ``splitter="best"`` / ``"hist"``;
* ``tl exact tab`` / ``tl hist tab``: treelearn on the DataFrame as it is (category columns
  split into subsets of levels, holes learned), the same splitters;
* ``sklearn``: scikit-learn's tree on the ordinal-coded matrix (it handles NaN itself);
* ``lightgbm``: one boosting round, learning rate 1, no regularisation, native categorical
  features, 2 threads, Dataset construction timed with the fit; run for depth 10 only (it
  needs a leaf budget: depth=None would need num_leaves of the order of the rows).

Ratios in the last columns: scikit-learn's fit time over the row's (so larger is faster).
Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import MAX_BINS, PeakMemory  # noqa: E402
from realshaped import TABLES, ordinal  # noqa: E402

import treelearn as tl  # noqa: E402
from treelearn._progress import progress, run_main, say  # noqa: E402

CONFIGS = {"depth=None": {"max_depth": None}, "depth=10": {"max_depth": 10}}
METHODS = ("tl exact", "tl hist", "tl exact tab", "tl hist tab", "sklearn", "lightgbm")


def split(df: pd.DataFrame, y: np.ndarray, seed: int = 0):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(df.shape[0])
    cut = int(0.8 * df.shape[0])
    tr, te = np.sort(idx[:cut]), np.sort(idx[cut:])
    return df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True), y[tr], y[te]


def score(task: str, y, pred) -> float:
    if task == "classification":
        return float(np.mean(pred == y))
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def fit_predict(method: str, task: str, cfg: dict, Xtr, ytr, Xte):
    """Fit on (Xtr, ytr) and predict Xte; return (model, prediction, nodes, fit seconds)."""
    clf = task == "classification"
    if method == "lightgbm":
        import lightgbm as lgb

        t = time.perf_counter()
        cats = [c for c in Xtr.columns if isinstance(Xtr[c].dtype, pd.CategoricalDtype)]
        ds = lgb.Dataset(Xtr, ytr, categorical_feature=cats,
                         params={"max_bin": MAX_BINS, "verbose": -1, "min_data_in_leaf": 1,
                                 "feature_pre_filter": False, "min_data_per_group": 1,
                                 "cat_smooth": 0.0, "cat_l2": 0.0, "max_cat_to_onehot": 4})
        depth = cfg["max_depth"]
        n_class = int(np.max(ytr)) + 1 if clf else 1
        params = {"objective": ("binary" if n_class == 2 else "multiclass") if clf
                  else "regression", "learning_rate": 1.0, "num_leaves": 2 ** depth,
                  "max_depth": depth, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0,
                  "lambda_l2": 0.0, "num_threads": 2, "verbose": -1, "deterministic": True,
                  "min_data_per_group": 1, "cat_smooth": 0.0, "cat_l2": 0.0,
                  "max_cat_threshold": 1000}
        if clf and n_class > 2:
            params["num_class"] = n_class
        model = lgb.train(params, ds, num_boost_round=1)
        fit_s = time.perf_counter() - t
        raw = model.predict(Xte)
        if clf:
            pred = (raw > 0.5).astype(int) if n_class == 2 else np.argmax(raw, axis=1)
        else:
            pred = raw
        leaves = sum(tr["num_leaves"] for tr in model.dump_model()["tree_info"])
        return model, pred, 2 * leaves - 1, fit_s
    if method == "sklearn":
        from sklearn import tree as sk

        cls = sk.DecisionTreeClassifier if clf else sk.DecisionTreeRegressor
        A = ordinal(Xtr)
        t = time.perf_counter()
        model = cls(random_state=0, **cfg).fit(A, ytr)
        fit_s = time.perf_counter() - t
        return model, model.predict(ordinal(Xte)), model.tree_.node_count, fit_s
    parts = method.split()
    splitter = {"exact": "best", "hist": "hist"}[parts[1]]
    table = len(parts) > 2
    cls = tl.DecisionTreeClassifier if clf else tl.DecisionTreeRegressor
    model = cls(splitter=splitter, max_bins=MAX_BINS, random_state=0, **cfg)
    A, B = (Xtr, Xte) if table else (ordinal(Xtr), ordinal(Xte))
    t = time.perf_counter()
    model.fit(A, ytr)
    fit_s = time.perf_counter() - t
    return model, model.predict(B), model.tree_.node_count, fit_s


def run(name: str, cfg_name: str, methods, repeats: int, n: int | None, bar) -> list[dict]:
    df, y, task = TABLES[name](n)
    Xtr, Xte, ytr, yte = split(df, y)
    cfg = CONFIGS[cfg_name]
    rows = []
    for m in methods:
        if m == "lightgbm" and cfg["max_depth"] is None:
            bar.update()
            continue
        if m.startswith("tl"):  # compile first
            k = min(len(ytr), 5000)
            fit_predict(m, task, cfg, Xtr.iloc[:k], ytr[:k], Xte.iloc[:10])
        times, mem = [], 0.0
        for _ in range(repeats):
            with PeakMemory() as pm:
                _, pred, nodes, fit_s = fit_predict(m, task, cfg, Xtr, ytr, Xte)
            times.append(fit_s)
            mem = max(mem, pm.mb)
        row = {"table": name, "rows": int(df.shape[0]), "features": int(df.shape[1]),
               "task": task, "config": cfg_name, "method": m,
               "fit_s": statistics.median(times), "peak_mb": round(mem, 1),
               "score": score(task, yte, pred), "nodes": int(nodes)}
        rows.append(row)
        say(f"  {name} {cfg_name} {m}: fit {row['fit_s']:.3f} s, {nodes} nodes")
        bar.update()
    return rows


def print_table(rows) -> None:
    hdr = (f"{'table':<24}{'config':<12}{'method':<14}{'fit s':>9}{'peak MB':>9}{'score':>8}"
           f"{'nodes':>9}{'sk/this':>9}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        ref = next((q for q in rows if q["table"] == r["table"] and q["config"] == r["config"]
                    and q["method"] == "sklearn"), None)
        ratio = f"{ref['fit_s'] / r['fit_s']:9.2f}" if ref else ""
        name = f"{r['table']} {r['rows']:,}x{r['features']}"
        print(f"{name:<24}{r['config']:<12}{r['method']:<14}{r['fit_s']:9.3f}{r['peak_mb']:9.1f}"
              f"{r['score']:8.4f}{r['nodes']:9d}{ratio}")
    print("sk/this: scikit-learn's fit time over this method's (larger is faster); score: "
          "held-out accuracy or R^2")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--rows", type=int, default=None, help="rows per table (default: its own)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("-o", "--output", default=str(HERE / "results" / "bench_realshaped.json"))
    args = ap.parse_args(argv)
    rows = []
    with progress(len(args.tables) * len(args.configs) * len(args.methods), "benchmark",
                  unit="run") as bar:
        for name in args.tables:
            for cfg_name in args.configs:
                rows += run(name, cfg_name, args.methods, args.repeats, args.rows, bar)
    print()
    print_table(rows)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    run_main(main)
