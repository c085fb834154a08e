"""SHAP values of single trees (treelearn._shap): against the Shapley values enumerated by brute
force, against SHAP's own TreeExplainer, and adding up to the predictions on every kind of
split we grow (subsets, multiway, learned missing directions, C4.5's fractional cases)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import naive_branch

import treelearn as tl
from treelearn import _shap

# -- the twin: Shapley values by enumeration, with the path-dependent value function -------------


def _oblique_branch(tree, node: int, x) -> int:
    """The branch of an oblique node: the weighted sum of the row's float32 values, summed in
    double, against the threshold; NaN the missing branch."""
    feats, weights = tree.split_terms(node)
    total = sum(float(w) * float(np.float32(x[f])) for f, w in zip(feats, weights, strict=True))
    if math.isnan(total):
        return int(tree.missing_branch[node] != 0)
    return 0 if total <= tree.threshold[node] else 1


def _branch_shares(tree, node: int, x, f: int) -> tuple[list[float], list[float]]:
    """``(z, o)`` of each branch of ``node``: its share of the node's training weight, and
    the share of the row ``x`` (``f``: the column the node reads): the branch the tree's
    rules give it, or, where they send it down every branch, the training shares."""
    kids = tree.branch_child[tree.branch_ptr[node]:tree.branch_ptr[node + 1]]
    w = tree.weighted_n_node_samples[kids]
    z = list(w / w.sum())
    if tree.is_oblique_node[node]:
        b = _oblique_branch(tree, node, x)
    else:
        b = naive_branch(tree, node, float(x[f]))
    if b < 0:
        return z, list(z)
    return z, [1.0 if j == b else 0.0 for j in range(len(kids))]


def _node_columns(tree, node: int, feature) -> set[int]:
    """The columns a node reads: its oblique terms', or its one column."""
    if tree.is_oblique_node[node]:
        return {int(c) for c in tree.split_terms(node)[0]}
    return {int(feature[node])}


def _value(tree, values, x, known: set, node: int = 0, feature=None) -> np.ndarray:
    """v(S) of Lundberg et al.: at a node whose columns are all known the row's shares, else
    the training shares, down to the leaves' values. ``feature``: the column each node reads,
    where it is not the tree's own (a bagged tree grown on a subspace)."""
    feature = tree.feature if feature is None else feature
    kids = tree.branch_child[tree.branch_ptr[node]:tree.branch_ptr[node + 1]]
    if len(kids) == 0:
        return values[node]
    z, o = _branch_shares(tree, node, x, feature[node])
    shares = o if _node_columns(tree, node, feature) <= known else z
    return sum(s * _value(tree, values, x, known, c, feature)
               for s, c in zip(shares, kids, strict=True))


def _used(tree, feature) -> list[int]:
    inner = np.flatnonzero(tree.branch_ptr[1:] > tree.branch_ptr[:-1])
    return sorted(set().union(*(_node_columns(tree, j, feature) for j in inner)))


def _brute_force(tree, values, x, feature=None, p=None) -> np.ndarray:
    """phi_i = sum over S without i of |S|! (M - |S| - 1)! / M! (v(S + i) - v(S)), over the
    M columns the tree splits on (the others are null players: exactly zero)."""
    feature = tree.feature if feature is None else feature
    used = _used(tree, feature)
    M = len(used)
    phi = np.zeros((tree.n_features if p is None else p, values.shape[1]))
    for i in used:
        others = [f for f in used if f != i]
        for r in range(M):
            weight = math.factorial(r) * math.factorial(M - r - 1) / math.factorial(M)
            for S in itertools.combinations(others, r):
                phi[i] += weight * (_value(tree, values, x, set(S) | {i}, 0, feature)
                                    - _value(tree, values, x, set(S), 0, feature))
    return phi


