"""Ensembles: forests equal scikit-learn's tree by tree, out-of-bag scores by hand, bagging of
any treelearn tree, the packed forest against a loop over the trees, bad input."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import ensemble as skens
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import parametrize_with_checks

import treelearn as tl
from treelearn.engine.columns import presort, subset_sorted
from treelearn.ensemble._packed import (
    Members,
    PackedForest,
    binary_order,
    preorder_ids,
    preorder_stack,
    round_down_f32,
)


def _classification(n=600, p=8, seed=0):
    X, y = make_classification(n, p, n_informative=min(5, p), n_redundant=0 if p < 8 else 2,
                               n_classes=3, random_state=seed)
    return X, y


def _regression(n=600, p=8, seed=0):
    X, y = make_regression(n, p, noise=5.0, random_state=seed)
    # integer targets: sums are exact, so exact ties break as in scikit-learn (see
    # test_sklearn_equivalence)
    return X, np.round(y)


def assert_same_forest(ours, theirs):
    assert len(ours.estimators_) == len(theirs.estimators_)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert a.random_state == b.random_state
        ta, tb = a.tree_, b.tree_
        assert ta.node_count == tb.node_count
        np.testing.assert_array_equal(ta.children_left, tb.children_left)
        np.testing.assert_array_equal(ta.children_right, tb.children_right)
        np.testing.assert_array_equal(ta.feature, tb.feature)
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        np.testing.assert_array_equal(ta.n_node_samples, tb.n_node_samples)
        np.testing.assert_allclose(ta.weighted_n_node_samples, tb.weighted_n_node_samples)
        np.testing.assert_allclose(ta.value, tb.value, rtol=1e-12, atol=1e-12)


FOREST_CASES = [
    ("RandomForestClassifier", {}),
    ("RandomForestClassifier", {"max_depth": 5, "min_samples_leaf": 3}),
    ("RandomForestClassifier", {"max_samples": 0.6, "max_features": 3}),
    ("RandomForestClassifier", {"class_weight": {0: 1.0, 1: 2.0, 2: 3.0}}),
    ("RandomForestClassifier", {"criterion": "entropy", "max_leaf_nodes": 30}),
    ("RandomForestClassifier", {"bootstrap": False, "max_features": 2}),
    ("RandomForestRegressor", {}),
    ("RandomForestRegressor", {"max_features": 0.5, "min_samples_split": 10}),
    ("ExtraTreesClassifier", {}),
    ("ExtraTreesClassifier", {"bootstrap": True, "max_samples": 300}),
    ("ExtraTreesRegressor", {}),
]


@pytest.mark.parametrize(("name", "kw"), FOREST_CASES, ids=str)
# weighted: the same code with other numbers; compiled only (the coverage pass runs as Python)
@pytest.mark.parametrize("weighted", [False, pytest.param(True, marks=pytest.mark.jit_only)])
def test_forest_is_sklearns_tree_by_tree(name, kw, weighted):
    X, y = _regression() if "Regressor" in name else _classification()
    w = np.random.default_rng(1).integers(1, 4, y.size).astype(float) if weighted else None
    Xt = np.random.default_rng(2).normal(size=(400, X.shape[1])) * 1.5
    ours = getattr(tl, name)(n_estimators=12, random_state=7, **kw).fit(X, y, w)
    theirs = getattr(skens, name)(n_estimators=12, random_state=7, **kw).fit(X, y, w)
    assert_same_forest(ours, theirs)
    if hasattr(theirs, "predict_proba"):
        np.testing.assert_allclose(ours.predict_proba(Xt), theirs.predict_proba(Xt),
                                   rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-12)
    np.testing.assert_array_equal(ours.apply(Xt), theirs.apply(Xt))
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                               atol=1e-12)


def test_warm_start_adds_the_trees_scikit_learn_adds():
    X, y = _classification()
    ours = tl.RandomForestClassifier(n_estimators=4, random_state=3, warm_start=True).fit(X, y)
    theirs = skens.RandomForestClassifier(n_estimators=4, random_state=3, warm_start=True)
    theirs.fit(X, y)
    first = ours.estimators_[0]
    ours.set_params(n_estimators=9).fit(X, y)
    theirs.set_params(n_estimators=9).fit(X, y)
    assert ours.estimators_[0] is first
    assert_same_forest(ours, theirs)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        ours.fit(X, y)
    with pytest.raises(ValueError, match="must be at least"):
        ours.set_params(n_estimators=3).fit(X, y)


@pytest.mark.parametrize("name", ["RandomForestClassifier", "RandomForestRegressor"])
def test_oob_score_against_a_plain_computation(name):
    X, y = _regression(300) if "Regressor" in name else _classification(300)
    est = getattr(tl, name)(n_estimators=15, random_state=0, oob_score=True).fit(X, y)
    theirs = getattr(skens, name)(n_estimators=15, random_state=0, oob_score=True).fit(X, y)
    n = y.size
    acc = np.zeros((n, 3 if "Classifier" in name else 1))
    hits = np.zeros(n)
    for tree in est.estimators_:
        drawn = np.random.RandomState(tree.random_state).randint(0, n, n)
        oob = np.setdiff1d(np.arange(n), drawn)
        pred = (tree.predict_proba(X[oob]) if "Classifier" in name
                else tree.predict(X[oob])[:, None])
        acc[oob] += pred
        hits[oob] += 1
    acc /= np.maximum(hits, 1)[:, None]
    if "Classifier" in name:
        np.testing.assert_allclose(est.oob_decision_function_, acc)
        assert est.oob_score_ == np.mean(np.argmax(acc, axis=1) == y)
    else:
        np.testing.assert_allclose(est.oob_prediction_, acc[:, 0])
        ss = np.sum((y - acc[:, 0]) ** 2)
        assert est.oob_score_ == pytest.approx(1 - ss / np.sum((y - y.mean()) ** 2))
    assert est.oob_score_ == pytest.approx(theirs.oob_score_)


def test_balanced_subsample_weighs_each_bootstrap_sample():
    X, y = _classification(400)
    y[:300] = 0  # imbalanced
    est = tl.RandomForestClassifier(n_estimators=4, random_state=2,
                                    class_weight="balanced_subsample").fit(X, y)
    for tree in est.estimators_:
        drawn = np.random.RandomState(tree.random_state).randint(0, y.size, y.size)
        w = np.bincount(drawn, minlength=y.size) * compute_sample_weight("balanced", y,
                                                                         indices=drawn)
        alone = tl.DecisionTreeClassifier(max_features="sqrt", random_state=tree.random_state)
        assert alone.fit(X, y, w).tree_ == tree.tree_


def _table(n=500, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    size = rng.normal(size=n).round(1)
    size[rng.random(n) < 0.15] = np.nan
    count = rng.integers(0, 6, n).astype(float)
    y = np.where((colour == "red") | (np.nan_to_num(size) > 0.8), "yes", "no")
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    X = pd.DataFrame({"colour": pd.Categorical(colour), "size": size, "count": count})
    return X, y


def test_bagging_a_pruned_c45_tree_on_a_table_with_missing_values():
    X, y = _table()
    base = tl.C45Classifier()
    bag = tl.BaggingClassifier(base, n_estimators=6, random_state=0, oob_score=True).fit(X, y)
    assert all(isinstance(t, tl.C45Classifier) for t in bag.estimators_)
    assert bag.oob_score_ > 0.7
    # every tree is the base tree fitted on its bootstrap sample as weights
    for tree, cols in zip(bag.estimators_, bag.estimators_features_, strict=True):
        np.testing.assert_array_equal(cols, np.arange(3))
        rng = np.random.RandomState(tree.random_state)
        counts = np.bincount(rng.randint(0, len(y), len(y)), minlength=len(y))
        alone = tl.C45Classifier(random_state=tree.random_state).fit(X, y, counts)
        assert alone.tree_ == tree.tree_
    # fractional missing-value routing: prediction falls back to each tree's own router
    proba = bag.predict_proba(X)
    by_hand = np.mean([t.predict_proba(X) for t in bag.estimators_], axis=0)
    np.testing.assert_allclose(proba, by_hand)
    assert (bag.predict(X) == y).mean() > 0.8
    assert tl.export_text(bag.estimators_[0]).startswith("|---")


def test_bagging_random_subspaces_map_features_back():
    X, y = _classification()
    bag = tl.BaggingClassifier(tl.DecisionTreeClassifier(max_depth=4), n_estimators=8,
                               max_features=3, bootstrap=False, max_samples=0.5,
                               random_state=0).fit(X, y)
    for tree, cols in zip(bag.estimators_, bag.estimators_features_, strict=True):
        assert cols.size == 3 and tree.n_features_in_ == 3
    by_hand = np.mean([t.predict_proba(X[:, c])
                       for t, c in zip(bag.estimators_, bag.estimators_features_, strict=True)],
                      axis=0)
    np.testing.assert_allclose(bag.predict_proba(X), by_hand)
    imp = bag.feature_importances_
    assert imp.shape == (X.shape[1],) and imp.sum() == pytest.approx(1.0)
    reg = tl.BaggingRegressor(n_estimators=5, random_state=0).fit(*_regression())
    assert reg.predict(_regression()[0]).shape == (600,)


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_forests_on_tables_with_categories_and_missing_values(splitter):
    X, y = _table(800)
    est = tl.RandomForestClassifier(n_estimators=10, random_state=0, splitter=splitter,
                                    max_features=None).fit(X, y)
    assert not est._packed.binary  # categorical nodes: the general layout
    by_hand = np.mean([t.predict_proba(X) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(est.predict_proba(X), by_hand)
    leaves = np.column_stack([t.apply(X) for t in est.estimators_])
    np.testing.assert_array_equal(est.apply(X), leaves)
    assert (est.predict(X) == y).mean() > 0.85


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_hist_forest_grows_each_tree_on_the_shared_bins(n_jobs):
    X, y = _classification(800)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    est = tl.RandomForestClassifier(n_estimators=5, splitter="hist", random_state=4,
                                    n_jobs=n_jobs).fit(X, y)
    for tree in est.estimators_:
        counts = np.bincount(np.random.RandomState(tree.random_state).randint(0, 800, 800),
                             minlength=800)
        alone = tl.DecisionTreeClassifier(splitter="hist", binner=est.binner_,
                                          max_features="sqrt", random_state=tree.random_state)
        assert alone.fit(X, y, counts).tree_ == tree.tree_
    assert est._packed.binary
    by_hand = np.mean([t.predict_proba(X) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(est.predict_proba(X), by_hand)


# -- kernels and their twins ---------------------------------------------------------------------

@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_subset_sorted_is_the_presort_of_the_rows(seed, share):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 60)), int(rng.integers(1, 4))
    X = rng.integers(0, 5, size=(n, p)).astype(np.float32)  # many ties
    X[rng.random(X.shape) < 0.1] = np.nan
    keep = rng.random(n) < share if share < 1.0 else np.ones(n, bool)  # all: a copy
    sval, sidx = subset_sorted(*presort(X), keep)
    rval, ridx = presort(X[keep])
    np.testing.assert_array_equal(sidx, ridx)
    np.testing.assert_array_equal(sval, rval)


@given(st.integers(0, 10_000), st.booleans())
def test_lists_in_sorted_order_on_all_threads(seed, codes):
    """in_sorted_order's threaded kernels (large lists) give NumPy's gather."""
    from treelearn.engine import columns

    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 300)), int(rng.integers(1, 5))
    sidx = np.argsort(rng.random((p, n)), axis=1).astype(np.int32)
    values = rng.integers(0, 7, n) if codes else rng.normal(size=n)
    old = columns.PARALLEL_GATHER
    try:
        columns.PARALLEL_GATHER = 0
        got = columns.in_sorted_order(sidx, values)
    finally:
        columns.PARALLEL_GATHER = old
    assert got.dtype == (np.int32 if codes else np.float64)
    np.testing.assert_array_equal(got, values[sidx])
    np.testing.assert_array_equal(columns.in_sorted_order(sidx, values, parallel=False), got)


@given(st.floats(allow_nan=False, width=32), st.floats(allow_nan=False, allow_infinity=False))
def test_rounding_thresholds_down_to_float32_keeps_every_comparison(x, t):
    x = np.float32(x)
    t32 = round_down_f32(t)
    assert (np.float64(x) <= t) == (x <= t32)
    with np.errstate(over="ignore"):
        nearby = (np.nextafter(t32, np.float32(np.inf)), np.nextafter(t32, np.float32(-np.inf)))
    for near in (*nearby, t32):
        assert (np.float64(near) <= t) == (near <= t32)


def _bfs_twin(left, right):
    """Plain breadth-first renumbering with sibling pairs."""
    order, queue = [0], [0]
    while queue:
        node = queue.pop(0)
        if left[node] != -1:
            order += [left[node], right[node]]
            queue += [left[node], right[node]]
    return np.array(order)


@given(st.integers(0, 10_000))
def test_binary_order_matches_its_twin(seed):
    X, y = _classification(120, 4, seed % 50)
    tree = tl.DecisionTreeClassifier(random_state=seed).fit(X, y).tree_
    new = np.empty(tree.node_count, dtype=np.int64)
    order = np.empty(tree.node_count, dtype=np.int64)
    binary_order(tree.children_left, tree.children_right, 5, new, order)
    np.testing.assert_array_equal(order, _bfs_twin(tree.children_left, tree.children_right))
    np.testing.assert_array_equal(new[order], 5 + np.arange(tree.node_count))


def _preorder_twin(rec, roots):
    """Plain recursive depth-first numbering of packed records (children ``c`` and ``c + 1``
    of a split node ``g`` with ``rec[g, 0] = c``; a leaf has ``rec[g, 0] = g``)."""
    out = {}

    def visit(g, counter):
        out[g] = counter[0]
        counter[0] += 1
        if rec[g, 0] != g:
            visit(int(rec[g, 0]), counter)
            visit(int(rec[g, 0]) + 1, counter)

    for root in roots:
        visit(int(root), [0])
    return np.array([out[g] for g in range(rec.shape[0])])


@given(st.integers(0, 10_000))
def test_preorder_ids_match_their_twin(seed):
    """Also on a deep, thin tree (a regression on powers of two: depth 8 on 12 rows),
    whose walk needs a deep stack."""
    rng = np.random.default_rng(seed)
    X, y = _classification(100, 3, seed % 30)
    trees = [tl.DecisionTreeRegressor(max_depth=int(rng.integers(1, 9)), random_state=k)
             .fit(X, y + rng.normal(size=y.size)).tree_ for k in range(3)]
    n = int(rng.integers(2, 20))  # 2 ** 20: the squares' sums stay exact
    chain = np.zeros((n, 3))
    chain[:, 0] = np.arange(n)
    trees.append(tl.DecisionTreeRegressor().fit(chain, 2.0 ** np.arange(n)).tree_)
    assert trees[-1].max_depth >= n // 2
    packed = PackedForest(trees[::-1] if seed % 2 else trees)
    out = np.full(packed.node_count, -1, dtype=np.int32)
    preorder_ids(packed.records, packed.roots, out,
                 preorder_stack(packed.roots, packed.node_count))
    np.testing.assert_array_equal(out, _preorder_twin(packed.records, packed.roots))


@given(st.integers(0, 10_000))
def test_packed_walk_equals_a_loop_over_the_trees(seed):
    rng = np.random.default_rng(seed)
    X, y = _classification(200, 5, seed % 30)
    X[rng.random(X.shape) < 0.1] = np.nan  # learned missing-value directions
    trees = [tl.DecisionTreeClassifier(max_depth=int(rng.integers(1, 8)), random_state=k)
             .fit(X, y, rng.integers(0, 3, y.size)).tree_ for k in range(4)]
    Xt = rng.normal(size=(int(rng.integers(1, 40)), 5)).astype(np.float32)
    Xt[rng.random(Xt.shape) < 0.2] = np.nan
    packed = PackedForest(trees, normalize=True)
    assert packed.binary
    twin = sum(t.predict(Xt)[:, 0, :] / t.predict(Xt)[:, 0, :].sum(1, keepdims=True)
               for t in trees)
    np.testing.assert_allclose(packed.sum(Xt), twin, rtol=1e-12)
    np.testing.assert_array_equal(packed.apply(Xt), np.column_stack([t.apply(Xt)
                                                                     for t in trees]))


def _packable_trees(seed, splitter="best", criterion="gini"):
    """Three random trees of one of four kinds (``seed % 4``): classifiers on whole weights,
    on fractional weights, numbered best first, and regressors; learned missing-value
    directions everywhere and, when ``seed % 5 == 0``, each tree on its own random subspace.
    Returns ``(trees, cols, case)``."""
    rng = np.random.default_rng(seed)
    X, y = _classification(150, 6, seed % 40)
    X[rng.random(X.shape) < 0.1] = np.nan
    case = seed % 4
    w = rng.integers(0, 4, y.size).astype(float) if case != 1 else rng.uniform(0.1, 2, y.size)
    kw = {"max_leaf_nodes": int(rng.integers(2, 30))} if case == 2 else {}
    if case == 3:
        trees = [tl.DecisionTreeRegressor(random_state=k, splitter=splitter).fit(X, y * 1.5, w)
                 .tree_ for k in range(3)]
    else:
        trees = [tl.DecisionTreeClassifier(random_state=k, splitter=splitter,
                                           criterion=criterion, **kw).fit(X, y, w).tree_
                 for k in range(3)]
    cols = [np.sort(rng.choice(9, 6, replace=False)) for _ in trees] if seed % 5 == 0 else None
    return trees, cols, case


@given(st.integers(0, 10_000))
def test_packed_records_store_every_tree_exactly(seed):
    """PackedForest(store=True).tree(k) is tree k, array for array: depth-first and best-first
    numbering, learned missing-value directions, class counts (whole weights), float values
    (fractional weights, regression), a random subspace's own feature numbers."""
    trees, cols, case = _packable_trees(seed, "hist" if seed % 3 == 0 else "best")
    packed = PackedForest(trees, cols, normalize=case != 3, store=True, crit=0)
    assert packed.stored
    assert {s.counts is not None for s in packed.stored_trees} == {case in (0, 2)}
    assert (packed.original is not None) == (case == 2 and any(
        not np.array_equal(t.children_left[t.children_left >= 0],
                           np.flatnonzero(t.children_left >= 0) + 1) for t in trees))
    for k, t in enumerate(trees):
        assert packed.tree(k, t.n_features, t.n_classes) == t


