"""Model trees (M5): the SDR criterion, leaf models from sufficient statistics against
refits with lstsq, attribute dropping, pruning, smoothing, and the estimators."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import (
    m5_factor,
    naive_m5_routing,
    naive_m5_sdr,
    naive_node_model,
    naive_smoothed_prediction,
)

import treelearn as tl
from treelearn.engine.criteria import SDR, proxy_two, split_proxy
from treelearn.engine.linear import (
    EST_M5,
    EST_WEKA,
    fit_node_models,
    postorder,
    preorder,
    row_ranges,
    smooth_leaves,
)
from treelearn.io import ModelFileError
from treelearn.model_trees import average_missing_branches, target_replay


def _one_node(X, y, w, *, drop=True, est=EST_M5, alpha=0.0):
    """The kernel's model of a single node holding every row (centred as fit centres)."""
    n, q = X.shape
    mu = (w @ X) / w.sum()
    ybar = float(w @ y / w.sum())
    Xc = np.ascontiguousarray(X - mu)
    bp = np.zeros(2, dtype=np.intp)
    bc = np.zeros(0, dtype=np.intp)
    rows = np.arange(n, dtype=np.int64)
    coef, icpt, _, model_est, _ = fit_node_models(
        Xc, y - ybar, w, rows, np.zeros(1, dtype=np.int64), np.full(1, n, dtype=np.int64),
        np.zeros(1, dtype=np.int64), bp, bc, np.array([n], dtype=np.int64),
        np.ones((1, q), dtype=np.bool_), alpha, est, drop, True, 4)
    b = coef[0]
    return b, ybar + icpt[0] - float(b @ mu), model_est[0]


# -- the criterion -------------------------------------------------------------------------------


def _sdr(y):
    return float(np.std(y))


def test_sdr_proxies_agree_and_pick_the_split_of_largest_standard_deviation_reduction():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (60, 2)).astype(np.float32)
    # skewed noise: here the variance-reducing split and the SD-reducing one differ
    y = np.where(X[:, 0] < 0.5, 0.0, 1.0) + rng.exponential(1.0, 60) ** 2
    best = (-np.inf, None, None)
    for f in range(2):
        xs = np.unique(X[:, f])
        for a, b in zip(xs[:-1], xs[1:], strict=True):
            thr = (np.float64(a) + np.float64(b)) / 2
            left = X[:, f] <= thr
            red = _sdr(y) - left.mean() * _sdr(y[left]) - (~left).mean() * _sdr(y[~left])
            if red > best[0] + 1e-12:
                best = (red, f, thr)
    tree = tl.DecisionTreeRegressor(criterion="sdr", max_depth=1).fit(X, y).tree_
    assert (tree.feature[0], tree.threshold[0]) == (best[1], pytest.approx(best[2]))
    for l0, l1, wl in [(3.0, 5.0, 2.0), (10.0, 60.0, 4.0)]:
        r0, r1, wr = 2.0, 9.0, 3.0
        a = proxy_two(l0, l1, wl, r0, r1, wr, SDR)
        b = split_proxy(np.array([l0, l1]), np.array([r0, r1]), wl, wr, SDR, 0.0)
        assert a == b
        def sd(s0, s1, w):
            return (w * math.sqrt(max(s1 / w - (s0 / w) ** 2, 0.0)))
        assert a == pytest.approx(-(sd(l0, l1, wl) + sd(r0, r1, wr)))
    sq = tl.DecisionTreeRegressor(max_depth=1).fit(X, y).tree_
    assert (sq.feature[0], sq.threshold[0]) != (tree.feature[0], tree.threshold[0])


def test_min_sd_fraction_stops_nodes_whose_deviation_is_small():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y = np.where(X[:, 0] < 0.5, 0.0, 10.0) + rng.normal(0, 0.1, 400)
    tree = tl.DecisionTreeRegressor(min_sd_fraction=0.05).fit(X, y).tree_
    # the root's sd is ~5; its children's ~0.1 < 0.25: they are leaves
    assert tree.node_count == 3
    assert tl.DecisionTreeRegressor().fit(X, y).tree_.node_count > 3


# -- one node's model ----------------------------------------------------------------------------


