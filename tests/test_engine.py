"""The compiled engine: its trees against the Python twin, the categorical regularisation
(pooling, smoothing, selection by test) by hand and against SciPy, and awkward columns."""

import math
import zlib

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import treelearn as tl
from treelearn.engine import levels, selection
from treelearn.engine.columns import presort

# -- p-values of selection="test" against SciPy ----------------------------------------------


@given(st.floats(0.0, 400.0), st.integers(1, 60))
def test_chi2_log_survival_matches_scipy(x, df):
    want = scipy.stats.chi2.logsf(x, df)
    got = selection.chi2_logsf(x, float(df))
    if want < -700:  # scipy underflows to -inf long before the log scale does
        assert got < -600
    else:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@given(st.floats(-50.0, 0.0), st.integers(1, 40))
def test_sidak_adjustment(log_p, m):
    """1 - (1 - p)^m on the log scale, also where p underflows."""
    got = selection.adjusted_log_pvalue(log_p, m)
    p = math.exp(log_p)
    # -expm1(m log1p(-p)) = 1 - (1 - p)^m without cancellation, for any p > 0
    want = math.log(-math.expm1(m * math.log1p(-p))) if p < 1 else 0.0  # p = 1 stays 1
    assert got == pytest.approx(want, rel=1e-8, abs=1e-10)


@settings(max_examples=40)
@given(st.integers(0, 2**31 - 1), st.integers(2, 8), st.integers(2, 4), st.booleans())
def test_categorical_pvalue_is_pearsons_test_of_the_level_x_class_table(seed, L, K, holes):
    """The engine's p-value of a categorical feature at a node: Pearson's chi-square test of
    independence on the (level, plus a missing group) x class table of weighted counts,
    SciPy's ``chi2_contingency`` without continuity correction."""
    rng = np.random.default_rng(seed)
    n = 200
    x = rng.integers(0, L, n).astype(np.float32)
    if holes:
        x[rng.random(n) < 0.1] = np.nan
    y = ((np.nan_to_num(x) + rng.integers(0, 3, n)) % K).astype(np.int32)
    y[np.isnan(x)] = rng.integers(0, K, int(np.isnan(x).sum()))
    w = rng.integers(1, 3, n).astype(float)
    sval, sidx = presort(x[:, None])
    C = np.ascontiguousarray(y[sidx])
    W = np.ascontiguousarray(w[sidx])
    nstats = np.bincount(y, weights=w, minlength=K).astype(float)
    ws, iw, stw = levels.workspace(L + 2, max(K, 2))
    got = selection.feature_log_pvalue(sval, C, None, W, 0, 0, n, True, nstats, w.sum(),
                                       0, stw, ws, iw)
    groups = np.where(np.isnan(x), L, x).astype(int)
    table = np.zeros((L + 1, K))
    np.add.at(table, (groups, y), w)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        assert got == 0.0
        return
    _, p, _, _ = scipy.stats.chi2_contingency(table, correction=False)
    assert got == pytest.approx(math.log(p), rel=1e-7, abs=1e-9)


def test_noise_column_is_rarely_chosen_at_the_root_under_selection_test():
    """A pure-noise 50-level column beside two weak real signals: the criterion picks it at
    the root in most draws (it has 2^49 subsets to choose its best from); the test-based
    choice in fewer than 10% of them (the issue's requirement)."""
    n, draws = 600, 30
    hits = {"criterion": 0, "test": 0}
    for seed in range(draws):
        rng = np.random.default_rng(seed)
        a = rng.normal(size=n)
        b = rng.integers(0, 4, n)
        y = (0.5 * a + 0.4 * (b == 1) + rng.normal(size=n) > 0.3).astype(int)
        X = pd.DataFrame({"a": a, "b": pd.Categorical(b),
                          "noise": pd.Categorical(rng.integers(0, 50, n))})
        for sel in hits:
            est = tl.DecisionTreeClassifier(max_depth=1, selection=sel).fit(X, y)
            hits[sel] += est.feature_names_in_[est.tree_.feature[0]] == "noise"
    assert hits["test"] / draws < 0.10
    assert hits["criterion"] > hits["test"]


