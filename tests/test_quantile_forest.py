"""Quantile regression forests (treelearn/ensemble/_quantile.py, kernels in
treelearn/engine/leaves.py).

The twin reads every tree's leaf for a row with ``apply``, collects the training targets in
those leaves with their bootstrap draws as weights, and sorts them: with whole-number
weights the quantile is NumPy's quantile of each target repeated as often as its weight
(Meinshausen 2006, "Quantile regression forests", JMLR 7, with quantile-forest's frequency
weights). quantile-forest itself (Johnson 2024) is the second reference: with the same trees
(scikit-learn's, for the same ``random_state``) it must give the same numbers.
"""

import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from quantile_forest import RandomForestQuantileRegressor as QFRandomForest

import treelearn as tl
from treelearn.engine.leaves import INTERPOLATIONS, weighted_quantiles
from treelearn.ensemble import ExtraTreesQuantileRegressor, RandomForestQuantileRegressor


def _leaf_weights(forest, X_train):
    """(n_train, T): each training row's weight in each tree (draws, or 1 without bootstrap)."""
    n = X_train.shape[0]
    if not forest.bootstrap:
        return np.ones((n, len(forest.estimators_)))
    smp = forest._sampling
    return np.column_stack([forest._draw(int(t.random_state), n, smp["n_features"],
                                         smp["n_draws"], None, np.zeros(n, int))[1]
                            for t in forest.estimators_]).astype(float)


def twin_quantiles(forest, X_train, y_train, X, qs, method, aggregate=True, trees=None):
    """Per row: the training targets in its leaves, each repeated by its weight; NumPy."""
    W = _leaf_weights(forest, X_train)
    Ltr = forest.apply(X_train)
    L = forest.apply(X)
    out = np.empty((X.shape[0], len(qs)))
    for i in range(X.shape[0]):
        use = range(W.shape[1]) if trees is None else np.flatnonzero(trees[i])
        pools = []
        for t in use:
            in_leaf = (Ltr[:, t] == L[i, t]) & (W[:, t] > 0)
            pools.append(np.repeat(y_train[in_leaf], W[in_leaf, t].astype(int)))
        if not pools:
            out[i] = np.nan
        elif aggregate:
            out[i] = np.quantile(np.concatenate(pools), qs, method=method)
        else:
            out[i] = np.mean([np.quantile(p, qs, method=method) for p in pools], axis=0)
    return out


def _data(seed, n=300, ties=False):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 8, (n, 3)) / 2.0 if ties else rng.rand(n, 3)
    y = X[:, 0] * 3 + rng.normal(0, 1 + X[:, 1], n)
    if ties:
        y = np.round(y)
    return X, y


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans(), st.booleans(), st.integers(1, 6),
       st.sampled_from(INTERPOLATIONS))
def test_quantiles_equal_the_sorted_leaf_targets(seed, ties, extra, leaf, method):
    X, y = _data(seed, 120, ties)
    cls = ExtraTreesQuantileRegressor if extra else RandomForestQuantileRegressor
    forest = cls(n_estimators=6, min_samples_leaf=leaf, random_state=seed % 1000).fit(X, y)
    Xt = _data(seed + 1, 25, ties)[0]
    # binary fractions: the positions among the repeated targets are then exact in floating
    # point, for NumPy and the kernel alike (at a position that rounds across a block end
    # "lower", "higher", "nearest" and "midpoint" jump to the other value)
    qs = [0.0, 0.0625, 0.3125, 0.5, 0.78125, 1.0]
    for aggregate in (True, False):
        got = forest.predict(Xt, quantiles=qs, interpolation=method,
                             aggregate_leaves_first=aggregate)
        np.testing.assert_allclose(got, twin_quantiles(forest, X, y, Xt, qs, method, aggregate),
                                   rtol=1e-12, atol=1e-12)


def test_mean_is_the_weighted_mean_of_the_leaf_targets():
    X, y = _data(0)
    forest = RandomForestQuantileRegressor(n_estimators=8, min_samples_leaf=4,
                                           random_state=0).fit(X, y)
    W = _leaf_weights(forest, X)
    L, Ltr = forest.apply(X[:20]), forest.apply(X)
    want = []
    for i in range(20):
        w = sum(np.where(Ltr[:, t] == L[i, t], W[:, t], 0.0) for t in range(8))
        want.append(np.sum(w * y) / np.sum(w))
    np.testing.assert_allclose(forest.predict(X[:20], quantiles="mean"), want, rtol=1e-12)
    # Meinshausen's leaf weights, tree by tree: the forest's mean prediction
    np.testing.assert_allclose(
        forest.predict(X[:20], quantiles="mean", weighted_leaves=True,
                       aggregate_leaves_first=False),
        tl.ensemble.RandomForestRegressor(n_estimators=8, min_samples_leaf=4,
                                          random_state=0).fit(X, y).predict(X[:20]),
        rtol=1e-12)


