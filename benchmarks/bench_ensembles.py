"""Ensembles: treelearn's forests and AdaBoost against scikit-learn and LightGBM, same run.

    python benchmarks/bench_ensembles.py                 # the issue's table (~20 minutes)
    python benchmarks/bench_ensembles.py --quick         # small sizes, a minute

Cases (same arrays for every method; fit once untimed first for treelearn, so compilation is
not timed; one timed fit each, these fits are long):

* ``forest``: random forest, 100 fully grown trees, ``make_classification`` 1M x 28 (800k
  train, 200k held out), ``max_features="sqrt"``: treelearn hist and exact on 2 threads,
  scikit-learn ``RandomForestClassifier(n_jobs=2)``, LightGBM ``boosting="rf"`` with the same
  bagging (0.632 of the rows per tree: LightGBM samples without replacement), per-node
  feature fraction sqrt(28)/28 and ``min_data_in_leaf=1``, at a budget of 4096 leaves per
  tree for both (LightGBM grows leaf-wise to a leaf budget; fully grown trees would need
  one of the order of the rows, which it handles slowly), so it has its own row.
* ``exact 300k``: 100 trees with ``splitter="best"`` on 300k rows; every tree is compared
  with scikit-learn's (same ``random_state``).
* real-shaped tables (``realshaped.py``: few distinct values, categories, holes): 100
  trees; treelearn on the DataFrame (categories split as subsets, holes learned; hist) and on
  the ordinal-coded matrix (exact), scikit-learn on the ordinal matrix.
* ``predict``: the forest of the first case on 1M rows.
* memory: bytes per node of the fitted forests (arrays held; scikit-learn's node structs and
  values) and the model file (treelearn's ``.tlm``; scikit-learn's pickle).
* ``adaboost``: 200 stumps on 1M x 28; scikit-learn's rounds each cost the same (a stump on
  all rows), so it is timed for ``--ada-peer-rounds`` rounds and scaled to 200 (marked).

Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realshaped import TABLES, ordinal  # noqa: E402
from sklearn import ensemble as skens  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.tree import DecisionTreeClassifier as SkTree  # noqa: E402

import treelearn as tl  # noqa: E402
from treelearn._progress import run_main, say  # noqa: E402
from treelearn.ensemble._packed import Members  # noqa: E402


def _data(n: int, p: int = 28):
    X, y = make_classification(n_samples=n, n_features=p, n_informative=14, random_state=0)
    return train_test_split(X.astype(np.float32), y, test_size=0.2, random_state=0)


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _sk_bytes(forest) -> int:
    return int(sum(e.tree_.__getstate__()["nodes"].nbytes
                   + e.tree_.__getstate__()["values"].nbytes for e in forest.estimators_))


def _tl_bytes(forest) -> tuple[int, int]:
    """(bytes of every array the forest holds, bytes of the packed predict arrays)."""
    trees = 0
    if isinstance(forest.estimators_, Members):  # the records store the trees
        return forest._packed.nbytes, forest._packed.nbytes
    for e in forest.estimators_:
        t = e.tree_
        trees += sum(getattr(t, k).nbytes for k in (
            "children_left", "children_right", "feature", "threshold", "impurity",
            "n_node_samples", "weighted_n_node_samples", "value", "branch_ptr",
            "branch_child", "cat_ptr", "cat_branch", "missing_branch", "missing_seen"))
    return trees + forest._packed.nbytes, forest._packed.nbytes


def _nodes(forest) -> int:
    return int(sum(e.tree_.node_count for e in forest.estimators_))


def _file_size(model) -> int:
    with tempfile.TemporaryDirectory() as d:
        if type(model).__module__.startswith("treelearn"):
            path = tl.save(model, Path(d) / "m.tlm")
        else:
            path = Path(d) / "m.pkl"
            path.write_bytes(pickle.dumps(model, protocol=5))
        return path.stat().st_size


def _lgb_rf(Xtr, ytr, n_trees: int, p: int, leaves: int):
    import lightgbm as lgb

    params = {"objective": "binary", "boosting": "rf", "num_leaves": leaves, "max_depth": -1,
              "bagging_fraction": 0.632, "bagging_freq": 1,
              "feature_fraction_bynode": max(1, int(np.sqrt(p))) / p, "min_data_in_leaf": 1,
              "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 0.0, "max_bin": 255,
              "num_threads": 2, "verbose": -1, "seed": 0}
    ds = lgb.Dataset(Xtr, ytr, params={"max_bin": 255, "verbose": -1})
    return lgb.train(params, ds, num_boost_round=n_trees)


def forest_case(n: int, n_trees: int, rows: list, out: dict, predict_rows: int) -> None:
    Xtr, Xte, ytr, yte = _data(n)
    p = Xtr.shape[1]
    say(f"forest: {len(ytr):,} x {p} train, {n_trees} trees")
    kw = {"n_estimators": n_trees, "random_state": 0, "n_jobs": 2}
    for warm in ({"splitter": "hist"}, {}, {"splitter": "hist", "max_leaf_nodes": 64}):
        tl.RandomForestClassifier(n_estimators=2, random_state=0, **warm).fit(
            Xtr[:5000], ytr[:5000])  # compile every configuration timed below
    models = {}
    for name, make in (("tl hist", lambda: tl.RandomForestClassifier(splitter="hist", **kw)),
                       ("tl exact", lambda: tl.RandomForestClassifier(**kw)),
                       ("sklearn", lambda: skens.RandomForestClassifier(**kw))):
        model, t = _timed(lambda m=make: m().fit(Xtr, ytr))
        acc = float(np.mean(model.predict(Xte) == yte))
        models[name] = (model, t)
        rows.append({"case": f"forest {len(ytr) // 1000}k", "method": name, "fit_s": t,
                     "accuracy": acc, "nodes": _nodes(model)})
        say(f"  {name}: {t:.1f} s, accuracy {acc:.4f}")
    # LightGBM needs a leaf budget (fully grown trees would need num_leaves of the order of
    # the rows: 131071 leaves took 30 s for 10 trees on 40k rows); both at the same budget
    leaves = 4096
    case = f"forest {len(ytr) // 1000}k, {leaves} leaves"
    model, t = _timed(lambda: tl.RandomForestClassifier(splitter="hist", max_leaf_nodes=leaves,
                                                        **kw).fit(Xtr, ytr))
    rows.append({"case": case, "method": "tl hist", "fit_s": t, "nodes": _nodes(model),
                 "accuracy": float(np.mean(model.predict(Xte) == yte))})
    say(f"  tl hist, {leaves} leaves: {t:.1f} s")
    booster, t = _timed(lambda: _lgb_rf(Xtr, ytr, n_trees, p, leaves))
    acc = float(np.mean((booster.predict(Xte) > 0.5) == yte))
    rows.append({"case": case, "method": "lightgbm rf", "fit_s": t, "accuracy": acc,
                 "nodes": None})
    say(f"  lightgbm rf, {leaves} leaves: {t:.1f} s, accuracy {acc:.4f}")
    # prediction on predict_rows rows
    reps = -(-predict_rows // Xte.shape[0])
    Xp = np.tile(Xte, (reps, 1))[:predict_rows]
    for name in ("tl hist", "sklearn"):
        model = models[name][0]
        model.predict_proba(Xp[:1000])
        _, t = _timed(lambda m=model: m.predict_proba(Xp))
        out.setdefault("predict", []).append({"method": name, "rows": len(Xp), "trees": n_trees,
                                              "seconds": t})
        say(f"  predict {len(Xp):,} rows, {name}: {t:.2f} s")
    mem = {}
    for name in ("tl hist", "sklearn"):
        model = models[name][0]
        nodes = _nodes(model)
        if name == "sklearn":
            held, packed = _sk_bytes(model), None
        else:
            held, packed = _tl_bytes(model)
        mem[name] = {"nodes": nodes, "bytes_per_node": held / nodes,
                     "packed_bytes_per_node": None if packed is None else packed / nodes,
                     "file_bytes_per_node": _file_size(model) / nodes}
        say(f"  memory {name}: {mem[name]}")
    out["memory"] = mem


def exact_case(n: int, n_trees: int, rows: list) -> None:
    Xtr, Xte, ytr, yte = _data(n)
    say(f"exact: {len(ytr):,} x 28 train, {n_trees} trees")
    kw = {"n_estimators": n_trees, "random_state": 0, "n_jobs": 2}
    ours, t1 = _timed(lambda: tl.RandomForestClassifier(**kw).fit(Xtr, ytr))
    theirs, t2 = _timed(lambda: skens.RandomForestClassifier(**kw).fit(Xtr, ytr))
    same = all(a.tree_.node_count == b.tree_.node_count
               and np.array_equal(a.tree_.feature, b.tree_.feature)
               and np.array_equal(a.tree_.threshold, b.tree_.threshold)
               for a, b in zip(ours.estimators_, theirs.estimators_, strict=True))
    for name, model, t in (("tl exact", ours, t1), ("sklearn", theirs, t2)):
        rows.append({"case": f"exact {len(ytr) // 1000}k", "method": name, "fit_s": t,
                     "accuracy": float(np.mean(model.predict(Xte) == yte)),
                     "nodes": _nodes(model), "identical_trees": same})
    say(f"  tl exact {t1:.1f} s, sklearn {t2:.1f} s, identical trees: {same}")


def table_case(name: str, n_trees: int, rows: list, n: int | None) -> None:
    df, y, task = TABLES[name](n)
    idx = np.random.default_rng(0).permutation(len(y))
    cut = int(0.8 * len(y))
    tr, te = idx[:cut], idx[cut:]
    Xo = ordinal(df)
    cls = (tl.RandomForestClassifier if task == "classification" else tl.RandomForestRegressor)
    skcls = (skens.RandomForestClassifier if task == "classification"
             else skens.RandomForestRegressor)
    mf = "sqrt" if task == "classification" else 1.0
    kw = {"n_estimators": n_trees, "random_state": 0, "n_jobs": 2, "max_features": mf}
    say(f"table {name}: {len(tr):,} rows x {df.shape[1]} ({task}), {n_trees} trees")

    def score(model, X):
        pred = model.predict(X)
        yt = y[te]
        if task == "classification":
            return float(np.mean(pred == yt))
        return float(1 - np.sum((yt - pred) ** 2) / np.sum((yt - yt.mean()) ** 2))

    for method, make, Xa in (
            ("tl hist tab", lambda: cls(splitter="hist", **kw), df),
            ("tl exact", lambda: cls(**kw), Xo),
            ("sklearn", lambda: skcls(**kw), Xo)):
        Xtr = Xa.iloc[tr] if hasattr(Xa, "iloc") else Xa[tr]
        Xte = Xa.iloc[te] if hasattr(Xa, "iloc") else Xa[te]
        if method.startswith("tl"):  # compile outside the timing
            clone(make()).set_params(n_estimators=2).fit(Xtr[:2000], y[tr][:2000])
        model, t = _timed(lambda m=make, a=Xtr: m().fit(a, y[tr]))
        rows.append({"case": f"{name} {len(tr) // 1000}k", "method": method, "fit_s": t,
                     "accuracy": score(model, Xte), "nodes": _nodes(model)})
        say(f"  {method}: {t:.1f} s, score {rows[-1]['accuracy']:.4f}")


def adaboost_case(n: int, rounds: int, peer_rounds: int, rows: list) -> None:
    Xtr, Xte, ytr, yte = _data(n)
    say(f"adaboost: {len(ytr):,} x 28, {rounds} stumps")
    tl.AdaBoostClassifier(n_estimators=2).fit(Xtr[:5000], ytr[:5000])  # compile both
    tl.AdaBoostClassifier(tl.DecisionTreeClassifier(max_depth=1, splitter="hist"),
                          n_estimators=2).fit(Xtr[:5000], ytr[:5000])
    for method, make in (
            ("tl exact", lambda: tl.AdaBoostClassifier(n_estimators=rounds)),
            ("tl hist", lambda: tl.AdaBoostClassifier(
                tl.DecisionTreeClassifier(max_depth=1, splitter="hist"), n_estimators=rounds))):
        model, t = _timed(lambda m=make: m().fit(Xtr, ytr))
        rows.append({"case": f"adaboost {len(ytr) // 1000}k", "method": method, "fit_s": t,
                     "accuracy": float(np.mean(model.predict(Xte) == yte)), "nodes": None})
        say(f"  {method}: {t:.1f} s")
    model, t = _timed(lambda: skens.AdaBoostClassifier(
        SkTree(max_depth=1), n_estimators=peer_rounds).fit(Xtr, ytr))
    rows.append({"case": f"adaboost {len(ytr) // 1000}k", "method": "sklearn",
                 "fit_s": t * rounds / peer_rounds, "accuracy": None, "nodes": None,
                 "note": f"timed {peer_rounds} rounds, x{rounds / peer_rounds:g}"})
    say(f"  sklearn: {t:.1f} s for {peer_rounds} rounds")


def print_tables(result: dict) -> None:
    rows = result["fit"]
    print(f"\n{'case':<26}{'method':<14}{'fit s':>9}{'score':>9}{'nodes':>11}{'vs sklearn':>12}")
    for r in rows:
        ref = next((q["fit_s"] for q in rows if q["case"] == r["case"]
                    and q["method"] == "sklearn"), None)
        ratio = f"{ref / r['fit_s']:.1f}x" if ref and r["method"] != "sklearn" else ""
        lgb_ref = next((q["fit_s"] for q in rows if q["case"] == r["case"]
                        and q["method"] == "lightgbm rf"), None)
        if not ref and lgb_ref and r["method"] != "lightgbm rf":
            ratio = f"{lgb_ref / r['fit_s']:.1f}x lgb"
        score = "" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        nodes = "" if r["nodes"] is None else f"{r['nodes']:,}"
        note = f"  ({r['note']})" if r.get("note") else ""
        same = "  identical trees" if r.get("identical_trees") else ""
        print(f"{r['case']:<26}{r['method']:<14}{r['fit_s']:>9.1f}{score:>9}{nodes:>11}"
              f"{ratio:>12}{note}{same}")
    for r in result.get("predict", []):
        print(f"predict {r['rows']:,} rows x {r['trees']} trees, {r['method']}: "
              f"{r['seconds']:.2f} s")
    for name, m in result.get("memory", {}).items():
        packed = (f", packed for predict {m['packed_bytes_per_node']:.1f}"
                  if m["packed_bytes_per_node"] is not None else "")
        print(f"memory {name}: {m['bytes_per_node']:.1f} bytes/node held{packed}; file "
              f"{m['file_bytes_per_node']:.1f} bytes/node ({m['nodes']:,} nodes)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a minute)")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--tables", nargs="*", default=["adult", "covertype"],
                    choices=list(TABLES))
    ap.add_argument("--ada-rounds", type=int, default=200)
    ap.add_argument("--ada-peer-rounds", type=int, default=20)
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["forest", "exact", "tables", "adaboost"])
    ap.add_argument("-o", "--output", default=str(HERE / "results" / "ensembles.json"))
    args = ap.parse_args(argv)
    q = args.quick
    trees = 10 if q else args.trees
    result = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
              "fit": []}
    if "forest" not in args.skip:
        forest_case(50_000 if q else 1_000_000, trees, result["fit"], result,
                    100_000 if q else 1_000_000)
    if "exact" not in args.skip:
        exact_case(20_000 if q else 375_000, trees, result["fit"])
    if "tables" not in args.skip:
        for name in args.tables:
            table_case(name, trees, result["fit"], 20_000 if q else None)
    if "adaboost" not in args.skip:
        adaboost_case(50_000 if q else 1_000_000, 20 if q else args.ada_rounds,
                      5 if q else args.ada_peer_rounds, result["fit"])
    print_tables(result)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    run_main(main)
