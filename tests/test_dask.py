"""treelearn.dask: the level-wise fit on a LocalCluster of two workers against the local
histogram fit (same bin edges: the same tree), partitions of every shape, predictions, the
conversion to the local estimator, and bad input."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import treelearn as tl  # noqa: E402
from treelearn.dask import (  # noqa: E402
    DaskDecisionTreeClassifier,
    DaskDecisionTreeRegressor,
    DaskRandomForestClassifier,
    DaskRandomForestRegressor,
)
from treelearn.engine.counter_random import poisson_counts  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def same_tree(a, b, rtol=1e-9):
    """Node by node from the root (the Dask tree numbers nodes level by level, the local one
    depth first): structure, features, thresholds, missing-value branches and counts equal;
    values and weights up to rounding."""
    def walk(i, j):
        assert a.n_branches[i] == b.n_branches[j]
        assert a.n_node_samples[i] == b.n_node_samples[j]
        np.testing.assert_allclose(a.value[i], b.value[j], rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(a.weighted_n_node_samples[i],
                                   b.weighted_n_node_samples[j], rtol=rtol)
        if a.n_branches[i]:
            assert a.feature[i] == b.feature[j]
            assert a.threshold[i] == b.threshold[j]
            assert a.missing_branch[i] == b.missing_branch[j]
            for ca, cb in zip(a.children(i), b.children(j), strict=True):
                walk(ca, cb)

    assert a.node_count == b.node_count
    walk(0, 0)


@pytest.fixture(params=[0.0, 1.0, np.inf], ids=["histograms", "rows when small", "rows"])
def rows_limit(request, monkeypatch):
    """Nodes built from histograms always, from rows when these are smaller (the default),
    from rows always: the same tree each way."""
    from treelearn.dask import _loop

    monkeypatch.setattr(_loop, "ROWS_LIMIT", request.param)
    return request.param


def count_gathers(monkeypatch) -> list:
    """A list that grows by one at each ``Client.gather`` (the client's waits for results)."""
    waits: list = []
    real_gather = distributed.Client.gather

    def counted(self, *a, **k):
        waits.append(1)
        return real_gather(self, *a, **k)

    monkeypatch.setattr(distributed.Client, "gather", counted)
    return waits


def _data(n=3000, p=5, seed=0, holes=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < holes] = np.nan
    z = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + 0.3 * rng.normal(size=n)
    return X, z, rng


CHUNKS = {
    "one": lambda n: (n,),
    "two": lambda n: (n // 2, n - n // 2),
    "four uneven, one empty": lambda n: (100, 0, n - 1100, 1000),
}


@pytest.mark.parametrize("chunks", list(CHUNKS))
@pytest.mark.parametrize("weighted", [False, True])
def test_the_classifier_grows_the_local_hist_tree(client, rows_limit, chunks, weighted):
    X, z, rng = _data()
    y = np.where(z > 0.5, "b", np.where(z < -0.5, "a", "c"))
    w = rng.integers(0, 4, len(y)).astype(float) if weighted else None
    # four levels of large mixed nodes: no tied scores (a nearly pure node can cut off its
    # few odd rows on several features alike, and the two growers draw features in another
    # node order, so ties may go another way)
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=4, min_samples_leaf=20,
                                      random_state=0).fit(X, y, sample_weight=w)
    ch = CHUNKS[chunks](len(y))
    dX = da.from_array(X, chunks=(ch, -1))
    dy = da.from_array(y, chunks=(ch,))
    dw = da.from_array(w, chunks=(ch,)) if weighted else None
    model = DaskDecisionTreeClassifier(max_depth=4, min_samples_leaf=20, random_state=0,
                                       binner=local.binner_).fit(dX, dy, sample_weight=dw)
    same_tree(model.tree_, local.tree_)
    np.testing.assert_array_equal(model.classes_, local.classes_)
    np.testing.assert_array_equal(model.predict(dX).compute(), local.predict(X))
    np.testing.assert_allclose(model.predict_proba(dX).compute(), local.predict_proba(X))
    np.testing.assert_array_equal(model.apply(dX).compute(), model.to_local().apply(X))


@pytest.mark.parametrize("criterion", ["squared_error", "sdr"])
def test_the_regressor_grows_the_local_hist_tree_with_its_own_edges(client, rows_limit, criterion):
    # every value of a partition fits its sample (at most 20,000 per partition): the merged
    # samples are the whole column, and the edges are the local binner's
    X, z, _ = _data(n=4000, seed=1)
    local = tl.DecisionTreeRegressor(criterion=criterion, splitter="hist", max_depth=6,
                                     random_state=0).fit(X, z)
    dX = da.from_array(X, chunks=(1500, -1))
    model = DaskDecisionTreeRegressor(criterion=criterion, max_depth=6, random_state=0).fit(
        dX, da.from_array(z, chunks=(1500,)))
    for a, b in zip(model.binner_.bin_edges_, local.binner_.bin_edges_, strict=True):
        np.testing.assert_array_equal(a, b)
    same_tree(model.tree_, local.tree_)
    np.testing.assert_allclose(model.predict(dX).compute(), local.predict(X), rtol=1e-9)


def test_few_valued_features_get_exact_edges_from_partition_summaries(client):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 40, (3000, 3)).astype(np.float32)
    y = (X[:, 0] + rng.integers(0, 10, 3000) > 25).astype(int)
    dX = da.from_array(X, chunks=(700, -1))
    # (integer features: small nodes tie often, so the trees stay shallow with large leaves)
    model = DaskDecisionTreeClassifier(max_depth=4, min_samples_leaf=40, random_state=0).fit(
        dX, da.from_array(y, chunks=(700,)))
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=4, min_samples_leaf=40,
                                      random_state=0).fit(X, y)
    assert model.binner_.exact_.all()
    for a, b in zip(model.binner_.bin_edges_, local.binner_.bin_edges_, strict=True):
        np.testing.assert_array_equal(a, b)
    same_tree(model.tree_, local.tree_)