@pytest.mark.parametrize("kw", [{"selection": "test"},
                                {"criterion": "gain_ratio", "average_gain": True}])
def test_random_splitter_with_node_level_rules_splits_at_the_winners_own_threshold(kw):
    """The node-level rules (tests, C4.5's average gain) choose among the features' random
    cuts after all are drawn; the winner is then searched again at its own threshold, not
    at the last drawn feature's (which lay outside the winner's range here: a crash by zero
    division or a cut that sends every row one way). Every cut lies inside its node's
    values of its feature."""
    rng = np.random.default_rng(0)
    n = 400
    X = np.column_stack([rng.random(n), 1000 + 1000 * rng.random(n),
                         -5000 + 1000 * rng.random(n)])
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 1500)).astype(int)
    for seed in range(5):
        model = tl.DecisionTreeClassifier(splitter="random", random_state=seed, **kw).fit(X, y)
        t = model.tree_
        path = model.decision_path(X).toarray().astype(bool)
        inner = np.flatnonzero(t.children_left >= 0)
        assert inner.size > 1
        for node in inner:
            v = X[path[:, node], t.feature[node]]
            assert v.min() <= t.threshold[node] < v.max(), (seed, node)


def test_selection_alpha_stops_where_no_feature_is_associated():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"u": rng.normal(size=300), "c": pd.Categorical(rng.integers(0, 5, 300))})
    y = rng.integers(0, 2, 300)
    free = tl.DecisionTreeClassifier(selection="test", max_depth=3).fit(X, y)
    strict = tl.DecisionTreeClassifier(selection="test", selection_alpha=0.01,
                                       max_depth=3).fit(X, y)
    assert free.tree_.node_count > 1
    assert strict.tree_.node_count == 1
    signal = (X["u"] > 0).astype(int).to_numpy()
    assert tl.DecisionTreeClassifier(selection="test", selection_alpha=0.01,
                                     max_depth=1).fit(X, signal).tree_.node_count == 3


# -- pooling and smoothing by hand ------------------------------------------------------------


def test_rare_levels_are_pooled_for_ordering_and_routing():
    """Levels a (40 rows, mostly class 1) and b (40 rows, mostly 0), and four rare levels of
    two rows each, two of class 1 and two of class 0. Without pooling the best subset split
    sends r1, r2 with a and r3, r4 with b; with ``min_level_count=5`` the rare levels are one
    "other" group, routed together (its share 0.5 puts it on one side)."""
    X = pd.DataFrame({"c": ["a"] * 40 + ["b"] * 40 + ["r1", "r1", "r2", "r2", "r3", "r3",
                                                       "r4", "r4"]})
    y = np.array([1] * 36 + [0] * 4 + [0] * 36 + [1] * 4 + [1, 1, 1, 1, 0, 0, 0, 0])
    plain = tl.DecisionTreeClassifier(max_depth=1).fit(X, y)
    pooled = tl.DecisionTreeClassifier(max_depth=1, min_level_count=5).fit(X, y)

    def branch(model, level):
        t = model.tree_
        code = list(model.categories_[0]).index(level)
        return int(t.cat_branch[t.cat_ptr[0] + code])

    assert branch(plain, "r1") == branch(plain, "a") != branch(plain, "r3")
    assert branch(plain, "r3") == branch(plain, "b")
    assert len({branch(pooled, r) for r in ("r1", "r2", "r3", "r4")}) == 1
    assert branch(pooled, "a") != branch(pooled, "b")
    # the pool's statistics are the sum of its levels': the node counts add up
    kids = pooled.tree_.children(0)
    assert pooled.tree_.n_node_samples[kids].sum() == 88