def _brute_force_interactions(tree, values, x) -> np.ndarray:
    """The Shapley interaction index as SHAP halves it (Lundberg et al. 2020, Methods, eq.
    for Phi_ij): for i != j, sum over S without i and j of |S|! (M - |S| - 2)! / (2 (M - 1)!)
    (v(S + i + j) - v(S + i) - v(S + j) + v(S)); on the diagonal phi_i less the rest of its
    row."""
    used = _used(tree, tree.feature)
    M = len(used)
    phi = _brute_force(tree, values, x)
    out = np.zeros((tree.n_features, tree.n_features, values.shape[1]))
    for i, j in itertools.permutations(used, 2):
        others = [f for f in used if f not in (i, j)]
        for r in range(M - 1):
            weight = (math.factorial(r) * math.factorial(M - r - 2)
                      / (2 * math.factorial(M - 1)))
            for S in itertools.combinations(others, r):
                S = set(S)
                out[i, j] += weight * (_value(tree, values, x, S | {i, j})
                                       - _value(tree, values, x, S | {i})
                                       - _value(tree, values, x, S | {j})
                                       + _value(tree, values, x, S))
    for i in used:
        out[i, i] = phi[i] - sum(out[i, j] for j in used if j != i)
    return out


def _table(rng, n: int, holes: float) -> pd.DataFrame:
    df = pd.DataFrame({
        "num": np.round(rng.normal(size=n), 1),
        "few": rng.integers(0, 4, n).astype(float),
        "cat": pd.Categorical(rng.choice(list("pqrstu"), n)),
        "other": pd.Categorical(rng.choice(list("xyz"), n)),
        "noise": rng.normal(size=n),
    })
    for col in ("num", "few", "cat"):
        df.loc[rng.random(n) < holes, col] = np.nan
    return df


SETTINGS = [
    {"missing": "c45"},  # fractional cases at prediction
    {"missing": "c45", "categorical_split": "multiway"},  # one branch per level
    {"missing": "learn"},  # a learned direction per split; subsets of levels
    {"missing": "learn", "categorical_split": "multiway"},
    {"missing": "impute"},
    {"missing": "m5"},  # regression only: routed by the node's average value
]


def _random_model(seed: int, which: int, regression: bool, depth: int):
    """A small tree on a random table with categories and holes, grown with SETTINGS[which],
    and six rows to explain (holes and an unseen level among them)."""
    rng = np.random.default_rng(seed)
    df = _table(rng, 120, 0.15)
    kw = dict(SETTINGS[which])
    if kw["missing"] == "m5":
        regression = True
    if regression:
        kw.pop("categorical_split", None)
        y = df["num"].fillna(0).to_numpy() + (df["cat"] == "p") * 2.0 + rng.normal(size=120)
        model = tl.DecisionTreeRegressor(max_depth=depth, **kw).fit(df, y)
    else:
        y = ((df["num"].fillna(0) > 0) ^ df["cat"].isin(["p", "q"])).astype(int)
        model = tl.DecisionTreeClassifier(max_depth=depth, **kw).fit(df, y)
    rows = _table(rng, 6, 0.3)
    rows.loc[0, "cat"] = np.nan
    return model, rows, regression


def _check_against_the_twin(model, rows, regression: bool, interactions: bool) -> None:
    """Each row's values (or interaction values) against the enumeration."""
    got_all = model.shap_interaction_values(rows) if interactions else model.shap_values(rows)
    X = model._validate_X_predict(rows)
    values = _shap.leaf_values(model.tree_, not regression)
    twin = _brute_force_interactions if interactions else _brute_force
    for i in range(len(rows)):
        got = got_all[i][..., None] if regression else got_all[i]
        np.testing.assert_allclose(got, twin(model.tree_, values, X[i]), rtol=1e-9,
                                   atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(range(len(SETTINGS))),
       st.booleans())
def test_tree_shap_equals_the_enumerated_shapley_values(seed, which, regression):
    """Random small tables with categories and holes, every missing-value method, subset and
    multiway splits: each row's values equal the brute-force Shapley values of the printed
    value function (rows with holes and unseen levels included)."""
    model, rows, regression = _random_model(seed, which, regression, depth=4)
    _check_against_the_twin(model, rows, regression, interactions=False)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(range(len(SETTINGS))),
       st.booleans())