def test_hand_example_of_the_estimate_and_of_attribute_dropping():
    # Least squares of y on x: xbar = ybar = 3.5, Sxx = 17.5, Sxy = 15.5, b = 0.885714,
    # a = 3.5 - 3.5 b = 0.4. Residuals -0.285714, 0.828571, -1.057143, 1.057143,
    # -0.828571, 0.285714: mean |res| = 4.342857 / 6 = 0.723810; v = 2 parameters, so the
    # estimate is 0.723810 * (6 + 2) / (6 - 2) = 1.447619. The constant model: mean
    # |y - 3.5| = 9 / 6 = 1.5, times (6 + 1) / (6 - 1) = 1.4: 2.1 > 1.447619, x is kept.
    x = np.array([1, 2, 3, 4, 5, 6], dtype=float)
    y = np.array([1, 3, 2, 5, 4, 6], dtype=float)
    w = np.ones(6)
    b, a, est = _one_node(x[:, None], y, w)
    assert b[0] == pytest.approx(0.885714, abs=1e-6)
    assert a == pytest.approx(0.4, abs=1e-12)
    assert est == pytest.approx(4.342857 / 6 * 2.0, abs=1e-6)
    # a second column z, nearly useless: with it v = 3 and the factor is (6 + 3) / (6 - 3)
    z = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    X2 = np.column_stack([x, z])
    A = np.column_stack([np.ones(6), x, z])
    res = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    assert np.abs(res).mean() * 3.0 > 1.447619  # so z is dropped and the x model remains
    b2, a2, est2 = _one_node(X2, y, w)
    assert b2[1] == 0.0 and b2[0] == pytest.approx(0.885714, abs=1e-6)
    assert est2 == pytest.approx(est)
    # without dropping, both stay
    b3, _, est3 = _one_node(X2, y, w, drop=False)
    assert b3[1] != 0.0 and est3 == pytest.approx(np.abs(res).mean() * 3.0)
    assert m5_factor(6, 2, 1.0) == 2.0 and m5_factor(3, 3, 1.0) == 10.0


@settings(max_examples=60, deadline=None)
@given(st.integers(6, 60), st.integers(1, 4), st.integers(0, 2**31 - 1),
       st.sampled_from(["m5", "weka"]), st.booleans())
def test_a_node_model_equals_the_lstsq_twin(n, q, seed, estimate, weighted):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q))
    y = X @ (rng.normal(size=q) * rng.integers(0, 2, q)) + rng.normal(size=n)
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    code = EST_M5 if estimate == "m5" else EST_WEKA
    b, a, est = _one_node(X, y, w, est=code)
    S, bn, an, en = naive_node_model(X, y, w, list(range(q)), estimate=estimate)
    dense = np.zeros(q)
    dense[S] = bn
    np.testing.assert_allclose(b, dense, rtol=1e-7, atol=1e-9)
    assert a == pytest.approx(an, rel=1e-7, abs=1e-9)
    assert est == pytest.approx(en, rel=1e-7)


def test_collinear_and_constant_columns_fall_back_to_a_smaller_model():
    rng = np.random.default_rng(1)
    x = rng.normal(size=50)
    X = np.column_stack([x, 2.0 * x, np.full(50, 3.0)])
    y = 1.5 * x + rng.normal(0, 0.1, 50)
    b, a, _ = _one_node(X, y, np.ones(50), drop=False)
    # one of the twins and no constant column: the same fit as lstsq on x alone
    A = np.column_stack([np.ones(50), x])
    ref = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(a + X @ b, A @ ref, rtol=1e-9, atol=1e-9)
    assert b[2] == 0.0 and np.count_nonzero(b) == 1


# -- smoothing -----------------------------------------------------------------------------------


def test_smoothing_hand_example():
    # leaf p = 2 + 1 x with n = 10 cases, parent q = 4 + 0 x, k = 15:
    # (10 (2 + x) + 15 * 4) / 25 = 3.2 + 0.4 x
    coef = np.array([[0.0], [1.0]])
    icpt = np.array([4.0, 2.0])
    parent = np.array([-1, 0])
    out, out_i = smooth_leaves(coef, icpt, parent, np.array([30, 10]), np.array([1]), 15.0)
    assert out[0, 0] == pytest.approx(0.4) and out_i[0] == pytest.approx(3.2)
    out, out_i = smooth_leaves(coef, icpt, parent, np.array([30, 10]), np.array([1]), 0.0)
    assert out[0, 0] == 1.0 and out_i[0] == 2.0


def test_smoothing_folded_into_the_leaves_equals_smoothing_on_the_path():
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, (600, 3))
    y = np.where(X[:, 0] < 0.5, 4 * X[:, 1], 2 - X[:, 2]) + rng.normal(0, 0.1, 600)
    tree = tl.DecisionTreeRegressor(max_depth=4).fit(X, y).tree_
    w = np.ones(600)
    mu = X.mean(axis=0)
    Xc = np.ascontiguousarray(X - mu)
    yc = y - y.mean()
    leaf = tree.apply(X)
    order, size = preorder(tree.branch_ptr, tree.branch_child)
    rows, lo, hi = row_ranges(leaf.astype(np.int64), order, size)
    attr = np.ones((tree.node_count, 3), dtype=np.bool_)
    coef, icpt, _, _, _ = fit_node_models(
        Xc, yc, w, rows, lo, hi, postorder(tree.branch_ptr, tree.branch_child),
        tree.branch_ptr, tree.branch_child, tree.n_node_samples.astype(np.int64), attr, 0.0,
        EST_M5, True, False, 64)
    parent = tree.node_parents()
    leaves = np.flatnonzero(tree.children_left == -1)
    out, out_i = smooth_leaves(coef, icpt, parent, tree.n_node_samples, leaves, 15.0)
    for t, node in enumerate(leaves):
        path = [node]
        while parent[path[-1]] >= 0:
            path.append(parent[path[-1]])
        models = [(icpt[i], coef[i]) for i in path]
        counts = [tree.n_node_samples[i] for i in path]
        for x in Xc[leaf == node][:5]:
            want = naive_smoothed_prediction(models, counts, x, 15.0)
            assert out_i[t] + float(out[t] @ x) == pytest.approx(want, rel=1e-12, abs=1e-12)