_PACK_ARRAYS = ("roots", "records", "leaf_value", "original")


def _pack_twin(trees, cols, normalize, crit):
    """The binary pack of ``trees`` in plain NumPy, array by array (how the forest packed
    before one compiled pass did it): records in breadth-first sibling order, the leaf
    values, the original ids unless every tree is numbered in preorder, and each tree's
    :data:`StoredTree` (class counts when the weights are whole and give everything back)."""
    from treelearn.engine.criteria import node_impurity

    recs, vals, stored, originals = [], [], [], []
    start = n_leaf = n_inner = 0
    preorder = True
    for k, t in enumerate(trees):
        m = t.node_count
        order = _bfs_twin(t.children_left, t.children_right)
        new = np.empty(m, dtype=np.int64)
        new[order] = start + np.arange(m)
        leaf = t.children_left[order] == -1
        f = np.maximum(t.feature[order], 0)
        if cols is not None:
            f = np.asarray(cols[k])[f]
        rec = np.zeros((m, 4), dtype=np.int32)
        rec[:, 0] = np.where(leaf, start + np.arange(m), new[t.children_left[order]])
        rec[:, 1] = np.where(leaf, 0, f * 4 + t.missing_seen[order] * 2
                             + (t.missing_branch[order] == 1))
        with np.errstate(over="ignore"):
            t32 = t.threshold[order].astype(np.float32)
        up = t32.astype(np.float64) > t.threshold[order]
        t32[up] = np.nextafter(t32[up], np.float32(-np.inf))
        rec.view(np.float32)[:, 2] = np.where(leaf, np.float32(np.nan), t32)
        rec[:, 3] = np.where(leaf, n_leaf + np.cumsum(leaf) - 1,
                             -2 - (n_inner + np.cumsum(~leaf) - 1))
        recs.append(rec)
        v = t.value[order[leaf], 0, :]
        if normalize:
            total = v.sum(axis=1, keepdims=True)
            total[total == 0.0] = 1.0
            v = v / total
        vals.append(v)
        originals.append(order)
        value, weights = t.value[order, 0, :], t.weighted_n_node_samples[order]
        impurity = t.impurity[order]
        counts = np.rint(value * weights[:, None]) if normalize and crit is not None else None
        if counts is not None and (np.all((counts >= 0) & (counts < 2.0**32))
                                   and np.array_equal(counts.sum(1), weights)
                                   and np.array_equal(counts / counts.sum(1)[:, None], value)):
            counts = counts.astype(np.uint32)
            again = [node_impurity(c.astype(float), float(c.sum()), crit) for c in counts]
            impurity = None if np.array_equal(again, impurity) else impurity
            value = weights = None
        else:
            counts = None
        stored.append((t.n_node_samples[order].astype(np.int32), t.threshold[order[~leaf]],
                       counts, value, weights, impurity))
        # preorder: a depth-first walk, left first, meets the nodes in the order of their ids
        seen, stack = [], [0]
        while stack:
            i = stack.pop()
            seen.append(i)
            if t.children_left[i] != -1:
                stack += [t.children_right[i], t.children_left[i]]
        preorder = preorder and seen == list(range(m))
        start += m
        n_leaf += int(leaf.sum())
        n_inner += int((~leaf).sum())
    original = None if preorder else np.concatenate(originals).astype(np.int32)
    return np.concatenate(recs), np.concatenate(vals), original, stored


