"""Optimal trees: treelearn's OptimalTreeClassifier against pycontree, pydl8.5 and greedy CART.

    python benchmarks/bench_optimal.py                      # the bank table shipped with the tests
    python benchmarks/bench_optimal.py --data-dir DIR --tables bank raisin rice --depths 2 3
    python benchmarks/bench_optimal.py --data-dir DIR --tables bank raisin --accuracy
    python benchmarks/bench_optimal.py --data-dir DIR --tables anneal --base f44438e

``DIR`` is the ``train-datasets`` folder of ConTree's repository (github.com/ConSol-Lab/contree,
MIT licence) or the ``datasets`` folder of pydl8.5's (github.com/aia-uclouvain/pydl8.5, MIT
licence, binary features): one table per file, the class first on each line, then the
features, separated by spaces. The anchors are pycontree (every table) and pydl8.5 (tables of
0/1 features only), whichever are installed. Each case is fitted in this process, best of
``--repeats``, with ``--time-limit`` seconds for every solver; the table prints the training
errors each finds (equal when all prove their optimum), whether treelearn proved it, the
seconds, and the fastest anchor's seconds over treelearn's (above 1: treelearn faster). The
first treelearn fit compiles the search's kernels and is not timed. Not a test: times depend
on the machine.

``--base REV`` (repeatable) also times that commit's OptimalTreeClassifier in the same run,
each case in a fresh process with the commit's package and kernel cache of its own
(``compare.py``'s installs), compiled before the timing; a column per base gives its seconds
over the working tree's (above 1: the working tree is faster).

``--accuracy`` compares held-out accuracy instead: stratified 5-fold cross-validation (one
fixed shuffle), the optimal tree against greedy CART (scikit-learn's, Gini) of the same
depth, the mean and standard deviation over the folds; a fit the time limit stops counts
with the tree it kept.
pycontree comes with the benchmark extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DIR = HERE.parent / "tests" / "data" / "contree"


def load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    d = np.loadtxt(path)
    return d[:, 1:], d[:, 0].astype(np.int64)


def best_of(fit, repeats: int):
    best, model = np.inf, None
    for _ in range(repeats):
        t = time.perf_counter()
        model = fit()
        best = min(best, time.perf_counter() - t)
    return best, model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--tables", nargs="*", default=["bank"])
    ap.add_argument("--depths", nargs="*", type=int, default=[2, 3])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--accuracy", action="store_true",
                    help="held-out accuracy against CART instead of the time table")
    ap.add_argument("--base", action="append", default=[],
                    help="a commit whose optimal tree is timed beside (repeatable)")
    ap.add_argument("--worker", nargs=2, metavar=("TABLE", "DEPTH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args, args.worker[0], int(args.worker[1]))
        return
    if args.accuracy:
        accuracy(args)
        return

    from sklearn.tree import DecisionTreeClassifier

    from treelearn import OptimalTreeClassifier

    anchors = _anchors(args.time_limit)
    X, y = load(args.data_dir / f"{args.tables[0]}.txt")
    OptimalTreeClassifier(max_depth=2).fit(X[:50], y[:50])  # compile outside the timings
    head = (f"{'table':18} {'rows':>6} {'p':>3} {'depth':>5} {'CART err':>8} {'tl err':>6} "
            f"{'proven':>6} {'tl s':>8}")
    for name in anchors:
        head += f" {name + ' err':>11} {name + ' s':>9}"
    bases = [_install(rev) for rev in args.base]
    for rev in args.base:
        head += f" {rev[:10] + ' s/tl s':>17}"
    print(head + f" {'best anchor s / tl s':>20}")
    for name in args.tables:
        X, y = load(args.data_dir / f"{name}.txt")
        binary = bool(np.isin(X, (0.0, 1.0)).all())
        for depth in args.depths:
            cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
            cart_err = int((cart.predict(X) != y).sum())
            t_tl, tl = best_of(lambda X=X, y=y, depth=depth: OptimalTreeClassifier(
                max_depth=depth, time_limit=args.time_limit).fit(X, y), args.repeats)
            tl_err = int((tl.predict(X) != y).sum())
            line = (f"{name:18} {X.shape[0]:>6} {X.shape[1]:>3} {depth:>5} {cart_err:>8} "
                    f"{tl_err:>6} {str(tl.optimal_):>6} {t_tl:>8.3f}")
            fastest = np.inf
            for anchor, (make, binary_only) in anchors.items():
                if binary_only and not binary:
                    line += f" {'-':>{len(anchor) + 4}} {'-':>{len(anchor) + 2}}"
                    continue
                t_a, model = best_of(lambda X=X, y=y, depth=depth, make=make: make(depth).fit(
                    X, y), args.repeats)
                err = int((np.asarray(model.predict(X)) != y).sum())
                line += f" {err:>{len(anchor) + 4}} {t_a:>{len(anchor) + 2}.3f}"
                fastest = min(fastest, t_a)
            for path in bases:
                r = _run_base(path, args, name, depth)
                line += (f" {r['seconds'] / t_tl:>17.2f}" if "seconds" in r
                         else f" {r['error'][:17]:>17}")
            if np.isfinite(fastest):
                line += f" {fastest / t_tl:>20.2f}"
            print(line, flush=True)


def worker(args, name: str, depth: int) -> None:
    """One case with the treelearn on ``sys.path`` (a base's): JSON of its seconds."""
    from treelearn import OptimalTreeClassifier

    X, y = load(args.data_dir / f"{name}.txt")
    OptimalTreeClassifier(max_depth=2, verbose=False).fit(X[:50], y[:50])  # compile
    t, model = best_of(lambda: OptimalTreeClassifier(
        max_depth=depth, time_limit=args.time_limit, verbose=False).fit(X, y), args.repeats)
    print(json.dumps({"seconds": t, "errors": int((model.predict(X) != y).sum()),
                      "proven": bool(model.optimal_)}))


def _install(rev: str) -> Path:
    sys.path.insert(0, str(HERE))
    from compare import install

    return install(rev)


def _run_base(path: Path, args, name: str, depth: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(path), NUMBA_CACHE_DIR=str(path / ".numba-cache"))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, str(depth),
           "--data-dir", str(args.data_dir), "--repeats", str(args.repeats),
           "--time-limit", str(args.time_limit)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _anchors(time_limit: float) -> dict:
    """The installed anchors: name -> (a maker of an unfitted model of a depth, whether it
    takes binary features only)."""
    found = {}
    try:
        from pycontree import ConTree

        found["ConTree"] = (lambda depth: ConTree(max_depth=depth, time_limit=time_limit),
                            False)
    except ImportError:  # pragma: no cover - the bench extra is not installed
        pass
    try:
        from pydl85 import DL85Classifier

        found["DL8.5"] = (lambda depth: DL85Classifier(max_depth=depth, time_limit=time_limit),
                          True)
    except ImportError:  # pragma: no cover - the bench extra is not installed
        pass
    return found


def accuracy(args) -> None:
    """Held-out accuracy of the optimal tree and of CART of the same depth (5 folds)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    from treelearn import OptimalTreeClassifier

    print(f"{'table':10} {'rows':>6} {'p':>3} {'depth':>5} {'CART train':>10} {'opt train':>9} "
          f"{'CART test':>14} {'opt test':>14} {'proven':>6}")
    for name in args.tables:
        X, y = load(args.data_dir / f"{name}.txt")
        for depth in args.depths:
            scores = {"ct": [], "ot": [], "cv": [], "ov": []}
            proven = 0
            folds = StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)
            for train, test in folds:
                cart = DecisionTreeClassifier(max_depth=depth, random_state=0)
                cart.fit(X[train], y[train])
                opt = OptimalTreeClassifier(max_depth=depth, time_limit=args.time_limit,
                                            verbose=False).fit(X[train], y[train])
                proven += opt.optimal_
                for key, model, rows in (("ct", cart, train), ("ot", opt, train),
                                         ("cv", cart, test), ("ov", opt, test)):
                    scores[key].append(float((model.predict(X[rows]) == y[rows]).mean()))
            m = {k: (np.mean(v), np.std(v)) for k, v in scores.items()}
            print(f"{name:10} {X.shape[0]:>6} {X.shape[1]:>3} {depth:>5} {m['ct'][0]:>10.4f} "
                  f"{m['ot'][0]:>9.4f} {m['cv'][0]:>7.4f}+-{m['cv'][1]:.3f} "
                  f"{m['ov'][0]:>7.4f}+-{m['ov'][1]:.3f} {proven:>4}/5", flush=True)


if __name__ == "__main__":
    from treelearn._progress import run_main

    run_main(main)
