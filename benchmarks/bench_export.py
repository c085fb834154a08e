"""Reading a tree: treelearn's exporters and explorer against scikit-learn's and LightGBM's
equivalents, on the same fitted trees, same run.

    python benchmarks/bench_export.py                 # trees of ~1k, ~5k and ~20k nodes
    python benchmarks/bench_export.py --nodes 5000 --no-browser

A tree of about N nodes is grown on noisy two-class data (treelearn, exact splitter; the
scikit-learn tree is the same tree, converted with ``to_sklearn``; LightGBM grows one tree with
N/2 leaves on the same data). Timed, single runs after a warm-up:

* text: ``export_text`` (treelearn, scikit-learn), LightGBM's ``dump_model`` (JSON, its
  textual form);
* DOT: ``export_graphviz`` (treelearn, scikit-learn); LightGBM's ``create_tree_digraph``
  needs the ``graphviz`` Python package, so its row is written only when that is installed;
* code: ``export_python`` and ``export_sql`` (no counterpart elsewhere), the exported
  Python predicting 10,000 rows one by one (``predict`` on the array beside it), and the SQL
  run by SQLite over a table of 10,000 rows (checked equal to the model's predictions);
* explorer: writing the page, its size, loading it in headless Chromium, and the page's own
  time per pruning-slider step (median and max over ~60 steps, layout included).

Writes a table to stdout and JSON to ``benchmarks/results/``. Not a test.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn import tree as sktree

import treelearn as tl
from treelearn._progress import progress, run_main

CHROMIUM = "/usr/bin/chromium"


def grown(nodes: int, seed: int = 0):
    """A fully grown tree of about ``nodes`` nodes on noisy data, and its data."""
    rng = np.random.default_rng(seed)
    n = int(nodes * 1.9)
    X = rng.random((n, 2))  # two features: the explorer draws its decision regions too
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    flip = rng.random(n) < 0.35
    y[flip] = 1 - y[flip]
    return tl.DecisionTreeClassifier(random_state=0).fit(X, y), X, y


def timed(fn, repeat: int = 1):
    fn()
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def browser_times(path: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM,
                               args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1300, "height": 900})
        t0 = time.perf_counter()
        page.goto(path.resolve().as_uri())
        page.wait_for_function("window.treelearnExplorer !== undefined")
        load = time.perf_counter() - t0
        steps = page.evaluate("n => window.treelearnExplorer.timeSteps(n)", 60)
        b.close()
    return {"load_s": load, "step_ms_median": float(np.median(steps)),
            "step_ms_max": float(np.max(steps))}


def run(nodes: int, browser: bool) -> list[dict]:
    est, X, y = grown(nodes)
    sk = tl.to_sklearn(est)
    size = est.tree_.node_count
    rows = []

    def add(tool, what, seconds, note=""):
        rows.append({"nodes": size, "tool": tool, "what": what, "seconds": seconds,
                     "note": note})

    add("treelearn", "export_text", timed(lambda: tl.export_text(est, max_depth=1000), 3)[0])
    add("scikit-learn", "export_text", timed(lambda: sktree.export_text(sk, max_depth=1000),
                                             3)[0])
    add("treelearn", "export_graphviz", timed(lambda: tl.export_graphviz(est), 3)[0])
    add("scikit-learn", "export_graphviz", timed(lambda: sktree.export_graphviz(sk, filled=True),
                                                 3)[0])
    add("treelearn", "export_rules", timed(lambda: tl.export_rules(est), 3)[0])
    s, src = timed(lambda: tl.export_python(est))
    add("treelearn", "export_python", s, f"{len(src) / 1e6:.1f} MB source")
    s, sql = timed(lambda: tl.export_sql(est, table="data"))
    add("treelearn", "export_sql", s, f"{len(sql) / 1e6:.1f} MB statement")
    ns: dict = {}
    exec(src, ns)
    rows10k = X[:10_000].tolist()
    s_py, _ = timed(lambda: [ns["predict"](r) for r in rows10k])
    s_np, _ = timed(lambda: est.predict(X[:10_000]), 3)
    add("treelearn", "exported Python, 10k rows", s_py, f"model.predict: {s_np * 1e3:.1f} ms")
    import sqlite3

    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE data ("feature_0" REAL, "feature_1" REAL)')
    con.executemany("INSERT INTO data VALUES (?, ?)", X[:10_000].tolist())
    s_sql, got = timed(lambda: con.execute(sql).fetchall())
    assert [g[0] for g in got] == est.predict(X[:10_000]).tolist()
    add("treelearn", "exported SQL in SQLite, 10k rows", s_sql, "same predictions")
    try:
        import lightgbm as lgb

        booster = lgb.train({"objective": "binary", "num_leaves": max(2, size // 2),
                             "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0,
                             "learning_rate": 1.0, "verbose": -1, "num_threads": 2},
                            lgb.Dataset(X, y), num_boost_round=1)
        leaves = booster.dump_model()["tree_info"][0]["num_leaves"]
        add("LightGBM", "dump_model (JSON)", timed(booster.dump_model, 3)[0],
            f"{2 * leaves - 1} nodes")
        try:
            import graphviz  # noqa: F401

            add("LightGBM", "create_tree_digraph",
                timed(lambda: lgb.create_tree_digraph(booster), 3)[0], f"{2 * leaves - 1} nodes")
        except ImportError:
            pass
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tree.html"
        s, _ = timed(lambda: tl.explore(est, X, y, path))
        add("treelearn", "explore (write page)", s, f"{path.stat().st_size / 1e6:.1f} MB page")
        if browser:
            b = browser_times(path)
            add("treelearn", "explorer: load in Chromium", b["load_s"])
            add("treelearn", "explorer: slider step", b["step_ms_median"] / 1e3,
                f"max {b['step_ms_max']:.1f} ms")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, nargs="*", default=[1000, 5000, 20000])
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium timings")
    args = ap.parse_args()
    rows = []
    with progress(len(args.nodes), "benchmark", unit="tree") as bar:
        for nodes in args.nodes:
            rows += run(nodes, not args.no_browser)
            bar.update()
    print(f"{'nodes':>7}  {'tool':<13}{'what':<34}{'seconds':>9}  note")
    for r in rows:
        print(f"{r['nodes']:>7,}  {r['tool']:<13}{r['what']:<34}{r['seconds']:>9.4f}  "
              f"{r['note']}")
    out = Path(__file__).with_name("results")
    out.mkdir(exist_ok=True)
    (out / "bench_export.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    run_main(main)