@given(st.integers(0, 10_000))
def test_the_compiled_pack_matches_its_numpy_twin(seed):
    """Classifiers on whole and fractional weights, best-first numbering, learned missing
    directions, regressors, random subspaces: the packed arrays are the twin's, bit for
    bit."""
    crit = (seed // 7) % 2  # gini, entropy
    trees, cols, case = _packable_trees(seed, criterion=("gini", "entropy")[crit])
    packed = PackedForest(trees, cols, normalize=case != 3, store=True,
                          crit=None if case == 3 else crit, verify=False)
    rec, vals, original, stored = _pack_twin(trees, cols, case != 3,
                                             None if case == 3 else crit)
    np.testing.assert_array_equal(packed.records, rec)
    np.testing.assert_array_equal(packed.leaf_value, vals)
    assert (packed.original is None) == (original is None)
    if original is not None:
        np.testing.assert_array_equal(packed.original, original)
    bare = PackedForest(trees, cols, normalize=case != 3, store=False)  # records only
    np.testing.assert_array_equal(bare.records, rec)
    np.testing.assert_array_equal(bare.leaf_value, vals)
    assert not bare.stored and bare.stored_trees is None
    assert packed.stored
    for part, twin in zip(packed.stored_trees, stored, strict=True):
        for name, x, y in zip(part._fields, part, twin, strict=True):
            assert (x is None) == (y is None), name
            if x is not None:
                assert x.dtype == y.dtype, name
                np.testing.assert_array_equal(x, y, err_msg=name)


def _assert_same_pack(a, b):
    assert (a.n_trees, a.node_count, a.stored, a.binary) == (b.n_trees, b.node_count,
                                                            b.stored, b.binary)
    pairs = [(name, getattr(a, name), getattr(b, name)) for name in _PACK_ARRAYS]
    assert len(a.stored_trees) == len(b.stored_trees) == a.n_trees
    for k, (sa, sb) in enumerate(zip(a.stored_trees, b.stored_trees, strict=True)):
        pairs += [(f"tree {k} {name}", x, y) for name, x, y in zip(sa._fields, sa, sb,
                                                                   strict=True)]
    for name, x, y in pairs:
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=name)