# -- the estimators ------------------------------------------------------------------------------


def test_leaf_models_equal_lstsq_on_each_leafs_rows():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, (800, 4))
    y = np.where(X[:, 0] < 0.5, 3 * X[:, 1] - X[:, 0], 2 + X[:, 2]) + rng.normal(0, 0.1, 800)
    m = tl.DecisionTreeRegressor(max_depth=3, linear_leaves=True, linear_features="path",
                                 smoothing=0, drop_attributes=False).fit(X, y)
    tree = m.tree_
    leaf = m.apply(X)
    pred = m.predict(X)
    parent = tree.node_parents()
    for node in np.flatnonzero(tree.children_left == -1):
        feats = set()
        i = node
        while parent[i] >= 0:
            i = parent[i]
            feats.add(int(tree.feature[i]))
        rows = leaf == node
        A = np.column_stack([np.ones(rows.sum())] + [X[rows, f] for f in sorted(feats)])
        ref = A @ np.linalg.lstsq(A, y[rows], rcond=None)[0]
        # X as the tree reads it: float32
        np.testing.assert_allclose(pred[rows], ref, rtol=0, atol=1e-5)
        assert set(tree.leaf_model(node)[1].tolist()) == feats


def test_m5_extrapolates_a_linear_trend_that_a_constant_tree_cannot():
    rng = np.random.default_rng(0)
    noise = 0.1
    x = rng.uniform(0, 1, 2000)
    y = 3 * x + rng.normal(0, noise, 2000)
    xt = np.linspace(1, 1.2, 500)
    m5 = tl.M5Regressor().fit(x[:, None], y)
    cart = tl.CARTRegressor(random_state=0).fit(x[:, None], y)
    rmse = float(np.sqrt(np.mean((m5.predict(xt[:, None]) - 3 * xt) ** 2)))
    rmse_cart = float(np.sqrt(np.mean((cart.predict(xt[:, None]) - 3 * xt) ** 2)))
    assert rmse < 2 * noise < rmse_cart
    assert m5.tree_.n_leaves == 1  # one line, no split survives pruning


def test_m5_on_piecewise_linear_data_needs_few_leaves():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (3000, 3))
    def f(X):
        return (np.where(X[:, 1] > 0.5, 2 + 3 * X[:, 0], -X[:, 0] + X[:, 2]))
    y = f(X) + rng.normal(0, 0.1, 3000)
    Xt = rng.uniform(0, 1, (2000, 3))
    m5 = tl.M5Regressor().fit(X, y)
    cart = tl.CARTRegressor(random_state=0).fit(X, y)
    def err(m):
        return (float(np.sqrt(np.mean((m.predict(Xt) - f(Xt)) ** 2))))
    assert err(m5) < err(cart)
    assert 5 * m5.tree_.n_leaves <= cart.tree_.n_leaves
    assert m5.tree_.n_leaves <= 3  # two pieces (one extra split measured)


def test_each_step_can_be_switched_off():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (500, 3))
    y = 3 * X[:, 0] + np.where(X[:, 1] > 0.5, 2.0, 0.0) + rng.normal(0, 0.1, 500)
    full = tl.M5Regressor().fit(X, y)
    unpruned = tl.M5Regressor(prune=None).fit(X, y)
    assert unpruned.tree_.n_leaves == full.unpruned_tree_.n_leaves > full.tree_.n_leaves
    rough = tl.M5Regressor(smoothing=0).fit(X, y)
    assert rough.tree_.n_leaves == full.tree_.n_leaves
    assert not np.allclose(rough.predict(X), full.predict(X))
    weka = tl.M5Regressor(linear_estimate="weka").fit(X, y)
    assert np.isfinite(weka.predict(X)).all()
    plain = tl.M5Regressor(smoothing=0, drop_attributes=False).fit(X, y)
    ridge = tl.M5Regressor(smoothing=0, drop_attributes=False, prune=None,
                           linear_features="path", ridge_alpha=1.0).fit(X, y)
    base = tl.M5Regressor(smoothing=0, drop_attributes=False, prune=None,
                          linear_features="path").fit(X, y)
    assert np.abs(ridge.tree_.lin_coef).sum() < np.abs(base.tree_.lin_coef).sum()
    assert plain.tree_.lin_coef.size >= rough.tree_.lin_coef.size


