"""Choosing the pruning level by 10-fold cross-validation: treelearn's ``prune="cv"`` against
the loop a scikit-learn user writes, and LightGBM's single tree, same data, same run.

    python benchmarks/bench_pruning.py                # 2k, 10k, 50k rows
    python benchmarks/bench_pruning.py --sizes 5000

Data: ``make_classification`` (20 features, 8 informative, 20% of labels flipped), so the
unpruned tree overfits. Methods, each fitted on 80% of the rows, accuracy on the other 20%:

* treelearn ``prune="cv"``: whole tree, 10 folds, every distinct subtree of the path scored
  (one fit per fold), 1-SE rule (and "min");
* scikit-learn: ``cost_complexity_pruning_path`` then ``GridSearchCV`` over ``ccp_alpha``
  with 10 folds (one fit per fold and alpha). Scoring every alpha of the path costs
  (path length) x 10 fits, so the grid is thinned to at most ``--grid`` alphas (evenly
  spaced over the path, the usual practice); the table shows the grid size;
* scikit-learn unpruned, treelearn unpruned: the baseline;
* LightGBM: one boosting round, learning rate 1, its defaults (``num_leaves=31``,
  ``min_data_in_leaf=20``), 2 threads: its form of complexity control; LightGBM has no
  post-pruning.

Times are single runs, after a warm-up fit (compilation not timed). Not a test.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn import tree as sktree
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

import treelearn as tl
from treelearn._progress import progress, run_main, say


def data(n: int, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=8, flip_y=0.2,
                               random_state=seed)
    return train_test_split(X, y, test_size=0.2, random_state=seed)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(n: int, grid: int) -> list[dict]:
    Xtr, Xte, ytr, yte = data(n)
    rows = []

    def add(method, seconds, model, nodes, note=""):
        rows.append({"n": n, "method": method, "seconds": seconds,
                     "accuracy": float(np.mean(model.predict(Xte) == yte)), "nodes": nodes,
                     "note": note})

    for warm in ({"prune": "cv", "prune_cv": 3}, {"prune": "pessimistic",
                                                   "subtree_raising": True}):
        tl.DecisionTreeClassifier(random_state=0, **warm).fit(Xtr[:500], ytr[:500])
    s, m = _timed(lambda: tl.DecisionTreeClassifier(random_state=0).fit(Xtr, ytr))
    add("treelearn unpruned", s, m, m.tree_.node_count)
    for rule in ("1se", "min"):
        s, m = _timed(lambda rule=rule: tl.DecisionTreeClassifier(
            prune="cv", prune_rule=rule, random_state=0).fit(Xtr, ytr))
        add(f"treelearn prune=cv {rule}", s, m, m.tree_.node_count,
            f"{m.pruning_.alphas.size} alphas scored")
    s, m = _timed(lambda: tl.DecisionTreeClassifier(prune="cv", random_state=0, n_jobs=2)
                  .fit(Xtr, ytr))
    add("treelearn prune=cv 1se n_jobs=2", s, m, m.tree_.node_count)
    for raising in (False, True):
        s, m = _timed(lambda raising=raising: tl.DecisionTreeClassifier(
            prune="pessimistic", subtree_raising=raising, random_state=0).fit(Xtr, ytr))
        add("treelearn pessimistic" + (" + raising" if raising else ""), s, m,
            m.tree_.node_count)
    s, m = _timed(lambda: tl.DecisionTreeClassifier(prune="reduced_error", random_state=0)
                  .fit(Xtr, ytr))
    add("treelearn reduced_error", s, m, m.tree_.node_count)

    s, m = _timed(lambda: sktree.DecisionTreeClassifier(random_state=0).fit(Xtr, ytr))
    add("sklearn unpruned", s, m, m.tree_.node_count)

    def sk_cv():
        path = sktree.DecisionTreeClassifier(random_state=0).cost_complexity_pruning_path(
            Xtr, ytr)
        alphas = np.unique(path.ccp_alphas)
        if alphas.size > grid:
            alphas = alphas[np.linspace(0, alphas.size - 1, grid).round().astype(int)]
        search = GridSearchCV(sktree.DecisionTreeClassifier(random_state=0),
                              {"ccp_alpha": list(alphas)},
                              cv=StratifiedKFold(10, shuffle=True, random_state=0))
        return search.fit(Xtr, ytr), alphas.size, np.unique(path.ccp_alphas).size

    s, (search, size, total) = _timed(sk_cv)
    add("sklearn path + GridSearchCV (min)", s, search.best_estimator_,
        search.best_estimator_.tree_.node_count, f"{size} of {total} alphas")
    try:
        import lightgbm as lgb
    except ImportError:
        lgb = None
    if lgb is not None:
        params = {"objective": "binary", "n_estimators": 1, "learning_rate": 1.0,
                  "n_jobs": 2, "verbose": -1}
        lgb.LGBMClassifier(**params).fit(Xtr[:200], ytr[:200])
        s, m = _timed(lambda: lgb.LGBMClassifier(**params).fit(Xtr, ytr))
        leaves = m.booster_.dump_model()["tree_info"][0]["num_leaves"]
        add("lightgbm one tree (defaults)", s, m, 2 * leaves - 1,
            "num_leaves=31, min_data_in_leaf=20")
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2_000, 10_000, 50_000])
    ap.add_argument("--grid", type=int, default=100,
                    help="most alphas scikit-learn's grid search scores")
    args = ap.parse_args(argv)
    print(f"{'rows':>8}  {'method':36} {'fit s':>8} {'accuracy':>9} {'nodes':>7}  note")
    with progress(len(args.sizes), "benchmark", unit="size") as bar:
        for n in args.sizes:
            for r in run(n, args.grid):
                say(f"{r['n']:>8,}  {r['method']:36} {r['seconds']:8.2f} {r['accuracy']:9.4f} "
                    f"{r['nodes']:7d}  {r['note']}")
            bar.update()


if __name__ == "__main__":
    run_main(main)