@pytest.mark.parametrize("leaf", [5, 10])
def test_equal_to_quantile_forest_with_the_same_trees(leaf):
    # leaves of at least 5 rows: in fully grown trees two features can cut a node of 2-3
    # bootstrap rows into the same halves, and which one wins is then rounding
    X, y = _data(3, 400)
    Xt = _data(4, 100)[0]
    ours = RandomForestQuantileRegressor(n_estimators=10, min_samples_leaf=leaf,
                                         random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = QFRandomForest(n_estimators=10, min_samples_leaf=leaf, max_samples_leaf=None,
                                random_state=0).fit(X, y)
        np.testing.assert_array_equal(ours.apply(Xt), theirs.apply(Xt))  # the same trees
        # linear interpolation is continuous at block ends, where the two round differently
        for qs in (0.5, [0.05, 0.5, 0.95], "mean"):
            for method in ("linear",):
                for wl in (False, True):
                    for agg in (True, False):
                        kw = dict(quantiles=qs, interpolation=method, weighted_leaves=wl,
                                  aggregate_leaves_first=agg)
                        np.testing.assert_allclose(ours.predict(Xt, **kw),
                                                   theirs.predict(Xt, **kw),
                                                   rtol=1e-12, atol=1e-12, err_msg=str(kw))
            # whole weights, binary-fraction quantiles; not "nearest": at a position exactly
            # halfway quantile-forest's division rounds the half away and it misses NumPy's
            # round-half-to-even, which the kernel keeps (the first test compares with NumPy)
            for method in ("linear", "lower", "higher", "midpoint"):
                kw = dict(quantiles=[0.0625, 0.5, 0.9375], interpolation=method)
                np.testing.assert_allclose(ours.predict(Xt, **kw), theirs.predict(Xt, **kw),
                                           rtol=1e-12, atol=1e-12, err_msg=str(kw))
        np.testing.assert_allclose(ours.predict(X, quantiles=[0.1, 0.9], oob_score=True),
                                   theirs.predict(X, quantiles=[0.1, 0.9], oob_score=True),
                                   rtol=1e-12)


def test_out_of_bag_quantiles_read_only_the_trees_that_left_the_row_out():
    X, y = _data(5, 200)
    forest = RandomForestQuantileRegressor(n_estimators=12, random_state=0).fit(X, y)
    oob = np.column_stack(list(forest.oob_masks()))
    got = forest.predict(X, quantiles=[0.2, 0.5], oob_score=True)
    want = twin_quantiles(forest, X, y, X, [0.2, 0.5], "linear", trees=oob)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # some rows and a row that is not a training row
    idx = np.array([3, 17, -1])
    Xi = np.vstack([X[3], X[17], X[0] + 0.01])
    got = forest.predict(Xi, quantiles=0.5, oob_score=True, indices=idx)
    trees = np.vstack([oob[3], oob[17], np.ones(12, bool)])
    want = twin_quantiles(forest, X, y, Xi, [0.5], "linear", trees=trees)[:, 0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_shapes_defaults_and_intervals():
    X, y = _data(6, 2000)
    Xt, yt = _data(7, 2000)
    forest = RandomForestQuantileRegressor(n_estimators=50, min_samples_leaf=10,
                                           default_quantiles=[0.05, 0.95], random_state=0,
                                           n_jobs=2).fit(X, y)
    lo_hi = forest.predict(Xt)
    assert lo_hi.shape == (2000, 2)
    assert forest.predict(Xt, quantiles=0.5).shape == (2000,)
    assert forest.predict(Xt, quantiles=[0.5]).shape == (2000,)  # as quantile-forest
    assert forest.predict(Xt, quantiles=[0.9, 0.1]).shape == (2000, 2)
    np.testing.assert_array_equal(forest.predict(Xt[:50], quantiles=[0.95, 0.05]),
                                  lo_hi[:50, ::-1])
    # a 90% interval covers about 90% of new rows (noise grows with X[:, 1])
    covered = np.mean((yt >= lo_hi[:, 0]) & (yt <= lo_hi[:, 1]))
    assert 0.84 < covered < 0.96
    widths = lo_hi[:, 1] - lo_hi[:, 0]
    assert widths[Xt[:, 1] > 0.8].mean() > 1.5 * widths[Xt[:, 1] < 0.2].mean()


def test_errors_name_the_problem():
    X, y = _data(8, 100)
    forest = RandomForestQuantileRegressor(n_estimators=3, random_state=0).fit(X, y)
    for bad in (1.5, -0.1, [0.5, 2], "median", [], [[0.5]], True):
        with pytest.raises(ValueError, match="quantiles"):
            forest.predict(X, quantiles=bad)
    with pytest.raises(ValueError, match="interpolation"):
        forest.predict(X, interpolation="cubic")
    with pytest.raises(ValueError, match="indices are read only with oob_score"):
        forest.predict(X, indices=np.arange(100))
    with pytest.raises(ValueError, match="training data"):
        forest.predict(X[:10], oob_score=True)
    with pytest.raises(ValueError, match="indices must"):
        forest.predict(X[:2], oob_score=True, indices=[0, 500])
    with pytest.raises(TypeError, match="weighted_leaves must be a bool"):
        forest.predict(X, weighted_leaves="yes")
    with pytest.raises(ValueError, match="bootstrap"):
        ExtraTreesQuantileRegressor(n_estimators=2).fit(X, y).predict(X, oob_score=True)
    with pytest.raises(ValueError, match="default_quantiles"):
        RandomForestQuantileRegressor(default_quantiles=2.0).fit(X, y)
    with pytest.raises(Exception, match="fitted"):
        RandomForestQuantileRegressor().predict(X)


def test_model_files_keep_the_leaf_rows(tmp_path):
    X, y = _data(9, 200)
    forest = ExtraTreesQuantileRegressor(n_estimators=4, min_samples_leaf=3,
                                         default_quantiles=[0.25, 0.75],
                                         random_state=0).fit(X, y)
    path = os.fspath(tmp_path / "qrf.treelearn")
    tl.save(forest, path)
    back = tl.load(path)
    np.testing.assert_array_equal(back.predict(X), forest.predict(X))
    # a damaged store is refused by name
    from treelearn._io_ensembles import _check_leaf_store

    store = dict(forest._leaf_store)
    store["rank"] = store["rank"].copy()
    store["rank"][0] = 10**6
    with pytest.raises(ValueError, match="ranks"):
        _check_leaf_store(forest, store, ValueError)
    store = dict(forest._leaf_store)
    store["y_sorted"] = store["y_sorted"][::-1].copy()
    with pytest.raises(ValueError, match="sorted"):
        _check_leaf_store(forest, store, ValueError)
    store = dict(forest._leaf_store)
    ptr = store["ptr"].copy()
    ptr[1:] = ptr[-1]  # every row at the root, a split node
    store["ptr"] = ptr
    with pytest.raises(ValueError, match="split node"):
        _check_leaf_store(forest, store, ValueError)


def test_weighted_quantile_kernel_on_whole_weights_is_numpys():
    rng = np.random.RandomState(0)
    for _ in range(200):
        m = rng.randint(1, 12)
        vals = np.sort(rng.randint(0, 6, m).astype(float) + rng.rand() * (rng.rand() < 0.5))
        vals = np.unique(vals)
        m = vals.size
        w = rng.randint(1, 5, m).astype(float)
        qs = np.sort(rng.rand(4))
        for k, method in enumerate(INTERPOLATIONS):
            out = np.empty(4)
            weighted_quantiles(vals, w, m, qs, k, np.empty(m), out, 0)
            np.testing.assert_allclose(out, np.quantile(np.repeat(vals, w.astype(int)), qs,
                                                        method=method), rtol=1e-12,
                                       err_msg=method)


def test_warm_start_keeps_the_leaf_rows_of_every_tree():
    X, y = _data(10, 150)
    grown = RandomForestQuantileRegressor(n_estimators=3, warm_start=True, random_state=0)
    grown.fit(X, y)
    grown.set_params(n_estimators=7)
    grown.fit(X, y)
    once = RandomForestQuantileRegressor(n_estimators=7, random_state=0).fit(X, y)
    np.testing.assert_array_equal(grown.predict(X, quantiles=[0.1, 0.5, 0.9]),
                                  once.predict(X, quantiles=[0.1, 0.5, 0.9]))
    assert grown._leaf_store["offsets"].size == 7