def test_missing_values_in_a_leaf_model_read_the_leafs_mean():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (400, 2))
    y = 2 * X[:, 0] + X[:, 1] + rng.normal(0, 0.05, 400)
    X[rng.random(400) < 0.1, 1] = np.nan
    m = tl.M5Regressor().fit(X, y)
    tree = m.tree_
    Xt = np.array([[0.3, np.nan], [0.8, np.nan]])
    leaf = m.apply(Xt)
    for r in range(2):
        icpt, feats, coefs, fills = tree.leaf_model(leaf[r])
        x = np.where(np.isnan(Xt[r]), 0.0, Xt[r]).astype(np.float32).astype(float)
        want = icpt
        for f, c, fill in zip(feats, coefs, fills, strict=True):
            want = want + c * (fill if np.isnan(Xt[r, f]) else x[f])
        assert m.predict(Xt[r:r + 1])[0] == pytest.approx(want, rel=1e-12)
        if 1 in feats.tolist():
            # the leaf's training rows: as M5' routed them (by the target), not as apply would
            rows = target_replay(tree, X.astype(np.float32), y, np.ones(len(y)))[0] == leaf[r]
            known = ~np.isnan(X[:, 1]) & rows
            k = feats.tolist().index(1)
            assert fills[k] == pytest.approx(X[known, 1].astype(np.float32).mean(), rel=1e-6)


def test_awkward_data_gives_finite_documented_fallbacks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    const = tl.M5Regressor().fit(X, np.full(40, 7.0))
    assert const.tree_.n_leaves == 1 and np.all(const.predict(X) == 7.0)
    one = tl.M5Regressor().fit(X[:1], [2.5])
    assert one.predict(X).tolist() == [2.5] * 40
    # more attributes than cases in every leaf: smaller models, down to the constant
    Xw = rng.normal(size=(6, 10))
    yw = rng.normal(size=6)
    wide = tl.DecisionTreeRegressor(linear_leaves=True, linear_features="path",
                                    max_depth=1).fit(Xw, yw)
    assert np.isfinite(wide.predict(rng.normal(size=(20, 10)))).all()
    for node in np.flatnonzero(wide.tree_.children_left == -1):
        assert wide.tree_.leaf_model(node)[1].size < wide.tree_.n_node_samples[node]
    dup = np.column_stack([X[:, 0], X[:, 0], X[:, 1]])
    yd = dup[:, 0] + rng.normal(0, 0.01, 40)
    assert np.isfinite(tl.M5Regressor().fit(dup, yd).predict(dup)).all()


def test_bad_parameters_are_named():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="linear_leaves=True"):
        tl.DecisionTreeRegressor(prune="m5").fit(X, y)
    with pytest.raises(ValueError, match='missing="c45"'):
        tl.M5Regressor(missing="c45").fit(X, y)
    with pytest.raises(ValueError, match="smoothing"):
        tl.M5Regressor(smoothing=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="linear_features"):
        tl.M5Regressor(linear_features="all").fit(X, y)
    with pytest.raises(ValueError, match="min_sd_fraction"):
        tl.M5Regressor(min_sd_fraction=1.5).fit(X, y)
    with pytest.raises(ValueError, match="defined for classification"):
        tl.M5Regressor(prune="pessimistic").fit(X, y)


def test_rows_of_weight_zero_take_no_part():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (300, 2))
    y = 2 * X[:, 0] + rng.normal(0, 0.1, 300)
    w = np.ones(300)
    w[:50] = 0.0
    a = tl.M5Regressor().fit(X, y, sample_weight=w)
    b = tl.M5Regressor().fit(X[50:], y[50:])
    assert a.tree_ == b.tree_