def test_smoothed_order_is_the_m_estimate():
    """``level_smoothing=m`` orders levels by ``(w_1 + m p) / (w + m)``, ``p`` the node's
    class-1 share: a level of one case of class 1 no longer sorts above one of 20 cases with
    18, so the ordered scan (Breiman's) sees a different sequence."""
    stats = np.array([[0.0, 1.0], [2.0, 18.0], [18.0, 2.0], [5.0, 5.0]])
    E = stats.shape[0]
    ws, iw, stw = levels.workspace(E + 2, 2)
    stw[levels.SR_ENTRIES:levels.SR_ENTRIES + E] = stats
    ws[levels.W_UW, :E] = stats.sum(axis=1)
    levels._order_by(stw, ws, iw, E, 1, 0.0)
    assert iw[levels.I_ORDER, :E].tolist() == [2, 3, 1, 0]  # shares .1, .5, .9, 1
    m = 10.0
    levels._order_by(stw, ws, iw, E, 1, m)
    p = stats[:, 1].sum() / stats.sum()
    keys = (stats[:, 1] + m * p) / (stats.sum(axis=1) + m)
    assert iw[levels.I_ORDER, :E].tolist() == np.argsort(keys, kind="stable").tolist()
    assert iw[levels.I_ORDER, :E].tolist() == [2, 3, 0, 1]


# -- awkward columns: a documented result, never a crash --------------------------------------


@pytest.mark.parametrize("kw", [{}, {"min_level_count": 5}, {"level_smoothing": 3.0},
                                {"selection": "test"}, {"categorical_split": "multiway"}])
def test_awkward_categorical_columns(kw):
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({
        "unique": [f"id{i}" for i in range(n)],          # one row per level
        "rare": rng.choice([f"r{i}" for i in range(150)], n),  # all levels rare
        "empty": pd.Categorical([None] * n, categories=["x", "y"]),  # every value missing
        "x": rng.normal(size=n),
    })
    y = (X["x"] > 0).astype(int).to_numpy()
    est = tl.DecisionTreeClassifier(random_state=0, **kw).fit(X, y)
    assert est.score(X, y) == 1.0
    new = X.head(5).assign(unique=["new"] * 5, rare=[None] * 5)
    assert est.predict(new).shape == (5,)
    # the all-missing column cannot split (constant), so it is never used
    assert 2 not in set(est.tree_.feature[est.tree_.feature >= 0].tolist())


@pytest.mark.jit_only  # 200k rows of 100k levels: many minutes with the kernels as Python
def test_a_hundred_thousand_levels():
    rng = np.random.default_rng(1)
    n = 200_000
    codes = rng.integers(0, 100_000, n)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"L{i}" for i in range(100_000)]),
                      "x": rng.normal(size=n)})
    y = ((X["x"] > 0) ^ (codes % 7 == 0)).astype(int).to_numpy()
    for splitter in ("best", "hist"):
        est = tl.DecisionTreeClassifier(max_depth=4, splitter=splitter,
                                        min_level_count=10).fit(X, y)
        assert est.tree_.node_count > 1
        assert est.score(X, y) > 0.6


# -- the node loop hands control back between chunks -----------------------------------------


@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("max_leaf_nodes", [None, 50])
def test_fit_returns_to_python_between_chunks(monkeypatch, splitter, max_leaf_nodes):
    """With a small work budget per call the compiled loop is entered many times (a Ctrl-C
    is acted on between two calls) and the tree is the same as in one go."""
    from treelearn.engine import fit

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=3000), "y": rng.normal(size=3000),
                      "c": pd.Categorical(rng.integers(0, 8, 3000))})
    X.loc[::11, "x"] = np.nan
    y = ((X["x"].fillna(0) + X["y"] + (X["c"].cat.codes % 3)) > 1).astype(int).to_numpy()
    kw = dict(splitter=splitter, max_leaf_nodes=max_leaf_nodes, random_state=0)
    whole = tl.DecisionTreeClassifier(**kw).fit(X, y)
    calls = []
    from treelearn.engine.layouts.bins import Hist
    from treelearn.engine.layouts.presorted import Exact

    for layout in (Exact, Hist):  # the builder's loops, compiled per layout
        for name in ("grow_depth_first", "grow_best_first"):
            inner = getattr(layout, name)
            monkeypatch.setattr(layout, name,
                                lambda _f=inner, **a: calls.append(1) or _f(**a))
    monkeypatch.setattr(fit, "CHUNK_WORK", 5_000)
    chunked = tl.DecisionTreeClassifier(**kw).fit(X, y)
    assert len(calls) >= 5
    assert chunked.tree_ == whole.tree_