def test_interaction_values_equal_the_enumerated_interaction_index(seed, which, regression):
    """The same random trees: each row's interaction matrix equals the Shapley interaction
    index enumerated over every pair and subset of the used columns."""
    model, rows, regression = _random_model(seed, which, regression, depth=3)
    _check_against_the_twin(model, rows, regression, interactions=True)


def test_a_column_no_split_uses_gets_exactly_zero(rng):
    df = _table(rng, 300, 0.1)
    y = (df["num"].fillna(0) > 0).astype(int)
    model = tl.DecisionTreeClassifier(max_depth=3, missing="c45").fit(df, y)
    used = set(model.tree_.feature[model.tree_.feature >= 0])
    phi = model.shap_values(df)
    for f in range(df.shape[1]):
        if f not in used:
            assert np.all(phi[:, f] == 0.0)


# -- SHAP's own explainer ------------------------------------------------------------------------


@pytest.mark.parametrize("regression", [False, True])
def test_equal_to_shaps_tree_explainer_on_the_sklearn_twin(regression):
    """A numeric tree grown by scikit-learn, read into treelearn (from_sklearn): our values
    and expected value are SHAP's TreeExplainer's (path-dependent, the default)."""
    shap = pytest.importorskip("shap")
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 7)).astype(np.float32)
    if regression:
        sk = DecisionTreeRegressor(max_depth=8, random_state=0).fit(X, X[:, 0] * X[:, 1] + X[:, 2])
    else:
        y = (X[:, 0] + X[:, 1] * X[:, 2] > 0.3).astype(int) + (X[:, 3] > 1)
        sk = DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y)
    ours = tl.from_sklearn(sk)
    explainer = shap.TreeExplainer(sk)
    theirs = np.asarray(explainer.shap_values(X[:200]))
    phi = ours.shap_values(X[:200])
    np.testing.assert_allclose(phi, theirs.reshape(phi.shape), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.expected_value_, explainer.expected_value, rtol=1e-12)
    theirs = np.asarray(explainer.shap_interaction_values(X[:50]))
    inter = ours.shap_interaction_values(X[:50])
    assert inter.shape == ((50, 7, 7) if regression else (50, 7, 7, 3))
    np.testing.assert_allclose(inter, theirs.reshape(inter.shape), rtol=1e-9, atol=1e-12)


# -- additivity on every single-tree estimator ---------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: tl.DecisionTreeClassifier(missing="c45"),
    lambda: tl.DecisionTreeClassifier(splitter="hist", max_depth=6),
    lambda: tl.DecisionTreeClassifier(criterion="gain_ratio", categorical_split="multiway"),
    lambda: tl.ID3Classifier(),
    lambda: tl.C45Classifier(),
    lambda: tl.CARTClassifier(),
    lambda: tl.DecisionTreeRegressor(missing="learn"),
    lambda: tl.DecisionTreeRegressor(criterion="absolute_error", max_depth=6),
    lambda: tl.DecisionTreeRegressor(missing="m5", max_depth=6),
    lambda: tl.CARTRegressor(),
], ids=["c45-missing", "hist", "multiway", "id3", "c45", "cart", "reg-learn", "reg-abs",
         "reg-m5", "cart-reg"])
def test_values_add_up_to_every_prediction(make, rng):
    df = _table(rng, 400, 0.1)
    est = make()
    regression = tl.DecisionTreeRegressor in type(est).__mro__
    if regression:
        y = df["num"].fillna(0).to_numpy() * 3 + (df["cat"] == "q") + rng.normal(size=400)
    else:
        y = np.where(df["num"].fillna(0) > 0, "yes", "no")
        y[df["cat"] == "r"] = "maybe"
    if isinstance(est, tl.ID3Classifier):
        df = df.drop(columns=["num", "noise"]).fillna({"few": 0.0})
    est.fit(df, y)
    rows = _table(rng, 50, 0.2)[df.columns]
    if isinstance(est, tl.ID3Classifier):
        rows = rows.fillna({"few": 0.0})
    phi = est.shap_values(rows)
    pred = est.predict(rows) if regression else est.predict_proba(rows)
    assert phi.shape == ((50, df.shape[1]) if regression else (50, df.shape[1], 3))
    np.testing.assert_allclose(est.expected_value_ + phi.sum(axis=1), pred, atol=1e-12)
    inter = est.shap_interaction_values(rows[:10])
    np.testing.assert_allclose(inter.sum(axis=2), phi[:10], atol=1e-12)
    np.testing.assert_allclose(inter, np.swapaxes(inter, 1, 2), atol=1e-12)


