"""Whole trees from the Numba builder against the recursive brute-force twin."""

import naive
import numpy as np
import pytest
from conftest import JIT_DISABLED
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treelearn import DecisionTreeClassifier, DecisionTreeRegressor

CLASSIFIERS = ["gini", "entropy", "misclassification", "gain_ratio", "chi2"]
CODES = {"gini": naive.GINI, "entropy": naive.ENTROPY, "misclassification": naive.MISCLASSIFICATION,
         "gain_ratio": naive.GAIN_RATIO, "chi2": naive.CHI2, "squared_error": naive.SQUARED_ERROR,
         "absolute_error": naive.ABSOLUTE_ERROR}


def _seed(random_state):
    return int(np.random.RandomState(random_state).randint(0, naive.RAND_R_MAX))


def assert_same_tree(tree, ref):
    np.testing.assert_array_equal(tree.children_left, ref["left"])
    np.testing.assert_array_equal(tree.children_right, ref["right"])
    np.testing.assert_array_equal(tree.feature, ref["feature"])
    np.testing.assert_array_equal(tree.threshold, ref["threshold"])
    np.testing.assert_array_equal(tree.n_node_samples, ref["n"])
    np.testing.assert_allclose(tree.weighted_n_node_samples, ref["w"])
    np.testing.assert_allclose(tree.impurity, ref["impurity"], atol=1e-9)
    np.testing.assert_allclose(tree.value[:, 0, :], np.vstack(ref["value"]), atol=1e-12)


def _data(seed, n, F, classification, ties):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, (n, F)).astype(float) if ties else rng.normal(size=(n, F))
    if classification:
        y = (X[:, 0] + rng.normal(scale=2, size=n) > 2.5).astype(int) + (rng.random(n) < 0.2)
    else:
        y = np.round(X[:, 0] * 3 + rng.normal(size=n) * 2)  # integer: exact sums
    w = rng.integers(1, 3, n).astype(float)
    return X, y, w


@pytest.mark.parametrize("criterion", CLASSIFIERS)
@pytest.mark.parametrize("params", [{}, {"max_depth": 3}, {"min_samples_leaf": 3},
                                    {"min_impurity_decrease": 0.01}, {"max_features": 2},
                                    {"splitter": "random"}])
def test_classifier_equals_brute_force(criterion, params):
    for seed, ties in ((0, False), (1, True)):
        X, y, w = _data(seed, 60, 4, True, ties)
        est = DecisionTreeClassifier(criterion=criterion, random_state=seed, **params)
        est.fit(X, y, sample_weight=w)
        y = np.searchsorted(est.classes_, y)
        ref = naive.naive_tree(
            X, y, w, CODES[criterion], n_classes=est.n_classes_, seed=_seed(seed),
            max_depth=params.get("max_depth", 2**31 - 1),
            min_samples_leaf=params.get("min_samples_leaf", 1),
            min_impurity_decrease=params.get("min_impurity_decrease", 0.0),
            max_features=params.get("max_features"),
            random_split=params.get("splitter") == "random")
        assert_same_tree(est.tree_, ref)


@pytest.mark.parametrize("criterion", ["squared_error", "absolute_error"])
@pytest.mark.parametrize("params", [{}, {"max_depth": 2}, {"min_samples_leaf": 4}])
def test_regressor_equals_brute_force(criterion, params):
    for seed, ties in ((0, False), (1, True)):
        X, y, w = _data(seed, 40, 3, False, ties)
        est = DecisionTreeRegressor(criterion=criterion, random_state=seed, **params)
        est.fit(X, y, sample_weight=w)
        ref = naive.naive_tree(X, y, w, CODES[criterion], seed=_seed(seed),
                               max_depth=params.get("max_depth", 2**31 - 1),
                               min_samples_leaf=params.get("min_samples_leaf", 1))
        assert_same_tree(est.tree_, ref)


@settings(max_examples=150 if not JIT_DISABLED else 15)
@given(st.integers(0, 10_000), st.sampled_from(CLASSIFIERS + ["squared_error"]))
@example(3413, "squared_error")  # a split of improvement exactly 0: rounding decides (naive.py)
def test_random_small_problems_equal_brute_force(seed, criterion):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    F = int(rng.integers(1, 4))
    X = rng.integers(0, 4, (n, F)).astype(float)
    w = rng.integers(1, 3, n).astype(float)
    if criterion == "squared_error":
        y = rng.integers(-3, 4, n).astype(float)
        est = DecisionTreeRegressor(criterion=criterion, random_state=seed)
        ref_kw = {}
    else:
        y = rng.integers(0, 3, n)
        if np.unique(y).size < 3:
            y[:3] = [0, 1, 2][: min(3, n)] if n >= 3 else y[:3]
        est = DecisionTreeClassifier(criterion=criterion, random_state=seed)
        ref_kw = {"n_classes": int(np.unique(y).size)}
        y = np.searchsorted(np.unique(y), y)
    est.fit(X, y, sample_weight=w)
    ref = naive.naive_tree(X, y, w, CODES[criterion], seed=_seed(seed), **ref_kw)
    assert_same_tree(est.tree_, ref)