# -- a plain fit compiles no C4.5 code (fit.fit_extras) -----------------------------------------


def test_fit_extras_is_none_only_for_a_plain_fit():
    from treelearn.engine import fit

    base = dict(crit=0, n_stats=2, n_values=2, n_classes=2, max_depth=5, min_samples_split=2,
                min_samples_leaf=1, min_weight_leaf=0.0, max_features=3, max_leaf_nodes=0,
                min_impurity_decrease=0.0, seed=1)
    assert fit.fit_extras(fit.GrowParams(**base)) is None
    assert fit.fit_extras(fit.GrowParams(**base, missing=levels.MISSING_IMPUTE)) is None
    for extra in (dict(missing=levels.MISSING_C45), dict(missing=levels.MISSING_M5),
                  dict(costs=np.ones(3), cost_mode=1), dict(selection=1),
                  dict(average_gain=True), dict(threshold_penalty=True)):
        assert fit.fit_extras(fit.GrowParams(**base, **extra)), extra


@pytest.mark.parametrize("kind", ["best", "hist", "forest", "best-first", "regression",
                                  "random"])
def test_plain_kernels_grow_the_trees_of_the_full_ones(monkeypatch, kind):
    """The pruned kernels of a plain fit (extras None) and the full ones grow the same trees,
    holes (not for the random splitter, which refuses them), weights and feature draws
    included."""
    from treelearn.engine import fit

    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 6)).round(1)
    X[rng.random(X.shape) < 0.05] = np.nan
    w = rng.integers(1, 4, 1500).astype(float)
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * X[:, 2].round() > 0).astype(int)

    def grown():
        if kind == "forest":
            model = tl.RandomForestClassifier(n_estimators=3, random_state=0)
        elif kind == "regression":
            model = tl.DecisionTreeRegressor(max_features=4, random_state=0)
        else:
            model = tl.DecisionTreeClassifier(
                splitter={"hist": "hist", "random": "random"}.get(kind, "best"),
                max_leaf_nodes=40 if kind == "best-first" else None, random_state=0)
        yy = y + np.nan_to_num(X[:, 3]) if kind == "regression" else y
        model.fit(np.nan_to_num(X) if kind == "random" else X, yy, sample_weight=w)
        return [t.tree_ for t in model.estimators_] if kind == "forest" else [model.tree_]

    plain = grown()
    monkeypatch.setattr(fit, "fit_extras", lambda prm: np.bool_(True))
    assert grown() == plain


# -- the default against a noise column -------------------------------------------------------


def _churn_like(n: int, seed: int):
    """Shaped like the telecom churn table: a 51-level state column that does not matter,
    two yes/no plans, minutes and calls that do."""
    rng = np.random.default_rng(seed)
    intl = rng.random(n) < 0.1
    vm = rng.random(n) < 0.28
    day = np.round(np.clip(rng.normal(180, 54, n), 0, 350), 1)
    eve = np.round(np.clip(rng.normal(200, 50, n), 0, 360), 1)
    calls = rng.poisson(1.5, n).astype(float)
    logit = (-3.2 + 0.025 * (day - 180) + 1.1 * np.maximum(calls - 3, 0) + 2.0 * intl
             - 0.9 * vm + 0.006 * (eve - 200) + 1.6 * (day > 265))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = pd.DataFrame({"state": pd.Categorical(rng.integers(0, 51, n).astype(str)),
                      "intl": pd.Categorical(np.where(intl, "yes", "no")),
                      "vm": pd.Categorical(np.where(vm, "yes", "no")),
                      "day": day, "eve": eve, "calls": calls})
    return X, y