def test_optimal_tree_values_add_up(rng):
    X = rng.integers(0, 4, (300, 5)).astype(float)
    y = ((X[:, 0] > 1) ^ (X[:, 2] == 3)).astype(int)
    est = tl.OptimalTreeClassifier(max_depth=2).fit(X, y)
    phi = est.shap_values(X)
    np.testing.assert_allclose(est.expected_value_ + phi.sum(axis=1), est.predict_proba(X),
                               atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_oblique_trees_equal_the_enumerated_values(seed, regression):
    """Oblique splits read several columns: a node is known when all of them are. Values and
    interaction values of random oblique trees equal the enumeration over subsets of that
    game, and add up."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 4))
    if regression:
        est = tl.ObliqueTreeRegressor(max_depth=3, random_state=0).fit(
            X, X[:, 0] + X[:, 1] - X[:, 2] * X[:, 3])
    else:
        est = tl.ObliqueTreeClassifier(max_depth=3, random_state=0).fit(
            X, (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] - X[:, 3] > 1))
    rows = rng.normal(size=(4, 4))
    _check_against_the_twin(est, rows, regression, interactions=False)
    _check_against_the_twin(est, rows, regression, interactions=True)
    phi = est.shap_values(rows)
    pred = est.predict(rows) if regression else est.predict_proba(rows)
    np.testing.assert_allclose(est.expected_value_ + phi.sum(axis=1), pred, atol=1e-12)


def test_linear_leaves_are_refused_by_name_and_deep_oblique_paths_by_size(rng, monkeypatch):
    X = rng.normal(size=(200, 3))
    with pytest.raises(TypeError, match="linear leaves"):
        tl.M5Regressor().fit(X, X[:, 0] * 2 + X[:, 1]).shap_values(X)
    y = (X[:, 0] + X[:, 1] > 0) ^ (X[:, 2] - X[:, 0] > 0.5)
    est = tl.ObliqueTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert est.get_depth() >= 2  # a path of two splits reading two columns: 4 subsets
    monkeypatch.setattr(_shap, "MAX_SUBSETS", 3)
    with pytest.raises(ValueError, match="subsets of the columns it reads, more than 3"):
        est.shap_values(X)


def test_unfitted_and_wrong_width_are_refused(rng):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        tl.DecisionTreeClassifier().shap_values(np.zeros((2, 3)))
    with pytest.raises(NotFittedError):
        _ = tl.DecisionTreeRegressor().expected_value_
    X = rng.normal(size=(100, 3))
    est = tl.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="features"):
        est.shap_values(X[:, :2])


def test_ctrl_c_is_taken_between_blocks_of_rows(monkeypatch, rng):
    X = rng.normal(size=(500, 4))
    est = tl.DecisionTreeRegressor(max_depth=5).fit(X, X[:, 0])
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(_shap, "SHAP_ROWS", 100)
    monkeypatch.setattr(_shap, "check_interrupt", check)
    with pytest.raises(KeyboardInterrupt):
        est.shap_values(X)
    assert len(calls) == 2  # stopped after the second block of five
    # interaction values: blocks of about the same work (SHAP_ROWS / (2 m + 1) rows)
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        est.shap_interaction_values(X)
    assert len(calls) == 2


def test_the_output_is_checked_against_memory_first(monkeypatch, rng):
    X = rng.normal(size=(100, 3))
    est = tl.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0])
    monkeypatch.setenv("TREELEARN_MEMORY_LIMIT", "1K")
    with pytest.raises(MemoryError, match="SHAP values"):
        est.shap_values(X)
    monkeypatch.setenv("TREELEARN_MEMORY_LIMIT", "4K")
    assert est.shap_values(X).shape == (100, 3)  # 2,400 bytes
    with pytest.raises(MemoryError, match="interaction values for 100 rows x 3 columns x 3"):
        est.shap_interaction_values(X)  # 7,200 bytes


def test_sparse_rows_give_the_dense_rows_values(rng):
    import scipy.sparse as sp

    X = sp.random(300, 6, density=0.3, format="csr", random_state=1, dtype=np.float32)
    y = np.asarray(X[:, 0].todense()).ravel() + np.asarray(X[:, 3].todense()).ravel()
    est = tl.DecisionTreeRegressor(max_depth=5).fit(X, y)
    phi = est.shap_values(X)
    np.testing.assert_array_equal(phi, est.shap_values(X.toarray()))
    np.testing.assert_array_equal(est.shap_interaction_values(X[:20]),
                                  est.shap_interaction_values(X[:20].toarray()))
    np.testing.assert_allclose(est.expected_value_ + phi.sum(axis=1), est.predict(X), atol=1e-12)


# -- ensembles -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: tl.RandomForestClassifier(n_estimators=8, random_state=0),
    lambda: tl.RandomForestRegressor(n_estimators=8, splitter="hist", random_state=0),
    lambda: tl.ExtraTreesClassifier(n_estimators=8, random_state=0),
    lambda: tl.BaggingClassifier(tl.C45Classifier(), n_estimators=6, max_features=0.7,
                                 bootstrap_features=True, random_state=0),
    lambda: tl.BaggingRegressor(n_estimators=6, random_state=0),
    lambda: tl.ObliqueRandomForestClassifier(n_estimators=4, max_depth=5, random_state=0),
], ids=["forest", "hist-forest-reg", "extra-trees", "bagging-c45-subspaces", "bagging-reg",
         "oblique-forest"])
def test_ensemble_values_add_up_to_the_predictions(make, rng):
    """The mean of the trees' values, columns of random subspaces put back (a repeated
    column adds up): the forest's prediction, on a table with categories and holes."""
    df = _table(rng, 300, 0.1)
    est = make()
    regression = "Regressor" in type(est).__name__
    y = (df["num"].fillna(0).to_numpy() * 3 + (df["cat"] == "q") if regression
         else np.where(df["num"].fillna(0) > 0, "yes", "no"))
    if "ExtraTrees" in type(est).__name__ or "Oblique" in type(est).__name__:
        df = df[["num", "few", "noise"]].fillna(0.0)  # numbers without holes only
    est.fit(df, y)
    rows = df.iloc[:40]
    phi = est.shap_values(rows)
    pred = est.predict(rows) if regression else est.predict_proba(rows)
    np.testing.assert_allclose(est.expected_value_ + phi.sum(axis=1), pred, atol=1e-12)
    inter = est.shap_interaction_values(rows[:8])
    np.testing.assert_allclose(inter.sum(axis=2), phi[:8], atol=1e-12)


