"""Our own regressions: earlier commits and the working tree side by side, timed in one run.

    python benchmarks/compare.py                          # HEAD against the working tree
    python benchmarks/compare.py --base a24d636 --base 7a034c8
    python benchmarks/compare.py --cases synth-hist-d10 forest-diamonds-hist --repeats 5
    python benchmarks/compare.py --list                   # the cases and their anchors
    python benchmarks/compare.py --quick                  # a tenth of the rows, 10-tree forests

What ``asv continuous`` does, without its machinery: each ``--base`` commit's package is
exported with ``git archive`` once into ``benchmarks/results/installs/<sha>`` (the package is
pure Python; the dependencies are the installed ones); the working tree is read from ``src/``.
Every case then runs, for each version and for the anchors (scikit-learn, LightGBM where the
case names it), in a fresh process of its own (``--worker``), the versions taking turns case by
case, so that the machine's state drifts over all of them alike. A worker builds the case's
data, fits once untimed (the kernels compile, or load from their cache, and threads start),
then times ``--repeats`` fits and reports the best (the least disturbed by the rest of the
machine). Each version keeps its own kernel cache (``NUMBA_CACHE_DIR`` under the install), so
a base's cache never serves the working tree, and the working tree's cache is keyed by a hash
of its sources (a kernel's cache is not invalidated by edits of the kernels it calls).

The table gives the seconds of each version and anchor, then ``new/base`` per base (below 1:
the working tree is faster; a line is flagged ``SLOWER`` when it is over 1.10) and the anchors'
time over the working tree's (larger is faster). JSON goes to
``benchmarks/results/compare.json``. Cases cover synthetic data (every value distinct),
real-shaped tables (``realshaped.py``: few distinct values, categories, holes) as ordinal codes
and as DataFrames with category columns, forests and forest prediction. Not a test: numbers
depend on the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INSTALLS = HERE / "results" / "installs"
SLOWER = 1.10


# ---------------------------------------------------------------- the cases (run in a worker)

def _synthetic(n: int, regression: bool = False):
    from sklearn.datasets import make_classification, make_regression

    if regression:
        X, y = make_regression(n_samples=n, n_features=28, n_informative=14, noise=1.0,
                               random_state=0)
    else:
        X, y = make_classification(n_samples=n, n_features=28, n_informative=14,
                                   random_state=0)
    return X.astype(np.float32), y


def _table(name: str, scale: float, frame: bool):
    sys.path.insert(0, str(HERE))
    from realshaped import TABLES, ordinal

    gen = TABLES[name]
    df, y, task = gen(None)
    if scale != 1.0:
        df, y, task = gen(max(1000, int(df.shape[0] * scale)))
    return (df if frame else ordinal(df)), y, task


def _lgb_tree(X, y, depth: int, classification: bool, categorical=None):
    import lightgbm as lgb

    params = {"objective": "binary" if classification and len(np.unique(y)) == 2 else
              ("multiclass" if classification else "regression"),
              "learning_rate": 1.0, "num_leaves": 2 ** depth, "max_depth": depth,
              "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 0.0,
              "num_threads": 2, "verbose": -1, "max_bin": 255, "min_data_per_group": 1,
              "cat_smooth": 0.0, "cat_l2": 0.0, "max_cat_threshold": 1000,
              "deterministic": True}
    if params["objective"] == "multiclass":
        params["num_class"] = int(np.max(y)) + 1
    ds = lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1, "min_data_in_leaf": 1,
                                   "feature_pre_filter": False},
                     categorical_feature=categorical or "auto")
    return lgb.train(params, ds, num_boost_round=1)


def _tree_fit(lib: str, X, y, task: str, **kw) -> Callable[[], object]:
    clf = task == "classification"
    if lib == "sklearn":
        from sklearn import tree as sk

        kw.pop("max_bins", None)
        if kw.get("splitter") == "hist":
            kw.pop("splitter")
        cls = sk.DecisionTreeClassifier if clf else sk.DecisionTreeRegressor
    else:
        import treelearn as tl

        cls = tl.DecisionTreeClassifier if clf else tl.DecisionTreeRegressor
    return lambda: cls(random_state=0, **kw).fit(X, y)


def _forest_fit(lib: str, X, y, task: str, n_trees: int, **kw) -> Callable[[], object]:
    clf = task == "classification"
    if lib == "sklearn":
        from sklearn import ensemble as ens

        kw.pop("splitter", None)
        kw.pop("max_bins", None)
    else:
        from treelearn import ensemble as ens
    cls = ens.RandomForestClassifier if clf else ens.RandomForestRegressor
    return lambda: cls(n_estimators=n_trees, n_jobs=2, random_state=0, **kw).fit(X, y)


def _size(n: int, quick: bool) -> int:
    return n // 10 if quick else n


def case_tree(data: str, cfg: dict, lgb_depth: int | None = None):
    """A single tree: ``data`` is ``synth:N``, ``synthreg:N``, ``ord:TABLE`` (the table's
    categories as codes) or ``frame:TABLE`` (a DataFrame with category columns; scikit-learn
    gets the codes)."""

    def run(lib: str, quick: bool):
        kind, _, arg = data.partition(":")
        if kind in ("synth", "synthreg"):
            X, y = _synthetic(_size(int(arg), quick), kind == "synthreg")
            task = "regression" if kind == "synthreg" else "classification"
            Xsk = X
        else:
            X, y, task = _table(arg, 0.1 if quick else 1.0, kind == "frame")
            Xsk = X
            if kind == "frame":
                sys.path.insert(0, str(HERE))
                from realshaped import ordinal

                Xsk = ordinal(X)
        if lib == "lightgbm":
            import pandas as pd

            cats = ([c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
                    if kind == "frame" else None)
            return lambda: _lgb_tree(X, y, lgb_depth, task == "classification", cats)
        return _tree_fit(lib, Xsk if lib == "sklearn" else X, y, task, **cfg)

    anchors = ("sklearn", "lightgbm") if lgb_depth else ("sklearn",)
    return run, anchors


def case_forest(table: str, splitter: str, n_trees: int = 100, frame: bool = False, **kw):
    """A random forest of ``n_trees`` fully grown trees on two threads."""

    def run(lib: str, quick: bool):
        X, y, task = _table(table, 0.1 if quick else 1.0, frame and lib != "sklearn")
        return _forest_fit(lib, X, y, task, 10 if quick else n_trees, splitter=splitter,
                           max_bins=255, **kw)

    return run, ("sklearn",)


def case_forest_predict(n_train: int, n_rows: int, n_trees: int = 100):
    """Prediction (``predict_proba``) of ``n_rows`` rows by a forest of ``n_trees`` trees grown
    on ``n_train`` synthetic rows (``min_samples_leaf=5``, hist); the fit is not timed."""

    def run(lib: str, quick: bool):
        X, y = _synthetic(_size(n_train, quick))
        model = _forest_fit(lib, X, y, "classification", 10 if quick else n_trees,
                            splitter="hist", max_bins=255, min_samples_leaf=5)()
        reps = -(-_size(n_rows, quick) // X.shape[0])
        Xp = np.tile(X, (reps, 1))[:_size(n_rows, quick)]
        return lambda: model.predict_proba(Xp)

    return run, ("sklearn",)


def _cases() -> dict:
    full = {"max_depth": None}
    d10 = {"max_depth": 10}
    cases = {
        "synth-hist-d10": case_tree("synth:1000000", {"splitter": "hist", **d10}, 10),
        "synth-hist-full": case_tree("synth:1000000", {"splitter": "hist", **full}),
        "synth-exact-full": case_tree("synth:300000", {"splitter": "best", **full}),
        "synthreg-hist-d10": case_tree("synthreg:1000000", {"splitter": "hist", **d10}, 10),
    }
    for table in ("diamonds", "adult", "flights", "covertype"):
        for sp, spname in (("best", "exact"), ("hist", "hist")):
            for cname, cfg in (("full", full), ("d10", d10)):
                cases[f"{table}-{spname}-{cname}"] = case_tree(
                    f"ord:{table}", {"splitter": sp, "max_bins": 255, **cfg},
                    10 if cname == "d10" and sp == "hist" else None)
    for table in ("diamonds", "adult", "flights"):
        for sp, spname in (("best", "exact"), ("hist", "hist")):
            for cname, cfg in (("full", full), ("d10", d10)):
                cases[f"{table}-frame-{spname}-{cname}"] = case_tree(
                    f"frame:{table}", {"splitter": sp, "max_bins": 255, **cfg})
    for table, mf in (("diamonds", 1 / 3), ("adult", "sqrt")):
        for sp, spname in (("best", "exact"), ("hist", "hist")):
            cases[f"forest-{table}-{spname}"] = case_forest(table, sp, max_features=mf)
    cases["forest-predict"] = case_forest_predict(100_000, 1_000_000)
    return cases


def worker(case: str, lib: str, repeats: int, quick: bool) -> dict:
    run, _ = _cases()[case]
    t0 = time.perf_counter()
    fn = run(lib, quick)
    prep = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = fn()
    warm = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    out = {"best": min(times), "times": times, "first": warm, "prep": prep}
    tree = getattr(first, "tree_", None)
    if tree is not None:
        out["nodes"] = int(tree.node_count)
        out["features"] = int(first.max_features_)
    elif hasattr(first, "estimators_"):
        trees = first.estimators_
        out["nodes"] = int(sum(t.tree_.node_count for t in trees))
        out["features"] = int(trees[0].max_features_)
    if lib == "treelearn":
        import treelearn

        out["from"] = str(Path(treelearn.__file__).parent)
    return out


# ---------------------------------------------------------------- the driver

def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def install(rev: str) -> Path:
    """``rev`` installed into ``benchmarks/results/installs/<sha>`` (once)."""
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    dest = INSTALLS / sha
    if (dest / "treelearn").is_dir():
        return dest
    # The package is pure Python with its data files inside it: its source tree is the
    # install (pip would need a wheel build for --target, and the dependencies are shared).
    print(f"installing {rev} ({sha[:10]}) into {dest}", file=sys.stderr)
    INSTALLS.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{sha[:10]}-", dir=INSTALLS))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha, "src/treelearn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(partial), "--strip-components=1"], input=archive,
                   check=True)
    partial.rename(dest)
    return dest


def source_cache(src: Path) -> Path:
    """A kernel cache for the working tree's package as it is now: Numba checks only the
    source file of a cached kernel, not of the kernels it calls, so a cache that outlived an
    edit could time yesterday's code. Keyed by a hash of every source file."""
    digest = hashlib.sha256()
    for f in sorted((src / "treelearn").rglob("*.py")):
        digest.update(str(f.relative_to(src)).encode() + b"\0" + f.read_bytes())
    return INSTALLS / f"worktree-{digest.hexdigest()[:16]}"


