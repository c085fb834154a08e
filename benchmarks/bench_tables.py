"""Tables with categorical features and missing values: treelearn against scikit-learn and
LightGBM's single tree, same data, same run.

    python benchmarks/bench_tables.py             # 100k and 1M rows
    python benchmarks/bench_tables.py --sizes 100000

The data: 6 numeric features (10% missing, NaN), 3 categorical ones with 5, 50 and 1,000
levels (5% missing), a binary target that depends on both kinds. Methods:

* treelearn, taking the table as it is (pandas category columns, NaN): "best" and "hist"
  splitters, CART binary subset splits, ``missing="learn"``; and C4.5's multiway splits with
  fractional missing values (hist);
* scikit-learn: its tree needs numbers, so categories are ordinal-encoded (their codes as
  numbers, missing as NaN; encoding timed with the fit), NaN handled natively;
* LightGBM: one boosting round, learning rate 1, native categorical and missing-value
  handling (``Dataset`` construction timed with the fit), no regularisation, 2 threads.

Each fit on 80% of the rows, median of ``--repeats`` runs (treelearn is fitted once before
timing, so compilation is not timed), held-out accuracy on the other 20%. Not a test.
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

import treelearn as tl  # noqa: E402
from treelearn._progress import progress, run_main, say  # noqa: E402

CONFIGS = {"depth=10": {"max_depth": 10}, "leaves=255": {"max_leaf_nodes": 255}}
LEVELS = (5, 50, 1000)


def table(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 6)).astype(np.float32)
    cats = [rng.integers(0, L, n) for L in LEVELS]
    effect = [rng.normal(size=L) for L in LEVELS]
    logit = num[:, 0] + num[:, 1] * num[:, 2] + sum(e[c] for e, c in zip(effect, cats,
                                                                             strict=True))
    y = (logit + rng.normal(size=n) > 0).astype(int)
    num[rng.random(num.shape) < 0.10] = np.nan
    df = pd.DataFrame(num, columns=[f"x{i}" for i in range(6)])
    for j, (L, c) in enumerate(zip(LEVELS, cats, strict=True)):
        col = pd.Categorical.from_codes(c, categories=[f"L{k}" for k in range(L)])
        col[rng.random(n) < 0.05] = np.nan
        df[f"c{j}"] = col
    cut = int(0.8 * n)
    return df.iloc[:cut], df.iloc[cut:], y[:cut], y[cut:]


def _ordinal(df: pd.DataFrame) -> np.ndarray:
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            codes = out[c].cat.codes.astype(np.float32)
            out[c] = codes.where(codes >= 0, np.nan)
    return out.to_numpy(dtype=np.float32)


def fit_predict(method: str, cfg: dict, Xtr, ytr, Xte):
    if method == "lightgbm":
        import lightgbm as lgb

        ds = lgb.Dataset(Xtr, ytr, params={"max_bin": MAX_BINS, "verbose": -1,
                                           "min_data_in_leaf": 1, "feature_pre_filter": False,
                                           "max_cat_to_onehot": 4, "min_data_per_group": 1,
                                           "cat_smooth": 0.0, "cat_l2": 0.0},
                         categorical_feature=[c for c in Xtr.columns if c.startswith("c")])
        depth = cfg.get("max_depth")
        leaves = cfg.get("max_leaf_nodes") or 2 ** depth
        params = {"objective": "binary", "learning_rate": 1.0, "num_leaves": leaves,
                  "max_depth": -1 if depth is None else depth, "min_data_in_leaf": 1,
                  "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 0.0, "num_threads": 2,
                  "verbose": -1, "deterministic": True, "min_data_per_group": 1,
                  "cat_smooth": 0.0, "cat_l2": 0.0, "max_cat_threshold": 1000}
        model = lgb.train(params, ds, num_boost_round=1)
        return model, (model.predict(Xte) > 0.5).astype(int), \
            2 * model.dump_model()["tree_info"][0]["num_leaves"] - 1
    if method == "sklearn":
        from sklearn.tree import DecisionTreeClassifier

        model = DecisionTreeClassifier(random_state=0, **cfg).fit(_ordinal(Xtr), ytr)
        return model, model.predict(_ordinal(Xte)), model.tree_.node_count
    kind, splitter = method.split()[1:]
    if kind == "cart":
        model = tl.DecisionTreeClassifier(splitter=splitter, random_state=0, **cfg)
    else:
        model = tl.C45Classifier(splitter=splitter, random_state=0, **cfg)
    model.fit(Xtr, ytr)
    return model, model.predict(Xte), model.tree_.node_count


METHODS = ("treelearn cart hist", "treelearn cart best", "treelearn c45 hist", "sklearn",
           "lightgbm")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("-o", "--output", default=str(HERE / "results" / "bench_tables.json"))
    args = ap.parse_args(argv)
    rows = []
    bar = progress(len(args.sizes) * len(CONFIGS) * len(args.methods), "benchmark", unit="run")
    for n in args.sizes:
        Xtr, Xte, ytr, yte = table(n)
        for cfg_name, cfg in CONFIGS.items():
            for m in args.methods:
                if m.startswith("treelearn"):
                    fit_predict(m, cfg, Xtr.iloc[:20_000], ytr[:20_000], Xte.iloc[:100])
                times, mem = [], 0.0
                for _ in range(args.repeats):
                    with PeakMemory() as pm:
                        t = time.perf_counter()
                        model, pred, nodes = fit_predict(m, cfg, Xtr, ytr, Xte)
                        times.append(time.perf_counter() - t)
                    mem = max(mem, pm.mb)
                row = {"n": n, "config": cfg_name, "method": m,
                       "fit_predict_s": statistics.median(times), "peak_mb": round(mem, 1),
                       "accuracy": float(np.mean(pred == yte)), "nodes": int(nodes)}
                rows.append(row)
                say(f"  {n} {cfg_name} {m}: {row['fit_predict_s']:.3f} s")
                bar.update()
    bar.close()
    print(f"\n{'data':<14}{'config':<12}{'method':<22}{'fit+pred s':>11}{'peak MB':>9}"
          f"{'accuracy':>10}{'nodes':>8}{'/lightgbm':>10}")
    print("-" * 96)
    for r in rows:
        ref = next((q for q in rows if q["n"] == r["n"] and q["config"] == r["config"]
                    and q["method"] == "lightgbm"), None)
        ratio = f"{r['fit_predict_s'] / ref['fit_predict_s']:10.2f}" if ref else ""
        print(f"{r['n']:<14,}{r['config']:<12}{r['method']:<22}{r['fit_predict_s']:11.3f}"
              f"{r['peak_mb']:9.1f}{r['accuracy']:10.4f}{r['nodes']:8d}{ratio}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    run_main(main)
