"""The flat tree: invariants, subtrees, converters to and from scikit-learn, text export."""

import pickle

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import tree as sktree
from sklearn.datasets import load_iris, make_classification, make_regression

import treelearn as tl
from treelearn._tree import Tree
from treelearn.pruning import cost_complexity_path, prune_to_alpha


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    return X, y, tl.DecisionTreeClassifier(random_state=0, max_depth=6).fit(X, y)


def _copy(t: Tree, **changes) -> Tree:
    arrays = dict(children_left=t.children_left.copy(), children_right=t.children_right.copy(),
                  feature=t.feature.copy(), threshold=t.threshold.copy(),
                  impurity=t.impurity.copy(), n_node_samples=t.n_node_samples.copy(),
                  weighted_n_node_samples=t.weighted_n_node_samples.copy(), value=t.value.copy())
    for k, f in changes.items():
        f(arrays[k])
    return Tree(t.n_features, t.n_classes, **arrays)


def test_invariant_checker_catches_each_break(fitted):
    t = fitted[2].tree_
    t.check()
    leaf = int(np.flatnonzero(t.children_left == -1)[0])
    inner = int(np.flatnonzero(t.children_left != -1)[1])

    def set_at(i, v):
        def f(a):
            a[i] = v
        return f

    cases = {
        "exactly one child": {"children_left": set_at(inner, -1)},
        "leaf has a split feature": {"feature": set_at(leaf, 0)},
        "leaf has a threshold": {"threshold": set_at(leaf, 1.0)},
        "does not come after its parent": {"children_left": set_at(inner, 0)},
        "out of range": {"children_right": set_at(inner, 10**6)},
        "split feature is out of range": {"feature": set_at(inner, 99)},
        "NaN or -inf": {"threshold": set_at(inner, np.nan)},
        "n_node_samples of a node": {"n_node_samples": set_at(0, 10**6)},
        "weighted_n_node_samples of a node": {"weighted_n_node_samples": set_at(0, 1e9)},
        "no samples": {"n_node_samples": set_at(leaf, 0)},
    }
    for words, change in cases.items():
        with pytest.raises(ValueError, match=words):
            _copy(t, **change)  # the constructor checks: a broken Tree cannot exist


def test_subtree_keeps_values_and_renumbers_preorder(fitted):
    X, _, est = fitted
    t = est.tree_
    keep = np.zeros(t.node_count, dtype=bool)
    keep[t.children_left[0]] = True
    sub = t.subtree(keep)
    sub.check()
    assert sub.n_leaves == t.n_leaves - (t.subtree(np.zeros_like(keep)).n_leaves
                                         - sub.n_leaves) or sub.node_count < t.node_count
    left_leaf = sub.children_left[0]
    assert sub.children_left[left_leaf] == -1
    np.testing.assert_array_equal(sub.value[left_leaf], t.value[t.children_left[0]])
    assert t.subtree(np.zeros_like(keep)) == t


def test_to_sklearn_predicts_identically(fitted):
    X, _, est = fitted
    sk = tl.to_sklearn(est)
    np.testing.assert_array_equal(sk.predict(X), est.predict(X))
    np.testing.assert_array_equal(sk.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(sk.apply(X), est.apply(X))
    np.testing.assert_allclose(sk.feature_importances_, est.feature_importances_)
    text = sktree.export_text(sk)  # a scikit-learn tool reads our tree
    assert "class:" in text
    Xr, yr = make_regression(300, 4, random_state=0)
    reg = tl.DecisionTreeRegressor(criterion="absolute_error", max_depth=5).fit(Xr, yr)
    np.testing.assert_array_equal(tl.to_sklearn(reg).predict(Xr), reg.predict(Xr))
    gr = tl.DecisionTreeClassifier(criterion="gain_ratio", max_depth=4).fit(X, fitted[1])
    assert tl.to_sklearn(gr).criterion == "entropy"


@pytest.mark.filterwarnings("ignore:Value `\"friedman_mse\"`:FutureWarning")  # sklearn's own
def test_from_sklearn_round_trip_and_pruning():
    X, y = load_iris(return_X_y=True)
    sk = sktree.DecisionTreeClassifier(random_state=0).fit(X, y)
    ours = tl.from_sklearn(sk)
    ours.tree_.check()
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X))
    path = cost_complexity_path(ours.tree_)
    np.testing.assert_allclose(path.ccp_alphas, sk.cost_complexity_pruning_path(X, y).ccp_alphas)
    back = tl.to_sklearn(ours)
    np.testing.assert_array_equal(back.predict(X), sk.predict(X))
    skr = sktree.DecisionTreeRegressor(criterion="friedman_mse", max_depth=3).fit(X, y)
    assert tl.from_sklearn(skr).criterion == "squared_error"


def test_from_sklearn_rejects_what_it_cannot_hold():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="single-output"):
        tl.from_sklearn(sktree.DecisionTreeClassifier().fit(X, np.c_[y, y]))
    with pytest.raises(ValueError, match="no treelearn equivalent"):
        tl.from_sklearn(sktree.DecisionTreeRegressor(criterion="poisson").fit(X, y + 1))
    with pytest.raises(TypeError, match="expects a fitted"):
        from sklearn.ensemble import ExtraTreesClassifier

        tl.from_sklearn(ExtraTreesClassifier(n_estimators=2).fit(X, y))