def test_selection_auto_resolves_by_the_number_of_levels():
    X, y = _churn_like(400, 0)
    assert tl.DecisionTreeClassifier().fit(X, y).selection_ == "screened"  # 51 levels
    few = X.drop(columns="state")
    assert tl.DecisionTreeClassifier().fit(few, y).selection_ == "criterion"
    assert tl.DecisionTreeClassifier().fit(few[["day", "eve"]], y).selection_ == "criterion"
    for preset in (tl.ID3Classifier, tl.C45Classifier):
        assert preset().get_params()["selection"] == "criterion"


@pytest.mark.jit_only  # many fits of a few thousand rows: minutes with the kernels as Python
def test_a_noise_column_costs_the_default_tree_at_most_0_3_points():
    """The issue's requirement, on ten draws of a churn-shaped table: adding a pure-noise
    50-level column lowers the default tree's mean 10-fold CV accuracy by at most 0.3
    points (measured: 0.18 with the default, 0.43 with ``selection="criterion"``)."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    drops = []
    for seed in range(10):
        X, y = _churn_like(3000, seed)
        noise = np.random.default_rng(seed + 99).integers(0, 50, 3000).astype(str)
        noisy = X.assign(noise=pd.Categorical(noise))
        cv = StratifiedKFold(10, shuffle=True, random_state=0)
        est = tl.DecisionTreeClassifier(random_state=0)
        drops.append(cross_val_score(est, X, y, cv=cv).mean()
                     - cross_val_score(est, noisy, y, cv=cv).mean())
    assert 100 * np.mean(drops) <= 0.3


# -- the compiled loop against the Python twin ------------------------------------------------


def _improvement(t, i):
    w = t.weighted_n_node_samples
    kids = t.children(i)
    return w[i] * t.impurity[i] - float(np.sum(w[kids] * t.impurity[kids]))


def _assert_same_up_to_ties(a, b, values=True):
    """Node for node, except below a node where the two trees split differently with exactly
    the same improvement (``values=False``: leaf values not compared, see below)."""
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        assert a.n_node_samples[i] == b.n_node_samples[j]
        if values:
            np.testing.assert_allclose(a.value[i], b.value[j], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.impurity[i], b.impurity[j], rtol=1e-9, atol=1e-12)
        if a.children_left[i] < 0 or b.children_left[j] < 0:
            # a split of zero improvement is kept or refused by rounding
            for t, k in ((a, i), (b, j)):
                if t.children_left[k] >= 0:
                    assert abs(_improvement(t, k)) <= 1e-9 * t.weighted_n_node_samples[k]
            continue
        ka, kb = a.children(i), b.children(j)
        if (a.feature[i] != b.feature[j] or ka.size != kb.size
                or not np.array_equal(a.n_node_samples[ka], b.n_node_samples[kb])):
            assert _improvement(a, i) == pytest.approx(_improvement(b, j), rel=1e-9,
                                                       abs=1e-12)
            continue
        stack.extend(zip(ka.tolist(), kb.tolist(), strict=True))


def _twin_tree(est, X, y, w):
    """The tree the earlier Python grower (``tests/twin_general.py``) grows with ``est``'s
    settings on the same encoded table."""
    import twin_general as T

    from treelearn import _estimators as E
    from treelearn._validation import check_sample_weight, check_y_1d

    est = est.__class__(**est.get_params())
    Xe, yy = est._validate_table(X, y, fitting=True)
    yy = check_y_1d(yy)
    ycls, yreg, ww, S, V, K = est._encode_target(yy, check_sample_weight(w, Xe.shape[0]))
    s = E._resolve(est, Xe.shape[0], Xe.shape[1], ww)
    keep = ww > 0
    n_levels = np.array([0 if lv is None else len(lv) for lv in est.categories_])
    binner = est._fit_binner(Xe, ww, s.seed) if est.splitter == "hist" else None
    codes = T.prepare_codes(Xe[keep], est.is_categorical_, n_levels, binner)
    prm = T.GeneralParams(
        crit=est._criteria[est.criterion], n_stats=S, n_values=V, n_classes=K,
        max_depth=s.max_depth, min_samples_split=s.min_samples_split,
        min_samples_leaf=s.min_samples_leaf, min_weight_leaf=s.min_weight_leaf,
        max_features=s.max_features, max_leaf_nodes=s.max_leaf_nodes,
        min_impurity_decrease=float(est.min_impurity_decrease), seed=s.seed,
        missing=E._MISSING_CODES[est.missing], multiway=est.categorical_split == "multiway",
        costs=np.ones(Xe.shape[1]), cost_mode=0, cost_weight=1.0)
    return T.build_general(codes, ycls[keep] if ycls.size else ycls,
                           yreg[keep] if yreg.size else yreg, ww[keep], prm)


_TWIN_CASES = [(s, c) for s in ("best", "hist")
               for c in ("gini", "entropy", "misclassification", "gain_ratio", "chi2",
                         "squared_error", "absolute_error")]


@pytest.mark.parametrize("splitter, crit", _TWIN_CASES)
def test_compiled_loop_equals_the_python_twin(splitter, crit):
    """Random tables (categorical columns with missing levels, numeric ones with holes and
    ties, sample weights): every missing mode x split kind grows the twin's tree, node for
    node. C4.5's fractional cases are compared three levels deep: below, weights that are
    sums of products of shares round differently in the two growers and decide near-ties."""
    rng = np.random.default_rng(zlib.crc32(f"{splitter} {crit}".encode()))
    regression = crit in ("squared_error", "absolute_error")
    cls = tl.DecisionTreeRegressor if regression else tl.DecisionTreeClassifier
    names = ("feature", "threshold", "n_node_samples", "impurity", "value", "children_left",
             "children_right", "missing_branch", "cat_branch", "cat_ptr",
             "weighted_n_node_samples")
    for trial in range(3):
        n = int(rng.integers(30, 250))
        X = pd.DataFrame({"a": rng.choice(["p", "q", "r", "s", "t", None], n),
                          "b": np.round(rng.normal(size=n), 1),
                          "c": rng.choice(list("uvwxyz"), n),
                          "d": rng.integers(0, 5, n).astype(float)})
        X.loc[rng.random(n) < 0.2, "b"] = np.nan
        y = rng.integers(0, 20, n) / 4 if regression else rng.integers(0, 3, n)
        w = rng.integers(1, 3, n).astype(float) if trial == 1 else None
        for missing in ("learn", "c45", "impute"):
            for split in ("binary", "multiway"):
                est = cls(criterion=crit, missing=missing, categorical_split=split,
                          splitter=splitter, random_state=trial, selection="criterion",
                          max_depth=3 if missing == "c45" or trial == 2 else None,
                          min_samples_leaf=1 + trial % 2,
                          max_leaf_nodes=7 if trial == 0 else None)
                got = est.fit(X, y, sample_weight=w).tree_
                ref = _twin_tree(est, X, y, w)
                if crit == "misclassification" or (crit == "absolute_error"
                                                   and missing == "c45"):
                    # Misclassification is piecewise linear in the weights: many cuts tie
                    # exactly, and rounding (which differs between the growers, and between
                    # compiled and plain-Python runs) picks one; ties are checked. Absolute
                    # deviations of fractional weights tie too, and a weighted median at
                    # exactly half the weight is a tie (mean of the two middle values) or
                    # not by rounding: the deviation is the same either way.
                    _assert_same_up_to_ties(got, ref, values=crit != "absolute_error")
                    continue
                for name in names:
                    np.testing.assert_allclose(getattr(got, name), getattr(ref, name),
                                               rtol=1e-9, atol=1e-12,
                                               err_msg=f"{missing} {split} {name}")


# -- the node table -> Tree arrays ------------------------------------------------------------


def _naive_tree_arrays(ti, tf, cats, count):
    """The Tree arrays as the node table's docstring defines them, node by node."""
    from treelearn.engine import nodes as N

    kids = {i: [] for i in range(count)}
    for i in range(count):
        if ti[i, N.N_PARENT] >= 0:
            kids[ti[i, N.N_PARENT]].append((ti[i, N.N_BRANCH], i))
    out = {k: [] for k in ("left", "right", "ptr", "child", "feature", "threshold", "cptr",
                           "cat", "mb", "seen")}
    out["ptr"].append(0)
    out["cptr"].append(0)
    for i in range(count):
        children = [c for _, c in sorted(kids[i])]
        inner = bool(children)
        out["child"] += children
        out["ptr"].append(len(out["child"]))
        out["left"].append(children[0] if inner else -1)
        out["right"].append(children[-1] if inner else -1)
        out["feature"].append(ti[i, N.N_FEATURE] if inner else -2)
        out["threshold"].append(tf[i, N.T_THRESHOLD] if inner else -2.0)
        out["mb"].append(ti[i, N.N_MB] if inner else -2)
        out["seen"].append(inner and ti[i, N.N_SEEN] != 0)
        if inner:
            off, n = ti[i, N.N_CATOFF], ti[i, N.N_CATLEN]
            out["cat"] += list(cats[off:off + n])
        out["cptr"].append(len(out["cat"]))
    return out