def _run_worker(case: str, lib: str, path: Path | None, repeats: int, quick: bool,
                timeout: float) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
        cache = path if path.parent == INSTALLS else source_cache(path)
        env["NUMBA_CACHE_DIR"] = str(cache / ".numba-cache")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", case, lib,
           "--repeats", str(repeats)] + (["--quick"] if quick else [])
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": tail[:120]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", action="append", default=None,
                    help="a commit to compare with (repeatable; default HEAD)")
    ap.add_argument("--cases", nargs="*", default=None, help="case names (default: all)")
    ap.add_argument("--no-anchors", action="store_true", help="versions only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a tenth of the rows, 10-tree forests")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per worker")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--per-node", action="store_true",
                    help="add ns per node / per node-feature of each version and anchor")
    ap.add_argument("-o", "--output", default=str(HERE / "results" / "compare.json"))
    ap.add_argument("--worker", nargs=2, metavar=("CASE", "LIB"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.repeats, args.quick)))
        return
    cases = _cases()
    if args.list:
        for name, (_run, anchors) in cases.items():
            print(f"{name:<28} anchors: {', '.join(anchors)}")
        return
    names = args.cases or list(cases)
    unknown = sorted(set(names) - set(cases))
    if unknown:
        ap.error(f"unknown cases {unknown}; --list shows them")
    bases = args.base or ["HEAD"]
    versions = [(f"base {b}", install(b)) for b in bases] + [("new", ROOT / "src")]
    head = [f"{'case':<28}"] + [f"{b[:8]:>8}" for b in bases] + [f"{'new':>8}"]
    print("".join(head), flush=True)
    rows = []
    for k, name in enumerate(names):
        order = versions if k % 2 == 0 else versions[::-1]
        row = {"case": name}
        for label, path in order:
            row[label] = _run_worker(name, "treelearn", path, args.repeats, args.quick,
                                     args.timeout)
        if not args.no_anchors:
            for lib in cases[name][1]:
                row[lib] = _run_worker(name, lib, None, args.repeats, args.quick,
                                       args.timeout)
        rows.append(row)
        print(_line(row, bases, cases[name][1] if not args.no_anchors else (), args.per_node),
              flush=True)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"bases": {b: _git("rev-parse", b) for b in bases},
                               "head": _git("rev-parse", "HEAD"), "quick": args.quick,
                               "repeats": args.repeats, "rows": rows}, indent=1))
    print(f"best of {args.repeats} fits, seconds; new/base < 1: faster now; "
          f"anchor/new > 1: faster than the anchor; SLOWER: new/base > {SLOWER}")


