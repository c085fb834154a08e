"""treelearn (exact, hist) against scikit-learn and LightGBM's single tree: same arrays, same run.

    python benchmarks/bench.py                  # 100k and 1M rows x 28, both tasks, 3 configs
    python benchmarks/bench.py --quick          # 100k rows only, classification
    python benchmarks/bench.py --big            # adds 10M rows
    python benchmarks/bench.py --wide           # adds the 200k x 500 set
    python benchmarks/bench.py --compile        # cold / warm compile overhead (clears the cache)
    python benchmarks/bench.py --floors         # memory-pass floors of the histogram splitter

Every case: ``fit`` on 80% of the rows (median of ``--repeats`` runs, default 3; a slow peer can
be given fewer with ``--peer-repeats``), ``predict`` on the other 20% (median), peak memory of the
fit (resident set sampled every 2 ms, minus the resident set before the fit), held-out accuracy
or R^2, node count, and the ratios of the peers' fit times to treelearn hist's. LightGBM is one
boosting round with learning rate 1 and no regularisation (``min_data_in_leaf=1``,
``min_sum_hessian_in_leaf=0``, ``lambda_l2=0``), the same bins, depth or leaves, 2 threads; its
fit time includes ``Dataset`` construction, which is also shown on its own. LightGBM has no
unlimited-depth mode (it needs ``num_leaves``; 131,071 leaves took 19 s and 14 GB on 20k rows),
so depth=None runs it only with ``--lgb-unlimited``. treelearn is fitted once on up to 50k rows
before timing, so that compilation (measured by ``--compile``) is not timed. A table is printed
and JSON written to ``benchmarks/results/bench.json``. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from sklearn import tree as sktree
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

import treelearn as tl
from treelearn._progress import progress, run_main, say

HERE = Path(__file__).resolve().parent
MAX_BINS = 255
CONFIGS = {"depth=None": {"max_depth": None}, "depth=10": {"max_depth": 10},
           "leaves=255": {"max_leaf_nodes": 255}}


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakMemory:
    """Peak resident set during a block, above the resident set at its start (sampled)."""

    def __enter__(self):
        self.base = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())
        self.mb = (self.peak - self.base) / 2**20


def data(kind: str, n: int, p: int = 28):
    if kind == "classification":
        X, y = make_classification(n_samples=n, n_features=p, n_informative=min(14, p),
                                   random_state=0)
    else:
        X, y = make_regression(n_samples=n, n_features=p, n_informative=min(14, p),
                               noise=10.0, random_state=0)
    X = X.astype(np.float32)
    return train_test_split(X, y, test_size=0.2, random_state=0)


def _score(kind, y, pred) -> float:
    if kind == "classification":
        return float(np.mean(pred == y))
    return float(1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2))


def _treelearn(kind, splitter, cfg):
    cls = tl.DecisionTreeClassifier if kind == "classification" else tl.DecisionTreeRegressor
    return cls(splitter=splitter, max_bins=MAX_BINS, random_state=0, **cfg)


def _sklearn(kind, cfg):
    cls = (sktree.DecisionTreeClassifier if kind == "classification"
           else sktree.DecisionTreeRegressor)
    return cls(random_state=0, **cfg)


def _lgb_params(kind, cfg):
    depth = cfg.get("max_depth")
    leaves = cfg.get("max_leaf_nodes")
    if leaves is None:
        leaves = 2**depth if depth is not None else 2**20
    return {"objective": "binary" if kind == "classification" else "regression",
            "learning_rate": 1.0, "num_leaves": int(min(leaves, 2**17 - 1)),
            "max_depth": -1 if depth is None else depth, "max_bin": MAX_BINS,
            "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 0.0,
            "num_threads": 2, "verbose": -1, "deterministic": True,
            "force_col_wise": True}


def run_method(method, kind, cfg, Xtr, ytr, Xte, yte, repeats) -> dict:
    times, extra = [], []
    model = None
    mem = 0.0
    for _ in range(repeats):
        with PeakMemory() as pm:
            t = time.perf_counter()
            if method == "lightgbm":
                import lightgbm as lgb

                ds = lgb.Dataset(Xtr, ytr, params={"max_bin": MAX_BINS, "verbose": -1,
                                                   "min_data_in_leaf": 1,
                                                   "feature_pre_filter": False})
                ds.construct()
                t_ds = time.perf_counter() - t
                model = lgb.train(_lgb_params(kind, cfg), ds, num_boost_round=1)
                extra.append(t_ds)
            elif method == "sklearn":
                model = _sklearn(kind, cfg).fit(Xtr, ytr)
            else:
                splitter = {"hist": "hist", "exact": "best"}[method.split()[1]]
                model = _treelearn(kind, splitter, cfg).fit(Xtr, ytr)
            times.append(time.perf_counter() - t)
        mem = max(mem, pm.mb)
    ptimes = []
    for _ in range(repeats):
        t = time.perf_counter()
        pred = model.predict(Xte)
        ptimes.append(time.perf_counter() - t)
    if method == "lightgbm":
        if kind == "classification":
            pred = (pred > 0.5).astype(ytr.dtype)
        nodes = 2 * model.dump_model()["tree_info"][0]["num_leaves"] - 1
    else:
        nodes = int(model.tree_.node_count)
    row = {"fit_s": statistics.median(times), "fit_runs": len(times),
           "predict_s": statistics.median(ptimes), "peak_mb": round(mem, 1),
           "score": _score(kind, yte, pred), "nodes": nodes}
    if extra:
        row["dataset_s"] = statistics.median(extra)
        row["train_s"] = row["fit_s"] - row["dataset_s"]
    return row


def bench_case(kind, n, p, cfg_name, methods, repeats, peer_repeats,
               lgb_unlimited=False, bar=None) -> dict:
    Xtr, Xte, ytr, yte = data(kind, n, p)
    case = {"kind": kind, "n_rows": n, "n_features": p, "config": cfg_name,
            "input_mb": round(Xtr.nbytes / 2**20, 1),
            "bin_matrix_mb": round(Xtr.shape[0] * (-(-p // 8) * 8) / 2**20, 1)}
    cfg = CONFIGS[cfg_name]
    for m in methods:
        if m == "lightgbm" and cfg_name == "depth=None" and not lgb_unlimited:
            continue
        if m.startswith("treelearn"):  # compile first: compilation is measured by --compile
            k = min(len(ytr), 50_000)
            run_method(m, kind, cfg, Xtr[:k], ytr[:k], Xte[:100], yte[:100], 1)
        r = repeats if m.startswith("treelearn") else peer_repeats
        case[m] = run_method(m, kind, cfg, Xtr, ytr, Xte, yte, r)
        say(f"  {kind} {n}x{p} {cfg_name} {m}: fit {case[m]['fit_s']:.3f} s")
        if bar is not None:
            bar.update()
    if "treelearn hist" in case:
        b = tl.Binner(max_bins=MAX_BINS)
        t = time.perf_counter()
        b.fit(Xtr).transform_padded(Xtr)
        case["hist_binning_s"] = time.perf_counter() - t
        case["hist_growth_s"] = case["treelearn hist"]["fit_s"] - case["hist_binning_s"]
    return case


def print_table(cases, methods) -> None:
    hdr = (f"{'data':<26}{'config':<11}{'method':<16}{'fit s':>9}{'pred s':>8}{'peak MB':>9}"
           f"{'score':>8}{'nodes':>9}" + "".join(f"{'/' + m.split()[-1]:>9}" for m in methods))
    print(hdr)
    print("-" * len(hdr))
    for c in cases:
        name = f"{c['kind'][:5]} {c['n_rows']:,}x{c['n_features']}"
        hist = c.get("treelearn hist")
        for m in methods:
            if m not in c:
                continue
            r = c[m]
            ratios = "".join(
                f"{r['fit_s'] / c[o]['fit_s']:>9.2f}" if o in c else f"{'':>9}" for o in methods)
            fit = f"{r['fit_s']:.3f}" + ("" if r["fit_runs"] >= 3 else f"({r['fit_runs']})")
            print(f"{name:<26}{c['config']:<11}{m:<16}{fit:>9}{r['predict_s']:>8.3f}"
                  f"{r['peak_mb']:>9.1f}{r['score']:>8.4f}{r['nodes']:>9}{ratios}")
        if "lightgbm" in c:
            lg = c["lightgbm"]
            print(f"{'':<37}lightgbm: Dataset {lg['dataset_s']:.3f} s + train "
                  f"{lg['train_s']:.3f} s")
        if hist is not None:
            print(f"{'':<37}hist: binning {c['hist_binning_s']:.3f} s + growth "
                  f"{c['hist_growth_s']:.3f} s; input {c['input_mb']} MB, bin matrix "
                  f"{c['bin_matrix_mb']} MB")
    print("ratios: a row's fit time over the column method's fit time; (k): median of k runs")


def compile_overhead() -> dict:
    """Cold (empty cache) and warm (cache present) import + first hist fit, new processes."""
    pkg = Path(tl.__file__).parent
    code = ("import time; t=time.perf_counter(); import numpy as np; import treelearn as tl; "
            "from sklearn.datasets import make_classification; "
            "X,y=make_classification(100000,28,random_state=0); X=X.astype(np.float32); "
            "t1=time.perf_counter(); "
            "tl.DecisionTreeClassifier(splitter='hist',max_depth=10).fit(X,y); "
            "t2=time.perf_counter(); "
            "tl.DecisionTreeClassifier(splitter='hist',max_depth=10).fit(X,y); "
            "t3=time.perf_counter(); print(t1-t, t2-t1, t3-t2)")
    for f in list(pkg.rglob("*.nbi")) + list(pkg.rglob("*.nbc")):
        f.unlink()
    shutil.rmtree(pkg / "__pycache__", ignore_errors=True)
    out = {}
    for label in ("cold", "warm"):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        imp, first, second = map(float, res.stdout.split()[-3:])
        out[label] = {"import_s": imp, "first_fit_s": first, "steady_fit_s": second,
                      "overhead_s": first - second}
        print(f"{label}: import {imp:.2f} s, first hist fit {first:.2f} s, next fit "
              f"{second:.2f} s, first-fit overhead {first - second:.2f} s")
    return out


def floors(n: int = 800_000, p: int = 28, levels: int = 10) -> dict:
    """What memory traffic alone costs: histogramming the whole bin matrix once (x levels: a
    level's nodes together histogram at most all rows), and only reading it once."""
    from treelearn.engine.config import njit, pjit, prange
    from treelearn.engine.hist import hist_node_parallel

    @pjit
    def read_all(B):
        s = np.zeros(B.shape[0], dtype=np.int64)
        for i in prange(B.shape[0]):
            t = 0
            for c in range(B.shape[1]):
                t += B[i, c]
            s[i] = t
        return s.sum()

    _ = njit
    rng = np.random.default_rng(0)
    B = rng.integers(0, MAX_BINS, size=(n, -(-p // 8) * 8)).astype(np.uint8)
    C = rng.integers(0, 2, size=n).astype(np.int32)
    nb = MAX_BINS + 1
    hoff = np.arange(p + 1, dtype=np.int64) * nb
    fcol = np.arange(p, dtype=np.int64)
    fwide = np.zeros(p, dtype=np.bool_)
    hist = np.empty((p * nb, 2))
    T = int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))
    priv = np.empty((T, p * nb, 2))
    lay = (hoff, fcol, fwide, False)
    hist_node_parallel(B, C, None, None, 0, n, hist, priv, *lay)
    read_all(B)
    th, tr = [], []
    for _ in range(5):
        t = time.perf_counter()
        hist_node_parallel(B, C, None, None, 0, n, hist, priv, *lay)
        th.append(time.perf_counter() - t)
        t = time.perf_counter()
        read_all(B)
        tr.append(time.perf_counter() - t)
    res = {"rows": n, "features": p, "histogram_pass_s": statistics.median(th),
           "histogram_floor_depth10_s": levels * statistics.median(th),
           "read_pass_s": statistics.median(tr)}
    print(f"floors ({n:,} x {p}, binary classes): one histogram pass "
          f"{res['histogram_pass_s']:.4f} s, x {levels} levels = "
          f"{res['histogram_floor_depth10_s']:.3f} s; one read pass {res['read_pass_s']:.4f} s")
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100k rows, classification only")
    ap.add_argument("--big", action="store_true", help="also 10M rows")
    ap.add_argument("--wide", action="store_true", help="also 200k x 500")
    ap.add_argument("--sizes", type=int, nargs="*", help="row counts (default 100k 1M)")
    ap.add_argument("--kinds", nargs="*", default=["classification", "regression"])
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--methods", nargs="*",
                    default=["treelearn hist", "treelearn exact", "sklearn", "lightgbm"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-repeats", type=int, default=None,
                    help="runs for scikit-learn and LightGBM (default: --repeats)")
    ap.add_argument("--lgb-unlimited", action="store_true",
                    help="also run LightGBM without a depth limit (num_leaves=131071: slow and "
                         "memory-hungry, so off by default)")
    ap.add_argument("--compile", action="store_true", help="measure compile overhead first")
    ap.add_argument("--floors", action="store_true", help="measure memory-pass floors")
    ap.add_argument("--no-cases", action="store_true", help="only --compile/--floors")
    ap.add_argument("-o", "--output", default=str(HERE / "results" / "bench.json"))
    args = ap.parse_args(argv)
    result = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]}}
    if args.compile:
        result["compile"] = compile_overhead()
    if args.floors:
        result["floors"] = floors()
    cases = []
    if not args.no_cases:
        sizes = args.sizes or ([100_000] if args.quick else [100_000, 1_000_000])
        if args.big:
            sizes.append(10_000_000)
        kinds = ["classification"] if args.quick else args.kinds
        plan = [(k, n, 28) for k in kinds for n in sizes]
        if args.wide:
            plan.append(("classification", 200_000, 500))
        peer = args.peer_repeats or args.repeats
        with progress(len(plan) * len(args.configs) * len(args.methods), "benchmark",
                      unit="run") as bar:
            for kind, n, p in plan:
                for cfg in args.configs:
                    cases.append(bench_case(kind, n, p, cfg, args.methods, args.repeats, peer,
                                            args.lgb_unlimited, bar))
        print()
        print_table(cases, args.methods)
    result["cases"] = cases
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"\nJSON written to {out}")


if __name__ == "__main__":
    run_main(main)
