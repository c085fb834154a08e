"""Regression trees and many-level columns: does the statistical feature choice pay?

    python benchmarks/bench_selection_regression.py              # 8 draws, 20k rows
    python benchmarks/bench_selection_regression.py --draws 4 --rows 5000

``bench_categorical.py`` chose the default ``selection="auto"`` (the test when a categorical
feature has more than 20 levels) on classification tables. Here the same question for
regression: for diamonds- and flights-shaped tables (``realshaped.py``; flights has two
300-level airport columns and a heavy-tailed target), as they are and with a pure-noise
50-level column added, the 5-fold cross-validated R^2 of ``DecisionTreeRegressor`` fully grown
and with ``min_samples_leaf=20``, under each ``selection`` rule (``--rules``; for
regression the test cross-tabulates feature groups with the sign of the residual, GUIDE's
choice). Printed: mean R^2 over the draws, and the mean and worst loss the noise column
causes.

Not a test: scores depend on the generated data; the closing notes quote the table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, cross_val_score

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realshaped import TABLES  # noqa: E402

import treelearn as tl  # noqa: E402
from treelearn._progress import run_main, say  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["diamonds", "flights"])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--draws", type=int, default=8)
    ap.add_argument("--rules", nargs="+", default=["criterion", "test", "screened", "auto"])
    args = ap.parse_args(argv)
    res: dict = {}
    for table in args.tables:
        for draw in range(args.draws):
            df, y, task = TABLES[table](n=args.rows, seed=draw)
            if task != "regression":
                raise SystemExit(f"{table} is not a regression table")
            rng = np.random.default_rng(100 + draw)
            noisy = df.copy()
            noisy["noise"] = pd.Categorical.from_codes(rng.integers(0, 50, len(y)),
                                                       [f"n{i}" for i in range(50)])
            for sel in args.rules:
                for leaf in (1, 20):
                    for name, X in (("clean", df), ("noisy", noisy)):
                        est = tl.DecisionTreeRegressor(selection=sel, min_samples_leaf=leaf,
                                                       random_state=0)
                        cv = KFold(5, shuffle=True, random_state=draw)
                        score = cross_val_score(est, X, y, cv=cv, scoring="r2").mean()
                        res.setdefault((table, sel, leaf, name), []).append(score)
    say(f"{'table':10} {'selection':10} {'leaf':>4} {'R2':>8} {'R2 noisy':>9} "
        f"{'drop mean':>10} {'drop max':>9}")
    for table in args.tables:
        for sel in args.rules:
            for leaf in (1, 20):
                clean = np.array(res[(table, sel, leaf, "clean")])
                noisy = np.array(res[(table, sel, leaf, "noisy")])
                drop = clean - noisy
                say(f"{table:10} {sel:10} {leaf:4d} {clean.mean():8.4f} {noisy.mean():9.4f} "
                    f"{drop.mean():10.4f} {drop.max():9.4f}")


if __name__ == "__main__":
    run_main(main)
