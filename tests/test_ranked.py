"""The ranked splitter (treelearn.engine.layouts.ranked): its kernels against plain twins,
and its trees against the presorted engine's, node for node, and scikit-learn's."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import treelearn as tl
from treelearn.engine import build, fit
from treelearn.engine.columns import presort
from treelearn.engine.layouts import ranked as R

# -- kernels -----------------------------------------------------------------------------------


@given(arrays(np.float32, st.tuples(st.integers(1, 60), st.integers(1, 3)),
              elements=st.sampled_from([0.0, -0.0, 1.5, -2.25, 3e38, np.nan, 1e-45, 7.0,
                                        -np.inf])))
def test_ranks_are_the_distinct_values_in_order(X):
    """Twin: NumPy's unique (NaN one value, last; -0.0 and 0.0 one value)."""
    ranks, values, offsets, nan_rank = R.rank_columns(*presort(X))
    for f in range(X.shape[1]):
        col = X[:, f] + np.float32(0.0)
        uniq = np.unique(col)  # NaNs collapse into one, sorted last
        np.testing.assert_array_equal(values[offsets[f]:offsets[f + 1]], uniq)
        want = np.searchsorted(uniq[~np.isnan(uniq)], col)  # NaN: past every number
        np.testing.assert_array_equal(ranks[f], want)
        assert nan_rank[f] == (len(uniq) - 1 if np.isnan(col).any() else -1)


def _sort_case(keys, with_c, with_r, with_w, seed):
    """The node's gather (ranks of one feature, payload of its rows) and sort, against
    NumPy's stable argsort: both paths (packed insertion up to INSERTION_MAX rows, radix)."""
    m = keys.shape[0]
    rng = np.random.default_rng(seed)
    buf = R.ranked_buffers(max(m, 1), with_c, with_w)
    k, tk, bC, tC, bR, tR, bW, tW = buf.keys, buf.tk, buf.bC, buf.tC, buf.bR, buf.tR, buf.bW, buf.tW
    if with_r:  # a regressor's buffers: targets instead of class codes
        bR, tR = np.empty((1, max(m, 1))), np.empty((1, max(m, 1)))
    c = rng.integers(0, 5, m).astype(np.int32)
    r = rng.normal(size=m)
    x = rng.random(m)
    nC = c if bC is not None else None
    nR = r if with_r else None
    nW = x if bW is not None else None
    cnt = buf.cnt
    ranks = keys.reshape(1, m)
    samples = rng.permutation(m).astype(np.int32)  # the node's rows in any order
    kmin, kmax, nm = R._gather(ranks, 0, samples, 0, m, -1, k, nC[samples] if nC is not None
                               else None, nR[samples] if nR is not None else None,
                               nW[samples] if nW is not None else None, bC,
                               bR if with_r else None, bW, cnt)
    assert nm == 0
    if m:
        assert (kmin, kmax) == (keys.min(), keys.max())
    span = int(kmax) - int(kmin) if m else 0
    R.sort_by_rank(k, bC, bR if with_r else None, bW, m, kmin if m else 0, span, tk, tC,
                   tR if with_r else None, tW, cnt, nC[samples] if nC is not None else None,
                   nR[samples] if nR is not None else None,
                   nW[samples] if nW is not None else None)
    order = samples[np.argsort(keys[samples], kind="stable")]  # the twin
    np.testing.assert_array_equal(k[:m], keys[order])
    if bC is not None:
        np.testing.assert_array_equal(bC[0, :m], c[order])
    if with_r:
        np.testing.assert_array_equal(bR[0, :m], r[order])
    if bW is not None:
        np.testing.assert_array_equal(bW[0, :m], x[order])


@given(st.lists(st.integers(0, 2**22), min_size=0, max_size=120), st.booleans(),
       st.booleans(), st.integers(0, 2**16))
def test_sort_by_rank_is_a_stable_argsort(keys, classes, weighted, seed):
    """Twin: NumPy's stable argsort; insertion sort and narrow radix digits."""
    keys = np.array(keys, dtype=np.uint32) + np.uint32(seed % 7)
    _sort_case(keys, classes, not classes, weighted, seed)


@pytest.mark.parametrize("m, top", [(5000, 2**21), (70_000, 2**20), (9000, 300), (40, 3),
                                    (4100, 0), (33, 2**31)])
def test_sort_by_rank_on_large_nodes(m, top):
    """Wide digits (from WIDE_FROM rows), one to three passes, one distinct key."""
    rng = np.random.default_rng(m)
    keys = rng.integers(0, top + 1, m).astype(np.uint32)
    _sort_case(keys, True, False, True, 1)
    _sort_case(keys, False, True, False, 2)


@pytest.mark.parametrize("m, top", [(32, 1), (20, 3), (7, 0), (1, 0), (33, 2)])
def test_sort_by_rank_keeps_the_order_of_equal_ranks(m, top):
    """Few distinct ranks (the random lists above rarely repeat one), both sides of
    INSERTION_MAX: equal ranks keep the node's order, as the presorted lists do."""
    rng = np.random.default_rng(m + top)
    keys = rng.integers(0, top + 1, m).astype(np.uint32)
    _sort_case(keys, True, False, True, 3)
    _sort_case(keys, False, True, False, 4)


# -- trees ---------------------------------------------------------------------------------------

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "n_node_samples",
               "missing_branch", "missing_seen")


def _presorted(monkeypatch):
    """Grow with the presorted lists whatever the settings."""
    monkeypatch.setattr(R, "RANKED_FRACTION", 10**9)