def test_model_files_keep_the_leaf_models_and_refuse_broken_ones(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    y = 3 * X[:, 0] + np.where(X[:, 1] > 0.5, 2.0, 0.0) + rng.normal(0, 0.1, 300)
    m = tl.M5Regressor().fit(X, y)
    path = tl.save(m, tmp_path / "m5.tlm")
    back = tl.load(path)
    assert back.tree_ == m.tree_ and back.tree_.has_linear_leaves
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    t = m.tree_
    with pytest.raises(ValueError, match="feature is out of range"):
        tl.Tree(t.n_features, t.n_classes, t.children_left, t.children_right, t.feature,
                t.threshold, t.impurity, t.n_node_samples, t.weighted_n_node_samples, t.value,
                lin_ptr=t.lin_ptr, lin_feature=t.lin_feature + 10, lin_coef=t.lin_coef,
                lin_fill=t.lin_fill, lin_intercept=t.lin_intercept)
    with pytest.raises(ValueError, match="together"):
        tl.Tree(t.n_features, t.n_classes, t.children_left, t.children_right, t.feature,
                t.threshold, t.impurity, t.n_node_samples, t.weighted_n_node_samples, t.value,
                lin_ptr=t.lin_ptr)
    m.tree_.lin_coef = m.tree_.lin_coef.copy()
    m.tree_.lin_coef[0] = np.nan
    with pytest.raises((ValueError, ModelFileError)):
        tl.load(tl.save(m, tmp_path / "bad.tlm"))


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_linear_leaves_on_every_engine_including_tables(splitter):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 1500
    df = pd.DataFrame({"carat": rng.uniform(0.2, 2.5, n),
                       "cut": pd.Categorical(rng.choice(["Fair", "Good", "Ideal"], n)),
                       "depth": rng.normal(61, 1.5, n)})
    df.loc[rng.random(n) < 0.05, "depth"] = np.nan
    y = 4000 * df["carat"].to_numpy() + df["cut"].map({"Fair": 0, "Good": 300,
                                                       "Ideal": 800}).to_numpy(float) \
        + rng.normal(0, 100, n)
    m = tl.M5Regressor(splitter=splitter).fit(df, y)
    pred = m.predict(df)
    assert np.sqrt(np.mean((pred - y) ** 2)) < 130
    # M5's synthetic binaries: "cut among the levels of largest mean" for k - 1 cuts, here
    # one leaf (a line in carat, steps for cut) where a constant tree needs hundreds
    tree = m.tree_
    cut = list(df.columns).index("cut")
    assert tree.n_leaves <= 3
    node = int(np.flatnonzero(tree.children_left < 0)[0])
    terms = range(tree.lin_ptr[node], tree.lin_ptr[node + 1])
    sets = [tree.term_levels(t) for t in terms if tree.lin_feature[t] == cut]
    assert len(sets) == 2
    levels = list(m.categories_[cut])
    ones = sorted(tuple(sorted(levels[c] for c, o in zip(*lv, strict=True) if o)) for lv in sets)
    assert ones == [("Good", "Ideal"), ("Ideal",)]  # ordered by mean price: Fair < Good < Ideal
    Xt = df.iloc[:5].copy()
    Xt["cut"] = pd.Categorical([None, "Fair", "Good", "Ideal", None],
                               categories=["Fair", "Good", "Ideal"])
    assert np.isfinite(m.predict(Xt)).all()


@pytest.mark.jit_only  # 10,000 rows through generated code and SQL
def test_readers_print_and_export_the_leaf_models_exactly():
    pd = pytest.importorskip("pandas")
    import sqlite3

    rng = np.random.default_rng(7)
    n = 3000
    # float32 numbers, so that SQL (which has no float32) multiplies the same values
    a = rng.uniform(0, 2, n).astype(np.float32).astype(float)
    b = rng.normal(0, 1, n).astype(np.float32).astype(float)
    c = rng.choice(["x", "y", "z"], n)
    y = np.where(c == "x", 3 * a, 1 - a) + 0.5 * b + rng.normal(0, 0.05, n)
    df = pd.DataFrame({"a": a, "b": b, "c": c})
    df.loc[rng.random(n) < 0.05, "b"] = np.nan
    m = tl.M5Regressor().fit(df, y)
    tree = m.tree_
    assert tree.has_linear_leaves and tree.lin_coef.size > 0
    text = tl.export_text(m, target_name="price")
    assert "LM1: price = " in text and f"Linear models ({tree.n_leaves}):" in text
    assert "LM1: " in tl.export_rules(m) and "LM1: " in tl.export_graphviz(m)
    rows = pd.DataFrame({"a": rng.uniform(-0.5, 2.5, 10_000).astype(np.float32).astype(float),
                         "b": rng.normal(0, 1.5, 10_000).astype(np.float32).astype(float),
                         "c": rng.choice(["x", "y", "z"], 10_000)})
    rows.loc[rng.random(10_000) < 0.1, "b"] = np.nan
    pred = m.predict(rows)
    ns: dict = {}
    exec(tl.export_python(m), ns)
    got = np.array([ns["predict"](r) for r in rows.to_numpy(dtype=object).tolist()])
    np.testing.assert_array_equal(got, pred)
    con = sqlite3.connect(":memory:")
    rows.to_sql("data", con, index=False)
    out = con.execute(tl.export_sql(m, table="data")).fetchall()
    np.testing.assert_array_equal(np.array([r[0] for r in out]), pred)
    # the explorer's data names each leaf's model
    from treelearn.export.explorer import explorer_data
    data = explorer_data(m, df, y)
    leaves = np.flatnonzero(tree.children_left < 0)
    assert all(data["prediction"][i].startswith("LM") for i in leaves)


def test_the_picture_of_a_model_tree_against_a_constant_tree(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from treelearn.export import plot_fit_1d

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (300, 1))
    y = np.where(x[:, 0] < 0.5, 3 * x[:, 0], 2.5 - 2 * x[:, 0]) + rng.normal(0, 0.05, 300)
    m5 = tl.M5Regressor().fit(x, y)
    cart = tl.CARTRegressor(random_state=0).fit(x, y)
    ax = plot_fit_1d([m5, cart], x, y, extend=0.2)
    lines = ax.get_lines()
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].get_ydata(), m5.predict(lines[0].get_xdata()[:, None]))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"M5Regressor ({m5.tree_.n_leaves} leaves)" in legend
    ax.figure.savefig(tmp_path / "m5.png")
    with pytest.raises(ValueError, match="one feature"):
        plot_fit_1d(m5, np.zeros((3, 2)), np.zeros(3))