def test_random_subspaces_are_read_as_the_ensembles_columns(rng):
    """Bagging on random subspaces: each tree's splits are read as the ensemble's columns,
    and the values are the mean of the trees' enumerated Shapley values over those."""
    df = _table(rng, 300, 0.1)[["num", "few", "noise"]].fillna(0.0)
    y = df["num"].to_numpy() * 3 + df["few"].to_numpy() + rng.normal(size=300)
    est = tl.BaggingRegressor(tl.DecisionTreeRegressor(max_depth=4), n_estimators=6,
                              max_features=2, random_state=0).fit(df, y)
    feats = [np.asarray(f) for f in est.estimators_features_]
    assert len({tuple(f) for f in feats}) > 1
    X = df.to_numpy(dtype=np.float32)[:5]
    phi = est.shap_values(X)
    for i in range(len(X)):
        want = np.zeros((3, 1))
        for member, f in zip(est.estimators_, feats, strict=True):
            tree = member.tree_
            feature = np.where(tree.feature >= 0, f[np.maximum(tree.feature, 0)], -1)
            want += _brute_force(tree, _shap.leaf_values(tree, False), X[i], feature, p=3)
        np.testing.assert_allclose(phi[i], want[:, 0] / len(feats), rtol=1e-9, atol=1e-12)


