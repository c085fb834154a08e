"""The Dask tree against the local histogram tree on the same data, and what a level costs.

Prints one table: fit seconds of ``treelearn.dask`` on a two-worker ``LocalCluster`` (one
thread each, data persisted on the workers first) against the local ``splitter="hist"`` fit of
the same rows (two threads), the overhead ratio, the share of nodes equal in both trees, the
tasks per level and the client's waits (Dask's task stream), and the seconds in the client's
level loop with, of those, its own Python between the waits (``client s``: what a compiled
level loop could save); for a synthetic 10M x 28 table
in 8 and 16 partitions and the real-shaped flights-like table (categories with 300 levels,
continuous target) from :mod:`realshaped`. A second table: a forest of depth-10 trees
against the local hist forest (held-out accuracy in place of equal nodes: the bootstraps
differ by design).

Usage: ``python benchmarks/bench_dask.py [--rows 10000000] [--flights 1000000]
[--forest-rows 2000000] [--trees 20] [--cases tree,flights,forest] [--json f]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import treelearn as tl


def _same(a, b) -> float:
    """The share of nodes equal in both trees (structure, feature, threshold, rows), walking
    from the root and stopping below a node that differs (ties can go another way: the local
    grower draws features depth first, the level-wise one level by level)."""
    def walk(i, j):
        if a.n_branches[i] != b.n_branches[j] or a.n_node_samples[i] != b.n_node_samples[j]:
            return 0
        if a.n_branches[i] == 0:
            return 1
        if a.feature[i] != b.feature[j] or a.threshold[i] != b.threshold[j]:
            return 0
        return 1 + sum(walk(x, y) for x, y in zip(a.children(i), b.children(j), strict=True))

    return walk(0, 0) / max(a.node_count, b.node_count)


def _dask_fit(client, est, dX, dy):
    """Fit seconds, tasks per level, the client's waits, and the level loop's own time:
    ``loop_s`` in the client's level loop (:func:`treelearn.dask._loop.grow_trees`), of
    which ``client_s`` is the loop's Python between its waits (the part a compiled loop
    could speed up; the rest is the workers' tasks and the round trips)."""
    import distributed

    from treelearn.dask import _estimators as dask_fit
    from treelearn.dask import _loop as dask_est

    levels = []
    dask_est.LEVEL_HOOK = lambda level, c: levels.append(level)
    waits = []
    clock = {"loop": 0.0, "wait_in_loop": 0.0, "inside": False}
    real = distributed.Future.result
    real_gather = distributed.Client.gather
    real_wait = distributed.wait
    real_loop = dask_fit.grow_trees

    def timed(fn, count):
        def call(*a, **k):
            if count:
                waits.append(1)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                if clock["inside"]:
                    clock["wait_in_loop"] += time.perf_counter() - t
        return call

    def loop(*a, **k):
        clock["inside"] = True
        t = time.perf_counter()
        try:
            return real_loop(*a, **k)
        finally:
            clock["loop"] += time.perf_counter() - t
            clock["inside"] = False

    distributed.Future.result = timed(real, True)
    distributed.Client.gather = timed(real_gather, True)
    distributed.wait = timed(real_wait, False)
    dask_fit.grow_trees = loop  # where the estimators call it
    try:
        with distributed.get_task_stream(client) as ts:
            t = time.perf_counter()
            est.fit(dX, dy)
            secs = time.perf_counter() - t
    finally:
        distributed.Future.result = real
        distributed.Client.gather = real_gather
        distributed.wait = real_wait
        dask_fit.grow_trees = real_loop
        dask_est.LEVEL_HOOK = None
    return {"dask_s": secs, "tasks_per_level": len(ts.data) / max(len(levels), 1),
            "client_waits": len(waits), "levels": len(levels), "loop_s": clock["loop"],
            "client_s": clock["loop"] - clock["wait_in_loop"]}