@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.booleans())
def test_tree_arrays_equal_the_naive_reading_of_the_node_table(seed, count, best_first):
    from treelearn.engine import nodes as N

    rng = np.random.default_rng(seed)
    ti = rng.integers(0, 5, (count + 3, N.N_ICOLS))  # spare rows: only `count` are read
    tf = rng.normal(size=(count + 3, N.N_FCOLS))
    ti[:, N.N_NB] = 0
    ti[:, N.N_CATLEN] = rng.integers(0, 4, count + 3)
    ti[0, N.N_PARENT] = -1
    # children numbered after their parent, branches in any order (best-first: any order)
    for i in range(1, count):
        parent = int(rng.integers(0, i))
        ti[i, N.N_PARENT] = parent
        ti[i, N.N_BRANCH] = ti[parent, N.N_NB]
        ti[parent, N.N_NB] += 1
    if best_first:
        for p in range(count):
            mine = np.flatnonzero(ti[:count, N.N_PARENT] == p)
            ti[mine, N.N_BRANCH] = rng.permutation(ti[mine, N.N_BRANCH])
    store = rng.integers(0, 9, 200)
    ti[:, N.N_CATOFF] = rng.integers(0, 190, count + 3)  # each map anywhere in the store
    got = N.tree_arrays(ti, tf, store, count)
    want = _naive_tree_arrays(ti, tf, store, count)
    names = ("left", "right", "ptr", "child", "feature", "threshold", None, None, None,
             "cptr", "cat", "mb", "seen")
    for name, arr in zip(names, got, strict=True):
        if name is not None:
            np.testing.assert_array_equal(arr, np.asarray(want[name], dtype=arr.dtype),
                                          err_msg=name)
    np.testing.assert_array_equal(got[6], tf[:count, N.T_IMPURITY])
    np.testing.assert_array_equal(got[7], ti[:count, N.N_NSAMP])
    np.testing.assert_array_equal(got[8], tf[:count, N.T_WEIGHT])