@given(st.integers(0, 10_000))
def test_packs_of_one_tree_join_into_the_pack_of_all(seed):
    """A forest packs each tree on the thread that grew it and joins the packs: the same
    arrays as packing all trees at once, also when only some trees' class weights are whole
    numbers (counts) or a tree is numbered best first."""
    rng = np.random.default_rng(seed)
    X, y = _classification(150, 6, seed % 40)
    X[rng.random(X.shape) < 0.1] = np.nan
    trees = []
    for k in range(4):
        whole = seed % 3 != 0 or k != 2
        w = rng.integers(0, 4, y.size).astype(float) if whole else rng.uniform(0.1, 2, y.size)
        kw = {"max_leaf_nodes": 12} if k == seed % 5 else {}
        trees.append(tl.DecisionTreeClassifier(random_state=k, **kw).fit(X, y, w).tree_)
    cols = [np.sort(rng.choice(9, 6, replace=False)) for _ in trees] if seed % 2 else None
    kw = dict(normalize=True, store=True, crit=0)
    together = PackedForest(trees, cols, **kw)
    joined = PackedForest.concat([
        PackedForest([t], None if cols is None else [cols[k]], **kw) if k != 1 else
        PackedForest(trees[1:3], None if cols is None else cols[1:3], **kw)
        for k, t in enumerate(trees) if k != 2])
    _assert_same_pack(joined, together)
    for k, t in enumerate(trees):
        assert joined.tree(k, t.n_features, t.n_classes) == t
    Xt = rng.normal(size=(30, 6 if cols is None else 9)).astype(np.float32)
    np.testing.assert_array_equal(joined.sum(Xt), together.sum(Xt))
    cat = tl.DecisionTreeClassifier(random_state=0).fit(
        pd.DataFrame({"c": pd.Categorical(rng.integers(0, 4, y.size)), "x": X[:, 0]}), y)
    assert PackedForest.concat([PackedForest([trees[0]], **kw),
                                PackedForest([cat.tree_], **kw)]) is None  # not binary


def test_a_warm_started_forest_packs_as_a_fresh_one():
    X, y = _classification()
    fresh = tl.RandomForestClassifier(n_estimators=7, random_state=2).fit(X, y)
    warm = tl.RandomForestClassifier(n_estimators=3, random_state=2, warm_start=True)
    warm.fit(X, y).set_params(n_estimators=7).fit(X, y)
    _assert_same_pack(warm._packed, fresh._packed)
    np.testing.assert_array_equal(warm.feature_importances_, fresh.feature_importances_)


def test_a_forest_holds_its_trees_once_in_the_records():
    X, y = make_classification(3000, 10, random_state=0)
    rf = tl.RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y)
    assert isinstance(rf.estimators_, Members) and rf._packed.stored
    assert rf._packed.nbytes <= 40 * rf._packed.node_count + 64 * 6  # two classes
    first = rf[0]
    assert rf[0] is first and rf.estimators_[-6] is first and len(rf[1:3]) == 2
    with pytest.raises(IndexError):
        rf.estimators_[6]
    fresh = tl.DecisionTreeClassifier(max_features="sqrt", random_state=first.random_state,
                                      selection="criterion")
    from treelearn.ensemble._forest import bootstrap_counts
    fresh.fit(X, y, bootstrap_counts(first.random_state, len(y), len(y), None))
    assert first.tree_ == fresh.tree_
    import pickle
    back = pickle.loads(pickle.dumps(rf))
    np.testing.assert_array_equal(back.predict_proba(X), rf.predict_proba(X))
    assert back[2].tree_ == rf[2].tree_
    # whatever rebuilds a member is the tree grown: exports, importances, apply
    np.testing.assert_array_equal(rf.apply(X), np.column_stack([t.apply(X) for t in rf]))
    assert tl.export_text(rf[3]) == tl.export_text(rf.estimators_[3])


# -- bad input -------------------------------------------------------------------------------------

