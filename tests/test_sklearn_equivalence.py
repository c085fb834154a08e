"""scikit-learn is the oracle for CART: identical trees on a grid of datasets and parameters.

Trees are compared field by field: structure, features, thresholds (exactly), impurities, node
sample counts and values (to rounding), and then predictions, probabilities, importances and the
cost-complexity path. Regression targets are rounded to integers so that sums are exact in
floating point: where two splits tie exactly, both libraries then break the tie the same way
(by their common random feature order) instead of by rounding noise of summation order.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import JIT_DISABLED
from sklearn import tree as sktree
from sklearn.datasets import make_classification, make_regression

import treelearn as tl

PARAMS = [
    {},
    {"max_depth": 3},
    {"max_depth": 7, "min_samples_leaf": 4},
    {"min_samples_split": 25},
    {"min_samples_split": 0.05},
    {"min_samples_leaf": 0.02},
    {"min_weight_fraction_leaf": 0.03},
    {"min_impurity_decrease": 0.003},
    {"max_leaf_nodes": 17},
    {"max_leaf_nodes": 60, "min_samples_leaf": 2},
    {"ccp_alpha": 0.004},
    {"max_leaf_nodes": 40, "ccp_alpha": 0.002},
    {"max_features": 3},
    {"max_features": "sqrt", "max_depth": 6},
    {"splitter": "random"},
]


def _classification(seed):
    X, y = make_classification(n_samples=600, n_features=8, n_informative=5,
                               n_classes=3, random_state=seed)
    return X, y


def _regression(seed):
    X, y = make_regression(n_samples=500, n_features=6, noise=10.0, random_state=seed)
    return X, np.round(y)


def assert_same_tree(ours, theirs):
    a, b = ours.tree_, theirs.tree_
    assert a.node_count == b.node_count
    np.testing.assert_array_equal(a.children_left, b.children_left)
    np.testing.assert_array_equal(a.children_right, b.children_right)
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_array_equal(a.n_node_samples, b.n_node_samples)
    np.testing.assert_allclose(a.weighted_n_node_samples, b.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
    assert a.max_depth == b.max_depth


@pytest.mark.parametrize("criterion", ["gini", "entropy", "log_loss"])
@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("seed", [0, 1])
def test_classifier_is_sklearns(criterion, params, seed):
    X, y = _classification(seed)
    w = np.random.default_rng(seed).integers(1, 4, X.shape[0]).astype(float)
    Xt = np.random.default_rng(seed + 10).normal(size=(300, X.shape[1])) * 2
    for sample_weight in (None, w):
        ours = tl.DecisionTreeClassifier(criterion=criterion, random_state=seed, **params)
        theirs = sktree.DecisionTreeClassifier(criterion=criterion, random_state=seed, **params)
        ours.fit(X, y, sample_weight=sample_weight)
        theirs.fit(X, y, sample_weight=sample_weight)
        assert_same_tree(ours, theirs)
        np.testing.assert_array_equal(ours.predict(Xt), theirs.predict(Xt))
        np.testing.assert_allclose(ours.predict_proba(Xt), theirs.predict_proba(Xt))
        np.testing.assert_array_equal(ours.apply(Xt), theirs.apply(Xt))
        assert (ours.decision_path(Xt) != theirs.decision_path(Xt)).nnz == 0
        np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                                   atol=1e-12)
        assert ours.get_depth() == theirs.get_depth()
        assert ours.get_n_leaves() == theirs.get_n_leaves()


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("seed", [0, 1])
def test_regressor_is_sklearns(params, seed):
    X, y = _regression(seed)
    Xt = np.random.default_rng(seed + 10).normal(size=(300, X.shape[1])) * 2
    if "min_impurity_decrease" in params:
        params = {**params, "min_impurity_decrease": 5.0}
    if "ccp_alpha" in params:
        params = {**params, "ccp_alpha": 20.0}
    ours = tl.DecisionTreeRegressor(random_state=seed, **params).fit(X, y)
    theirs = sktree.DecisionTreeRegressor(random_state=seed, **params).fit(X, y)
    assert_same_tree(ours, theirs)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt))
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                               atol=1e-12)


def test_tie_free_continuous_regression_limited_depth_is_sklearns():
    X, y = make_regression(n_samples=2000, n_features=10, noise=3.0, random_state=3)
    # continuous targets: a node of 2-4 samples where two features give the same partition is a
    # tie that rounding of the sums decides, differently in each library; keep nodes larger
    for params in ({"max_depth": 8, "min_samples_leaf": 5}, {"max_leaf_nodes": 100},
                   {"min_samples_leaf": 10}):
        ours = tl.DecisionTreeRegressor(random_state=0, **params).fit(X, y)
        theirs = sktree.DecisionTreeRegressor(random_state=0, **params).fit(X, y)
        assert_same_tree(ours, theirs)


# The regression path (hundreds of subtrees) and CSC input (the CSR kernels after a conversion)
# run only compiled: with the kernels as Python they cost minutes of the coverage pass.
@pytest.mark.parametrize("kind", ["classification",
                                  pytest.param("regression", marks=pytest.mark.jit_only)])
def test_cost_complexity_path_is_sklearns(kind):
    # (one dataset when the kernels run as Python: four take minutes there)
    for seed in range(1 if JIT_DISABLED else 4):
        if kind == "classification":
            X, y = _classification(seed)
            ours = tl.DecisionTreeClassifier(random_state=seed)
            theirs = sktree.DecisionTreeClassifier(random_state=seed)
        else:
            X, y = _regression(seed)
            ours = tl.DecisionTreeRegressor(random_state=seed)
            theirs = sktree.DecisionTreeRegressor(random_state=seed)
        a = ours.cost_complexity_pruning_path(X, y)
        b = theirs.cost_complexity_pruning_path(X, y)
        np.testing.assert_allclose(a.ccp_alphas, b.ccp_alphas, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(a.impurities, b.impurities, rtol=1e-9, atol=1e-15)
        # pruning to every alpha of the path (and between) is scikit-learn's pruned tree
        for alpha in list(b.ccp_alphas[1:-1:7]) + [float(b.ccp_alphas[3]) * 1.0001]:
            p = ours.set_params(ccp_alpha=alpha).fit(X, y)
            q = theirs.set_params(ccp_alpha=alpha).fit(X, y)
            assert_same_tree(p, q)


@pytest.mark.parametrize("fmt", ["csr", pytest.param("csc", marks=pytest.mark.jit_only)])
def test_sparse_input_gives_the_dense_tree(fmt):
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 4, (400, 30)).astype(float)
    X[rng.random(X.shape) < 0.75] = 0.0
    y = (X[:, 0] - X[:, 1] + rng.normal(size=400) > 0).astype(int)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    for params in ({}, {"max_depth": 4}, {"max_features": 5}, {"max_leaf_nodes": 20},
                   {"splitter": "random"}):
        dense = tl.DecisionTreeClassifier(random_state=1, **params).fit(X, y)
        sparse = tl.DecisionTreeClassifier(random_state=1, **params).fit(Xs, y)
        skl = sktree.DecisionTreeClassifier(random_state=1, **params).fit(Xs, y)
        assert_same_tree(sparse, dense)
        if params.get("splitter") != "random":  # sklearn's sparse random splitter differs
            assert_same_tree(sparse, skl)
        np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(X))
        np.testing.assert_array_equal(sparse.apply(Xs), dense.apply(X))
    yr = np.round(X[:, 0] * 2 - X[:, 3] + rng.normal(size=400))
    for crit in ("squared_error", "absolute_error"):
        dense = tl.DecisionTreeRegressor(criterion=crit, random_state=0, max_depth=6).fit(X, yr)
        sparse = tl.DecisionTreeRegressor(criterion=crit, random_state=0, max_depth=6).fit(Xs, yr)
        np.testing.assert_allclose(sparse.predict(Xs), dense.predict(X))
        np.testing.assert_array_equal(sparse.tree_.n_node_samples, dense.tree_.n_node_samples)


def test_larger_data_gives_sklearns_tree():
    """20,000 rows: large nodes, and histogram-free paths of the node loop in every state."""
    X, y = make_classification(n_samples=20_000, n_features=6, n_informative=4,
                               random_state=5)
    w = np.random.default_rng(5).integers(1, 3, y.size).astype(float)
    for sample_weight in (None, w):
        ours = tl.DecisionTreeClassifier(max_depth=9, random_state=0)
        theirs = sktree.DecisionTreeClassifier(max_depth=9, random_state=0)
        assert_same_tree(ours.fit(X, y, sample_weight), theirs.fit(X, y, sample_weight))
    yr = np.round(X[:, 0] * 10 + X[:, 1] * 5)
    ours = tl.DecisionTreeRegressor(max_depth=9, random_state=0).fit(X, yr)
    theirs = sktree.DecisionTreeRegressor(max_depth=9, random_state=0).fit(X, yr)
    assert_same_tree(ours, theirs)
