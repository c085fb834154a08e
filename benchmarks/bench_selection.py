"""Split selection and many-level columns: what each rule costs with and without a noise column.

    python benchmarks/bench_selection.py --data-dir <modeldata>/data          # every table
    python benchmarks/bench_selection.py --tables churn-shaped --seeds 2 --folds 5

For each table, as it is and with one pure-noise categorical column of 30, 60 and 200 levels
added (a new draw per seed), the cross-validated accuracy (stratified folds, shuffled per seed)
of ``DecisionTreeClassifier(max_depth=6, min_samples_leaf=20)`` under each ``selection`` rule,
and scikit-learn's tree of the same settings on ordinal codes (missing values as NaN, which
its trees route) as the anchor. Printed per table and rule: the mean accuracy in points over
the seeds, the loss each noise column causes (mean over seeds, and the worst seed), the
difference from ``selection="criterion"`` on the table as it is, and the total fit time
relative to ``selection="auto"``.

Tables: ``credit`` (modeldata's ``credit_data``, 4,454 loan applications, 13 features of which
4 categorical with at most 6 levels, missing values) and ``churn`` (modeldata's ``mlc_churn``,
5,000 telecom customers, a 51-level ``state`` column) read with ``rdata`` from
``--data-dir`` (the ``data/`` folder of github.com/tidymodels/modeldata, MIT licence; without
it, credit is read from the copy in ``tests/data/modeldata``); the
generated ``churn-shaped`` and ``adult-shaped`` tables of ``realshaped.py``. Tables whose file
is missing are skipped with a message.

Not a test: scores depend on the data; the closing notes quote the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier as SklearnTree

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realshaped import TABLES, ordinal  # noqa: E402

import treelearn as tl  # noqa: E402
from treelearn._progress import run_main, say  # noqa: E402

NOISE = (0, 30, 60, 200)
CREDIT_CSV = HERE.parent / "tests" / "data" / "modeldata" / "credit_data.csv"
PARAMS = dict(max_depth=6, min_samples_leaf=20)


def _modeldata(path: Path, name: str, target: str) -> tuple[pd.DataFrame, np.ndarray] | None:
    if not path.exists():
        say(f"{name}: {path} not found, skipped")
        return None
    import warnings

    import rdata

    with warnings.catch_warnings():  # rdata names the R classes it reads as data frames
        warnings.simplefilter("ignore")
        df = next(iter(rdata.read_rda(str(path)).values()))
    df = df.dropna(subset=[target]).reset_index(drop=True)
    y = (df[target] == df[target].cat.categories[0]).to_numpy(np.int64)
    X = df.drop(columns=[target])
    for c in X.columns:  # R's integer columns arrive as pandas' nullable Int32
        if not isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].astype("float64")
    return X, y


def tables(data_dir: Path | None, names: list[str]) -> dict:
    out = {}
    for name in names:
        if name == "credit" and data_dir is None:  # the copy the tests read
            df = pd.read_csv(CREDIT_CSV)
            y = (df.pop("Status") == "bad").to_numpy(np.int64)
            for c in df.columns:
                if not pd.api.types.is_numeric_dtype(df[c]):
                    df[c] = df[c].astype("category")
            got = df, y
        elif name == "credit":
            got = _modeldata(Path(data_dir) / "credit_data.RData", name, "Status")
        elif name == "churn":
            got = _modeldata(Path(data_dir or ".") / "mlc_churn.RData", name, "churn")
        elif name == "churn-shaped":
            got = TABLES["churn"](seed=0)[:2]
        elif name == "adult-shaped":
            got = TABLES["adult"](n=10_000, seed=0)[:2]
        else:
            raise SystemExit(f"unknown table {name!r}")
        if got is not None:
            out[name] = got
    return out


def with_noise(X: pd.DataFrame, levels: int, seed: int) -> pd.DataFrame:
    if levels == 0:
        return X
    rng = np.random.default_rng(1000 + seed)
    X = X.copy()
    X["noise"] = pd.Categorical.from_codes(rng.integers(0, levels, len(X)),
                                           [f"n{i}" for i in range(levels)])
    return X


def cv_score(make, X, y, seed: int, folds: int, codes: bool) -> tuple[float, float]:
    """Mean held-out accuracy (points) and total fit time of ``make()`` over the folds."""
    data = ordinal(X) if codes else X
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    acc, spent = [], 0.0
    for tr, te in cv.split(np.zeros(len(y)), y):
        est = make()
        part = data[tr] if codes else data.iloc[tr]
        t = time.perf_counter()
        est.fit(part, y[tr])
        spent += time.perf_counter() - t
        acc.append(np.mean(est.predict(data[te] if codes else data.iloc[te]) == y[te]))
    return 100.0 * float(np.mean(acc)), spent


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="modeldata's data/ folder (credit_data.RData, mlc_churn.RData)")
    ap.add_argument("--tables", nargs="+",
                    default=["credit", "churn", "churn-shaped", "adult-shaped"])
    ap.add_argument("--rules", nargs="+", default=["criterion", "test", "auto"])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--folds", type=int, default=10)
    args = ap.parse_args(argv)
    rules = [*args.rules, "sklearn"]
    data = tables(args.data_dir, args.tables)
    for name, (X0, y) in data.items():
        # warm the kernels of this table's layout before anything is timed
        tl.DecisionTreeClassifier(**PARAMS).fit(with_noise(X0, 30, 0), y)
        acc: dict = {}
        spent: dict = {}
        for seed in range(args.seeds):
            for levels in NOISE:
                X = with_noise(X0, levels, seed)
                for rule in rules:
                    if rule == "sklearn":
                        make = lambda: SklearnTree(**PARAMS, random_state=0)  # noqa: E731
                    else:
                        make = lambda rule=rule: tl.DecisionTreeClassifier(  # noqa: E731
                            **PARAMS, selection=rule, random_state=0)
                    a, s = cv_score(make, X, y, seed, args.folds, rule == "sklearn")
                    acc.setdefault((rule, levels), []).append(a)
                    spent[rule] = spent.get(rule, 0.0) + s
        base = np.mean(acc[("criterion", 0)]) if ("criterion", 0) in acc else np.nan
        say(f"\n{name}: {len(y)} rows, {X0.shape[1]} features, {args.seeds} seeds x "
            f"{args.folds} folds; accuracy in points; loss = clean - with noise (mean / worst)")
        say(f"{'rule':10} {'clean':>7} {'vs crit':>8} "
            + " ".join(f"{'loss ' + str(lv):>13}" for lv in NOISE[1:]) + f" {'time / auto':>12}")
        for rule in rules:
            clean = np.array(acc[(rule, 0)])
            cells = []
            for lv in NOISE[1:]:
                loss = clean - np.array(acc[(rule, lv)])
                cells.append(f"{loss.mean():6.2f}/{loss.max():6.2f}")
            rel = spent[rule] / spent["auto"] if "auto" in spent else np.nan
            say(f"{rule:10} {clean.mean():7.2f} {clean.mean() - base:8.2f} "
                + " ".join(f"{c:>13}" for c in cells) + f" {rel:12.2f}")


if __name__ == "__main__":
    run_main(main)
