"""Quantile regression forests and proximities against quantile-forest (the ``bench`` extra).

    python benchmarks/bench_forest_extras.py --part quantile
    python benchmarks/bench_forest_extras.py --part proximity
    python benchmarks/bench_forest_extras.py --part monotonic
    python benchmarks/bench_forest_extras.py --part quantile --quick     # a minute

Parts (each prints a Markdown table and writes ``results/forest-extras-<part>.json``):

* ``quantile``: fit and predict (quantiles 0.05, 0.5, 0.95 of held-out rows) of our
  ``RandomForestQuantileRegressor`` and quantile-forest's, the same trees (100, two threads,
  ``max_features=1.0``), on real-shaped regression tables (``realshaped.diamonds`` and
  ``realshaped.flights``: categories as integer codes, 5-1,500 distinct values per column;
  quantile-forest refuses holes, so none), fully grown and with ``min_samples_leaf=5``.
  quantile-forest keeps every leaf row (``max_samples_leaf=None``, Meinshausen's forest, what
  ours keeps) and, in a second row, its default of one random row per leaf. Also: the bytes
  each keeps for the leaves, and the largest difference between the two predictions.
* ``proximity``: Breiman's proximities of 10,000 rows in a 500-tree forest: ours dense and
  top-100 sparse, quantile-forest's ``proximity_counts`` (a list of (row, count) per row).
* ``monotonic``: fit time with and without monotonic constraints of our tree and forest (exact
  and hist) and scikit-learn's, on the diamonds-shaped table (price increasing in carat, x, y
  and z) and a classification of it (price above the median); the ratio constrained /
  unconstrained is the target (at most 1.2).

Best of ``--repeat`` (default 3) warm runs; the first call of each kernel is not timed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def best_of(fn, repeat: int):
    out, best = None, np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def _table(name: str, n: int):
    import realshaped

    df, y, _ = realshaped.TABLES[name](n)
    X = realshaped.ordinal(df).astype(np.float64)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    cut = int(0.8 * len(y))
    return X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]


def part_quantile(args) -> list[dict]:
    from quantile_forest import RandomForestQuantileRegressor as QF

    from treelearn.ensemble import RandomForestQuantileRegressor

    sizes = {"diamonds": 53_940, "flights": 100_000}
    if args.quick:
        sizes = {"diamonds": 10_000}
    qs = [0.05, 0.5, 0.95]
    rows = []
    for name, n in sizes.items():
        X, y, Xt, yt = _table(name, n)
        for leaf in (1, 5):
            common = dict(n_estimators=args.trees, min_samples_leaf=leaf, random_state=0,
                          n_jobs=2)
            ours = RandomForestQuantileRegressor(**common)
            ours.fit(X[:2000], y[:2000]).predict(Xt[:10], quantiles=qs)  # compile
            _, t_fit = best_of(lambda ours=ours, X=X, y=y: ours.fit(X, y), args.repeat)
            p_ours, t_pred = best_of(lambda ours=ours, Xt=Xt: ours.predict(Xt, quantiles=qs),
                                     args.repeat)
            store = sum(a.nbytes for a in ours._leaf_store.values())
            cover = float(np.mean((yt >= p_ours[:, 0]) & (yt <= p_ours[:, 2])))
            row = {"table": name, "rows": len(y), "min_samples_leaf": leaf,
                   "ours_fit_s": t_fit, "ours_predict_s": t_pred, "ours_store_mb": store / 1e6,
                   "coverage_90": cover}
            for label, msl in (("all", None), ("one", 1)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs = QF(max_samples_leaf=msl, **common)
                    _, tf = best_of(lambda theirs=theirs, X=X, y=y: theirs.fit(X, y), args.repeat)
                    p, tp = best_of(lambda theirs=theirs, Xt=Xt: theirs.predict(Xt, quantiles=qs),
                                    args.repeat)
                row[f"qf_{label}_fit_s"] = tf
                row[f"qf_{label}_predict_s"] = tp
                row[f"qf_{label}_store_mb"] = np.asarray(theirs.forest_.y_train_leaves).nbytes / 1e6
                if label == "all":
                    row["max_abs_diff"] = float(np.max(np.abs(p - p_ours)))
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("| table | rows | min leaf | ours fit / predict | quantile-forest (all rows) fit / "
          "predict | ratio fit / predict | quantile-forest (one row per leaf) fit / predict "
          "| leaf store ours / qf all / qf one | 90% coverage | max diff |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['table']} | {r['rows']:,} | {r['min_samples_leaf']} "
              f"| {r['ours_fit_s']:.2f} / {r['ours_predict_s']:.2f} s "
              f"| {r['qf_all_fit_s']:.2f} / {r['qf_all_predict_s']:.2f} s "
              f"| {r['qf_all_fit_s'] / r['ours_fit_s']:.1f}x / "
              f"{r['qf_all_predict_s'] / r['ours_predict_s']:.1f}x "
              f"| {r['qf_one_fit_s']:.2f} / {r['qf_one_predict_s']:.2f} s "
              f"| {r['ours_store_mb']:.0f} / {r['qf_all_store_mb']:.0f} / "
              f"{r['qf_one_store_mb']:.0f} MB | {r['coverage_90']:.3f} "
              f"| {r['max_abs_diff']:.3g} |")
    return rows


def part_proximity(args) -> list[dict]:
    from quantile_forest import RandomForestQuantileRegressor as QF
    from sklearn.datasets import make_classification

    from treelearn.ensemble import RandomForestClassifier, RandomForestRegressor

    n, trees = (2000, 100) if args.quick else (10_000, 500)
    X, y = make_classification(n, 20, n_informative=8, random_state=0)
    rows = []
    for kind in ("classifier", "regressor"):
        if kind == "classifier":
            forest = RandomForestClassifier(n_estimators=trees, random_state=0, n_jobs=2)
            forest.fit(X, y)
        else:
            forest = RandomForestRegressor(n_estimators=trees, max_features=1 / 3,
                                           random_state=0, n_jobs=2)
            forest.fit(X, X[:, 0] + y)
        forest.proximities(X[:50], top_k=None)
        forest.proximities(X[:50], top_k=5)  # compile
        _, t_dense = best_of(lambda f=forest: f.proximities(X, top_k=None), args.repeat)
        _, t_top = best_of(lambda f=forest: f.proximities(X, top_k=100), args.repeat)
        _, t_out = best_of(lambda f=forest: f.outlier_scores(X, y), args.repeat)
        row = {"forest": kind, "rows": n, "trees": trees, "ours_dense_s": t_dense,
               "ours_top100_s": t_top, "ours_outlier_s": t_out}
        if kind == "regressor":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                qf = QF(n_estimators=trees, max_features=1 / 3, random_state=0, n_jobs=2)
                qf.fit(X, X[:, 0] + y)
                _, t_qf = best_of(lambda qf=qf: qf.proximity_counts(X, max_proximities=100),
                                  min(args.repeat, 1))
            row["qf_proximity_counts_top100_s"] = t_qf
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print("| forest | rows x trees | ours dense | ours top-100 | outlier scores "
          "| quantile-forest proximity_counts (top 100) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        qf = r.get("qf_proximity_counts_top100_s")
        print(f"| {r['forest']} | {r['rows']:,} x {r['trees']} | {r['ours_dense_s']:.2f} s "
              f"| {r['ours_top100_s']:.2f} s | {r['ours_outlier_s']:.2f} s "
              f"| {'' if qf is None else f'{qf:.2f} s'} |")
    return rows


def part_monotonic(args) -> list[dict]:
    import sklearn.ensemble as ske
    import sklearn.tree as skt

    import treelearn as tl

    n = 10_000 if args.quick else 53_940
    X, y, _, _ = _table("diamonds", int(n / 0.8))
    names = ["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]
    cst = [1 if c in ("carat", "x", "y", "z") else 0 for c in names]
    yc = (y > np.median(y)).astype(int)
    cases = [
        ("tree", "regression", lambda m: tl.DecisionTreeRegressor(random_state=0,
                                                                   monotonic_cst=m),
         lambda m: skt.DecisionTreeRegressor(random_state=0, monotonic_cst=m), y),
        ("tree hist", "regression",
         lambda m: tl.DecisionTreeRegressor(splitter="hist", random_state=0, monotonic_cst=m),
         None, y),
        ("forest", "regression",
         lambda m: tl.RandomForestRegressor(n_estimators=args.trees, max_features=1 / 3,
                                            n_jobs=2, random_state=0, monotonic_cst=m),
         lambda m: ske.RandomForestRegressor(n_estimators=args.trees, max_features=1 / 3,
                                             n_jobs=2, random_state=0, monotonic_cst=m), y),
        ("forest hist", "regression",
         lambda m: tl.RandomForestRegressor(n_estimators=args.trees, max_features=1 / 3,
                                            splitter="hist", n_jobs=2, random_state=0,
                                            monotonic_cst=m), None, y),
        ("forest", "classification",
         lambda m: tl.RandomForestClassifier(n_estimators=args.trees, n_jobs=2,
                                             random_state=0, monotonic_cst=m),
         lambda m: ske.RandomForestClassifier(n_estimators=args.trees, n_jobs=2,
                                              random_state=0, monotonic_cst=m), yc),
    ]
    rows = []
    for name, task, ours, theirs, target in cases:
        ours(cst).fit(X[:2000], target[:2000])  # compile
        ours(None).fit(X[:2000], target[:2000])
        _, t_free = best_of(lambda o=ours, t=target: o(None).fit(X, t), args.repeat)
        _, t_mono = best_of(lambda o=ours, t=target: o(cst).fit(X, t), args.repeat)
        row = {"model": name, "task": task, "rows": len(target), "ours_free_s": t_free,
               "ours_monotonic_s": t_mono, "ratio": t_mono / t_free}
        if theirs is not None:
            _, s_free = best_of(lambda o=theirs, t=target: o(None).fit(X, t), args.repeat)
            _, s_mono = best_of(lambda o=theirs, t=target: o(cst).fit(X, t), args.repeat)
            row |= {"sklearn_free_s": s_free, "sklearn_monotonic_s": s_mono}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print("| model | task | rows | ours free | ours monotonic | ratio | scikit-learn free "
          "| scikit-learn monotonic |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        sk = (f"{r['sklearn_free_s']:.2f} s | {r['sklearn_monotonic_s']:.2f} s"
              if "sklearn_free_s" in r else " | ")
        print(f"| {r['model']} | {r['task']} | {r['rows']:,} | {r['ours_free_s']:.2f} s "
              f"| {r['ours_monotonic_s']:.2f} s | {r['ratio']:.2f} | {sk} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("quantile", "proximity", "monotonic"), required=True)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = {"quantile": part_quantile, "proximity": part_proximity,
            "monotonic": part_monotonic}[args.part](args)
    out = HERE / "results" / f"forest-extras-{args.part}{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
