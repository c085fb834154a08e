"""Monotonic constraints (``monotonic_cst``, scikit-learn's meaning and rule).

scikit-learn is the oracle: with the same data, parameters and ``random_state`` a constrained
tree or forest here is scikit-learn's constrained tree or forest (sklearn/tree/_splitter.pyx:
a split on a constrained feature is skipped when its children's values leave the node's
bounds or go the wrong way; _tree.pyx: the children's bounds meet at the middle of their
values; every node's value is clipped to its bounds). The property every estimator must keep,
checked on random data with hypothesis: along a constrained feature, with the other features
fixed, predictions never go the wrong way.
"""

import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn.ensemble as ske
import sklearn.tree as skt
from hypothesis import example, given, settings
from hypothesis import strategies as st

import treelearn as tl
from treelearn import ensemble as E


def _table(seed, n=400, p=5, missing=0.0, classify=False):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, p)
    y = 3 * X[:, 0] - 2 * X[:, 1] + np.sin(6 * X[:, 2]) + rng.normal(0, 0.6, n)
    if missing:
        X[rng.rand(n, p) < missing] = np.nan
    if classify:
        y = (y > np.median(y)).astype(int)
    return X, y


CST = [1, -1, 0, 0, 0]


def worst_step(predict, X, j, sign, rows=25, steps=41):
    """The most a prediction moves against ``sign`` along feature ``j`` (0: never)."""
    worst = 0.0
    grid = np.linspace(-0.1, 1.1, steps)
    for i in range(min(rows, X.shape[0])):
        Z = np.repeat(X[i:i + 1], steps, axis=0)
        Z[:, j] = grid
        worst = min(worst, float(np.min(np.diff(predict(Z)) * sign)))
    return worst


def _same_tree(ours, theirs):
    a, b = ours.tree_, theirs.tree_
    assert a.node_count == b.node_count
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    np.testing.assert_allclose(a.value[:, 0, :], b.value[:, 0, :] if b.value.ndim == 3
                               else b.value, rtol=1e-12, atol=1e-12)


# Not fully grown: in nodes of two or three rows several features cut the same rows apart,
# and which wins is then rounding, in scikit-learn's trees with or without constraints.
@pytest.mark.parametrize("kw", [{"max_depth": 4}, {"max_depth": 8}, {"min_samples_leaf": 5},
                                {"max_leaf_nodes": 20},
                                {"splitter": "random", "min_samples_leaf": 2},
                                {"max_features": 2, "min_samples_leaf": 5}])
@pytest.mark.parametrize("classify", [False, True])
def test_constrained_trees_are_sklearns(kw, classify):
    X, y = _table(1, classify=classify)
    cls, sk = ((tl.DecisionTreeClassifier, skt.DecisionTreeClassifier) if classify
               else (tl.DecisionTreeRegressor, skt.DecisionTreeRegressor))
    ours = cls(monotonic_cst=CST, random_state=0, **kw).fit(X, y)
    theirs = sk(monotonic_cst=CST, random_state=0, **kw).fit(X, y)
    _same_tree(ours, theirs)
    # the constraint changed the tree (the data runs against it in places)
    free = cls(random_state=0, **kw).fit(X, y)
    assert free.tree_.node_count != ours.tree_.node_count or not np.array_equal(
        free.tree_.threshold, ours.tree_.threshold)


@pytest.mark.parametrize("classify", [False, True])
def test_constrained_trees_with_weights_are_sklearns(classify):
    # (missing values: the monotonicity tests below; with holes the learned directions
    # already pick among equal cuts differently from scikit-learn 1.9, constraint or not)
    X, y = _table(2, classify=classify)
    w = np.random.RandomState(0).randint(1, 4, len(y)).astype(float)
    cls, sk = ((tl.DecisionTreeClassifier, skt.DecisionTreeClassifier) if classify
               else (tl.DecisionTreeRegressor, skt.DecisionTreeRegressor))
    ours = cls(monotonic_cst=CST, max_depth=6, random_state=0).fit(X, y, sample_weight=w)
    theirs = sk(monotonic_cst=CST, max_depth=6, random_state=0).fit(X, y, sample_weight=w)
    _same_tree(ours, theirs)


@pytest.mark.parametrize("kind", ["forest", "extra"])
@pytest.mark.parametrize("classify", [False, True])
def test_constrained_forests_are_sklearns(kind, classify):
    X, y = _table(3, classify=classify)
    name = ("RandomForest" if kind == "forest" else "ExtraTrees") + \
        ("Classifier" if classify else "Regressor")
    # leaves of at least 5 rows: exactly tied cuts of tiny bootstrap nodes are rounding
    kw = dict(n_estimators=8, min_samples_leaf=5, monotonic_cst=CST, random_state=0)
    for mf in ("sqrt", 1.0):  # the ranked and the presorted layouts
        ours = getattr(E, name)(max_features=mf, **kw).fit(X, y)
        theirs = getattr(ske, name)(max_features=mf, **kw).fit(X, y)
        if classify:
            np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X),
                                       rtol=1e-12, atol=1e-12)
        else:
            np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)