def test_to_local_gives_every_reader_and_model_files(client, tmp_path):
    X, z, _ = _data(n=1500, seed=3)
    y = (z > 0).astype(int)
    import dask.dataframe as dd
    import pandas as pd

    df = dd.from_pandas(pd.DataFrame(X, columns=[f"c{i}" for i in range(5)]), npartitions=3)
    model = DaskDecisionTreeClassifier(max_depth=3, random_state=0).fit(
        df, dd.from_pandas(pd.Series(y), npartitions=3))
    local = model.to_local()
    assert list(local.feature_names_in_) == [f"c{i}" for i in range(5)]
    assert "c0" in tl.export_text(local)
    tl.save(local, tmp_path / "m.tl")
    back = tl.load(tmp_path / "m.tl")
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(5)])
    np.testing.assert_array_equal(back.predict(frame), model.predict(df).compute().to_numpy())


@pytest.mark.parametrize("n_levels", [6, 300])
def test_category_columns_split_into_subsets_as_locally(client, rows_limit, n_levels):
    # a dask DataFrame with a category column (levels present in the data become the local
    # estimator's codes; 300 levels take two-byte bins) and holes: the local hist tree
    import dask.dataframe as dd
    import pandas as pd

    X, z, rng = _data(n=3000, p=3, seed=7)
    cats = [f"L{i}" for i in range(n_levels + 2)]  # two categories never used
    code = rng.integers(0, n_levels, 3000)
    effect = rng.normal(size=n_levels)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["cat"] = pd.Categorical([cats[k] for k in code], categories=cats)
    frame.loc[rng.random(3000) < 0.05, "cat"] = None
    yv = z + 2 * effect[code] * frame["cat"].notna()
    # (locally, more than 20 levels would choose features by a test unless told otherwise)
    local = tl.DecisionTreeRegressor(splitter="hist", max_depth=4, min_samples_leaf=30,
                                     selection="criterion", random_state=0).fit(frame, yv)
    df = dd.from_pandas(frame, npartitions=3)
    model = DaskDecisionTreeRegressor(max_depth=4, min_samples_leaf=30, random_state=0,
                                      binner=local.binner_).fit(
        df, dd.from_pandas(pd.Series(yv), npartitions=3))
    assert model.is_categorical_.tolist() == [False, False, False, True]
    np.testing.assert_array_equal(model.categories_[3], local.categories_[3])
    assert any(model.tree_.feature[i] == 3 for i in range(model.tree_.node_count)
               if model.tree_.n_branches[i])
    same_tree(model.tree_, local.tree_)
    np.testing.assert_allclose(model.predict(df).compute().to_numpy(), local.predict(frame),
                               rtol=1e-9)