def _secs(r: dict) -> str:
    return f"{r['best']:8.3f}" if "best" in r else f"{'n/a':>8}"


def _line(row: dict, bases: list[str], anchors, per_node: bool = False) -> str:
    """A case's line; ``per_node``: nanoseconds per node and per node-feature (the fit's time
    over its nodes, and over nodes x features searched per node) of each version and anchor."""
    new = row["new"]
    parts = [f"{row['case']:<28}"]
    for b in bases:
        parts.append(_secs(row[f"base {b}"]))
    parts.append(_secs(new))
    flag = ""
    for b in bases:
        base = row[f"base {b}"]
        if "best" in base and "best" in new:
            ratio = new["best"] / base["best"]
            parts.append(f"  new/{b[:7]} {ratio:5.2f}")
            flag = flag or ("  SLOWER" if ratio > SLOWER else "")
    for a in anchors:
        r = row[a]
        if "best" in r and "best" in new:
            parts.append(f"  {a}/new {r['best'] / new['best']:5.2f}")
    if per_node:
        for label in [f"base {b}" for b in bases] + ["new", *anchors]:
            r = row[label]
            if "best" in r and r.get("nodes"):
                ns = 1e9 * r["best"] / r["nodes"]
                parts.append(f"  {label.split()[-1][:7]} {ns:.0f}/{ns / r['features']:.0f}")
    errors = [f"{k}: {v['error']}" for k, v in row.items() if isinstance(v, dict)
              and "error" in v]
    return "".join(parts) + flag + ("  [" + "; ".join(errors) + "]" if errors else "")


if __name__ == "__main__":
    main()