def test_bad_parameters_are_named():
    X, y = _classification(100)
    with pytest.raises(ValueError, match="n_estimators"):
        tl.RandomForestClassifier(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="max_samples=500 is larger than the number of "
                                         "samples"):
        tl.RandomForestClassifier(max_samples=500).fit(X, y)
    with pytest.raises(ValueError, match="max_samples=500 is larger"):
        tl.BaggingClassifier(max_samples=500).fit(X, y)
    with pytest.raises(ValueError, match="max_features=20 is larger"):
        tl.BaggingClassifier(max_features=20).fit(X, y)
    with pytest.raises(ValueError, match="oob_score needs bootstrap=True"):
        tl.ExtraTreesClassifier(oob_score=True).fit(X, y)
    with pytest.raises(ValueError, match="max_samples needs bootstrap=True"):
        tl.RandomForestClassifier(bootstrap=False, max_samples=0.5).fit(X, y)
    with pytest.raises(TypeError, match="treelearn tree .* got LogisticRegression"):
        from sklearn.linear_model import LogisticRegression

        tl.BaggingClassifier(LogisticRegression()).fit(X, y)
    with pytest.raises(TypeError, match="needs a classifier tree .* got DecisionTreeRegressor"):
        tl.BaggingClassifier(tl.DecisionTreeRegressor()).fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        tl.RandomForestRegressor(criterion="gini").fit(X, y)
    with pytest.raises(ValueError, match="does not support missing values"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        tl.ExtraTreesClassifier(n_estimators=2).fit(Xn, y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_trees'"):
        tl.RandomForestClassifier(n_trees=3)


def _forest_xfails(estimator):
    reason = ("a bootstrap of n rows from weighted rows is not one of n' rows from repeated "
              "rows (scikit-learn's forests and bagging fail this check too)")
    if isinstance(estimator, tl.AdaBoostClassifier):
        # On the check's data, round 5's best stumps tie exactly (features 1, 11, 29 give the
        # same Gini decrease); rounding of the normalized float weights picks one. The
        # weighted and repeated fits pick different ones here, in scikit-learn too (11 and
        # 29), whose check passes only because its two stumps happen to predict alike.
        reason = "exactly tied stumps picked by rounding noise of the boosted weights"
    if isinstance(estimator, tl.AdaBoostClassifier):
        return {"check_sample_weight_equivalence_on_dense_data": reason}
    if getattr(estimator, "bootstrap", False):
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    return {}


@parametrize_with_checks([tl.RandomForestClassifier(n_estimators=5, random_state=0),
                          tl.RandomForestRegressor(n_estimators=5, random_state=0),
                          tl.RandomForestClassifier(n_estimators=3, splitter="hist",
                                                    random_state=0),
                          tl.ExtraTreesClassifier(n_estimators=5, random_state=0),
                          tl.ExtraTreesRegressor(n_estimators=5, random_state=0),
                          tl.BaggingClassifier(n_estimators=4, random_state=0),
                          tl.BaggingRegressor(n_estimators=4, random_state=0),
                          tl.AdaBoostClassifier(n_estimators=5, random_state=0),
                          tl.OneRClassifier(), tl.MajorityClassifier(),
                          tl.ObliqueRandomForestClassifier(n_estimators=4, n_projections=4,
                                                           random_state=0),
                          tl.ObliqueRandomForestRegressor(n_estimators=4, n_projections=4,
                                                          random_state=0),
                          tl.RandomForestQuantileRegressor(n_estimators=4, random_state=0),
                          tl.ExtraTreesQuantileRegressor(n_estimators=4, random_state=0)],
                         expected_failed_checks=_forest_xfails)
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


# -- AdaBoost ------------------------------------------------------------------------------------

def test_adaboost_worked_example_li_hang_8_1():
    """Li Hang, *Statistical Learning Methods*, example 8.1: three stumps x < 2.5 (error
    0.3, a = 0.4236), x < 8.5 (0.2143, a = 0.6496), x < 5.5 (0.1818, a = 0.7520), no
    training error after three rounds. SAMME's alpha = ln((1 - e)/e) + ln(K - 1) is twice the
    book's a = 1/2 ln((1 - e)/e) for two classes."""
    X = np.arange(10.0).reshape(-1, 1)
    y = np.array([1, 1, 1, -1, -1, -1, 1, 1, 1, -1])
    ada = tl.AdaBoostClassifier(n_estimators=3).fit(X, y)
    assert [t.tree_.threshold[0] for t in ada.estimators_] == [2.5, 8.5, 5.5]
    np.testing.assert_allclose(ada.estimator_errors_, [0.3, 0.2143, 0.1818], atol=5e-5)
    np.testing.assert_allclose(ada.estimator_weights_ / 2, [0.4236, 0.6496, 0.7520], atol=5e-5)
    # round 3's stump: -1 if x < 5.5 else +1
    third = ada.estimators_[2]
    assert list(third.predict([[5.0], [6.0]])) == [-1, 1]
    assert (ada.predict(X) == y).all()
    staged = [float(np.mean(p == y)) for p in ada.staged_predict(X)]
    assert staged == [0.7, 0.7, 1.0]
    # decision scale: 2 f(x) / sum(a) with the book's f(x) = sum a_t G_t(x)
    book_a = ada.estimator_weights_ / 2
    votes = np.column_stack([np.where(t.predict(X) == 1, 1.0, -1.0) for t in ada.estimators_])
    np.testing.assert_allclose(ada.decision_function(X), 2 * votes @ book_a / book_a.sum())


@pytest.mark.parametrize("base_depth", [1, 3])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_adaboost_is_sklearns(base_depth, n_classes):
    from sklearn.ensemble import AdaBoostClassifier as SkAda
    from sklearn.tree import DecisionTreeClassifier as SkTree

    X, y = make_classification(800, 6, n_informative=4, n_classes=n_classes, random_state=1)
    base = None if base_depth == 1 else tl.DecisionTreeClassifier(max_depth=base_depth)
    ours = tl.AdaBoostClassifier(base, n_estimators=25, learning_rate=0.7,
                                 random_state=0).fit(X, y)
    theirs = SkAda(SkTree(max_depth=base_depth), n_estimators=25, learning_rate=0.7,
                   random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-12)
    np.testing.assert_allclose(ours.estimator_errors_, theirs.estimator_errors_, rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), theirs.decision_function(X),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-10)
    for a, b in zip(ours.staged_predict(X), theirs.staged_predict(X), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                               atol=1e-12)


def test_adaboost_stops_on_a_perfect_or_a_useless_learner():
    X = np.arange(20.0).reshape(-1, 1)
    y = (X[:, 0] > 9).astype(int)
    ada = tl.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(ada.estimators_) == 1 and ada.estimator_errors_[0] == 0.0
    assert ada.estimator_weights_[0] == 1.0
    noise = np.zeros((4, 1))  # one value: the stump is a leaf, as good as chance at best
    y2 = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="no better than chance"):
        tl.AdaBoostClassifier(n_estimators=5).fit(noise, y2)
    with pytest.raises(TypeError, match="classifier tree .* got DecisionTreeRegressor"):
        tl.AdaBoostClassifier(tl.DecisionTreeRegressor()).fit(X, y)


def test_adaboost_on_one_label_predicts_it_without_warnings():
    """SAMME's vote against the other classes is ``-alpha / (K - 1)``: with one class there
    is none (was a division by zero warned about)."""
    import warnings

    X = np.arange(12.0).reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ada = tl.AdaBoostClassifier(n_estimators=3).fit(X, np.full(12, 7))
        assert (ada.predict(X) == 7).all()
        assert np.allclose(ada.predict_proba(X), 1.0)


def test_adaboost_on_a_table_with_a_c45_base():
    X, y = _table(600)
    ada = tl.AdaBoostClassifier(tl.C45Classifier(max_depth=2), n_estimators=8,
                                random_state=0).fit(X, y)
    assert (ada.predict(X) == y).mean() > 0.85
    last = list(ada.staged_decision_function(X))[-1]
    np.testing.assert_allclose(last, ada.decision_function(X))


# -- OneR and the majority class -----------------------------------------------------------------

_WEATHER = pd.DataFrame({
    "outlook": ["sunny", "sunny", "overcast", "rainy", "rainy", "rainy", "overcast", "sunny",
                "sunny", "rainy", "sunny", "overcast", "overcast", "rainy"],
    "temperature": [85, 80, 83, 70, 68, 65, 64, 72, 69, 75, 75, 72, 81, 71],
    "humidity": [85, 90, 86, 96, 80, 70, 65, 95, 70, 80, 70, 90, 75, 91],
    "windy": pd.Categorical([False, True, False, False, False, True, True, False, False, False,
                             True, True, False, True]),
})
_PLAY = np.array(["no", "no", "yes", "yes", "yes", "no", "yes", "no", "yes", "yes", "yes",
                  "yes", "yes", "no"])