def test_pickle_round_trip(fitted):
    X, _, est = fitted
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert again.tree_ == est.tree_


@given(st.integers(0, 1000))
def test_weakest_link_kernel_equals_quadratic_rescan(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + rng.normal(size=n)
    t = tl.DecisionTreeRegressor(random_state=0, max_depth=6).fit(X, y).tree_
    path = cost_complexity_path(t)
    alphas, risks = naive.naive_ccp_path(t.children_left, t.children_right,
                                         t.weighted_n_node_samples, t.impurity)
    np.testing.assert_allclose(path.ccp_alphas, alphas, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(path.impurities, risks, rtol=1e-9, atol=1e-12)
    assert np.all(np.diff(path.ccp_alphas) >= -1e-12)
    pruned = prune_to_alpha(t, float(path.ccp_alphas[-1]))
    assert pruned.node_count == 1


def test_export_text_layout(fitted):
    X, y = load_iris(return_X_y=True)
    est = tl.DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    names = ["sepal length", "sepal width", "petal length", "petal width"]
    text = tl.export_text(est, feature_names=names, class_names=["setosa", "versicolor",
                                                                 "virginica"])
    lines = text.splitlines()
    # (random_state=0 draws petal width first; it ties with petal length <= 2.45)
    assert lines[0] == "|--- petal width <= 0.80"
    assert lines[1] == "|   |--- class: setosa"
    assert lines[2] == "|--- petal width >  0.80"
    assert len(lines) == 7
    assert text == sktree.export_text(tl.to_sklearn(est), feature_names=names,
                                      class_names=["setosa", "versicolor", "virginica"])
    assert "weights: [50.00, 0.00, 0.00]" in tl.export_text(est, show_weights=True)
    assert "truncated branch of depth 1" in tl.export_text(est, max_depth=1)
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        tl.export_text(est, feature_names=["a", "b"])
    with pytest.raises(TypeError, match="export_text needs a fitted treelearn estimator"):
        tl.export_text(object())
    reg = tl.DecisionTreeRegressor(max_depth=1).fit(X, y.astype(float))
    assert "value: [" in tl.export_text(reg, show_impurity=True, show_samples=True)


def test_parallel_apply_on_many_rows_matches_serial_and_sklearn(fitted):
    from treelearn._tree import PARALLEL_MIN_ROWS, apply_dense

    X, _, est = fitted
    Xbig = np.random.default_rng(1).normal(size=(PARALLEL_MIN_ROWS + 123, X.shape[1])) * 2
    t = est.tree_
    serial = np.empty(Xbig.shape[0], dtype=np.intp)
    apply_dense(Xbig.astype(np.float32), t.children_left, t.children_right, t.feature,
                t.threshold, serial)
    leaves = est.apply(Xbig)
    np.testing.assert_array_equal(leaves, serial)
    np.testing.assert_array_equal(leaves, tl.to_sklearn(est).apply(Xbig.astype(np.float32)))


def _importances_twin(tree: Tree) -> np.ndarray:
    """Mean decrease in impurity as printed: per split node ``w * imp`` minus its children's
    ``w_c * imp_c`` (scikit-learn's two subtractions in a binary tree, one sum of the
    children otherwise), added per feature in node order, over the root's weight."""
    w, imp = tree.weighted_n_node_samples, tree.impurity
    out = [0.0] * tree.n_features
    for i in range(tree.node_count):
        kids = list(tree.children(i))
        if not kids:
            continue
        if tree.is_binary:
            dec = w[i] * imp[i] - w[kids[0]] * imp[kids[0]] - w[kids[1]] * imp[kids[1]]
        else:
            dec = w[i] * imp[i] - sum(w[k] * imp[k] for k in kids)
        out[tree.feature[i]] += dec
    return np.array(out) / w[0]


@given(st.integers(0, 10_000))
def test_importances_match_their_twin(seed):
    """Binary numeric trees, category subsets, C4.5's multiway splits and fractional missing
    values: the compiled decreases are the twin's, bit for bit."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X, y = make_classification(200, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=seed % 50)
    kind = seed % 4
    if kind == 0:
        est = tl.DecisionTreeClassifier(random_state=seed, max_depth=6).fit(X, y)
    else:
        df = pd.DataFrame(X, columns=list("abcd"))
        df["kind"] = pd.Categorical(rng.choice(list("pqrst"), size=len(df)))
        df.loc[rng.random(len(df)) < 0.1, "a"] = np.nan
        kw = ({"categorical_split": "multiway"} if kind == 1 else
              {"missing": "c45"} if kind == 2 else {})
        est = tl.DecisionTreeClassifier(random_state=seed, max_depth=5, **kw).fit(df, y)
    got = est.tree_.compute_feature_importances(normalize=False)
    np.testing.assert_array_equal(got, _importances_twin(est.tree_))
    total = got.sum()
    np.testing.assert_array_equal(est.feature_importances_,
                                  got / total if total > 0 else got)