@pytest.mark.parametrize("n_values", [20, 200])
def test_the_histogram_engine_scores_sdr_as_the_exact_one(n_values):
    # one bin per distinct value: the histogram splitter must find the exact splitter's tree
    # (SDR needs the sums of squares, which squared error's histograms leave out)
    rng = np.random.default_rng(n_values)
    X = rng.integers(0, n_values, (3000, 4)).astype(np.float32)
    y = np.where(X[:, 0] > n_values / 2, 3.0, 0.0) + X[:, 1] / n_values \
        + rng.exponential(1.0, 3000) ** 2
    exact = tl.DecisionTreeRegressor(criterion="sdr", max_depth=6, random_state=0).fit(X, y)
    hist = tl.DecisionTreeRegressor(criterion="sdr", max_depth=6, splitter="hist",
                                    random_state=0).fit(X, y)
    np.testing.assert_allclose(hist.predict(X), exact.predict(X), rtol=1e-9)
    assert hist.tree_.node_count == exact.tree_.node_count


def test_readers_that_cannot_hold_leaf_models_refuse_them():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2))
    y = 3 * X[:, 0] + rng.normal(0, 0.1, 200)
    m = tl.M5Regressor().fit(X, y)
    with pytest.raises(ValueError, match="model tree"):
        tl.to_sklearn(m)
    with pytest.raises(ValueError, match="linear_leaves=True"):
        tl.BaggingRegressor(tl.M5Regressor(), n_estimators=2).fit(X, y)
    # an SDR tree with constant leaves converts, its impurities being variances
    sk = tl.to_sklearn(tl.DecisionTreeRegressor(criterion="sdr", max_depth=3).fit(X, y))
    np.testing.assert_array_equal(sk.predict(X.astype(np.float32)),
                                  tl.DecisionTreeRegressor(criterion="sdr", max_depth=3)
                                  .fit(X, y).predict(X))


def test_traversal_orders_equal_recursive_walks():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=400),
                       "c": pd.Categorical(rng.choice(list("pqrs"), 400))})
    y = rng.integers(0, 3, 400)
    trees = [tl.DecisionTreeRegressor(max_depth=6).fit(df[["a"]], rng.normal(size=400)).tree_,
             tl.C45Classifier(prune=None).fit(df, y).tree_]  # multiway nodes

    def walk(t, i, pre, post):
        pre.append(i)
        for c in t.children(i):
            walk(t, int(c), pre, post)
        post.append(i)

    for t in trees:
        pre, post = [], []
        walk(t, 0, pre, post)
        order, size = preorder(t.branch_ptr, t.branch_child)
        assert order.tolist() == pre
        assert postorder(t.branch_ptr, t.branch_child).tolist() == post
        assert size[0] == t.node_count


def test_broken_level_sets_of_linear_terms_are_named():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 600
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "c": pd.Categorical(rng.choice(list("pqr"), n))})
    y = 2 * df["a"].to_numpy() + df["c"].map({"p": 0.0, "q": 1.0, "r": 3.0}).to_numpy(float) \
        + rng.normal(0, 0.05, n)
    t = tl.M5Regressor().fit(df, y).tree_
    assert t.lin_set_code.size > 0
    base = dict(lin_ptr=t.lin_ptr, lin_feature=t.lin_feature, lin_coef=t.lin_coef,
                lin_fill=t.lin_fill, lin_intercept=t.lin_intercept)
    args = (t.n_features, t.n_classes, t.children_left, t.children_right, t.feature,
            t.threshold, t.impurity, t.n_node_samples, t.weighted_n_node_samples, t.value)
    kw = dict(branch_ptr=t.branch_ptr, branch_child=t.branch_child, cat_ptr=t.cat_ptr,
              cat_branch=t.cat_branch, missing_branch=t.missing_branch)
    sets = dict(lin_set_ptr=t.lin_set_ptr, lin_set_code=t.lin_set_code,
                lin_set_one=t.lin_set_one)
    with pytest.raises(ValueError, match="with the linear-leaf arrays"):
        tl.Tree(*args, **kw, **sets)
    with pytest.raises(ValueError, match="must be given together"):
        tl.Tree(*args, **kw, **base, lin_set_ptr=t.lin_set_ptr)
    with pytest.raises(ValueError, match="not a valid CSR pointer over the level sets"):
        tl.Tree(*args, **kw, **base, **{**sets, "lin_set_ptr": t.lin_set_ptr[:-1]})
    with pytest.raises(ValueError, match="differ in length"):
        tl.Tree(*args, **kw, **base, **{**sets, "lin_set_one": t.lin_set_one[:-1]})
    with pytest.raises(ValueError, match="negative"):
        tl.Tree(*args, **kw, **base, **{**sets, "lin_set_code": t.lin_set_code - 10})
    assert tl.Tree(*args, **kw, **base, **sets) == t