def test_one_r_on_the_weather_data_by_hand():
    """Witten & Frank, *Data Mining*, section 4.1, the numeric weather data.

    outlook: sunny 2 yes / 3 no -> no; overcast 4/0 -> yes; rainy 3/2 -> yes: 3+4+3 = 10
    correct; windy 10... no: false 6 yes/2 no -> yes, true 3/3 -> no (first class on the
    tie): 6 + 3 = 9. Temperature with min_bucket_size=3 (the book's example), distinct
    values with (no, yes) counts: 64 (0,1) 65 (1,0) 68 (0,1) 69 (0,1) 70 (0,1) 71 (1,0)
    72 (1,1) 75 (0,2) 80 (1,0) 81 (0,1) 83 (0,1) 85 (1,0). Pass 1: 65 joins 64 (that
    bucket has 1 < 3 of its class) -> (1,1), whose majority is "no" (first on the tie);
    68 joins it (1 < 3) -> (1,2) "yes"; 69 and 70 join (same class) -> (1,4); 71 starts a
    bucket (the last has 4 >= 3 yes) -> (1,0); 72 joins (same class "no") -> (2,1); 75
    joins (2 < 3) -> (2,3) "yes"; 80 starts one (3 >= 3) -> (1,0); 81, 83, 85 join (1 or 2
    < 3) -> (2,2) "no". Pass 2: the first two (both "yes") merge at 77.5 = (75 + 80)/2:
    temperature < 77.5 -> yes (7 of 10), >= 77.5 -> no (2 of 4): 9 correct, 5 errors as in
    the book.
    """
    one_r = tl.OneRClassifier().fit(_WEATHER, _PLAY)
    assert one_r.feature_name_ == "outlook"
    assert [r["correct"] for r in one_r.rules_][0] == 10
    assert one_r.rules_[3]["correct"] == 9
    assert one_r.export_text() == ("outlook:\n\tovercast\t-> yes\n\trainy\t-> yes\n"
                                   "\tsunny\t-> no\n(10/14 instances correct)\n")
    temp = tl.OneRClassifier(min_bucket_size=3).fit(_WEATHER[["temperature"]], _PLAY)
    rule = temp.rules_[0]
    np.testing.assert_array_equal(rule["breaks"], [77.5])
    np.testing.assert_array_equal(rule["counts"], [[3, 7], [2, 2]])
    assert rule["correct"] == 9
    assert list(temp.predict(pd.DataFrame({"temperature": [77.4, 77.5, 90]}))) == \
        ["yes", "no", "no"]


def _one_r_twin(values, codes, K, B):
    """Weka's two passes over a list of (upper boundary, counts), literally."""
    uniq = sorted(set(values))
    buckets = []
    for i, v in enumerate(uniq):
        counts = [0.0] * K
        for x, c in zip(values, codes, strict=True):
            if x == v:
                counts[c] += 1
        upper = (v + uniq[i + 1]) / 2 if i + 1 < len(uniq) else np.inf
        buckets.append([upper, counts])

    def major(c):
        return c.index(max(c))

    merged = []
    for b in buckets:
        if merged and (major(b[1]) == major(merged[-1][1])
                       or merged[-1][1][major(merged[-1][1])] < B):
            b = [b[0], [x + y for x, y in zip(merged.pop()[1], b[1], strict=True)]]
        merged.append(b)
    final = []
    for b in merged:
        if final and major(b[1]) == major(final[-1][1]):
            b = [b[0], [x + y for x, y in zip(final.pop()[1], b[1], strict=True)]]
        final.append(b)
    return [b[0] for b in final[:-1]], [b[1] for b in final]


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 2)), min_size=1, max_size=60),
       st.integers(1, 7))
def test_one_r_buckets_match_their_twin(cases, B):
    values = np.array([v for v, _ in cases], dtype=float)
    codes = np.array([c for _, c in cases])
    from treelearn.ensemble._baselines import numeric_rule

    breaks, counts = numeric_rule(values, codes, np.ones(codes.size), 3, B)
    tb, tc = _one_r_twin(list(values), list(codes), 3, B)
    np.testing.assert_allclose(breaks, tb)
    np.testing.assert_allclose(counts, tc)


def test_one_r_missing_values_are_a_value_of_their_own():
    x = np.array([1, 2, 3, 4, 5, 6, np.nan, np.nan, np.nan, 7, 8, 9], dtype=float)
    y = np.array([0, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1])
    one_r = tl.OneRClassifier(min_bucket_size=2).fit(x[:, None], y)
    rule = one_r.rules_[0]
    np.testing.assert_array_equal(rule["missing"], [1, 2])
    assert rule["correct"] == 11  # 6 + 3 intervals, 2 of 3 missing
    assert list(one_r.predict([[np.nan], [2.0], [8.0]])) == [1, 0, 1]
    assert "\t?\t-> 1" in one_r.export_text()
    # never seen missing: the majority class
    one_r2 = tl.OneRClassifier().fit(x[~np.isnan(x)][:, None], y[~np.isnan(x)])
    assert one_r2.predict([[np.nan]])[0] == 0
    np.testing.assert_allclose(one_r2.predict_proba([[np.nan]]), [[1.0, 0.0]])


def test_one_r_and_the_majority_class_in_a_text_pipeline():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    docs = ["good fun", "great fun", "bad", "awful bad", "good good", "bad fun", "great",
            "awful"]
    labels = np.array([1, 1, 0, 0, 1, 0, 1, 0])
    pipe = make_pipeline(CountVectorizer(analyzer="char"), tl.OneRClassifier(min_bucket_size=1))
    pipe.fit(docs, labels)
    assert pipe.score(docs, labels) >= 0.75
    base = tl.MajorityClassifier().fit(np.zeros((8, 1)), labels, sample_weight=[2] + [1] * 7)
    assert base.predict([[0.0]])[0] == 1
    np.testing.assert_allclose(base.class_prior_, [4 / 9, 5 / 9])


# -- model files -------------------------------------------------------------------------------

def _fitted_models():
    X, y = _classification(300)
    Xt, yt = _table(300)
    Xr, yr = _regression(300)
    return [
        (tl.RandomForestClassifier(n_estimators=4, oob_score=True, random_state=0), X, y),
        (tl.RandomForestRegressor(n_estimators=3, splitter="hist", random_state=0), Xr, yr),
        (tl.RandomForestClassifier(n_estimators=3, splitter="hist", random_state=0), Xt, yt),
        (tl.ExtraTreesClassifier(n_estimators=3, random_state=0), X, y),
        (tl.BaggingClassifier(tl.C45Classifier(), n_estimators=3, max_features=2,
                              random_state=0), Xt, yt),
        (tl.BaggingRegressor(n_estimators=2, random_state=0), Xr, yr),
        (tl.AdaBoostClassifier(n_estimators=5, random_state=0), Xt, yt),
        (tl.OneRClassifier(), Xt, yt),
        (tl.MajorityClassifier(), X, y),
    ]


