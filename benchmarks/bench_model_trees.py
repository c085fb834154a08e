"""Model trees (M5) against a CV-pruned CART tree, LightGBM's single linear tree and Cubist.

Prints one table: held-out RMSE and leaves on regression tables (diamonds-like and
flights-like from :mod:`realshaped`, the diamonds-like table with 10% of its cells missing
(M5's routing of missing values against the learned direction and the median),
scikit-learn's diabetes data by 10-fold CV), fit time on
1M x 28 against the constant-leaf tree M5 grows (same growth, no leaf models) and LightGBM's
``linear_tree`` single tree, and extrapolation of a line (train x in [0, 1], test [1, 1.2]).

Cubist (Quinlan's successor to M5, the ``cubist`` wheel, GPL) runs here only, never in the
package: ``pip install cubist`` before the run (the table says when it was missing).

Usage: ``python benchmarks/bench_model_trees.py [--rows 1000000] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd
from realshaped import diamonds, flights, ordinal
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold, train_test_split

import treelearn as tl

try:
    import lightgbm as lgb
except ImportError:  # pragma: no cover - bench extra
    lgb = None
try:
    from cubist import Cubist
except ImportError:  # pragma: no cover - GPL, installed by hand for this benchmark only
    Cubist = None


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def _lgb_linear(X, y):
    # one tree, full step: LightGBM's single linear tree (its default leaves and leaf size)
    m = lgb.LGBMRegressor(n_estimators=1, learning_rate=1.0, linear_tree=True, verbose=-1,
                          num_leaves=31, n_jobs=2)
    return m.fit(X, y)


def cubist_frame(X) -> pd.DataFrame:
    """Columns Cubist accepts: its own names ("y" is taken), categories as strings."""
    X = pd.DataFrame(X).copy()
    X.columns = [f"c_{c}" for c in X.columns]
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].astype(object)
    return X


def _cubist(X, y):
    return Cubist(n_committees=1, neighbors=None, n_rules=500).fit(cubist_frame(X), y)


def methods():
    out = {
        "m5": lambda X, y: tl.M5Regressor(random_state=0).fit(X, y),
        "m5 (weka estimate)": lambda X, y: tl.M5Regressor(random_state=0,
                                                          linear_estimate="weka").fit(X, y),
        "cart (cv)": lambda X, y: tl.CARTRegressor(random_state=0, n_jobs=2).fit(X, y),
    }
    if lgb is not None:
        out["lightgbm linear"] = _lgb_linear
    if Cubist is not None:
        out["cubist"] = _cubist
    return out


def leaves(model) -> int | None:
    if hasattr(model, "tree_"):
        return int(model.tree_.n_leaves)
    if hasattr(model, "booster_"):
        return int(model.booster_.dump_model()["tree_info"][0]["num_leaves"])
    return None


def table_case(name, df, y, rows, fits=None):
    """Held-out RMSE (80/20 split) on a table; numeric codes for the other libraries."""
    Xtr, Xte, ytr, yte = train_test_split(df, y, test_size=0.2, random_state=0)
    Otr, Ote = ordinal(Xtr), ordinal(Xte)
    for meth, fit in (fits or methods()).items():
        t = time.perf_counter()
        if meth.startswith("m5") or meth.startswith("cart"):
            m = fit(Xtr, ytr)
            pred = m.predict(Xte)
        elif meth == "cubist":
            m = fit(Xtr.reset_index(drop=True), ytr)
            test = Xte.reset_index(drop=True).copy()
            for c in test.columns:  # Cubist stops at a level it never saw: make it missing
                if isinstance(test[c].dtype, pd.CategoricalDtype):
                    seen = set(Xtr[c].dropna().unique())
                    test[c] = test[c].where(test[c].isin(seen))
            pred = m.predict(cubist_frame(test))
        else:
            m = fit(Otr, ytr)
            pred = m.predict(Ote)
        rows.append({"case": name, "method": meth, "rmse": rmse(pred, yte),
                     "leaves": leaves(m), "fit_s": time.perf_counter() - t})


def holes_case(rows, share=0.1):
    """The diamonds-like table with ``share`` of its cells missing (train and test): M5's
    routing of missing values (``missing="m5"``, by the target at fit and the node's average
    at prediction) against the grower's learned direction and the median, and the others."""
    df, y, _ = diamonds()
    rng = np.random.default_rng(1)
    df = df.mask(rng.random(df.shape) < share)
    name = f"diamonds-like, {share:.0%} holes"
    extra = {
        "m5, missing=learn": lambda X, y: tl.M5Regressor(random_state=0,
                                                          missing="learn").fit(X, y),
        "m5, missing=impute": lambda X, y: tl.M5Regressor(random_state=0,
                                                           missing="impute").fit(X, y),
    }
    table_case(name, df, y, rows, {**methods(), **extra})


def diabetes_case(rows):
    X, y = load_diabetes(return_X_y=True)
    for meth, fit in methods().items():
        errs, lv = [], []
        t = time.perf_counter()
        for tr, te in KFold(10, shuffle=True, random_state=0).split(X):
            Xtr, Xte = X[tr], X[te]
            m = fit(Xtr, y[tr])
            if meth == "cubist":
                Xte = cubist_frame(Xte)
            errs.append(rmse(m.predict(Xte), y[te]) ** 2 * len(te))
            lv.append(leaves(m))
        rows.append({"case": "diabetes (10-fold CV)", "method": meth,
                     "rmse": float(np.sqrt(sum(errs) / len(y))),
                     "leaves": None if lv[0] is None else float(np.mean(lv)),
                     "fit_s": time.perf_counter() - t})


