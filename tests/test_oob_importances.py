"""Impurity importances corrected with out-of-bag rows (MDI-oob, Li, Wang, Basu, Kumbier & Yu
2019, "A debiased MDI feature importance measure for random forests", NeurIPS 32).

Their Proposition: summed over a tree's own (in-bag) rows, the per-row form
``sum over splits of (value(child) - value(node)) . target`` is the Gini / squared-error
impurity decrease; the first test checks that identity on random trees against
``compute_feature_importances``. The twin walks each row's path node by node.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treelearn as tl
from treelearn import ensemble as E


def twin_held_out(tree, X, targets):
    """Row by row along the decision path (nodes by depth), the formula as printed."""
    t = tree.tree_
    V = t.value[:, 0, :].astype(float)
    if t.n_classes[0] > 1:
        V = V / V.sum(axis=1, keepdims=True)
    path = tree.decision_path(X)
    depth = t.node_depths()
    out = np.zeros(t.n_features)
    for i in range(X.shape[0]):
        nodes = sorted(path.indices[path.indptr[i]:path.indptr[i + 1]], key=lambda v: depth[v])
        for parent, child in zip(nodes[:-1], nodes[1:], strict=True):
            out[t.feature[parent]] += float((V[child] - V[parent]) @ targets[i])
    return out


def _onehot(codes, w, K):
    out = np.zeros((len(codes), K))
    out[np.arange(len(codes)), codes] = w
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans(), st.sampled_from(["best", "hist"]))
def test_in_bag_sum_is_the_impurity_decrease(seed, classify, splitter):
    rng = np.random.RandomState(seed)
    n = int(rng.randint(20, 120))
    X = rng.randint(0, 6, (n, 3)).astype(float) + rng.rand(n, 3) * (rng.rand() < 0.5)
    w = rng.randint(0, 4, n).astype(float)
    w[0] = 1.0
    if classify:
        y = rng.randint(0, 3, n)
        y[:3] = [0, 1, 2]
        tree = tl.DecisionTreeClassifier(splitter=splitter, max_depth=int(rng.randint(1, 6)),
                                         random_state=0).fit(X, y, sample_weight=w)
        targets = _onehot(np.searchsorted(tree.classes_, y), w, len(tree.classes_))
    else:
        y = X[:, 0] * 2 + rng.normal(size=n)
        tree = tl.DecisionTreeRegressor(splitter=splitter, max_depth=int(rng.randint(1, 6)),
                                        random_state=0).fit(X, y, sample_weight=w)
        targets = (w * y)[:, None]
    got = tree.tree_.held_out_decreases(X, targets)
    mdi = tree.tree_.compute_feature_importances(normalize=False) * w.sum()
    np.testing.assert_allclose(got, mdi, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(mdi).max()))
    # on other rows: the row-by-row twin
    Xh = rng.randint(0, 6, (30, 3)).astype(float)
    th = rng.normal(size=(30, targets.shape[1]))
    np.testing.assert_allclose(tree.tree_.held_out_decreases(Xh, th),
                               twin_held_out(tree, Xh, th), rtol=1e-9, atol=1e-12)


def test_in_bag_identity_with_categories_multiway_and_missing_values():
    rng = np.random.RandomState(3)
    n = 300
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(list("pqrstu"), n)),
                       "x": rng.rand(n)})
    df.loc[rng.rand(n) < 0.1, "x"] = np.nan
    y = ((df["c"].isin(["p", "q"])) ^ (df["x"].fillna(0.5) > 0.6)).to_numpy().astype(int)
    for tree in (tl.DecisionTreeClassifier(random_state=0, max_depth=4),
                 tl.DecisionTreeClassifier(categorical_split="multiway", random_state=0,
                                           max_depth=3)):
        tree.fit(df, y)
        Xe = tree._validate_table(df)
        got = tree.tree_.held_out_decreases(Xe, _onehot(y, np.ones(n), 2))
        np.testing.assert_allclose(got, tree.tree_.compute_feature_importances(False) * n,
                                   rtol=1e-9, atol=1e-9)


def _biased_table(seed=0, n=1000):
    """One weak binary signal, a numeric noise column with n distinct values and a noise
    category of 100 levels (Strobl et al. 2007's setting)."""
    rng = np.random.RandomState(seed)
    x0 = rng.randint(0, 2, n)
    df = pd.DataFrame({"signal": x0.astype(float), "noise": rng.rand(n),
                       "levels": pd.Categorical(rng.randint(0, 100, n).astype(str))})
    y = np.where(rng.rand(n) < 0.65, x0, 1 - x0)
    yr = x0 + rng.normal(0, 1, n) + 1000.0  # a large offset: the measure must not see it
    return df, y, yr


@pytest.mark.parametrize("classify", [True, False])
def test_corrected_importances_remove_the_many_values_bias(classify):
    df, y, yr = _biased_table()
    target = y if classify else yr
    cls = E.RandomForestClassifier if classify else E.RandomForestRegressor
    forest = cls(n_estimators=60, max_features=None, random_state=0).fit(df, target)
    mdi = forest.feature_importances_
    oob = forest.oob_impurity_importances(df, target)
    # the impurity importance puts a noise column first ...
    assert max(mdi[1], mdi[2]) > mdi[0]
    # ... the out-of-bag one the signal, the noise columns near zero
    assert np.argmax(oob) == 0
    assert np.all(np.abs(oob[1:]) < 0.25 * oob[0])


def test_corrected_importances_of_bagging_with_subspaces_and_errors():
    df, y, _ = _biased_table(1, 400)
    X = np.column_stack([df["signal"], df["noise"], np.random.RandomState(0).rand(400)])
    bag = E.BaggingClassifier(n_estimators=30, max_features=2, random_state=0).fit(X, y)
    imp = bag.oob_impurity_importances(X, y)
    assert imp.shape == (3,) and np.argmax(imp) == 0
    plain = E.RandomForestClassifier(n_estimators=5, bootstrap=False, random_state=0)
    plain.fit(X, y)
    with pytest.raises(ValueError, match="bootstrap"):
        plain.oob_impurity_importances(X, y)
    forest = E.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="training data"):
        forest.oob_impurity_importances(X[:50], y[:50])
    with pytest.raises(ValueError, match="targets must have shape"):
        forest[0].tree_.held_out_decreases(X, np.ones((400, 3)))