@pytest.mark.parametrize("case", range(9))
def test_ensembles_survive_a_model_file(tmp_path, case):
    est, X, y = _fitted_models()[case]
    est.fit(X, y)
    path = tl.save(est, tmp_path / "m.tlm", info={"case": case})
    back, meta = tl.io.load_with_metadata(path)
    assert type(back) is type(est) and meta["info"] == {"case": case}
    method = "predict_proba" if hasattr(est, "predict_proba") else "predict"
    np.testing.assert_array_equal(getattr(back, method)(X), getattr(est, method)(X))
    if hasattr(est, "estimators_"):
        assert meta["summary"]["n_trees"] == len(est.estimators_)
        for a, b in zip(est.estimators_, back.estimators_, strict=True):
            assert a.tree_ == b.tree_ and a.random_state == b.random_state
        np.testing.assert_array_equal(back.apply(X) if hasattr(back, "apply") else 0,
                                      est.apply(X) if hasattr(est, "apply") else 0)
    if hasattr(est, "oob_score_"):
        assert back.oob_score_ == est.oob_score_
        for m1, m2 in zip(est.oob_masks(), back.oob_masks(), strict=True):
            np.testing.assert_array_equal(m1, m2)
    import zipfile

    # one set of node arrays for all members' trees (a tree kept before pruning: its own)
    unpruned = sum("unpruned_tree_" in vars(m) for m in getattr(est, "estimators_", []))
    with zipfile.ZipFile(path) as zf:
        assert len(zf.namelist()) < 50 + 14 * unpruned


def test_a_damaged_ensemble_file_is_a_model_file_error(tmp_path):
    import json
    import zipfile

    est, X, y = _fitted_models()[4]
    path = tl.save(est.fit(X, y), tmp_path / "m.tlm")

    def rewrite(edit):
        with zipfile.ZipFile(path) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        meta = json.loads(members["model.json"])
        edit(meta)
        members["model.json"] = json.dumps(meta).encode()
        bad = tmp_path / "bad.tlm"
        with zipfile.ZipFile(bad, "w") as zf:
            for n, data in members.items():
                zf.writestr(n, data)
        return bad

    def drop_member(meta):
        meta["fitted"]["estimators_"]["each"].pop()

    def wrong_estimator(meta):
        meta["params"]["estimator"] = "LogisticRegression"

    def bad_columns(meta):
        meta["fitted"]["estimators_features_"]["items"].pop()

    def bad_counts(meta):
        meta["fitted"]["estimators_"]["trees"]["n_classes"] = 0

    for edit, msg in ((drop_member, "members but"), (wrong_estimator, "parameters"),
                      (bad_columns, "estimators_features_"), (bad_counts, "n_classes")):
        with pytest.raises(tl.io.ModelFileError, match=msg):
            tl.load(rewrite(edit))

    # a forest's bootstrap description with values of the wrong type (fuzz case 184252 of
    # tools/fuzz_model_files.py: an array where a count belongs) is a written check, not the
    # loader's last-resort conversion of an unforeseen exception
    est, X, y = _fitted_models()[0]
    path = tl.save(est.fit(X, y), tmp_path / "m.tlm")
    items = {"$type": "list", "items": [4, 4], "as_array": True}  # an object array
    for key, value, msg in (("n_features", items, "training rows or features"),
                            ("n_features", 5, "training rows or features"),
                            ("n_train", "300", "training rows or features"),
                            ("n_draws", items, "n_draws"),
                            ("base_w", 1.5, "base_w")):
        def edit(meta, key=key, value=value):
            meta["fitted"]["_sampling"]["items"] = [
                [k, value if k == key else v] for k, v in meta["fitted"]["_sampling"]["items"]]
        with pytest.raises(tl.io.ModelFileError, match=msg) as info:
            tl.load(rewrite(edit))
        assert info.value.__cause__ is None, key


# -- reading an ensemble -------------------------------------------------------------------------

def test_oob_error_curve_and_permutation_importances():
    X, y = _classification(400)
    est = tl.RandomForestClassifier(n_estimators=25, oob_score=True, random_state=0).fit(X, y)
    curve = est.oob_error_curve(X, y)
    assert curve.shape == (25,)
    assert curve[-1] == pytest.approx(1 - est.oob_score_)
    assert curve[-1] < curve[0]  # more trees, fewer out-of-bag errors
    Xr, yr = _regression(300)
    reg = tl.RandomForestRegressor(n_estimators=30, oob_score=True, random_state=0).fit(Xr, yr)
    assert reg.oob_error_curve(Xr, yr)[-1] == pytest.approx(
        np.mean((reg.oob_prediction_ - yr) ** 2))
    # Breiman's importances: a pure noise column is worth nothing, an informative one much
    Xn = np.column_stack([X, np.random.default_rng(0).normal(size=len(y))])
    est2 = tl.RandomForestClassifier(n_estimators=15, random_state=0).fit(Xn, y)
    imp = est2.oob_permutation_importances(Xn, y, n_repeats=2)
    assert imp.shape == (9,) and abs(imp[-1]) < 0.02 and imp.max() > 0.05
    with pytest.raises(ValueError, match="need the training data"):
        est.oob_error_curve(X[:10], y[:10])
    with pytest.raises(ValueError, match="bootstrap=True"):
        tl.ExtraTreesClassifier(n_estimators=3).fit(X, y).oob_error_curve(X, y)


def test_pictures_and_readers_of_an_ensemble():
    import matplotlib

    matplotlib.use("Agg")
    X, y = _classification(300)
    est = tl.RandomForestClassifier(n_estimators=8, random_state=0).fit(X, y)
    ax = tl.export.plot_oob_error(est, X, y)
    assert ax.get_xlabel() == "number of trees" and len(ax.lines[0].get_xdata()) == 8
    ax = tl.export.plot_feature_importances(est, X, y, kind="both")
    assert len(ax.get_yticklabels()) == 8
    with pytest.raises(TypeError, match="holds 8: pass one of them"):
        tl.export_text(est)
    assert tl.export_text(est[3]) == tl.export_text(est.estimators_[3])
    assert len(est) == 8 and list(est)[0] is est.estimators_[0]


@pytest.mark.jit_only
def test_an_interrupted_forest_fit_leaves_the_forest_as_it_was():
    import _thread
    import threading
    import time

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 12)).round(3)
    y = (X[:, 0] + rng.normal(size=len(X)) > 0).astype(int)
    for kw in ({"n_jobs": 2}, {"n_jobs": 1, "splitter": "hist"}):
        # 20,000 rows, not fewer: the hist fit compiles its all-threads node kernels only for
        # fits this large, and this test times the node loops' stop, not a compilation's (on
        # an empty cache the 200k fit would otherwise compile them for ~20 s; a signal Python
        # drops (taken inside a gc callback, as hypothesis installs) then waited for it)
        est = tl.RandomForestClassifier(n_estimators=3, random_state=0, **kw).fit(X[:20_000],
                                                                                 y[:20_000])
        before = dict(est.__dict__)
        est.set_params(n_estimators=60)
        timer = threading.Timer(0.3, _thread.interrupt_main)
        timer.start()
        t = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            est.fit(X, y)
        stopped = time.perf_counter() - t
        timer.join()
        # 0.45 s on an idle machine, 0.8-0.9 s beside two busy processes (CI runs its coverage
        # pass beside this one); waiting on the pool without a timeout took 1.2 s idle and
        # 3.0 s in CI (the simulated signal waited for a whole tree); ignoring it, over 10 s
        assert stopped < 0.3 + 2.5
        assert all(est.__dict__[k] is before[k] for k in before if k != "n_estimators")
        assert est.estimators_ is before["estimators_"]