def test_forest_equals_shaps_tree_explainer():
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 6)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    est = tl.RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    explainer = shap.TreeExplainer(tl.to_sklearn(est))
    theirs = np.asarray(explainer.shap_values(X[:100], check_additivity=False))
    phi = est.shap_values(X[:100])
    np.testing.assert_allclose(phi, theirs.reshape(phi.shape), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.expected_value_, explainer.expected_value, rtol=1e-12)
    theirs = np.asarray(explainer.shap_interaction_values(X[:30]))
    inter = est.shap_interaction_values(X[:30])
    np.testing.assert_allclose(inter, theirs.reshape(inter.shape), rtol=1e-9, atol=1e-12)


def test_quantile_forests_are_refused_by_name(rng):
    X = rng.normal(size=(200, 3))
    q = tl.RandomForestQuantileRegressor(n_estimators=3, random_state=0).fit(X, X[:, 0])
    with pytest.raises(TypeError, match="quantiles"):
        q.shap_values(X)
    with pytest.raises(TypeError, match="quantiles"):
        q.shap_interaction_values(X)
    with pytest.raises(AttributeError):
        _ = q.expected_value_



# -- AdaBoost: its decision function -------------------------------------------------------------


def _samme_votes(ada, member, alpha: float) -> np.ndarray:
    """A learner's node values in the decision function, as the class notes print it:
    ``alpha`` for the node's class and ``-alpha / (K - 1)`` for the others, over the sum of
    the weights; two classes: the second's column less the first's."""
    K = len(ada.classes_)
    proba = member.tree_.value[:, 0, :]
    votes = np.full(proba.shape, -alpha / (K - 1))
    votes[np.arange(len(proba)), np.argmax(proba, axis=1)] = alpha
    votes /= ada.estimator_weights_[:len(ada.estimators_)].sum()
    return votes[:, 1:] - votes[:, :1] if K == 2 else votes


@pytest.mark.parametrize("classes", [2, 3])
def test_adaboost_explains_its_decision_function(classes, rng):
    """SAMME's decision function is a weighted sum of the learners' votes: its SHAP values
    are the enumerated Shapley values of that sum, and add up to it."""
    df = _table(rng, 300, 0.1)
    y = (df["num"].fillna(0) > 0).astype(int) + (classes == 3) * (df["cat"] == "p")
    ada = tl.AdaBoostClassifier(tl.DecisionTreeClassifier(max_depth=2, missing="learn"),
                                n_estimators=6, random_state=0).fit(df, y)
    rows = _table(rng, 5, 0.2)
    phi = ada.shap_values(rows)
    score = ada.decision_function(rows)
    assert phi.shape == ((5, 5) if classes == 2 else (5, 5, 3))
    np.testing.assert_allclose(ada.expected_value_ + phi.sum(axis=1), score, atol=1e-12)
    X = ada._validate_X_predict(rows)
    for i in range(len(rows)):
        want = sum(_brute_force(m.tree_, _samme_votes(ada, m, a), X[i])
                   for m, a in zip(ada.estimators_, ada.estimator_weights_, strict=False))
        got = phi[i][:, None] if classes == 2 else phi[i]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    inter = ada.shap_interaction_values(rows)
    np.testing.assert_allclose(inter.sum(axis=2), phi, atol=1e-12)


def test_adaboost_refuses_rows_its_learners_split_fractionally(rng):
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    X[::3, 0] = np.nan
    ada = tl.AdaBoostClassifier(tl.C45Classifier(max_depth=2), n_estimators=4,
                                random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="sent down several branches of a learner"):
        ada.shap_values(X)
    phi = ada.shap_values(X[1:3])  # rows without holes are explained
    np.testing.assert_allclose(ada.expected_value_ + phi.sum(axis=1),
                               ada.decision_function(X[1:3]), atol=1e-12)
