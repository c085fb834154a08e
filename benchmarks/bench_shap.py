"""SHAP values of single trees: treelearn's ``shap_values`` against SHAP's ``TreeExplainer``
(path-dependent TreeSHAP in C++, Lundberg et al. 2020) on the same tree, same run.

    python benchmarks/bench_shap.py                  # the table below, best of 3
    python benchmarks/bench_shap.py --rows 2000 --repeats 1

Trees (treelearn grows them; SHAP reads the scikit-learn twin from ``to_sklearn``, the same
splits, so both compute the same numbers; the run checks that they agree to 1e-9):

* ``synth-d10``: ``make_classification`` 10,000 x 28, depth 10 (the issue's shape, one tree);
* ``synth-full``: the same, fully grown;
* ``forest-100-d10``: a random forest of 100 trees of depth 10 on the same data (the
  explanations issue's target: at least twice as fast as SHAP's explainer);
* ``diamonds-full``: the diamonds-shaped table (``realshaped.diamonds``, categories as codes,
  5-300 distinct values per column), a regression tree fully grown;
* ``adult-c45``: the adult-shaped table with its categories and holes, C4.5's fractional
  cases (no scikit-learn twin: only our time, and the additivity check).

Explained rows: ``--rows`` of the training rows; interaction values (the issue's target: at
least as fast as SHAP's) on the first ``--interaction-rows`` of them, for the cases SHAP reads
but the diamonds-shaped tree (SHAP's explainer takes minutes there). Writes a table to stdout
and JSON to ``benchmarks/results/``. Not a test.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import realshaped as rs  # the benchmarks' own modules, beside this script
from bench_export import timed
from sklearn.datasets import make_classification

import treelearn as tl
from treelearn._progress import run_main

HERE = Path(__file__).resolve().parent


def _cases():
    X, y = make_classification(10_000, 28, n_informative=12, random_state=0)
    X = X.astype(np.float32)
    yield "synth-d10", tl.DecisionTreeClassifier(max_depth=10, random_state=0).fit(X, y), X
    yield "synth-full", tl.DecisionTreeClassifier(random_state=0).fit(X, y), X
    # the target: at least 2x SHAP's explainer on this forest (Fast TreeSHAP, Yang
    # 2021, reports up to ~2.5x over it)
    yield ("forest-100-d10", tl.RandomForestClassifier(n_estimators=100, max_depth=10,
                                                       random_state=0).fit(X, y), X)
    df, price, _ = rs.diamonds()
    Xd = rs.ordinal(df)
    yield "diamonds-full", tl.DecisionTreeRegressor(random_state=0).fit(Xd, price), Xd
    da, label, _ = rs.adult()
    yield ("adult-c45", tl.DecisionTreeClassifier(missing="c45", random_state=0).fit(
        da, label), da)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--interaction-rows", type=int, default=50)
    args = ap.parse_args()
    import shap

    rows = []
    print(f"{'case':16s} {'nodes':>7s} {'rows':>6s} {'treelearn s':>12s} {'shap s':>8s} "
          f"{'shap/ours':>9s}")
    for name, model, X in _cases():
        Xe = X.iloc[:args.rows] if hasattr(X, "iloc") else X[:args.rows]
        ours_s, phi = timed(lambda m=model, Xe=Xe: m.shap_values(Xe), args.repeats)
        pred = (model.predict(Xe) if phi.ndim == 2 else model.predict_proba(Xe))
        assert np.allclose(model.expected_value_ + phi.sum(axis=1), pred, atol=1e-9), name
        nodes = (sum(t.tree_.node_count for t in model.estimators_)
                 if hasattr(model, "estimators_") else model.tree_.node_count)
        row = {"case": name, "nodes": int(nodes), "rows": len(Xe),
               "treelearn_s": ours_s}
        if name != "adult-c45":
            sk = tl.to_sklearn(model)
            explainer = shap.TreeExplainer(sk)
            shap_s, theirs = timed(lambda e=explainer, Xe=Xe: e.shap_values(
                np.asarray(Xe, dtype=np.float32), check_additivity=False), args.repeats)
            theirs = np.asarray(theirs).reshape(phi.shape)
            assert np.allclose(phi, theirs, rtol=1e-9, atol=1e-9), name
            row["shap_s"] = shap_s
            if name != "diamonds-full" and args.interaction_rows:
                Xi = np.asarray(Xe[:args.interaction_rows], dtype=np.float32)
                row["interaction_rows"] = len(Xi)
                row["treelearn_interactions_s"], inter = timed(
                    lambda m=model, Xi=Xi: m.shap_interaction_values(Xi), args.repeats)
                row["shap_interactions_s"], theirs = timed(
                    lambda e=explainer, Xi=Xi: e.shap_interaction_values(Xi), args.repeats)
                theirs = np.asarray(theirs).reshape(inter.shape)
                assert np.allclose(inter, theirs, rtol=1e-9, atol=1e-9), name
        rows.append(row)
        shap_s = row.get("shap_s")
        print(f"{name:16s} {row['nodes']:7d} {row['rows']:6d} {ours_s:12.3f} "
              f"{shap_s if shap_s is not None else float('nan'):8.3f} "
              f"{(shap_s / ours_s) if shap_s else float('nan'):9.2f}")
    print(f"\ninteraction values ({args.interaction_rows} rows)")
    print(f"{'case':16s} {'treelearn s':>12s} {'shap s':>8s} {'shap/ours':>9s}")
    for row in rows:
        if "shap_interactions_s" in row:
            ours_i, shap_i = row["treelearn_interactions_s"], row["shap_interactions_s"]
            print(f"{row['case']:16s} {ours_i:12.3f} {shap_i:8.3f} {shap_i / ours_i:9.2f}")
    out = HERE / "results" / f"shap-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    run_main(main)