def speed_case(n, rows):
    """1M x 28: M5 against the constant tree it grows, and LightGBM's linear tree."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 28)).astype(np.float32)
    y = (np.where(X[:, 0] > 0, 2 * X[:, 1] + X[:, 2], -X[:, 3]) + np.sin(X[:, 4])
         + 0.5 * X[:, 5] * (X[:, 6] > 0) + rng.normal(0, 0.3, n))
    grown = dict(criterion="sdr", min_samples_split=4, min_sd_fraction=0.05, random_state=0)
    # compile both first (the first fit in a process compiles the kernels)
    tl.DecisionTreeRegressor(**grown).fit(X[:2000], y[:2000])
    tl.M5Regressor(max_leaf_nodes=8, prune=None).fit(X[:2000], y[:2000])
    tl.M5Regressor(max_leaf_nodes=8, prune=None, splitter="hist").fit(X[:2000], y[:2000])
    # large nodes take the threaded histogram kernels, compiled on their first use
    tl.M5Regressor(max_leaf_nodes=8, prune=None, splitter="hist").fit(X[:200_000],
                                                                       y[:200_000])
    # the parallel apply of large inputs compiles on first use
    tl.M5Regressor().fit(X[:2000], y[:2000]).tree_.apply(X[:150_000])
    t = time.perf_counter()
    const = tl.DecisionTreeRegressor(**grown).fit(X, y)
    t_const = time.perf_counter() - t
    t = time.perf_counter()
    m5 = tl.M5Regressor(random_state=0).fit(X, y)
    t_m5 = time.perf_counter() - t
    Xt = rng.normal(size=(200_000, 28)).astype(np.float32)
    yt = (np.where(Xt[:, 0] > 0, 2 * Xt[:, 1] + Xt[:, 2], -Xt[:, 3]) + np.sin(Xt[:, 4])
          + 0.5 * Xt[:, 5] * (Xt[:, 6] > 0))
    rows.append({"case": f"{n:,} x 28", "method": "constant tree (M5's growth)",
                 "rmse": rmse(const.predict(Xt), yt), "leaves": const.tree_.n_leaves,
                 "fit_s": t_const, "depth": const.tree_.max_depth})
    rows.append({"case": f"{n:,} x 28", "method": "m5", "rmse": rmse(m5.predict(Xt), yt),
                 "leaves": m5.tree_.n_leaves, "fit_s": t_m5})
    t = time.perf_counter()
    weka = tl.M5Regressor(random_state=0, linear_estimate="weka").fit(X, y)
    rows.append({"case": f"{n:,} x 28", "method": "m5 (weka estimate)",
                 "rmse": rmse(weka.predict(Xt), yt), "leaves": weka.tree_.n_leaves,
                 "fit_s": time.perf_counter() - t})
    # the same number of leaves on both sides, grown best-first to 31 / 1,024 leaves, leaf
    # models on the features of the path (LightGBM's rule; M5's own, the subtree's, leaves
    # an unpruned tree's leaves constant)
    for k in (31, 1024):
        for splitter in ("best", "hist"):
            t = time.perf_counter()
            mk = tl.M5Regressor(random_state=0, max_leaf_nodes=k, prune=None,
                                linear_features="path", splitter=splitter).fit(X, y)
            rows.append({"case": f"{n:,} x 28", "method": f"path models {splitter}, {k} lv",
                         "rmse": rmse(mk.predict(Xt), yt), "leaves": mk.tree_.n_leaves,
                         "fit_s": time.perf_counter() - t})
        if lgb is None:
            continue
        t = time.perf_counter()
        lm = lgb.LGBMRegressor(n_estimators=1, learning_rate=1.0, linear_tree=True, verbose=-1,
                               num_leaves=k, min_child_samples=1, n_jobs=2).fit(X, y)
        rows.append({"case": f"{n:,} x 28", "method": f"lightgbm linear, {k} leaves",
                     "rmse": rmse(lm.predict(Xt), yt), "leaves": leaves(lm),
                     "fit_s": time.perf_counter() - t})


def extrapolation_case(rows):
    rng = np.random.default_rng(0)
    noise = 0.1
    x = rng.uniform(0, 1, 5000)
    y = 3 * x + rng.normal(0, noise, 5000)
    xt = np.linspace(1, 1.2, 1000)
    for meth, fit in methods().items():
        X, Xt = x[:, None], xt[:, None]
        m = fit(X, y)
        if meth == "cubist":
            Xt = cubist_frame(Xt)
        rows.append({"case": "extrapolation (noise 0.1)", "method": meth,
                     "rmse": rmse(m.predict(Xt), 3 * xt), "leaves": leaves(m), "fit_s": None})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--flights", type=int, default=100_000, help="rows of the flights table")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows: list[dict] = []
    tl.M5Regressor().fit(np.random.default_rng(0).normal(size=(500, 3)),
                         np.arange(500.0))  # compile
    df, y, _ = diamonds()
    table_case("diamonds-like 54k", df, y, rows)
    df, y, _ = flights(args.flights)
    table_case(f"flights-like {args.flights // 1000}k", df, y, rows)
    holes_case(rows)
    diabetes_case(rows)
    extrapolation_case(rows)
    speed_case(args.rows, rows)
    print(f"\n{'case':<28}{'method':<30}{'rmse':>10}{'leaves':>9}{'fit s':>9}")
    for r in rows:
        lv = "" if r["leaves"] is None else f"{r['leaves']:.0f}"
        fs = "" if r["fit_s"] is None else f"{r['fit_s']:.2f}"
        print(f"{r['case']:<28}{r['method']:<30}{r['rmse']:>10.4f}{lv:>9}{fs:>9}")
    if Cubist is None:
        print("(cubist not installed: pip install cubist to compare with it)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