def _assert_same_tree(a, b):
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    # node sums are added in another order (samples vs the first feature's sorted list)
    for name in ("impurity", "weighted_n_node_samples", "value"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12,
                                   atol=1e-12, err_msg=name)


def _table(rng, n, p, holes):
    X = np.round(rng.normal(size=(n, p)), 1).astype(np.float32)  # ties
    X[:, 0] = rng.integers(0, 3, n)  # few values: constant in small nodes
    if holes:
        X[rng.random((n, p)) < 0.15] = np.nan
    return X


@pytest.mark.parametrize("crit", ["gini", "entropy", "misclassification", "gain_ratio", "chi2",
                                  "squared_error"])
@pytest.mark.parametrize("holes", [False, True])
def test_ranked_trees_are_the_presorted_engines(monkeypatch, crit, holes):
    """Random tables with ties, few-valued and (learned or imputed) missing values, weights,
    the stopping rules and the random splitter (without missing values, as everywhere): the
    ranked splitter grows the presorted engine's tree, node for node."""
    rng = np.random.default_rng(len(crit) + 10 * holes)
    regression = crit == "squared_error"
    cls = tl.DecisionTreeRegressor if regression else tl.DecisionTreeClassifier
    for trial in range(4):
        n = int(rng.integers(20, 400))
        X = _table(rng, n, 9, holes)
        y = rng.integers(0, 12, n) / 4 if regression else rng.integers(0, 3, n)
        w = rng.integers(0, 4, n).astype(float) if trial % 2 else None
        kw = dict(criterion=crit, max_features=int(rng.integers(1, 4)), random_state=trial,
                  splitter="random" if trial == 3 and not holes else "best",
                  missing="impute" if trial == 2 else "learn",
                  min_samples_leaf=1 + trial % 3, max_depth=None if trial else 6,
                  min_weight_fraction_leaf=0.01 * (trial == 1),
                  min_impurity_decrease=1e-3 * (trial == 2))
        assert R.ranked_applies(fit.GrowParams(
            crit=0, n_stats=2, n_values=2, n_classes=2, max_depth=1, min_samples_split=2,
            min_samples_leaf=1, min_weight_leaf=0.0, max_features=kw["max_features"],
            max_leaf_nodes=0, min_impurity_decrease=0.0, seed=0), np.zeros(9, bool), holes)
        got = cls(**kw).fit(X, y, sample_weight=w).tree_
        with monkeypatch.context() as m:
            _presorted(m)
            want = cls(**kw).fit(X, y, sample_weight=w).tree_
        _assert_same_tree(got, want)


def test_ranked_forests_are_sklearns_and_the_presorted_engines(monkeypatch):
    from sklearn import ensemble as skens
    from sklearn.datasets import make_classification

    X, y = make_classification(500, 12, n_informative=6, n_classes=3, random_state=3)
    X = np.round(X, 2)  # ties
    ours = tl.RandomForestClassifier(n_estimators=6, random_state=1).fit(X, y)
    theirs = skens.RandomForestClassifier(n_estimators=6, random_state=1).fit(X, y)
    with monkeypatch.context() as m:
        _presorted(m)
        presorted = tl.RandomForestClassifier(n_estimators=6, random_state=1).fit(X, y)
    for a, b, c in zip(ours.estimators_, theirs.estimators_, presorted.estimators_,
                       strict=True):
        _assert_same_tree(a.tree_, c.tree_)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-12)


def test_the_ranked_splitter_is_chosen_where_it_applies(monkeypatch):
    """Nodes drawing a third of the features or fewer, depth first, numeric: ranked; the
    rest (all features, best-first, categories, C4.5's fractional cases): presorted."""
    used = []
    inner = build.grow_ranked  # the engine's one choice of layout
    monkeypatch.setattr(build, "grow_ranked", lambda *a: used.append(1) or inner(*a))
    rng = np.random.default_rng(0)
    X = _table(rng, 200, 9, False)
    y = rng.integers(0, 2, 200)
    for kw, ranked in (({"max_features": 3}, True), ({"max_features": 4}, False),
                       ({"max_features": 3, "max_leaf_nodes": 20}, False),
                       ({"max_features": 3, "criterion": "absolute_error"}, False)):
        used.clear()
        est = (tl.DecisionTreeRegressor if "criterion" in kw else tl.DecisionTreeClassifier)
        est(**kw).fit(X, y)
        assert bool(used) == ranked, kw
    used.clear()
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(9)]).assign(
        c=pd.Categorical(rng.integers(0, 3, 200)))
    tl.DecisionTreeClassifier(max_features=3).fit(df, y)
    Xh = X.copy()
    Xh[::7, 1] = np.nan
    tl.DecisionTreeClassifier(max_features=3, missing="c45").fit(Xh, y)
    assert not used


@settings(max_examples=10)
@given(st.integers(0, 2**32 - 1))
def test_ranked_growth_returns_to_python_between_chunks(seed):
    """A small budget per call: the loop is entered many times, the tree is the same."""
    rng = np.random.default_rng(seed)
    X = _table(rng, 300, 9, bool(seed % 2))
    y = rng.integers(0, 3, 300)
    whole = tl.DecisionTreeClassifier(max_features=2, random_state=0).fit(X, y).tree_
    old, inner = fit.CHUNK_WORK, R.Ranked.grow_depth_first
    calls = []
    fit.CHUNK_WORK = 200
    R.Ranked.grow_depth_first = lambda **a: calls.append(1) or inner(**a)
    try:
        chunked = tl.DecisionTreeClassifier(max_features=2, random_state=0).fit(X, y).tree_
    finally:
        fit.CHUNK_WORK, R.Ranked.grow_depth_first = old, inner
    assert len(calls) >= 5
    assert chunked == whole