def test_apply_matches_naive_routing(rng):
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = DecisionTreeClassifier(random_state=0).fit(X, y)
    t = est.tree_
    Xt = rng.normal(size=(500, 5))
    want = naive.naive_apply(Xt, t.children_left, t.children_right, t.feature, t.threshold)
    np.testing.assert_array_equal(est.apply(Xt), want)


@pytest.mark.jit_only  # 10,000 levels of kernels as Python would take many minutes
def test_a_chain_ten_thousand_nodes_deep():
    """No recursion anywhere: a tree 10,001 levels deep grows, predicts, prunes and prints.

    With alternating labels on a line the best cut always peels one sample off an end, so the
    tree is a chain (scikit-learn grows the same one).
    """
    from treelearn import export_text
    from treelearn.pruning import cost_complexity_path

    n = 10_002
    X = np.arange(n, dtype=float).reshape(-1, 1)
    y = np.arange(n) % 2
    est = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert est.get_depth() == n - 1
    assert est.get_n_leaves() == n
    assert est.score(X, y) == 1.0
    est.tree_.check()
    assert est.decision_path(X[-1:]).sum() in (2, n)
    path = cost_complexity_path(est.tree_)
    # every split gains the same, so the root is the weakest link: one step to the stump
    np.testing.assert_allclose(path.impurities, [0.0, 0.5])
    np.testing.assert_array_equal(path.pruned_nodes, [0])
    assert "truncated branch" in export_text(est, max_depth=5)


def test_invariants_hold_on_many_trees(rng):
    for seed in range(5):
        X = rng.normal(size=(200, 4))
        y = rng.integers(0, 3, 200)
        for params in ({}, {"max_leaf_nodes": 10}, {"ccp_alpha": 0.01}, {"splitter": "random"}):
            est = DecisionTreeClassifier(random_state=seed, **params).fit(X, y)
            est.tree_.check()
            np.testing.assert_allclose(est.tree_.value[:, 0, :].sum(axis=1), 1.0)


def test_level_maps_in_node_order_or_not_give_the_same_tree_arrays():
    # tree_arrays keeps the store's prefix when the maps were stored in node order (depth-first
    # growth) and copies map by map otherwise: both give the maps of the nodes in node order
    from treelearn.engine import nodes as nd

    count = 5
    ti = np.zeros((8, nd.N_ICOLS), dtype=np.int64)
    tf = np.zeros((8, nd.N_FCOLS))
    ti[:, nd.N_PARENT] = [-1, 0, 0, 1, 1, 0, 0, 0]
    ti[:, nd.N_BRANCH] = [0, 0, 1, 0, 1, 0, 0, 0]
    ti[:count, nd.N_NB] = [2, 2, 0, 0, 0]
    ti[:count, nd.N_CATLEN] = [3, 4, 0, 0, 0]
    maps = {0: [0, 1, -1], 1: [1, -1, 0, 0]}
    in_order = np.array([0, 1, -1, 1, -1, 0, 0, 9, 9], dtype=np.intp)
    swapped = np.array([1, -1, 0, 0, 0, 1, -1, 9, 9], dtype=np.intp)
    results, shared = [], []
    for store, offsets in ((in_order, (0, 3)), (swapped, (4, 0))):
        ti[0, nd.N_CATOFF], ti[1, nd.N_CATOFF] = offsets
        for node, off in zip((0, 1), offsets, strict=True):
            np.testing.assert_array_equal(store[off:off + len(maps[node])], maps[node])
        given_store = store.copy()
        results.append(nd.tree_arrays(ti, tf, given_store, count))
        shared.append(np.shares_memory(results[-1][10], given_store))
    assert shared == [True, False]
    cptr, cat = results[0][9], results[0][10]
    np.testing.assert_array_equal(cptr, [0, 3, 7, 7, 7, 7])
    np.testing.assert_array_equal(cat, [0, 1, -1, 1, -1, 0, 0])
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