# -- M5′'s missing values --------------------------------------------------------------------


def test_m5_missing_values_hand_example():
    # Witten & Frank, Data Mining, 6.5: a case with an unknown value goes to the branch of the
    # larger mean when its target is above the average of the two means; at prediction the
    # unknown value is the node's average. Known: x = 1, 2, 3 (y = 0) and 10, 11, 13 (y = 10);
    # unknown x with y = 9 (above the midpoint 5: right) and y = 2 (left).
    X = np.array([[1], [2], [3], [10], [11], [13], [np.nan], [np.nan]], dtype=np.float32)
    y = np.array([0, 0, 0, 10, 10, 10, 9, 2], dtype=float)
    m = tl.DecisionTreeRegressor(missing="m5", max_depth=1).fit(X, y)
    tree = m.tree_
    assert tree.threshold[0] == pytest.approx(6.5)
    assert tree.n_node_samples.tolist() == [8, 4, 4]
    assert tree.value[1:, 0, 0].tolist() == [0.5, 9.75]  # (0+0+0+2)/4, (10+10+10+9)/4
    # the average known x is 40/6 = 6.67 > 6.5: an unknown value goes right
    assert tree.missing_branch[0] == 1
    assert m.predict(np.array([[np.nan]]))[0] == 9.75
    # "learn" sends both unknown cases one way (the side that scores best)
    learn = tl.DecisionTreeRegressor(missing="learn", max_depth=1).fit(X, y).tree_
    assert sorted(learn.n_node_samples[1:].tolist()) in ([3, 5], [2, 6])


def test_m5_split_score_is_the_books_sdr_with_missing_values():
    # the root split maximises m/|T| (sd(T) - sum_j |T_j|/|T| sd(T_j)) over every feature
    # and cut (brute force twin); C4.5's known-value gain would choose differently here
    chosen_differently = 0
    for seed in range(25):
        rng = np.random.default_rng(seed)
        n = 60
        X = rng.integers(0, 8, (n, 3)).astype(np.float32)
        X[rng.random((n, 3)) < rng.uniform(0.05, 0.6, 3)] = np.nan
        y = np.nan_to_num(X[:, 0]) * rng.normal() + np.nan_to_num(X[:, 1]) + rng.normal(0, 1, n)
        w = np.ones(n)
        cands = []
        for f in range(3):
            vals = np.unique(X[~np.isnan(X[:, f]), f])
            for a, b in zip(vals[:-1], vals[1:], strict=True):
                thr = (float(a) + float(b)) / 2
                cands.append((naive_m5_sdr(X[:, f], y, w, thr), f, thr))
        cands.sort(reverse=True)
        if cands[0][0] - cands[1][0] < 1e-9 * abs(cands[0][0]):
            continue  # a tie: either answer is right
        tree = tl.DecisionTreeRegressor(criterion="sdr", missing="m5", max_depth=1,
                                        random_state=0).fit(X, y).tree_
        assert (tree.feature[0], tree.threshold[0]) == pytest.approx(cands[0][1:])
        c45 = tl.DecisionTreeRegressor(criterion="sdr", missing="c45", max_depth=1,
                                       random_state=0).fit(X, y).tree_
        chosen_differently += (c45.feature[0], c45.threshold[0]) != pytest.approx(cands[0][1:])
    assert chosen_differently > 0  # the test tells the two formulas apart


@settings(max_examples=40, deadline=None)
@given(st.integers(8, 120), st.integers(0, 2**31 - 1), st.sampled_from(["best", "hist"]),
       st.sampled_from(["no", "binary", "multiway"]), st.booleans(),
       st.sampled_from([0.0, 0.25]))