def _estimators(cst):
    return {
        "tree": tl.DecisionTreeRegressor(monotonic_cst=cst, random_state=0),
        "tree-random": tl.DecisionTreeRegressor(splitter="random", monotonic_cst=cst,
                                                random_state=0),
        "tree-hist": tl.DecisionTreeRegressor(splitter="hist", max_bins=32,
                                              monotonic_cst=cst, random_state=0),
        "tree-best-first": tl.DecisionTreeRegressor(max_leaf_nodes=12, monotonic_cst=cst,
                                                    random_state=0),
        "cart-pruned": tl.CARTRegressor(prune_cv=3, monotonic_cst=cst, random_state=0),
        "tree-ccp": tl.DecisionTreeRegressor(ccp_alpha=0.01, monotonic_cst=cst,
                                             random_state=0),
        "forest": E.RandomForestRegressor(n_estimators=5, max_features="sqrt",
                                          monotonic_cst=cst, random_state=0),
        "forest-hist": E.RandomForestRegressor(n_estimators=4, splitter="hist",
                                               monotonic_cst=cst, random_state=0),
        "extra": E.ExtraTreesRegressor(n_estimators=5, monotonic_cst=cst, random_state=0),
        "bagging-subspaces": E.BaggingRegressor(
            tl.DecisionTreeRegressor(monotonic_cst=cst), n_estimators=5, max_features=3,
            random_state=0),
    }


def _classifiers(cst):
    return {
        "tree": tl.DecisionTreeClassifier(monotonic_cst=cst, random_state=0),
        "tree-entropy-hist": tl.DecisionTreeClassifier(criterion="entropy", splitter="hist",
                                                       monotonic_cst=cst, random_state=0),
        "c45-numeric": tl.C45Classifier(subtree_raising=False, monotonic_cst=cst,
                                        random_state=0),
        "gain-ratio": tl.DecisionTreeClassifier(criterion="gain_ratio", max_depth=6,
                                                monotonic_cst=cst, random_state=0),
        "forest": E.RandomForestClassifier(n_estimators=5, monotonic_cst=cst, random_state=0),
        "extra": E.ExtraTreesClassifier(n_estimators=5, monotonic_cst=cst, random_state=0),
        "adaboost": E.AdaBoostClassifier(tl.DecisionTreeClassifier(max_depth=2,
                                                                   monotonic_cst=cst),
                                         n_estimators=5, random_state=0),
        "bagging": E.BaggingClassifier(tl.DecisionTreeClassifier(monotonic_cst=cst),
                                       n_estimators=5, random_state=0),
    }


@pytest.mark.jit_only
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.15]))
def test_regressors_never_go_against_their_constraints(seed, missing):
    X, y = _table(seed, n=250, missing=missing)
    for name, model in _estimators(CST).items():
        if missing and name in ("tree-random", "extra"):
            continue  # the random splitter refuses missing values
        model.fit(X, y)
        Xf = np.nan_to_num(X, nan=0.5)  # rows along the grid: a known value
        assert worst_step(model.predict, Xf, 0, +1) >= 0.0, name
        assert worst_step(model.predict, Xf, 1, -1) >= 0.0, name


@pytest.mark.jit_only
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
@example(931656)  # extra trees: a count's fraction beside a clipped complement, one ulp apart
def test_classifiers_never_go_against_their_constraints(seed):
    X, y = _table(seed, n=250, classify=True)
    labels = np.array(["no", "yes"])[y]
    for name, model in _classifiers(CST).items():
        model.fit(X, labels)

        def p_yes(Z, model=model):
            return model.predict_proba(Z)[:, 1]  # classes_[1] == "yes"

        assert worst_step(p_yes, X, 0, +1) >= 0.0, name
        assert worst_step(p_yes, X, 1, -1) >= 0.0, name


def test_sparse_input_keeps_the_constraint():
    X, y = _table(4)
    Xs = sp.csr_matrix(np.where(X > 0.3, X, 0.0))
    model = tl.DecisionTreeRegressor(monotonic_cst=CST, random_state=0).fit(Xs, y)
    dense = Xs.toarray()
    assert worst_step(model.predict, dense, 0, +1) >= 0.0
    assert worst_step(model.predict, dense, 1, -1) >= 0.0


def _leaves_under(t, node):
    out, todo = [], [node]
    while todo:
        v = todo.pop()
        if t.children_left[v] == -1:
            out.append(v)
        else:
            todo += [t.children_left[v], t.children_right[v]]
    return out


def test_every_constrained_split_orders_its_subtrees():
    """The structure behind the property: below a split on an increasing feature every leaf
    on the left is at most every leaf on the right (decreasing: the other way)."""
    X, y = _table(5, n=600)
    for model in (tl.DecisionTreeRegressor(monotonic_cst=CST, random_state=0),
                  tl.DecisionTreeRegressor(splitter="hist", monotonic_cst=CST,
                                           random_state=0)):
        t = model.fit(X, y).tree_
        v = t.value[:, 0, 0]
        for node in np.flatnonzero(t.children_left != -1):
            c = CST[t.feature[node]]
            if c == 0:
                continue
            left = v[_leaves_under(t, t.children_left[node])]
            right = v[_leaves_under(t, t.children_right[node])]
            if c > 0:
                assert left.max() <= right.min() + 1e-12
            else:
                assert left.min() >= right.max() - 1e-12