def test_features_constant_in_one_branch_stay_searchable_in_the_other(client):
    # a node trusts the first features of its search order to be the ones its parent found
    # constant; level by level, the order must be its parent's, not the last node's searched
    # (here x1 is constant left of the root, x2 right of it, and the left side needs x2 twice)
    rng = np.random.default_rng(8)
    n = 4000
    X = rng.uniform(0, 1, (n, 4)).astype(np.float32)
    X[:, 0] = rng.uniform(-1, 1, n)
    left = X[:, 0] <= 0
    X[left, 1] = 0.5
    X[~left, 2] = 0.5
    inside2 = (X[:, 2] > 0.2) & (X[:, 2] <= 0.7)
    inside1 = (X[:, 1] > 0.2) & (X[:, 1] <= 0.7)
    y = np.where(left, inside2.astype(int), 2 + inside1.astype(int))
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=4, random_state=0).fit(X, y)
    inner = local.tree_.n_branches > 0
    assert set(local.tree_.feature[inner].tolist()) == {0, 1, 2}  # x2 left, x1 right
    model = DaskDecisionTreeClassifier(max_depth=4, random_state=0, binner=local.binner_).fit(
        da.from_array(X, chunks=(1000, -1)), da.from_array(y, chunks=(1000,)))
    same_tree(model.tree_, local.tree_)


def test_two_fits_at_once_on_one_cluster_do_not_interfere(client):
    # task keys come from the tasks' inputs: two fits on other data share nothing
    from concurrent.futures import ThreadPoolExecutor

    def one(seed):
        X, z, _ = _data(n=2500, seed=seed)
        y = (z > 0.3 * (seed % 3) - 0.3).astype(int)
        local = tl.DecisionTreeClassifier(splitter="hist", max_depth=4, min_samples_leaf=20,
                                          random_state=0).fit(X, y)
        model = DaskDecisionTreeClassifier(max_depth=4, min_samples_leaf=20, random_state=0,
                                           binner=local.binner_).fit(
            da.from_array(X, chunks=(800, -1)), da.from_array(y, chunks=(800,)))
        return model.tree_, local.tree_

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, [10, 11]))
    for got, want in results:
        same_tree(got, want)
    assert results[0][0].node_count != results[1][0].node_count or not np.array_equal(
        results[0][0].threshold, results[1][0].threshold)


def test_one_round_trip_per_level(client, monkeypatch):
    # the client waits once per level (the split records) and once for the classes; the
    # histograms and row states stay on the workers
    X, z, _ = _data(n=2000, seed=5)
    y = (z > 0).astype(int)
    binner = tl.Binner().fit(X)
    waits = []
    real = distributed.Future.result
    real_gather = distributed.Client.gather

    def counted(self, *a, **k):
        waits.append(1)
        return real(self, *a, **k)

    def counted_gather(self, *a, **k):
        waits.append(1)
        return real_gather(self, *a, **k)

    monkeypatch.setattr(distributed.Future, "result", counted)
    monkeypatch.setattr(distributed.Client, "gather", counted_gather)
    model = DaskDecisionTreeClassifier(max_depth=3, binner=binner, random_state=0).fit(
        da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=(500,)))
    assert model.tree_.max_depth == 3
    assert len(waits) == 1 + 3  # classes, then levels 0, 1 and 2 (level 3 is all leaves)


def test_bad_input_is_named(client):
    X, z, _ = _data(n=200, seed=4)
    dX = da.from_array(X, chunks=(100, -1))
    dz = da.from_array(z, chunks=(100,))
    with pytest.raises(TypeError, match="dask array"):
        DaskDecisionTreeRegressor().fit(X, z)
    with pytest.raises(ValueError, match="one value per row"):
        DaskDecisionTreeRegressor().fit(dX, dz[:150])
    with pytest.raises(ValueError, match="absolute_error"):
        DaskDecisionTreeRegressor(criterion="absolute_error").fit(dX, dz)
    with pytest.raises(ValueError, match="split_every"):
        DaskDecisionTreeRegressor(split_every=1).fit(dX, dz)
    with pytest.raises(ValueError, match="fitted Binner"):
        DaskDecisionTreeRegressor(binner=tl.Binner()).fit(dX, dz)
    with pytest.raises(ValueError, match="max_depth"):
        DaskDecisionTreeRegressor(max_depth=0).fit(dX, dz)
    with pytest.raises(ValueError, match="not fitted"):
        DaskDecisionTreeRegressor().to_local()
    with pytest.raises(ValueError, match="NaN"):
        DaskDecisionTreeRegressor().fit(dX, da.from_array(np.full(200, np.nan), chunks=100))
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        DaskDecisionTreeRegressor().fit(dX[dX[:, 0] > -10], dz)