def test_m5_routing_equals_the_naive_walk(n, seed, splitter, categorical, weighted, holes):
    # the growers route cases with unknown values by their target while growing: every
    # node's rows and value are the naive walk's; the replay gives the same leaves, and
    # prediction's branch is the node's average value
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, (n, 3)).astype(np.float64)
    X[rng.random((n, 3)) < holes] = np.nan
    y = rng.integers(0, 5, n) + np.nan_to_num(X[:, 0], nan=2.0)
    w = rng.integers(1, 4, n).astype(float) if weighted else np.ones(n)
    kw = {} if categorical == "no" else {"categorical_features": [2],
                                         "categorical_split": categorical}
    m = tl.DecisionTreeRegressor(missing="m5", splitter=splitter, random_state=0,
                                 **kw).fit(X, y, sample_weight=w)
    tree = m.tree_
    Xe = m._validate_table(X)
    leaf, mb, node_rows = naive_m5_routing(tree, Xe, y, w)
    inner = tree.children_left != -1
    for node in range(tree.node_count):
        rows = node_rows[node]
        assert tree.n_node_samples[node] == len(rows)
        assert tree.value[node, 0, 0] == pytest.approx(np.average(y[rows], weights=w[rows]))
    np.testing.assert_array_equal(tree.missing_branch[inner], mb[inner])
    got_leaf, got_mb = target_replay(tree, Xe, y, w)
    np.testing.assert_array_equal(got_leaf, leaf)
    np.testing.assert_array_equal(got_mb[inner], mb[inner])
    # without holes the parallel walk over prediction's routes gives the same branches
    np.testing.assert_array_equal(average_missing_branches(tree, Xe, y, w)[inner], mb[inner])


def test_m5_missing_values_on_both_engines_and_in_the_leaf_models():
    # one bin per value: the histogram engine routes and scores as the exact one; the leaf
    # models are fitted to the rows M5' routed to each leaf (lstsq on the replay's rows)
    rng = np.random.default_rng(7)
    n = 2000
    X = rng.integers(0, 30, (n, 3)).astype(np.float32)
    y = np.where(X[:, 0] > 15, 2 * X[:, 1], 40 - X[:, 2]) + rng.normal(0, 1, n)
    X[rng.random((n, 3)) < 0.15] = np.nan
    exact = tl.DecisionTreeRegressor(criterion="sdr", missing="m5", max_depth=5,
                                     random_state=0).fit(X, y)
    hist = tl.DecisionTreeRegressor(criterion="sdr", missing="m5", max_depth=5,
                                    splitter="hist", random_state=0).fit(X, y)
    assert hist.tree_.node_count == exact.tree_.node_count
    np.testing.assert_allclose(hist.predict(X), exact.predict(X), rtol=1e-9)
    m = tl.M5Regressor(max_depth=2, prune=None, smoothing=0, drop_attributes=False,
                       linear_features="path", random_state=0).fit(X, y)
    assert m.missing == "m5"
    tree = m.tree_
    leaf = target_replay(tree, X, y, np.ones(n))[0]
    assert not np.array_equal(leaf, m.apply(X))  # the routing matters here
    for node in np.flatnonzero(tree.children_left == -1):
        rows = leaf == node
        icpt, feats, coefs, _ = tree.leaf_model(node)
        Z = X[rows][:, feats].astype(np.float64)
        # in the statistics a missing value is the feature's mean (of all known values)
        Z = np.where(np.isnan(Z), np.nanmean(X[:, feats].astype(np.float64), axis=0), Z)
        A = np.column_stack([np.ones(rows.sum()), Z])
        ref = np.linalg.lstsq(A, y[rows], rcond=None)[0]
        np.testing.assert_allclose(np.r_[icpt, coefs], ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_m5_missing_values_in_forests_route_each_trees_own_rows(splitter):
    # forests share X across trees; rows of weight zero take no part in a tree's routing
    rng = np.random.default_rng(3)
    n = 300
    X = rng.integers(0, 10, (n, 3)).astype(np.float32)
    y = X[:, 0] * 2 + rng.normal(0, 1, n)
    X[rng.random((n, 3)) < 0.2] = np.nan
    w = rng.integers(0, 3, n).astype(float)
    forest = tl.RandomForestRegressor(missing="m5", bootstrap=False, n_estimators=2,
                                      max_features=None, max_depth=4, splitter=splitter,
                                      random_state=0).fit(X, y, sample_weight=w)
    keep = w > 0
    for est in forest.estimators_:
        tree = est.tree_
        _, mb, node_rows = naive_m5_routing(tree, X[keep], y[keep], w[keep])
        inner = tree.children_left != -1
        np.testing.assert_array_equal(tree.missing_branch[inner], mb[inner])
        assert tree.n_node_samples.tolist() == [len(r) for r in node_rows]
    with pytest.raises(ValueError, match="one row each"):
        target_replay(forest.estimators_[0].tree_, X, y[keep], w[keep])


def test_m5_missing_mode_is_refused_where_it_is_undefined():
    X = np.array([[0.0], [1.0], [np.nan], [2.0]])
    with pytest.raises(ValueError, match="regression tree"):
        tl.DecisionTreeClassifier(missing="m5").fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="absolute_error"):
        tl.DecisionTreeRegressor(missing="m5", criterion="absolute_error").fit(X, [0, 1, 0, 1])