# -- the builder: one node loop for every layout (engine.builder) -------------------------------


def test_a_layout_must_name_every_step_with_the_builders_parameters():
    """The steps are checked when a layout class is made (at import): every step named,
    the required ones given, each taking the parameters of the builder's stub."""
    from treelearn.engine import builder
    from treelearn.engine.builder import layout

    with pytest.raises(TypeError, match=r"layout Half lacks the steps \['release', 'step'\]"):
        layout("Half", ("x",), process=None, children=None, children_any=None,
               hand_over=None, resume=None, keep=None)
    steps = dict(process=builder.handed_over, children=builder.no_slots,
                 children_any=builder.no_slots, hand_over=builder.never_hands_over,
                 resume=builder.nothing_to_resume, step=None, keep=None, release=None)
    with pytest.raises(TypeError, match=r"layout Idle: the step 'process' is required"):
        layout("Idle", ("x",), **(steps | {"process": None}))
    with pytest.raises(TypeError, match=r"the step 'keep' takes \['L'\], not the builder's "
                                        r"\['L', 'slot'\]"):
        layout("Wrong", ("x",), **(steps | {"keep": lambda L: -1}))
    full = layout("Full", ("x",), **steps)
    assert full._fields[-1] == "x" and full.__module__ == __name__
    with pytest.raises(TypeError, match="called outside its layout"):
        builder.process(*range(13))  # a reader who calls a stub is told where steps bind