# The tests with worker processes run in the JIT pass only. In CI's coverage pass (kernels as
# Python) their three processes load both cores beside the JIT pass's timing tests: in one CI
# run a Ctrl-C test of the JIT pass took 22 s to stop instead of under 3 s. The lines only
# they reach are few (the lost-data message).
@pytest.mark.jit_only
@pytest.mark.parametrize("when,forest", [(-1, False), (0, False), (2, False), (4, False),
                                         (2, True)])
def test_a_killed_worker_costs_time_not_the_tree(when, forest, tmp_path):
    # a cluster of two worker processes with nannies; one worker is killed (SIGKILL) before
    # level ``when`` (-1: while the partitions are binned; 0: right after; 4: the last level
    # that splits; a forest: in its first pass); the scheduler recomputes what it held from
    # the tasks' lineage and the fit gives the same trees
    import os
    import signal
    import threading

    from treelearn.dask import _loop as dask_est

    X, z, _ = _data(n=4000, seed=6, holes=0.0)
    y = (z > 0).astype(int)
    binner = tl.Binner().fit(X)
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=5, min_samples_leaf=50,
                                      binner=binner, random_state=0).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        killed = []

        def hook(level, client):
            if level == when and not killed:
                pids = client.run(os.getpid)
                victim = sorted(pids)[0]
                os.kill(pids[victim], signal.SIGKILL)
                killed.append(victim)

        dX = da.from_array(X, chunks=(1000, -1))
        dy = da.from_array(y, chunks=(1000,))
        result = {}

        def fit():
            try:
                if forest:
                    result["model"] = DaskRandomForestClassifier(
                        n_estimators=4, trees_per_pass=2, max_features=None, max_depth=5,
                        min_samples_leaf=50, binner=binner, random_state=0,
                        client=c).fit(dX, dy)
                else:
                    result["model"] = DaskDecisionTreeClassifier(
                        max_depth=5, min_samples_leaf=50, binner=binner, random_state=0,
                        client=c).fit(dX, dy)
            except BaseException as exc:  # reported below
                result["error"] = exc

        dask_est.LEVEL_HOOK = hook
        try:
            t = threading.Thread(target=fit)
            t.start()
            t.join(timeout=240)
        finally:
            dask_est.LEVEL_HOOK = None
        assert not t.is_alive(), "the fit hung after a worker was killed"
        assert "error" not in result, result.get("error")
        assert killed
        assert killed[0] not in c.scheduler_info()["workers"]  # it really went away
        if forest:
            for tree, want in zip(result["model"].trees_,
                                  _local_forest_trees(result["model"], X, y), strict=True):
                same_tree(tree, want)
        else:
            same_tree(result["model"].tree_, local.tree_)