def synthetic_case(client, n: int, rows: list) -> None:
    import dask.array as da

    p = 28
    rng = da.random.default_rng(0)
    dX0 = rng.normal(size=(n, p), chunks=(n // 8, p)).astype(np.float32)
    dy0 = ((dX0[:, 0] + dX0[:, 1] * dX0[:, 2] + da.sin(dX0[:, 3])) > 0.3).astype(np.int64)
    dX0, dy0 = client.persist([dX0, dy0])
    X, y = client.compute([dX0, dy0], sync=True)
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=10, random_state=0)
    local.fit(X, y)  # the kernels of large nodes compile on first use: timed the second fit
    t = time.perf_counter()
    local.fit(X, y)
    t_local = time.perf_counter() - t
    del X, y
    for parts in (8, 16):
        # the same rows in ``parts`` partitions
        dX, dy = client.persist([dX0.rechunk((n // parts, p)), dy0.rechunk(n // parts)])
        est = tl.dask.DaskDecisionTreeClassifier(max_depth=10, random_state=0,
                                                 binner=local.binner_)
        got = _dask_fit(client, est, dX, dy)
        rows.append({"case": f"{n:,} x {p}, depth 10", "partitions": parts,
                     "local_s": t_local, "ratio": got["dask_s"] / t_local,
                     "same_tree": _same(est.tree_, local.tree_), **got})
        # the edges from the partitions' summaries instead of the local binner
        est2 = tl.dask.DaskDecisionTreeClassifier(max_depth=10, random_state=0)
        got = _dask_fit(client, est2, dX, dy)
        rows.append({"case": f"{n:,} x {p}, depth 10, own edges", "partitions": parts,
                     "local_s": t_local, "ratio": got["dask_s"] / t_local,
                     "same_tree": _same(est2.tree_, local.tree_), **got})
        del dX, dy


def flights_case(client, n: int, rows: list) -> None:
    import dask.dataframe as dd
    import pandas as pd
    from realshaped import flights

    df, y, _ = flights(n)
    local = tl.DecisionTreeRegressor(splitter="hist", max_depth=10, selection="criterion",
                                     random_state=0)
    local.fit(df, y)  # the kernels of large nodes compile on first use: timed the second fit
    t = time.perf_counter()
    local.fit(df, y)
    t_local = time.perf_counter() - t
    ddf = dd.from_pandas(df, npartitions=8)
    dy = dd.from_pandas(pd.Series(np.asarray(y)), npartitions=8)
    ddf, dy = client.persist([ddf, dy])
    est = tl.dask.DaskDecisionTreeRegressor(max_depth=10, random_state=0, binner=local.binner_)
    got = _dask_fit(client, est, ddf, dy)
    rows.append({"case": f"flights-like {n // 1000}k (300-level categories), depth 10",
                 "partitions": 8, "local_s": t_local, "ratio": got["dask_s"] / t_local,
                 "same_tree": _same(est.tree_, local.tree_), **got})


def forest_case(client, n: int, trees: int, rows: list, forests: list) -> None:
    """A forest of ``trees`` depth-10 trees on the synthetic table (``n`` rows, 8 partitions)
    against the local hist forest (two threads): seconds, and held-out accuracy in place of
    node equality (the local forest draws scikit-learn's bootstrap, the Dask forest Poisson
    counts keyed on row ids)."""
    import dask.array as da

    p = 28
    rng = da.random.default_rng(1)
    m = n + 200_000
    dX0 = rng.normal(size=(m, p), chunks=(m // 8, p)).astype(np.float32)
    dy0 = ((dX0[:, 0] + dX0[:, 1] * dX0[:, 2] + da.sin(dX0[:, 3])
            + 0.5 * rng.normal(size=m, chunks=m // 8)) > 0.3).astype(np.int64)
    X, y = client.compute([dX0, dy0], sync=True)
    Xt, yt = X[n:], y[n:]
    X, y = X[:n], y[:n]
    local = tl.RandomForestClassifier(n_estimators=trees, splitter="hist", max_depth=10,
                                      n_jobs=2, random_state=0)
    local.fit(X, y)  # compiled on first use: timed the second fit
    t = time.perf_counter()
    local.fit(X, y)
    t_local = time.perf_counter() - t
    acc_local = float((local.predict(Xt) == yt).mean())
    del X, y
    dX, dy = client.persist([dX0[:n].rechunk((n // 8, p)), dy0[:n].rechunk(n // 8)])
    for per_pass in (trees // 2, trees):
        est = tl.dask.DaskRandomForestClassifier(n_estimators=trees, max_depth=10,
                                                 random_state=0, trees_per_pass=per_pass)
        got = _dask_fit(client, est, dX, dy)
        acc = float((est.to_local().predict(Xt) == yt).mean())
        forests.append({"case": f"forest of {trees}, {n:,} x {p}, depth 10",
                        "partitions": 8, "trees_per_pass": per_pass, "local_s": t_local,
                        "ratio": got["dask_s"] / t_local, "acc_local": acc_local,
                        "acc_dask": acc, **got})
    del dX, dy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--flights", type=int, default=1_000_000)
    ap.add_argument("--forest-rows", type=int, default=2_000_000)
    ap.add_argument("--trees", type=int, default=20)
    ap.add_argument("--cases", default="tree,flights,forest",
                    help="comma-separated: tree (10M synthetic), flights, forest")
    ap.add_argument("--json")
    args = ap.parse_args()
    import distributed

    import treelearn.dask  # noqa: F401

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        # compile the kernels on the workers and here (cached on disk afterwards)
        rng = np.random.default_rng(0)
        import dask.array as da

        Xs = rng.normal(size=(2000, 28)).astype(np.float32)
        ys = (Xs[:, 0] > 0).astype(int)
        tl.dask.DaskDecisionTreeClassifier(max_depth=3).fit(
            da.from_array(Xs, chunks=(1000, -1)), da.from_array(ys, chunks=1000))
        tl.DecisionTreeClassifier(splitter="hist", max_depth=3).fit(Xs, ys)
        from realshaped import flights

        small, ysm, _ = flights(5000)
        tl.DecisionTreeRegressor(splitter="hist", max_depth=3, selection="criterion").fit(
            small, ysm)
        rows: list[dict] = []
        forests: list[dict] = []
        cases = set(args.cases.split(","))
        if "tree" in cases:
            synthetic_case(client, args.rows, rows)
        if "flights" in cases:
            flights_case(client, args.flights, rows)
        if "forest" in cases:
            forest_case(client, args.forest_rows, args.trees, rows, forests)
    print(f"\n{'case':<56}{'parts':>6}{'local s':>9}{'dask s':>9}{'ratio':>7}{'equal':>7}"
          f"{'tasks/level':>12}{'waits':>7}{'levels':>7}{'loop s':>8}{'client s':>9}")
    for r in rows:
        print(f"{r['case']:<56}{r['partitions']:>6}{r['local_s']:>9.2f}{r['dask_s']:>9.2f}"
              f"{r['ratio']:>7.2f}{r['same_tree']:>7.1%}{r['tasks_per_level']:>12.1f}"
              f"{r['client_waits']:>7}{r['levels']:>7}{r['loop_s']:>8.2f}{r['client_s']:>9.3f}")
    print(f"\n{'case':<44}{'per pass':>9}{'local s':>9}{'dask s':>9}{'ratio':>7}"
          f"{'acc local':>10}{'acc dask':>9}{'tasks/level':>12}{'waits':>7}{'levels':>7}"
          f"{'loop s':>8}{'client s':>9}")
    for r in forests:
        print(f"{r['case']:<44}{r['trees_per_pass']:>9}{r['local_s']:>9.2f}"
              f"{r['dask_s']:>9.2f}{r['ratio']:>7.2f}{r['acc_local']:>10.4f}"
              f"{r['acc_dask']:>9.4f}{r['tasks_per_level']:>12.1f}{r['client_waits']:>7}"
              f"{r['levels']:>7}{r['loop_s']:>8.2f}{r['client_s']:>9.3f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"trees": rows, "forests": forests}, fh, indent=1)


if __name__ == "__main__":
    main()