def test_a_node_search_must_name_every_step_and_is_named_for_its_layout():
    from treelearn.engine.layouts import bins as grow_hist
    from treelearn.engine.layouts import presorted as grow_exact
    from treelearn.engine.search import node_search

    with pytest.raises(TypeError, match=r"node search s lacks the steps \['keep'\]"):
        node_search("s", feature_search=None, random_cut=None, log_pvalue=None)
    # found by name in its layout's module (the background compiler's way), each cached
    # under its own name
    for module, name in ((grow_exact, "search_node"), (grow_hist, "search_node_hist")):
        kernel = getattr(module, name)
        plain = getattr(kernel, "py_func", kernel)  # the function itself without the JIT
        assert plain.__module__ == module.__name__
        assert plain.__qualname__ == name


@pytest.mark.parametrize("max_leaf_nodes", [None, 12])
def test_every_layout_grows_the_same_tree_with_the_builder(max_leaf_nodes):
    """The same numeric data through the four layouts (presorted lists, bins with one bin
    per value, sparse rows, the shared ranking of a forest's tree): one builder, the same
    tree (the ranked layout grows depth-first only). The bins' thresholds are their edges,
    midway between the values of the whole column, where the others' are midway between the
    values at the node: the same rows go left."""
    import scipy.sparse as sp

    from treelearn.engine.layouts import ranked as ranked_layout

    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, (400, 6)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.normal(size=400) > 5).astype(int)
    kw = dict(random_state=0, max_leaf_nodes=max_leaf_nodes, min_samples_leaf=3)
    exact = tl.DecisionTreeClassifier(**kw).fit(X, y).tree_
    hist = tl.DecisionTreeClassifier(splitter="hist", **kw).fit(X, y).tree_
    sparse = tl.DecisionTreeClassifier(**kw).fit(sp.csr_matrix(X), y).tree_
    for other in (hist, sparse):
        np.testing.assert_array_equal(other.children_left, exact.children_left)
        np.testing.assert_array_equal(other.feature, exact.feature)
        np.testing.assert_array_equal(other.n_node_samples, exact.n_node_samples)
    np.testing.assert_allclose(sparse.threshold, exact.threshold)
    if max_leaf_nodes is None:
        old = ranked_layout.RANKED_FRACTION
        ranked_layout.RANKED_FRACTION = 0  # every tree of these settings on the shared ranking
        try:
            ranked = tl.DecisionTreeClassifier(**kw).fit(X, y).tree_
        finally:
            ranked_layout.RANKED_FRACTION = old
        np.testing.assert_array_equal(ranked.children_left, exact.children_left)
        np.testing.assert_allclose(ranked.threshold, exact.threshold)