@pytest.mark.jit_only  # worker processes: see above
def test_data_that_cannot_be_recomputed_is_a_clear_error_fast():
    # scattered data has no lineage: when every worker holding it dies, the fit stops at
    # once with an error saying so, never hangs
    import os
    import signal
    import time

    from treelearn.dask import _loop as dask_est

    rng = np.random.default_rng(9)
    X = rng.normal(size=(4000, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        fx = c.scatter([X[:2000], X[2000:]])
        fy = c.scatter([y[:2000], y[2000:]])
        dX = da.concatenate([da.from_delayed(f, shape=(2000, 5), dtype=np.float32)
                             for f in fx])
        dy = da.concatenate([da.from_delayed(f, shape=(2000,), dtype=np.int64) for f in fy])

        def hook(level, client):
            if level == 2:
                for pid in client.run(os.getpid).values():
                    os.kill(pid, signal.SIGKILL)

        dask_est.LEVEL_HOOK = hook
        t = time.perf_counter()
        try:
            with pytest.raises(RuntimeError, match="lost data this fit needs"):
                DaskDecisionTreeClassifier(max_depth=5, client=c).fit(dX, dy)
        finally:
            dask_est.LEVEL_HOOK = None
        assert time.perf_counter() - t < 60


def test_a_small_histogram_budget_processes_nodes_in_groups_with_the_same_tree(
        client, monkeypatch):
    # a budget of two nodes' histograms: each group of a level's nodes (and so each task)
    # holds at most two, siblings stay together, the tree is the same, and the client still
    # waits once per level
    from treelearn.dask import _loop as dask_est

    X, z, _ = _data(n=3000, seed=12)
    y = (z > 0).astype(int)
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=5, min_samples_leaf=20,
                                      random_state=0).fit(X, y)
    groups = []
    real = dask_est._node_groups

    def recorded(families, sizes, budget):
        out = real(families, sizes, budget)
        groups.append((out, families, budget // node_bytes))
        return out

    monkeypatch.setattr(dask_est, "_node_groups", recorded)
    monkeypatch.setattr(dask_est, "ROWS_LIMIT", 0.0)  # histograms for every node
    waits = count_gathers(monkeypatch)
    node_bytes = int(local.binner_.n_bins_.sum() + X.shape[1]) * 2 * 8  # bins + missing bins
    model = DaskDecisionTreeClassifier(max_depth=5, min_samples_leaf=20, random_state=0,
                                       binner=local.binner_,
                                       histogram_budget=2 * node_bytes + 1).fit(
        da.from_array(X, chunks=(1000, -1)), da.from_array(y, chunks=(1000,)))
    same_tree(model.tree_, local.tree_)
    assert [g[2] for g in groups] == [2] * len(groups)
    assert max(len(grp) for gs, _, _ in groups for grp in gs) <= 2
    assert any(len(gs) > 1 for gs, _, _ in groups)  # some level took several groups
    for gs, fams, _ in groups:  # every node once, in order; siblings never apart
        assert [i for grp in gs for i in grp] == list(range(len(fams)))
        for a, b in zip(gs, gs[1:], strict=False):
            assert fams[a[-1]] is None or fams[a[-1]] != fams[b[0]]
    assert len(waits) == 5  # levels 0-4


def test_node_groups_keep_families_together():
    from treelearn.dask._loop import _node_groups

    fams = [(0, 0), (0, 0), (0, 1), (0, 1), (0, 1), (0, 2)]
    ones = [1.0] * 6
    assert _node_groups(fams, ones, 2) == [[0, 1], [2, 3, 4], [5]]
    assert _node_groups(fams, ones, 5) == [[0, 1, 2, 3, 4], [5]]
    assert _node_groups([None], [1.0], 1) == [[0]]
    # nodes without siblings to subtract never hold a group together; trees' families differ
    assert _node_groups([None, None, None], [1.0] * 3, 2) == [[0, 1], [2]]
    assert _node_groups([(0, 0), (1, 0), (1, 0)], [1.0] * 3, 2) == [[0], [1, 2]]
    # sizes: rows of small nodes weigh less than histograms
    assert _node_groups([None] * 4, [10.0, 1.0, 1.0, 10.0], 12.0) == [[0, 1, 2], [3]]


# -- forests -------------------------------------------------------------------------------------
def _local_forest_trees(model, X, y, lam=1.0, sample_weight=None):
    """The local hist trees of a Dask forest fitted with all features per split: each is the
    local tree on the forest's bin edges, its rows weighing their Poisson counts (keyed on the
    tree's seed and the row's position) times their weights."""
    rows = np.arange(X.shape[0])
    base = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    kind = (tl.DecisionTreeClassifier if hasattr(model, "classes_")
            else tl.DecisionTreeRegressor)
    out = []
    for seed in model.seeds_:
        w = base * poisson_counts(int(seed), 0, rows, lam)
        local = kind(splitter="hist", binner=model.binner_, max_depth=model.max_depth,
                     min_samples_leaf=model.min_samples_leaf, criterion=model.criterion,
                     random_state=0).fit(X, y, sample_weight=w)
        out.append(local.tree_)
    return out


@pytest.mark.parametrize("chunks", list(CHUNKS))
def test_each_forest_tree_is_the_local_hist_tree_of_its_poisson_sample(client, rows_limit, chunks):
    X, z, rng = _data(n=3000, seed=21)
    y = np.digitize(z, [-0.5, 0.5])
    w = rng.integers(1, 4, size=3000).astype(float)
    c = CHUNKS[chunks](3000)
    model = DaskRandomForestClassifier(
        n_estimators=5, trees_per_pass=2, max_features=None, max_depth=5,
        min_samples_leaf=20, random_state=7).fit(
        da.from_array(X, chunks=(c, -1)), da.from_array(y, chunks=(c,)),
        sample_weight=da.from_array(w, chunks=(c,)))
    assert len(model.trees_) == 5 and len(set(model.seeds_.tolist())) == 5
    for tree, want in zip(model.trees_, _local_forest_trees(model, X, y, sample_weight=w),
                          strict=True):
        same_tree(tree, want)


def test_forest_regressor_trees_and_max_samples(client, rows_limit):
    X, z, _ = _data(n=2500, seed=22)
    model = DaskRandomForestRegressor(
        n_estimators=3, max_depth=5, min_samples_leaf=10, max_samples=0.5,
        random_state=1).fit(da.from_array(X, chunks=(700, -1)),
                            da.from_array(z, chunks=(700,)))
    trees = _local_forest_trees(model, X, z, lam=0.5)
    for tree, want in zip(model.trees_, trees, strict=True):
        same_tree(tree, want)
    # half the rows' counts: about 39 % of rows in each sample (1 - e^-0.5)
    frac = [t.n_node_samples[0] / 2500 for t in model.trees_]
    assert all(0.35 < f < 0.44 for f in frac), frac


def test_the_forest_does_not_depend_on_partitions_passes_or_groups(client):
    # features drawn at random per split: the draw is keyed on (tree seed, node), the sample
    # on (tree seed, row position); neither the partitioning nor the trees grown together
    # nor the histogram groups change a tree
    X, z, _ = _data(n=3000, p=8, seed=23)
    X = np.round(X, 1)  # few values: edges from the summaries do not depend on partitions
    y = (z > 0).astype(int)

    def fit(chunks, per_pass, budget):
        return DaskRandomForestClassifier(
            n_estimators=6, max_depth=6, random_state=5, trees_per_pass=per_pass,
            histogram_budget=budget).fit(da.from_array(X, chunks=(chunks, -1)),
                                         da.from_array(y, chunks=(chunks,)))

    ref = fit((3000,), 6, 2**28)
    assert any(t.node_count > 15 for t in ref.trees_)
    for other in (fit((100, 0, 1900, 1000), 6, 2**28), fit((1000, 1000, 1000), 1, 2**28),
                  fit((1500, 1500), 4, 30_000)):
        np.testing.assert_array_equal(other.seeds_, ref.seeds_)
        for a, b in zip(other.trees_, ref.trees_, strict=True):
            same_tree(a, b)
    # the draw differs from tree to tree (max_features="sqrt" of 8 features)
    roots = {int(t.feature[0]) for t in ref.trees_}
    assert len(roots) > 1


def test_forest_to_local_predicts_saves_and_names_what_it_cannot(client, tmp_path):
    import dask.dataframe as dd
    import pandas as pd

    X, z, _ = _data(n=2000, p=4, seed=24)
    y = np.where(z > 0, "yes", "no")
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["e"] = pd.Categorical(np.where(X[:, 2] > 0, "hi", "lo"))
    ddf = dd.from_pandas(df, npartitions=3)
    dy = dd.from_pandas(pd.Series(y, dtype=object), npartitions=3)
    model = DaskRandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(
        ddf, dy)
    local = model.to_local()
    assert isinstance(local, tl.RandomForestClassifier) and len(local.estimators_) == 4
    np.testing.assert_allclose(model.predict_proba(ddf).compute().to_numpy(),
                               local.predict_proba(df))
    assert (model.predict(ddf).compute().to_numpy() == local.predict(df)).all()
    assert model.apply(ddf).compute().shape == (2000, 4)
    probs = np.mean([t.predict_proba(df) for t in local.estimators_], axis=0)
    np.testing.assert_allclose(local.predict_proba(df), probs)
    path = tl.io.save(local, tmp_path / "forest.tlm")
    np.testing.assert_allclose(tl.io.load(path).predict_proba(df), local.predict_proba(df))
    with pytest.raises(ValueError, match="grown elsewhere"):
        next(local.oob_masks())


def test_forest_levels_share_round_trips(client, monkeypatch):
    # trees grown together: one wait per level of the deepest tree, not per tree
    X, z, _ = _data(n=2000, seed=25)
    y = (z > 0).astype(int)
    waits = count_gathers(monkeypatch)
    model = DaskRandomForestClassifier(n_estimators=6, trees_per_pass=6, max_depth=3,
                                       binner=tl.Binner().fit(X), random_state=0).fit(
        da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=(500,)))
    assert max(t.max_depth for t in model.trees_) == 3
    assert len(waits) == 3  # levels 0, 1, 2 of all six trees
    monkeypatch.undo()
    dX = da.from_array(X, chunks=(500, -1))
    leaves = model.apply(dX).compute()
    assert leaves.shape == (2000, 6)
    np.testing.assert_array_equal(leaves, model.to_local().apply(X))
    np.testing.assert_allclose(model.predict_proba(dX).compute(),
                               model.to_local().predict_proba(X))


def test_forest_bad_input_is_named(client):
    X, z, _ = _data(n=200, seed=4)
    dX = da.from_array(X, chunks=(100, -1))
    dz = da.from_array(z, chunks=(100,))
    with pytest.raises(ValueError, match="n_estimators"):
        DaskRandomForestRegressor(n_estimators=0).fit(dX, dz)
    with pytest.raises(ValueError, match="trees_per_pass"):
        DaskRandomForestRegressor(trees_per_pass=0).fit(dX, dz)
    with pytest.raises(ValueError, match="bootstrap=True"):
        DaskRandomForestRegressor(bootstrap=False, max_samples=0.5).fit(dX, dz)
    with pytest.raises(ValueError, match="fraction"):
        DaskRandomForestRegressor(max_samples=1.5).fit(dX, dz)
    with pytest.raises(ValueError, match="n_samples"):
        DaskRandomForestRegressor(max_samples=500).fit(dX, dz)
    with pytest.raises(TypeError, match="max_samples must be None, an int or a float"):
        DaskRandomForestRegressor(max_samples="half").fit(dX, dz)
    with pytest.raises(ValueError, match="at least one tree"):
        tl.RandomForestRegressor()._adopt([])
    with pytest.raises(ValueError, match="max_features"):
        DaskRandomForestRegressor(max_features=0).fit(dX, dz)
    with pytest.raises(ValueError, match="not fitted"):
        DaskRandomForestRegressor().to_local()
    # without bootstrap every tree sees every row (max_features=None: all trees alike)
    m = DaskRandomForestRegressor(n_estimators=2, bootstrap=False, max_features=None,
                                  max_depth=3, random_state=0).fit(dX, dz)
    assert all(t.n_node_samples[0] == 200 for t in m.trees_)
    same_tree(m.trees_[0], m.trees_[1])


@pytest.mark.parametrize("n_workers", [1, 4])
def test_same_trees_on_one_and_four_workers_and_tasks_per_level(client, n_workers):
    # the acceptance's 1, 2 (the module's client) and 4 workers, uneven partitions with an
    # empty one; Dask's task stream shows a level's tasks: one histogram and one row-moving
    # task per partition, one split task per node group (one group here)
    X, z, _ = _data(n=3000, seed=26)
    y = (z > 0).astype(int)
    binner = tl.Binner().fit(X)
    local = tl.DecisionTreeClassifier(splitter="hist", max_depth=4, min_samples_leaf=20,
                                      binner=binner, random_state=0).fit(X, y)
    chunks = CHUNKS["four uneven, one empty"](3000)
    dX = da.from_array(X, chunks=(chunks, -1))
    dy = da.from_array(y, chunks=(chunks,))
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        with distributed.get_task_stream(c) as ts:
            model = DaskDecisionTreeClassifier(max_depth=4, min_samples_leaf=20, binner=binner,
                                               random_state=0, client=c).fit(dX, dy)
        forest = DaskRandomForestClassifier(n_estimators=3, max_depth=4, random_state=2,
                                            client=c, binner=binner).fit(dX, dy)
    same_tree(model.tree_, local.tree_)
    names = [t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in ts.data]

    def count(name):
        return sum(k.startswith(name + "-") for k in names)

    levels = 4  # levels 0-3 split; level 4 is all leaves
    assert count("_part_hist") == 4 * levels
    assert count("_split_level") == levels
    assert count("_part_split") == 4 * (levels - 1)  # after the last level nothing moves
    # the forest: the same on any number of workers (compared with the module's client)
    ref = DaskRandomForestClassifier(n_estimators=3, max_depth=4, random_state=2,
                                     binner=binner, client=client).fit(
        da.from_array(X, chunks=(1500, -1)), da.from_array(y, chunks=(1500,)))
    for a, b in zip(forest.trees_, ref.trees_, strict=True):
        same_tree(a, b)
