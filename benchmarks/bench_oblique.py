"""Oblique trees and forests against axis-aligned ones and YDF's sparse oblique forest.

    python benchmarks/bench_oblique.py --part diagonal
    python benchmarks/bench_oblique.py --part trees
    python benchmarks/bench_oblique.py --part forests --trees 100 --data-dir DIR
    python benchmarks/bench_oblique.py --part forests --quick          # a minute

Parts (each prints a Markdown table and writes ``results/oblique-<part>.json``):

* ``diagonal``: the boundary ``x1 + x2 > 1`` on 1,000 and 10,000 uniform rows: training
  accuracy of our CART tree at depths 1-4 and its leaves when grown to purity, against the
  oblique tree (one split).
* ``trees``: held-out accuracy, leaves and fit time of our CART tree, scikit-learn's tree and
  the oblique tree on the synthetic problems below and on real numeric tables.
* ``forests``: held-out accuracy and fit time of our random forest, our oblique forest,
  YDF's random forest and YDF's ``SPARSE_OBLIQUE`` random forest, the same number of trees,
  two threads each (YDF from the ``bench`` extra).

Synthetic problems (train 75 %, test 25 %, fixed seeds): ``rotated-gauss`` (two Gaussian
classes differing in two directions, features rotated at random, 10 features),
``checkerboard`` (a 3 x 3 board in two features rotated by 30 degrees, plus 8 noise
features), ``parity`` (the parity of the signs of 3 features among 10), ``sparse-diagonal``
(``x0 + x1 - x2 > 0.2`` among 10 features), ``adult-shaped`` (the real-shaped stand-in of
``realshaped.adult``, categories as integer codes, holes as -1: every learner reads the same
numbers). Real tables: ConTree's copies of UCI's numeric tables (magic, htru, eeg, ...; label
first, features scaled to [0, 1]); get them with the tool library's ``fetch`` of
``github:ConSol-Lab/contree`` (MIT licence) and pass the folder of their ``datasets/*.txt``
with ``--data-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def diagonal_table(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def rotated_gauss(n: int = 8000, p: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    Z = rng.normal(size=(n, p))
    Z[:, 0] += 1.2 * y
    Z[:, 1] -= 0.8 * y
    Q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    return Z @ Q, y


def checkerboard(n: int = 8000, noise: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2)) * 3
    y = ((np.floor(U[:, 0]) + np.floor(U[:, 1])) % 2).astype(int)
    a = np.pi / 6
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return np.column_stack([U @ R.T, rng.random((n, noise)) * 3]), y


def parity(n: int = 8000, p: int = 10, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (np.sum(X[:, :k] > 0, axis=1) % 2).astype(int)


def sparse_diagonal(n: int = 8000, p: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + X[:, 1] - X[:, 2] > 0.2).astype(int)


def adult_shaped(n: int = 20000, seed: int = 0):
    from realshaped import adult, ordinal

    df, y, _ = adult(n, seed)
    X = ordinal(df)
    return np.where(np.isnan(X), -1.0, X), np.asarray(y)


SYNTHETIC = {"rotated-gauss": rotated_gauss, "checkerboard": checkerboard, "parity": parity,
             "sparse-diagonal": sparse_diagonal, "adult-shaped": adult_shaped}
REAL = ("magic", "htru", "eeg", "occupancy", "page", "wilt", "segment", "rice")


def load_real(path: Path):
    d = np.loadtxt(path)
    return d[:, 1:], d[:, 0].astype(np.int64)


def problems(args):
    for name in args.problems:
        X, y = SYNTHETIC[name](**({"n": 3000} if args.quick and name != "adult-shaped"
                                  else {"n": 5000} if args.quick else {}))
        yield name, "synthetic", X, y
    if args.data_dir is not None:
        for name in args.tables:
            path = Path(args.data_dir) / f"{name}.txt"
            if not path.exists():
                print(f"(no {path}: skipped)", file=sys.stderr)
                continue
            X, y = load_real(path)
            if args.quick:
                X, y = X[:4000], y[:4000]
            yield name, "real", X, y


def split(X, y, seed: int = 0):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)


def timed(fit):
    t = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - t


# -- parts ----------------------------------------------------------------------------------------

def part_diagonal(args) -> list[dict]:
    import treelearn as tl

    rows = []
    for n in (1000, 10000):
        X, y = diagonal_table(n)
        row = {"rows": n}
        for d in (1, 2, 3, 4):
            row[f"cart depth {d}"] = tl.DecisionTreeClassifier(max_depth=d).fit(X, y).score(X, y)
        full = tl.DecisionTreeClassifier().fit(X, y)
        row["cart leaves to purity"] = full.get_n_leaves()
        obl, t = timed(lambda X=X, y=y: tl.ObliqueTreeClassifier(random_state=0).fit(X, y))
        row["oblique leaves"] = obl.get_n_leaves()
        row["oblique train accuracy"] = obl.score(X, y)
        row["oblique split"] = tl.export_text(obl, feature_names=["x1", "x2"]).splitlines()[0][5:]
        row["oblique fit s"] = round(t, 3)
        rows.append(row)
    return rows


def part_trees(args) -> list[dict]:
    from sklearn.tree import DecisionTreeClassifier as SkTree

    import treelearn as tl

    rows = []
    for name, kind, X, y in problems(args):
        a, b, c, d = split(X, y)
        row = {"problem": name, "kind": kind, "rows": X.shape[0], "features": X.shape[1]}
        for label, make in (("cart", lambda: tl.DecisionTreeClassifier(random_state=0)),
                            ("sklearn", lambda: SkTree(random_state=0)),
                            ("oblique", lambda: tl.ObliqueTreeClassifier(random_state=0))):
            model, t = timed(lambda make=make, a=a, c=c: make().fit(a, c))
            row[f"{label} acc"] = round(float(model.score(b, d)), 4)
            row[f"{label} leaves"] = int(model.get_n_leaves())
            row[f"{label} s"] = round(t, 2)
        rows.append(row)
        print(row, file=sys.stderr)
    return rows


def part_forests(args) -> list[dict]:
    import pandas as pd

    import treelearn as tl

    try:
        import ydf
    except ImportError:
        ydf = None
        print("(ydf not installed: pip install -e '.[bench]')", file=sys.stderr)
    T = args.trees
    rows = []
    for name, kind, X, y in problems(args):
        a, b, c, d = split(X, y)
        row = {"problem": name, "kind": kind, "rows": X.shape[0], "features": X.shape[1],
               "trees": T}
        ours = {
            "rf": lambda: tl.RandomForestClassifier(n_estimators=T, random_state=0, n_jobs=2),
            "oblique rf": lambda: tl.ObliqueRandomForestClassifier(n_estimators=T,
                                                                   random_state=0, n_jobs=2),
        }
        for label, make in ours.items():
            model, t = timed(lambda make=make, a=a, c=c: make().fit(a, c))
            row[f"{label} acc"] = round(float(model.score(b, d)), 4)
            row[f"{label} s"] = round(t, 2)
        if ydf is not None:
            cols = [f"f{j}" for j in range(X.shape[1])]
            tr = pd.DataFrame(a, columns=cols).assign(label=c)
            te = pd.DataFrame(b, columns=cols)
            for label, axis in (("ydf rf", "AXIS_ALIGNED"), ("ydf oblique rf", "SPARSE_OBLIQUE")):
                learner = ydf.RandomForestLearner(label="label", num_trees=T, split_axis=axis,
                                                  num_threads=2, random_seed=0)
                model, t = timed(lambda learner=learner, tr=tr: learner.train(tr, verbose=0))
                pred = np.asarray(model.predict(te))
                if pred.ndim == 1:  # binary: probability of the second class
                    classes = np.asarray(model.label_classes()).astype(c.dtype)
                    pred = classes[(pred > 0.5).astype(int)]
                else:
                    classes = np.asarray(model.label_classes()).astype(c.dtype)
                    pred = classes[np.argmax(pred, axis=1)]
                row[f"{label} acc"] = round(float(np.mean(pred == d)), 4)
                row[f"{label} s"] = round(t, 2)
        rows.append(row)
        print(row, file=sys.stderr)
    return rows


def markdown(rows: list[dict]) -> str:
    if not rows:
        return ""
    keys = list(rows[0])
    for r in rows[1:]:
        keys += [k for k in r if k not in keys]
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(k, "")) for k in keys) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("diagonal", "trees", "forests"), default="diagonal")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--problems", nargs="*", default=list(SYNTHETIC))
    ap.add_argument("--tables", nargs="*", default=list(REAL))
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--quick", action="store_true", help="fewer rows, for a look in a minute")
    args = ap.parse_args()
    rows = {"diagonal": part_diagonal, "trees": part_trees, "forests": part_forests}[args.part](
        args)
    print(markdown(rows))
    out = HERE / "results" / f"oblique-{args.part}{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "args": vars(args), "cpus": os.cpu_count()},
                              indent=1))


if __name__ == "__main__":
    main()