def test_the_memory_estimate_follows_the_engine_the_trees_will_use():
    """Exact forests drawing few features grow with the ranked splitter, which needs no
    per-tree copy of sorted lists: their estimate is the ranked splitter's."""
    from treelearn.engine.build import fit_bytes, ranked_bytes

    X = np.zeros((10, 9), dtype=np.float32)
    likely = tl.RandomForestClassifier._ranked_likely
    tree = tl.DecisionTreeClassifier
    assert likely(tree(max_features="sqrt"), X, 9)
    assert not likely(tree(max_features=4), X, 9)  # more than a third
    assert not likely(tree(max_features="sqrt", splitter="hist"), X, 9)
    assert not likely(tree(max_features="sqrt", max_leaf_nodes=8), X, 9)
    assert not likely(tree(max_features="sqrt"), pd.DataFrame(X), 9)  # may hold categories
    assert not likely(tree(max_features=20), X, 9)  # invalid: the fit says so later
    n, p = 1_000_000, 40
    assert ranked_bytes(n, p, 2, 2) < (fit_bytes(n, p, "best", 2, True) * 3) / 3


def test_a_forest_too_big_for_the_memory_limit_says_so(monkeypatch):
    from treelearn import _memory

    X = np.broadcast_to(np.float32(0.5), (3_000_000, 40))
    y = np.zeros(3_000_000)
    monkeypatch.setenv(_memory.ENV, "1G")
    with pytest.raises(MemoryError, match=r"RandomForestClassifier\(splitter='best', n_jobs=2\)"
                                          r" on 3,000,000 rows x 40 features needs about"):
        tl.RandomForestClassifier(n_jobs=2).fit(X, y)
    with pytest.raises(MemoryError, match="Fewer threads"):
        tl.RandomForestClassifier(n_jobs=2).fit(X, y)


def test_a_forest_of_packed_and_unpacked_trees_keeps_every_tree():
    """A fit drops each tree it packs into stored records and rebuilds it when the packs are
    not joined (here some trees split the category column into subsets, which the records do
    not store): every member is then the tree a single fit on its bootstrap grows."""
    from treelearn.ensemble._forest import bootstrap_counts

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": pd.Categorical(rng.choice(list("pqrstu"), n))})
    y = (X.a + X.c.isin(["p", "r", "t"]) + rng.normal(0, 0.5, n) > 0.5).astype(int)
    forest = tl.RandomForestClassifier(n_estimators=8, max_features=1, max_depth=1,
                                       random_state=0, n_jobs=2).fit(X, y)
    assert not forest._packed.stored
    kinds = set()
    for member in forest.estimators_:
        w = bootstrap_counts(member.random_state, n, n, None).astype(float)
        alone = tl.DecisionTreeClassifier(max_features=1, max_depth=1,
                                          random_state=member.random_state).fit(X, y, w)
        assert member.tree_ == alone.tree_
        kinds.add(bool(np.any(alone.tree_.cat_ptr[1:] > alone.tree_.cat_ptr[:-1])))
    assert kinds == {True, False}  # both kinds of trees, so both ways of keeping them
    mean = np.mean([m.predict_proba(X) for m in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(X), mean, rtol=1e-12)


class _FreshScratch:
    """engine.scratch.Scratch that never reuses: every array new and filled with garbage
    (a kernel reading what it did not write then differs from the reusing forest)."""

    def take(self, key, shape, dtype):
        a = np.empty(shape, dtype=dtype)
        a.view(np.uint8)[...] = 0xA5
        return a

    def give(self, key, a):
        pass


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["best", "hist"]),
       st.sampled_from(["sqrt", 1.0]), st.booleans(), st.booleans())
def test_trees_grown_on_reused_buffers_are_the_trees_grown_alone(seed, splitter, mf, regress,
                                                                 cat):
    """A forest's thread reuses its node tables and sort buffers from one tree to the next
    (engine.scratch): each member is the tree grown on new buffers full of garbage, and
    (exact splitters) the tree a single fit on its bootstrap grows; over tables with holes,
    weights, and the ranked, presorted and binned layouts (max_features "sqrt" of 9
    features ranks, all of them presorts); with a category column (``cat``) the trees that
    split it into subsets are kept as trees, not in packed records."""
    from treelearn.engine.build import Shared
    from treelearn.ensemble._forest import bootstrap_counts

    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 250))
    X = np.round(rng.normal(size=(n, 9)), int(rng.integers(0, 3)))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = X[:, 0] * 2 + np.nan_to_num(X[:, 1]) + rng.normal(size=n)
    y = np.nan_to_num(y)
    sw = rng.integers(1, 4, n).astype(float)
    kw = {}
    if cat:
        X[:, 8] = rng.integers(0, 5, n)
        y = y + np.isin(X[:, 8], [1, 3])
        kw = {"categorical_features": [8]}
    if regress:
        cls, single = tl.RandomForestRegressor, tl.DecisionTreeRegressor
    else:
        y = (y > 0).astype(int)
        cls, single = tl.RandomForestClassifier, tl.DecisionTreeClassifier
    params = dict(n_estimators=4, max_features=mf, splitter=splitter, n_jobs=1,
                  random_state=seed, **kw)
    forest = cls(**params).fit(X, y, sw)
    field = Shared.__dataclass_fields__["scratch"]
    reusing = field.default_factory
    try:
        field.default_factory = _FreshScratch
        fresh = cls(**params).fit(X, y, sw)
    finally:
        field.default_factory = reusing
    for member, other in zip(forest.estimators_, fresh.estimators_, strict=True):
        assert member.tree_ == other.tree_
        if splitter == "hist":  # a single tree bins its own rows, the forest all of them
            continue
        w = bootstrap_counts(member.random_state, n, n, sw) * 1.0
        alone = single(max_features=mf, splitter=splitter, random_state=member.random_state,
                       **kw).fit(X, y, w)
        assert member.tree_ == alone.tree_


def test_a_pack_adds_given_values_of_another_width_than_the_trees():
    """AdaBoost packs its weighted votes: values of their own width, not the trees'."""
    X, y = _classification(200, 5, 3)
    trees = [tl.DecisionTreeClassifier(max_depth=4, random_state=k).fit(X, y).tree_
             for k in range(3)]
    votes = [np.arange(t.node_count, dtype=float)[:, None] * (k + 1)
             for k, t in enumerate(trees)]
    packed = PackedForest(trees, values=votes)
    assert packed.binary and packed.n_values == 1
    Xt = X[:17].astype(np.float32)
    want = sum(v[t.apply(Xt)] for t, v in zip(trees, votes, strict=True))
    np.testing.assert_array_equal(packed.sum(Xt), want)


def test_ensembles_fit_their_members_only_through_the_member_interface():
    """Forests, bagging, boosting, the baselines and the Dask trees reach the estimators'
    fitting steps through treelearn._members, not their private methods."""
    import ast
    from pathlib import Path

    import treelearn

    private = {"_fit_encoded", "_encode_target", "_validate_table", "_criteria", "_Shared",
               "_resolve"}
    root = Path(treelearn.__file__).parent
    found = []
    for f in sorted([*root.glob("ensemble/*.py"), *root.glob("dask/*.py")]):
        for node in ast.walk(ast.parse(f.read_text())):
            names = ([node.attr] if isinstance(node, ast.Attribute) else
                     [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{f.name}: {n}" for n in names if n in private]
    assert found == []
