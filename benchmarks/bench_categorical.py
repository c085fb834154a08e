"""Many-level categorical columns: which defaults keep them from overfitting.

    python benchmarks/bench_categorical.py               # churn- and adult-shaped tables
    python benchmarks/bench_categorical.py --folds 5 --draws 20

For each table (``realshaped.py``), as it is and with a pure-noise 50-level column added, the
10-fold cross-validated accuracy of treelearn's fully grown ``DecisionTreeClassifier`` on the
DataFrame (category columns split into subsets of levels) under settings of
``min_level_count`` (pooling of rare levels), ``level_smoothing`` (m-estimate ordering) and
``selection`` ("criterion" or "test"), next to scikit-learn's tree on ordinal codes and
treelearn without the categorical columns. The question the defaults answer: a noise column
must not cost the default tree more than 0.3 points of accuracy, and a user must never be
better off dropping the column or coding it as integers.

Second table: how often each setting puts the noise column at the root, over ``--draws``
bootstrap samples of the table (selection bias: a many-level column wins by chance).

Not a test: accuracies depend on the generated data; the closing notes quote the tables.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.tree import DecisionTreeClassifier as SkTree

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realshaped import TABLES, ordinal  # noqa: E402

import treelearn as tl  # noqa: E402
from treelearn._progress import run_main, say  # noqa: E402

SETTINGS = {
    "default (auto)": {},
    "plain": {"selection": "criterion"},
    "pool 10": {"selection": "criterion", "min_level_count": 10},
    "pool 30": {"selection": "criterion", "min_level_count": 30},
    "smooth 10": {"selection": "criterion", "level_smoothing": 10.0},
    "pool 10 + smooth 10": {"selection": "criterion", "min_level_count": 10,
                            "level_smoothing": 10.0},
    "test": {"selection": "test"},
    "test + pool 10": {"selection": "test", "min_level_count": 10},
    "test + pool 30": {"selection": "test", "min_level_count": 30},
}


def with_noise(df: pd.DataFrame, levels: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed + 1000)
    out = df.copy()
    out["noise"] = pd.Categorical(rng.integers(0, levels, df.shape[0]).astype(str))
    return out


def cv_accuracy(est, X, y, folds: int) -> float:
    cv = StratifiedKFold(folds, shuffle=True, random_state=0)
    return float(cross_val_score(est, X, y, cv=cv).mean())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["churn", "adult"])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--draws", type=int, default=30)
    args = ap.parse_args(argv)
    for name in args.tables:
        df, y, task = TABLES[name](args.rows)
        if task != "classification":
            continue
        noisy = with_noise(df, 50, 0)
        cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)
                or df[c].dtype == object]
        say(f"\n{name}: {df.shape[0]} rows, categorical {cats}; CV accuracy ({args.folds}-fold)")
        rows = []
        sk = SkTree(random_state=0)
        rows.append(("sklearn, ordinal codes", cv_accuracy(sk, ordinal(df), y, args.folds),
                     cv_accuracy(sk, ordinal(noisy), y, args.folds)))
        dropped = df.drop(columns=cats)
        rows.append(("treelearn, categorical columns dropped",
                     cv_accuracy(tl.DecisionTreeClassifier(random_state=0), dropped, y,
                                 args.folds), float("nan")))
        for label, kw in SETTINGS.items():
            est = tl.DecisionTreeClassifier(random_state=0, **kw)
            rows.append((f"treelearn {label}", cv_accuracy(est, df, y, args.folds),
                         cv_accuracy(est, noisy, y, args.folds)))
        say(f"{'method':42s} {'table':>8s} {'+noise50':>9s} {'drop (pt)':>10s}")
        for label, a, b in rows:
            say(f"{label:42s} {a:8.4f} {b:9.4f} {100 * (a - b):10.2f}")
        say(f"\n{name}: share of {args.draws} bootstrap draws with the noise column at the root")
        rng = np.random.default_rng(1)
        for label, kw in SETTINGS.items():
            hits = 0
            for _ in range(args.draws):
                idx = rng.integers(0, df.shape[0], df.shape[0])
                est = tl.DecisionTreeClassifier(random_state=0, max_depth=1, **kw)
                est.fit(noisy.iloc[idx], y[idx])
                hits += est.feature_names_in_[est.tree_.feature[0]] == "noise"
            say(f"{label:42s} {hits / args.draws:6.2f}")


if __name__ == "__main__":
    run_main(main)