def test_constraints_by_name_and_index_and_model_files(tmp_path):
    X, y = _table(6)
    df = pd.DataFrame(X, columns=["price", "age", "c", "d", "e"])
    by_name = tl.DecisionTreeRegressor(monotonic_cst={"price": 1, "age": -1},
                                       random_state=0).fit(df, y)
    by_list = tl.DecisionTreeRegressor(monotonic_cst=CST, random_state=0).fit(df, y)
    by_index = tl.DecisionTreeRegressor(monotonic_cst={0: 1, 1: -1}, random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(df), by_list.predict(df))
    np.testing.assert_array_equal(by_index.predict(X), by_list.predict(df))
    path = os.fspath(tmp_path / "mono.tlm")
    tl.save(by_name, path)
    back = tl.load(path)
    assert back.monotonic_cst == {"price": 1, "age": -1}
    np.testing.assert_array_equal(back.predict(df), by_name.predict(df))
    forest = E.RandomForestClassifier(n_estimators=3, monotonic_cst=np.array(CST),
                                      random_state=0).fit(X, y > 0)
    tl.save(forest, path)
    np.testing.assert_array_equal(tl.load(path).predict_proba(X), forest.predict_proba(X))


def test_what_cannot_be_constrained_is_refused_by_name():
    X, y = _table(7)
    bad = [([1, 0], "has shape 2 but the input data X has 5 features"),
           ([2, 0, 0, 0, 0], "array-like of -1, 0 or 1"),
           ([True, 0, 0, 0, 0], "array-like of -1, 0 or 1"),
           ({"nope": 1}, "names 'nope', which is not a feature"),
           ({9: 1}, "not a feature")]
    for cst, msg in bad:
        with pytest.raises(ValueError, match=msg):
            tl.DecisionTreeRegressor(monotonic_cst=cst).fit(X, y)
    with pytest.raises(ValueError, match="an array-like of -1, 0 and 1, or a dict"):
        tl.DecisionTreeRegressor(monotonic_cst="increasing").fit(X, y)
    y3 = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    with pytest.raises(ValueError, match="multiclass"):
        tl.DecisionTreeClassifier(monotonic_cst=CST).fit(X, y3)
    with pytest.raises(ValueError, match="absolute_error"):
        tl.DecisionTreeRegressor(criterion="absolute_error", monotonic_cst=CST).fit(X, y)
    with pytest.raises(ValueError, match="linear leaves"):
        tl.M5Regressor(monotonic_cst=CST).fit(X, y)
    df = pd.DataFrame(X[:, :2], columns=["a", "b"])
    df["colour"] = pd.Categorical(np.random.RandomState(0).choice(["r", "g"], len(y)))
    with pytest.raises(ValueError, match=r"categorical features \(colour\)"):
        tl.DecisionTreeRegressor(monotonic_cst={"colour": 1}).fit(df, y)
    Xm = X.copy()
    Xm[::7, 3] = np.nan
    with pytest.raises(ValueError, match="missing='c45'"):
        tl.C45Classifier(subtree_raising=False, monotonic_cst=CST).fit(Xm, y > 0)
    with pytest.raises(ValueError, match="subtree_raising=False"):
        tl.C45Classifier(monotonic_cst=CST).fit(X, y > 0)  # C4.5 raises subtrees by default
    with pytest.raises(ValueError, match="quantiles come from the training targets"):
        E.RandomForestQuantileRegressor(monotonic_cst=CST).fit(X, y)
    # a category column left free is fine
    tl.DecisionTreeRegressor(monotonic_cst={"a": 1}).fit(df, y)


def test_readers_name_the_constraints():
    X, y = _table(8)
    df = pd.DataFrame(X, columns=["price", "age", "c", "d", "e"])
    reg = tl.DecisionTreeRegressor(max_depth=2, monotonic_cst={"price": 1, "age": -1},
                                   random_state=0).fit(df, y)
    text = tl.export_text(reg)
    assert text.rstrip().endswith("(monotonic: price increasing, age decreasing)")
    dot = tl.export_graphviz(reg)
    assert 'label="monotonic: price increasing, age decreasing";' in dot
    clf = tl.DecisionTreeClassifier(max_depth=2, monotonic_cst=[0, -1, 0, 0, 0],
                                    random_state=0).fit(df, np.where(y > 0, "hi", "lo"))
    assert "(monotonic (the probability of lo): age decreasing)" in tl.export_text(clf)
    free = tl.DecisionTreeRegressor(max_depth=2, random_state=0).fit(df, y)
    assert "monotonic" not in tl.export_text(free) and "monotonic" not in \
        tl.export_graphviz(free)
