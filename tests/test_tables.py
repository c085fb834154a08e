"""Real tabular data: categorical features, missing values, costs, the textbook presets."""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from naive import impurity_decrease, naive_best_subset, naive_route, split_score
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.tree import DecisionTreeClassifier as SkClassifier
from sklearn.tree import DecisionTreeRegressor as SkRegressor

import treelearn as tl
from treelearn.engine import abserr, exact, levels
from treelearn.engine.criteria import (
    ABSOLUTE_ERROR,
    ENTROPY,
    GAIN_RATIO,
    GINI,
    MISCLASSIFICATION,
    SQUARED_ERROR,
    node_impurity,
)
from treelearn.engine.levels import KIND_MULTIWAY, MISSING_C45, MISSING_LEARN, N_RES
from treelearn.engine.search import COST_NUNEZ, COST_TAN, cost_score
from treelearn.pruning.cost_complexity import cost_complexity_path, prune_to_alpha

SUNBURN = pd.DataFrame({
    "Hair": ["Blonde", "Blonde", "Brown", "Blonde", "Red", "Brown", "Brown", "Blonde"],
    "Height": ["Average", "Tall", "Short", "Short", "Average", "Tall", "Average", "Short"],
    "Weight": ["Light", "Average", "Average", "Average", "Heavy", "Heavy", "Heavy", "Light"],
    "Lotion": ["No", "Yes", "Yes", "No", "No", "No", "No", "Yes"],
})
SUNBURN_Y = np.array(["Burn", "None", "None", "Burn", "Burn", "None", "None", "None"])


def _search_codes(codes, n_codes, categorical, w, ycls, yreg, crit, mode, multiway=False,
                  min_leaf=1, n_classes=2):
    """One feature's best split by the engine's exact search, the feature given as level
    codes (-1 missing): the codes become a sorted list (missing last), as a fit makes it.
    Returns ``(out, fmap, rows)`` (``out``: the ``R_*`` result slots; ``rows``: the list's
    order, to read the summary)."""
    regression = crit in (SQUARED_ERROR, ABSOLUTE_ERROR)
    n = codes.size
    v = np.where(codes < 0, np.nan, codes).astype(np.float32)
    order = np.argsort(v, kind="stable")  # NaN last
    V = v[order].reshape(1, n)
    C = None if regression else ycls[order].astype(np.int32).reshape(1, n)
    R = yreg[order].astype(float).reshape(1, n) if regression else None
    W = w[order].astype(float).reshape(1, n)
    out = np.zeros(N_RES)
    fmap = np.zeros(max(n_codes, n) + 2, dtype=np.int64)
    if crit == ABSOLUTE_ERROR:
        fs, js = abserr.scratch(n, n_codes)
        imp, _ = abserr.abs_node(R, W, 0, 0, n, W.sum(), fs, js)
        abserr.search_feature_abs(V, R, W, 0, 0, n, categorical, n_codes, imp, mode, multiway,
                                  min_leaf, 0.0, fmap, out, fs, js)
    else:
        S = 2 if regression else n_classes
        ws, iw, stw = levels.workspace(max(n, n_codes) + 1, S)
        stats = np.zeros(S)
        wn = exact.range_stats(stats.reshape(1, -1), 0, C, R, W, 0, 0, n)
        exact.search_feature(V, C, R, W, 0, 0, n, categorical, n_codes, stw, ws, iw, stats, wn,
                             crit, node_impurity(stats, wn, crit), mode, multiway, min_leaf,
                             0.0, True, 0, 0.0, np.nan, fmap, out)
    return out, fmap


def _child(tree, node, branch):
    return int(tree.children(node)[branch])


def _branch_of_level(model, node, feature, level):
    tree = model.tree_
    code = list(model.categories_[feature]).index(level)
    return int(tree.cat_branch[tree.cat_ptr[node] + code])


# -- the literature ------------------------------------------------------------------------


def test_sunburn_id3():
    """../shared/LITERATURE.md, sunburn table (8 people, Name is not a feature): ID3 puts Hair
    at the root; blonde people split on Lotion; red always burns; brown never does."""
    model = tl.ID3Classifier().fit(SUNBURN, SUNBURN_Y)
    t = model.tree_
    names = list(model.feature_names_in_)
    assert names[t.feature[0]] == "Hair"
    assert t.n_branches[0] == 3  # one branch per hair colour
    blonde = _child(t, 0, _branch_of_level(model, 0, 0, "Blonde"))
    red = _child(t, 0, _branch_of_level(model, 0, 0, "Red"))
    brown = _child(t, 0, _branch_of_level(model, 0, 0, "Brown"))
    assert names[t.feature[blonde]] == "Lotion"
    assert t.children_left[red] == -1 and model.classes_[t.value[red, 0].argmax()] == "Burn"
    assert t.children_left[brown] == -1 and model.classes_[t.value[brown, 0].argmax()] == "None"
    for lotion, result in (("No", "Burn"), ("Yes", "None")):
        leaf = _child(t, blonde, _branch_of_level(model, blonde, 3, lotion))
        assert model.classes_[t.value[leaf, 0].argmax()] == result
    np.testing.assert_array_equal(model.predict(SUNBURN), SUNBURN_Y)
    # Information gain of Hair at the root: 0.954 - 0.5 = 0.454 bits (the lecture's numbers).
    gain = t.impurity[0] - sum(t.weighted_n_node_samples[c] / 8 * t.impurity[c]
                               for c in t.children(0))
    assert gain == pytest.approx(0.4544, abs=1e-4)
    text = tl.export_text(model)
    assert "Hair = Blonde" in text and "Lotion = No" in text
    assert "or missing" not in text and "  Blonde" not in text


def test_readers_say_or_missing_only_where_the_tree_saw_missing_values(tmp_path):
    """``missing_seen`` records which splits met missing values of their feature at fit; text,
    rules, Graphviz and the explorer's edges say "or missing" only there, while prediction
    routes missing values the same way everywhere. It survives model files and pruning."""
    from treelearn.export.explorer import explorer_data

    holes = SUNBURN.copy()
    holes.loc[[2, 5], "Lotion"] = None  # Lotion has holes, Hair does not
    for data, expect in ((SUNBURN, False), (holes, True)):
        model = tl.ID3Classifier().fit(data, SUNBURN_Y)
        t = model.tree_
        inner = t.children_left != -1
        names = model.feature_names_in_[t.feature[inner]]
        np.testing.assert_array_equal(t.missing_seen[inner], (names == "Lotion") & expect)
        assert not t.missing_seen[~inner].any()
        readers = {"text": tl.export_text(model), "rules": tl.export_rules(model),
                   "graphviz": tl.export_graphviz(model),
                   "explorer": " ".join(explorer_data(model)["edge"])}
        for name, out in readers.items():
            assert ("or missing" in out) == expect, name
            assert "Hair = Blonde or missing" not in out, name
        # a missing Hair is still routed (down its learned default branch)
        assert model.predict(pd.DataFrame({c: [None] for c in SUNBURN.columns})).shape == (1,)
        from treelearn import io

        path = io.save(model, tmp_path / f"m{int(expect)}.tlm")
        np.testing.assert_array_equal(io.load(path).tree_.missing_seen, t.missing_seen)
        stump = t.subtree(np.r_[True, np.zeros(t.node_count - 1, bool)])
        assert stump.node_count == 1 and not stump.missing_seen.any()
        keep_all = t.subtree(np.zeros(t.node_count, bool))
        np.testing.assert_array_equal(keep_all.missing_seen, t.missing_seen)


GOLF = """sunny 75 70 true Play
sunny 80 90 true Dont
sunny 85 85 false Dont
sunny 72 95 false Dont
sunny 69 70 false Play
? 72 90 true Play
overcast 83 78 false Play
overcast 64 65 true Play
overcast 81 75 false Play
rain 71 80 true Dont
rain 65 70 true Dont
rain 75 80 false Play
rain 68 80 false Play
rain 70 96 false Play"""


def _golf():
    recs = [r.split() for r in GOLF.splitlines()]
    X = pd.DataFrame({
        "outlook": [None if r[0] == "?" else r[0] for r in recs],
        "humidity": [float(r[2]) for r in recs],
        "windy": [r[3] for r in recs],
    })
    return X, np.array([r[4] for r in recs])


def test_c45_unknown_outlook_quinlan_1993():
    """Quinlan (1993), C4.5, chapter 3 ("unknown attribute values"): the golf data with the
    outlook of one case (overcast, Play) unknown.

    Known cases: 13 (8 Play, 5 Don't); info(T) = H(8/13) = 0.961 bits; outlook partitions
    them into sunny 5 (2 Play), overcast 3 (3 Play), rain 5 (3 Play):
    info_outlook(T) = 5/13 * 0.971 + 3/13 * 0 + 5/13 * 0.971 = 0.747;
    gain = 13/14 * (0.961 - 0.747) = 0.199;
    split info over sunny, overcast, rain and unknown (5, 3, 5, 1 of 14) = 1.809;
    gain ratio = 0.199 / 1.809 = 0.110.
    The unknown case then goes to every branch with weight 5/13, 3/13, 5/13, and the book's
    tree reads: overcast: Play (3.2); sunny: humidity <= 75: Play (2.0), humidity > 75:
    Don't Play (3.4/0.4); rain: windy = true: Don't Play (2.4/0.4), windy = false: Play (3.0).
    (C4.5 prints the threshold as the largest training value below the cut, 75; treelearn
    uses the midpoint 77.5, the same partition.)
    """
    X, y = _golf()
    outlook = np.array([-1 if pd.isna(v) else ["overcast", "rain", "sunny"].index(v)
                        for v in X["outlook"]], dtype=np.int32)
    ycls = (y == "Play").astype(np.int32)
    rw = np.ones(14)
    for crit, expected in ((ENTROPY, 0.199), (GAIN_RATIO, 0.110)):
        out, _ = _search_codes(outlook, 3, True, rw, ycls, None, crit, MISSING_C45,
                               multiway=True)
        assert out[levels.R_KIND] == KIND_MULTIWAY and out[levels.R_NB] == 3
        assert out[levels.R_MB] == -1
        assert round(out[levels.R_SCORE], 3) == expected
    model = tl.C45Classifier().fit(X, y)
    t = model.tree_
    play = list(model.classes_).index("Play")
    root_kids = {lvl: _child(t, 0, _branch_of_level(model, 0, 0, lvl))
                 for lvl in ("overcast", "sunny", "rain")}
    assert model.feature_names_in_[t.feature[0]] == "outlook"
    w = t.weighted_n_node_samples
    overcast = root_kids["overcast"]
    assert t.children_left[overcast] == -1 and round(w[overcast], 1) == 3.2
    sunny = root_kids["sunny"]
    assert model.feature_names_in_[t.feature[sunny]] == "humidity"
    assert 75 < t.threshold[sunny] < 78
    low, high = t.children(sunny)
    assert round(w[low], 1) == 2.0 and t.value[low, 0, play] == 1.0
    assert round(w[high], 1) == 3.4 and round(w[high] * t.value[high, 0, play], 1) == 0.4
    rain = root_kids["rain"]
    assert model.feature_names_in_[t.feature[rain]] == "windy"
    true_leaf = _child(t, rain, _branch_of_level(model, rain, 2, "true"))
    false_leaf = _child(t, rain, _branch_of_level(model, rain, 2, "false"))
    assert round(w[true_leaf], 1) == 2.4
    assert round(w[true_leaf] * t.value[true_leaf, 0, play], 1) == 0.4
    assert round(w[false_leaf], 1) == 3.0 and t.value[false_leaf, 0, play] == 1.0
    assert t.n_leaves == 5
    # The case with the unknown outlook is counted in every root branch.
    assert t.n_node_samples[list(root_kids.values())].sum() == 14 + 2


# -- categorical splits --------------------------------------------------------------------


@pytest.mark.parametrize("splitter", ["best", "hist"])
@pytest.mark.parametrize("crit,n_classes", [("gini", 2), ("entropy", 2), ("gini", 3),
                                            ("entropy", 4), ("misclassification", 2),
                                            ("squared_error", None)])
def test_binary_subset_equals_exhaustive_search(crit, n_classes, splitter):
    """Breiman et al. (1984), section 4.2.2: for two classes and for regression, ordering the
    levels (by class-1 share / by mean) and cutting finds the best of all subsets; more
    classes try every subset up to 10 levels. Checked against a brute force over all subsets."""
    rng = np.random.default_rng(hash((crit, n_classes, splitter)) % 2**32)
    codes = {"gini": GINI, "entropy": ENTROPY, "misclassification": MISCLASSIFICATION,
             "squared_error": SQUARED_ERROR}
    for _ in range(25):
        L = int(rng.integers(2, 8))
        n = int(rng.integers(20, 80))
        x = rng.integers(0, L, n)
        w = rng.integers(1, 4, n).astype(float)
        if n_classes is None:
            y = rng.normal(size=n) + 0.5 * x
            est = tl.DecisionTreeRegressor(criterion=crit, max_depth=1, splitter=splitter,
                                           categorical_features=[0])
        else:
            y = (x * 7 + rng.integers(0, 4, n)) % n_classes
            est = tl.DecisionTreeClassifier(criterion=crit, max_depth=1, splitter=splitter,
                                            categorical_features=[0])
        est.fit(x[:, None].astype(float), y, sample_weight=w)
        t = est.tree_
        best = naive_best_subset(np.searchsorted(np.unique(x), x), y, w, codes[crit],
                                 n_classes)
        if t.node_count == 1:
            assert best <= 1e-12
            continue
        kids = t.children(0)
        got = t.impurity[0] - sum(t.weighted_n_node_samples[c] / t.weighted_n_node_samples[0]
                                  * t.impurity[c] for c in kids)
        assert got == pytest.approx(best, rel=1e-9, abs=1e-12)


def test_identifier_wins_under_information_gain_not_under_gain_ratio():
    """Quinlan (1986/1993): information gain favours an attribute with one value per case;
    gain ratio divides by its split information (log2 n) and prefers a real attribute."""
    rng = np.random.default_rng(1)
    n = 120
    colour = rng.choice(["red", "green", "blue"], n)
    y = np.where(rng.random(n) < 0.85, colour == "red", colour != "red")
    X = pd.DataFrame({"id": [f"row{i}" for i in range(n)], "colour": colour})
    kw = dict(categorical_split="multiway", selection="criterion")
    gain = tl.DecisionTreeClassifier(criterion="entropy", **kw).fit(X, y)
    ratio = tl.DecisionTreeClassifier(criterion="gain_ratio", **kw).fit(X, y)
    assert gain.feature_names_in_[gain.tree_.feature[0]] == "id"
    assert gain.tree_.n_branches[0] == n
    assert ratio.feature_names_in_[ratio.tree_.feature[0]] == "colour"
    # The default (selection="auto": a test of independence screens the features when a
    # column has many levels) is not fooled either: the identifier's table is no evidence.
    auto = tl.DecisionTreeClassifier(criterion="entropy", categorical_split="multiway").fit(X, y)
    assert auto.selection_ == "screened"
    assert auto.feature_names_in_[auto.tree_.feature[0]] == "colour"


def test_multiway_min_samples_leaf_is_c45s_two_branch_rule():
    X = np.array([[0]] * 5 + [[1]] * 5 + [[2]])
    y = np.array([0] * 5 + [1] * 5 + [0])
    est = tl.DecisionTreeClassifier(categorical_features=[0], categorical_split="multiway",
                                    min_samples_leaf=3).fit(X, y)
    assert est.tree_.n_branches[0] == 3  # the branch with one case is allowed
    est = tl.DecisionTreeClassifier(categorical_features=[0], categorical_split="multiway",
                                    min_samples_leaf=6).fit(X, y)
    assert est.tree_.node_count == 1


def test_pandas_dtypes_and_auto_detection():
    df = pd.DataFrame({
        "cat": pd.Categorical(["a", "b", "a", "c", None, "b"] * 10, categories=["c", "b", "a"]),
        "flag": [True, False] * 30,
        "s": pd.array(["x", "y", pd.NA] * 20, dtype="string"),
        "num": pd.array([1, 2, None, 4, 5, 6] * 10, dtype="Int64"),
        "f": np.arange(60, dtype=float),
    })
    y = np.arange(60) % 2
    est = tl.DecisionTreeClassifier(random_state=0).fit(df, y)
    np.testing.assert_array_equal(est.is_categorical_, [True, True, True, False, False])
    assert list(est.categories_[0]) == ["c", "b", "a"]  # the categorical's own order
    assert est.categories_[3] is None
    assert est.score(df, y) == 1.0
    # Names instead of "auto"; numpy object arrays with indices.
    est2 = tl.DecisionTreeClassifier(categorical_features=["cat", "flag", "s"],
                                     random_state=0).fit(df, y)
    assert est2.tree_ == est.tree_
    arr = df.astype(object).to_numpy()
    est3 = tl.DecisionTreeClassifier(categorical_features=[0, 1, 2], random_state=0).fit(arr, y)
    assert est3.score(arr, y) == 1.0


def test_unseen_level_is_routed_as_missing():
    X = pd.DataFrame({"c": ["a", "b", "c", "a", "b", "c"] * 5})
    y = np.array([0, 1, 1, 0, 1, 1] * 5)
    for missing in ("learn", "c45", "impute"):
        est = tl.DecisionTreeClassifier(missing=missing).fit(X, y)
        new = pd.DataFrame({"c": ["zzz", None]})
        proba = est.predict_proba(new)
        np.testing.assert_allclose(proba[0], proba[1])
    est = tl.DecisionTreeClassifier(missing="c45").fit(X, y)
    # C4.5: the unseen level is spread over the branches by their weights (10 a, 20 b/c).
    np.testing.assert_allclose(est.predict_proba(pd.DataFrame({"c": ["zzz"]}))[0],
                               [1 / 3, 2 / 3])


def test_edge_columns_all_missing_one_level_many_levels():
    rng = np.random.default_rng(0)
    n = 20_000
    X = pd.DataFrame({
        "empty": [None] * n,
        "one": ["only"] * n,
        "many": [f"id{i % 10_000}" for i in range(n)],
        "num_nan": np.full(n, np.nan),
        "x": rng.normal(size=n),
    })
    y = (X["x"] > 0).to_numpy() ^ (rng.random(n) < 0.1)
    for split in ("binary", "multiway"):
        est = tl.DecisionTreeClassifier(categorical_split=split, max_depth=4,
                                        random_state=0).fit(X, y)
        assert len(est.categories_[2]) == 10_000
        assert len(est.categories_[0]) == 0 and list(est.categories_[1]) == ["only"]
        used = {est.feature_names_in_[f] for f in est.tree_.feature if f >= 0}
        assert not used & {"empty", "one", "num_nan"}
        assert est.score(X, y) > 0.85
        est.predict(X.iloc[:10].assign(many="never seen", one=None))


# -- missing values ------------------------------------------------------------------------


def _nan_data(rng, n, p, regression):
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < 0.2] = np.nan
    y = rng.integers(0, 20, n).astype(float) if regression else rng.integers(0, 3, n)
    return X, y


@pytest.mark.parametrize("regression", [False, True])
def test_learn_equals_scikit_learn_with_nan(regression):
    """scikit-learn's missing-value support (>= 1.3): same candidate splits (missing left,
    missing right, missing alone), same feature draw, same routing at prediction."""
    rng = np.random.default_rng(3)
    for t in range(12):
        X, y = _nan_data(rng, int(rng.integers(20, 250)), int(rng.integers(1, 5)), regression)
        kw = dict(max_depth=[None, 3][t % 2], random_state=t,
                  max_features=[None, 2][t % 3 == 0] if X.shape[1] > 1 else None)
        if regression:
            a, b = tl.DecisionTreeRegressor(**kw), SkRegressor(**kw)
        else:
            crit = ["gini", "entropy"][t % 2]
            a = tl.DecisionTreeClassifier(criterion=crit, **kw)
            b = SkClassifier(criterion=crit, **kw)
        a.fit(X, y)
        b.fit(X, y)
        ta, tb = a.tree_, b.tree_
        np.testing.assert_array_equal(ta.feature, tb.feature)
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        np.testing.assert_array_equal(ta.n_node_samples, tb.n_node_samples)
        inner = ta.children_left != -1
        np.testing.assert_array_equal(ta.missing_go_to_left[inner],
                                      tb.missing_go_to_left[inner].astype(bool))
        Xt, _ = _nan_data(rng, 60, X.shape[1], regression)
        np.testing.assert_allclose(a.predict(Xt), b.predict(Xt))
        np.testing.assert_array_equal(a.apply(Xt), b.apply(Xt))


@pytest.mark.parametrize("crit", ["gini", "entropy", "gain_ratio", "chi2", "misclassification",
                                  "squared_error", "absolute_error"])
def test_general_engine_equals_numeric_engine(crit):
    """The general engine (forced here by one constant categorical column, which neither
    engine can split) grows the numeric engine's tree on numeric data without NaN."""
    rng = np.random.default_rng(5)
    regression = crit in ("squared_error", "absolute_error")
    cls = tl.DecisionTreeRegressor if regression else tl.DecisionTreeClassifier
    for t in range(6):
        n, p = int(rng.integers(30, 300)), int(rng.integers(1, 5))
        X = np.column_stack([rng.normal(size=(n, p)), np.zeros(n)])
        y = rng.integers(0, 3, n) if not regression else rng.integers(0, 50, n) / 4
        w = rng.integers(1, 3, n).astype(float)
        kw = dict(random_state=t, max_depth=[None, 4][t % 2], criterion=crit,
                  max_leaf_nodes=[None, 9][t % 3 == 0], min_samples_leaf=1 + t % 3)
        plain = cls(**kw, categorical_features=None).fit(X, y, sample_weight=w)
        general = cls(**kw, categorical_features=[p]).fit(X, y, sample_weight=w)
        assert general.is_categorical_[p]
        for name in ("feature", "threshold", "n_node_samples", "impurity", "value",
                     "children_left", "children_right"):
            np.testing.assert_allclose(getattr(general.tree_, name),
                                       getattr(plain.tree_, name), rtol=1e-12, err_msg=name)


def test_hist_general_engine_equals_exact_on_low_cardinality():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 12, (400, 3)).astype(float)
    X[rng.random(X.shape) < 0.15] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.integers(0, 5, 400)) % 3
    for missing in ("learn", "c45", "impute"):
        a = tl.DecisionTreeClassifier(splitter="best", missing=missing, random_state=0).fit(X, y)
        b = tl.DecisionTreeClassifier(splitter="hist", missing=missing, random_state=0).fit(X, y)
        # Same nodes; thresholds differ where a node lacks a value (exact: midpoint of the
        # node's neighbouring values, hist: the global bin edge), routing the data alike.
        # Impurities and values agree to rounding: the histogram splitter sums the node's
        # statistics in another order (parent minus sibling).
        for name in ("feature", "n_node_samples", "missing_branch", "branch_child"):
            np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name))
        for name in ("impurity", "value", "weighted_n_node_samples"):
            np.testing.assert_allclose(getattr(a.tree_, name), getattr(b.tree_, name),
                                       rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(a.apply(X), b.apply(X))


@pytest.mark.parametrize("missing", ["learn", "c45", "impute"])
def test_without_nan_every_mode_grows_the_same_tree(missing):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    y = rng.integers(0, 2, 300)
    base = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    est = tl.DecisionTreeClassifier(random_state=0, missing=missing).fit(X, y)
    for name in ("feature", "threshold", "value", "children_left", "n_node_samples"):
        np.testing.assert_array_equal(getattr(est.tree_, name), getattr(base.tree_, name))
    np.testing.assert_array_equal(est.predict(X), base.predict(X))
    inner = est.tree_.children_left != -1
    mb = est.tree_.missing_branch[inner]
    assert np.all(mb == -1) if missing == "c45" else np.all((mb == 0) | (mb == 1))


def test_impute_sends_missing_where_the_node_median_goes():
    x = np.array([1.0, 2, 3, 4, 5, 6, 7, np.nan, np.nan, np.nan])
    y = np.array([0, 0, 0, 1, 1, 1, 1, 0, 0, 0])
    est = tl.DecisionTreeClassifier(missing="impute", max_depth=1).fit(x[:, None], y)
    # The three missing rows (class 0) take the known median, 4: the value 4 then holds one
    # case of class 1 and three of class 0, and the best cut moves from 3.5 to 4.5, with
    # 4 (and so the missing values) on the left: left 6 x class 0 + 1 x class 1, right 3 x 1.
    t = est.tree_
    assert t.threshold[0] == 4.5 and t.missing_branch[0] == 0
    np.testing.assert_allclose(t.value[1, 0], [6 / 7, 1 / 7])
    np.testing.assert_allclose(t.value[2, 0], [0.0, 1.0])
    assert est.predict([[np.nan]])[0] == est.predict([[4.0]])[0] == 0


def test_c45_fit_and_prediction_by_hand():
    """A case with a missing value at fit goes to both branches with the known shares
    (here 4/6 and 2/6 of weight 1); a missing value at prediction averages the leaves."""
    x = np.array([1.0, 2, 3, 4, 5, 6, np.nan])
    y = np.array([0, 0, 0, 0, 1, 1, 1])
    est = tl.DecisionTreeClassifier(missing="c45", max_depth=1).fit(x[:, None], y)
    t = est.tree_
    left, right = t.children(0)
    assert t.threshold[0] == 4.5
    np.testing.assert_allclose(t.weighted_n_node_samples[[left, right]], [4 + 4 / 6, 2 + 2 / 6])
    np.testing.assert_allclose(t.value[left, 0], [4 / (14 / 3), (4 / 6) / (14 / 3)])
    np.testing.assert_array_equal(t.n_node_samples[[0, left, right]], [7, 5, 3])
    expect = (t.value[left, 0] * (14 / 3) + t.value[right, 0] * (7 / 3)) / 7
    np.testing.assert_allclose(est.predict_proba([[np.nan]])[0], expect)
    path = est.decision_path([[np.nan], [1.0]]).toarray()
    np.testing.assert_array_equal(path, [[1, 1, 1], [1, 1, 0]])


def _random_table(rng, n):
    X = pd.DataFrame({
        "a": rng.choice(["p", "q", "r", "s", None], n),
        "b": rng.normal(size=n),
        "c": rng.choice(list("uvwxyz"), n),
    })
    X.loc[rng.random(n) < 0.2, "b"] = np.nan
    y = (X["a"].isin(["p", "q"]).to_numpy() ^ (np.nan_to_num(X["b"]) > 0.3)
         ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


@pytest.mark.parametrize("missing", ["learn", "c45", "impute"])
@pytest.mark.parametrize("split", ["binary", "multiway"])
def test_route_kernel_equals_naive_twin(missing, split):
    rng = np.random.default_rng(8)
    X, y = _random_table(rng, 400)
    est = tl.DecisionTreeClassifier(missing=missing, categorical_split=split, max_depth=6,
                                    random_state=0).fit(X, y)
    Xt, _ = _random_table(rng, 300)
    Xt.loc[:20, "c"] = "unseen"
    enc = est._validate_X_predict(Xt)
    np.testing.assert_allclose(est.tree_.predict(enc)[:, 0, :], naive_route(est.tree_, enc))
    proba = est.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    leaves = est.apply(Xt)
    assert np.all(est.tree_.children_left[leaves] == -1)


# -- costs ---------------------------------------------------------------------------------


def test_misclassification_cost_matrix():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 2))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=400) > 0.5, "sick", "well")
    est = tl.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    zero_one = tl.DecisionTreeClassifier(max_depth=3, random_state=0,
                                         misclassification_cost=[[0, 1], [1, 0]]).fit(X, y)
    np.testing.assert_array_equal(zero_one.predict(X), est.predict(X))
    # Missing a sick case (true "sick", predicted "well") costs 10.
    costly = tl.DecisionTreeClassifier(max_depth=3, random_state=0,
                                       misclassification_cost=[[0, 10], [1, 0]]).fit(X, y)
    proba = costly.predict_proba(X)
    expected = np.where(proba[:, 0] * 10 > proba[:, 1] * 1, "sick", "well")
    np.testing.assert_array_equal(costly.predict(X), expected)
    assert (costly.predict(X) == "sick").sum() > (est.predict(X) == "sick").sum()
    assert costly.tree_ == est.tree_  # splits do not use the costs
    with pytest.raises(ValueError, match="2 x 2"):
        tl.DecisionTreeClassifier(misclassification_cost=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        tl.DecisionTreeClassifier(misclassification_cost=[[0, -1], [1, 0]]).fit(X, y)


def test_cost_functions_match_their_formulas():
    assert cost_score(0.5, 2.0, COST_TAN, 1.0) == pytest.approx(0.125)
    assert cost_score(0.5, 3.0, COST_NUNEZ, 2.0) == pytest.approx((2 ** 0.5 - 1) / 16)


@pytest.mark.parametrize("function", ["tan", "nunez"])
def test_feature_costs_prefer_a_cheap_feature(function):
    rng = np.random.default_rng(10)
    n = 600
    y = rng.integers(0, 2, n)
    good = y ^ (rng.random(n) < 0.05)  # 95% agreement: the best split
    fair = y ^ (rng.random(n) < 0.15)  # 85% agreement
    X = np.column_stack([good, fair]).astype(float)
    free = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, y)
    assert free.tree_.feature[0] == 0
    priced = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1, feature_costs=[50, 1],
                                       cost_function=function).fit(X, y)
    assert priced.tree_.feature[0] == 1
    by_name = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1,
                                        feature_costs={0: 50}, cost_function=function)
    assert by_name.fit(X, y).tree_.feature[0] == 1
    if function == "nunez":  # w = 0 ignores costs
        flat = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1, feature_costs=[50, 1],
                                         cost_function="nunez", cost_weight=0).fit(X, y)
        assert flat.tree_.feature[0] == 0


# -- the tree with multiway nodes: invariants, pruning, export, interop ---------------------


def _multiway_model():
    rng = np.random.default_rng(11)
    X, y = _random_table(rng, 500)
    return tl.DecisionTreeClassifier(categorical_split="multiway", missing="c45",
                                     random_state=0).fit(X, y), X, y


def test_multiway_tree_invariants_importances_and_pruning():
    est, X, y = _multiway_model()
    t = est.tree_
    assert np.any(t.n_branches > 2) and not t.is_binary
    imp = est.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and np.all(imp >= 0)
    path = cost_complexity_path(t)
    assert np.all(np.diff(path.ccp_alphas) >= -1e-15)  # rounding of equal alphas
    # Splits that do not lower the impurity (possible with fractional cases) get alpha 0,
    # give or take rounding: compare at alphas cleared of it.
    alphas = np.maximum.accumulate(np.maximum(path.ccp_alphas, 0.0))
    sizes = [prune_to_alpha(t, a).node_count for a in alphas]
    assert sizes[0] <= t.node_count and sizes[-1] == 1
    assert np.all(np.diff(sizes) <= 0)
    pruned = clone(est).set_params(ccp_alpha=float(path.ccp_alphas[len(path.ccp_alphas) // 2]))
    pruned.fit(X, y)
    assert pruned.tree_.node_count < t.node_count
    pruned.predict_proba(X)
    keep = np.zeros(t.node_count, dtype=bool)
    keep[0] = True
    assert t.subtree(keep).node_count == 1


def test_tree_check_rejects_broken_extended_arrays():
    est, _, _ = _multiway_model()
    t = est.tree_
    arrays = dict(branch_ptr=t.branch_ptr, branch_child=t.branch_child, cat_ptr=t.cat_ptr,
                  cat_branch=t.cat_branch, missing_branch=t.missing_branch,
                  missing_seen=t.missing_seen)
    base = (t.n_features, t.n_classes, t.children_left, t.children_right, t.feature,
            t.threshold, t.impurity, t.n_node_samples, t.weighted_n_node_samples, t.value)
    assert tl.Tree(*base, **arrays) == t
    with pytest.raises(ValueError, match="missing_seen has 2 rows"):
        tl.Tree(*base, **{**arrays, "missing_seen": np.zeros(2, bool)})
    cat = t.cat_branch.copy()
    cat[0] = 99
    with pytest.raises(ValueError, match="branch that does not exist"):
        tl.Tree(*base, **{**arrays, "cat_branch": cat})
    mb = t.missing_branch.copy()
    mb[0] = 50
    with pytest.raises(ValueError, match="missing_branch"):
        tl.Tree(*base, **{**arrays, "missing_branch": mb})
    kids = t.branch_child.copy()
    kids[[0, 1]] = kids[[1, 0]]
    with pytest.raises(ValueError, match="first/last branch"):
        tl.Tree(*base, **{**arrays, "branch_child": kids})
    with pytest.raises(ValueError, match="together"):
        tl.Tree(*base, branch_ptr=t.branch_ptr)


def test_interop_with_missing_values():
    rng = np.random.default_rng(12)
    X, y = _nan_data(rng, 200, 3, False)
    sk = SkClassifier(random_state=0).fit(X, y)
    ours = tl.from_sklearn(sk)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    back = tl.to_sklearn(tl.DecisionTreeClassifier(random_state=0).fit(X, y))
    np.testing.assert_array_equal(back.predict(X), sk.predict(X))
    with pytest.raises(ValueError, match="binary tree"):
        tl.to_sklearn(_multiway_model()[0])


def test_pipeline_and_grid_search_on_a_dataframe():
    rng = np.random.default_rng(13)
    X, y = _random_table(rng, 300)
    pipe = make_pipeline(FunctionTransformer(lambda d: d), tl.CARTClassifier(random_state=0))
    search = GridSearchCV(pipe, {"cartclassifier__max_depth": [2, 4],
                                 "cartclassifier__missing": ["learn", "c45"]}, cv=3)
    search.fit(X, y)
    assert search.best_score_ > 0.6


# -- presets and validation ---------------------------------------------------------------


def test_presets_settings():
    assert tl.ID3Classifier().get_params()["criterion"] == "entropy"
    c45 = tl.C45Classifier().get_params()
    assert (c45["criterion"], c45["categorical_split"], c45["missing"],
            c45["min_samples_leaf"]) == ("gain_ratio", "multiway", "c45", 2)
    assert tl.CARTClassifier().criterion == "gini"
    assert tl.CARTRegressor().criterion == "squared_error"
    assert clone(tl.C45Classifier(max_depth=3)).max_depth == 3
    with pytest.raises(TypeError, match="unexpected"):
        tl.ID3Classifier(depth=3)
    X, y = _golf()
    assert tl.CARTClassifier(prune=None).fit(X, y).score(X, y) == 1.0
    # 14 cases: 10-fold cross-validation with the 1-SE rule keeps at most one split
    assert tl.CARTClassifier(random_state=0).fit(X, y).tree_.node_count <= 3
    reg = tl.CARTRegressor().fit(X.drop(columns="humidity"), X["humidity"])
    assert reg.predict(X.drop(columns="humidity")).shape == (14,)


def test_input_errors_name_the_problem():
    X = pd.DataFrame({"c": ["a", "b"] * 5, "x": np.arange(10.0)})
    y = np.arange(10) % 2
    clf = tl.DecisionTreeClassifier
    with pytest.raises(ValueError, match="column 'nope'"):
        clf(categorical_features=["nope"]).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        clf(categorical_features=[5]).fit(X, y)
    with pytest.raises(ValueError, match="boolean mask of length 1"):
        clf(categorical_features=[True]).fit(X, y)
    with pytest.raises(ValueError, match="'c' holds non-numeric"):
        clf(categorical_features=[1]).fit(X, y)
    with pytest.raises(ValueError, match='splitter="random"'):
        clf(splitter="random").fit(X, y)
    with pytest.raises(ValueError, match="one cost per feature"):
        clf(feature_costs=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="positive"):
        clf(feature_costs=[1.0, -2.0]).fit(X, y)
    with pytest.raises(ValueError, match="missing"):
        clf(missing="drop").fit(X, y)
    Xs = sp.csr_matrix(np.array([[np.nan, 1.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="sparse X with missing"):
        clf().fit(Xs, [0, 1])
    with pytest.raises(TypeError, match="dense"):
        clf(categorical_features=[0]).fit(sp.csr_matrix(np.eye(2)), [0, 1])
    est = clf().fit(X, y)
    with pytest.warns(UserWarning, match="feature names"), \
            pytest.raises(ValueError, match="expecting 2 features"):
        est.predict(X[["c"]].to_numpy())
    with pytest.raises(ValueError, match="infinity"):
        clf().fit(X.assign(x=np.inf), y)
    assert math.isfinite(est.score(X, y))


def test_impurity_decrease_helper_matches_the_literature():
    """The naive helper itself: Hair's gain on the sunburn table is 0.454 bits."""
    hair = SUNBURN["Hair"].to_numpy()
    y = (SUNBURN_Y == "Burn").astype(int)
    groups = [(y[hair == h], np.ones((hair == h).sum())) for h in ("Blonde", "Brown", "Red")]
    assert impurity_decrease(groups, ENTROPY, 2) == pytest.approx(0.4544, abs=1e-4)


# -- the split kernel against brute force (hypothesis) --------------------------------------


@given(st.integers(0, 2**31 - 1), st.integers(2, 40), st.integers(1, 6),
       st.sampled_from([GINI, ENTROPY, SQUARED_ERROR, ABSOLUTE_ERROR]), st.integers(1, 3))
def test_numeric_learn_scan_equals_brute_force(seed, n, n_codes, crit, min_leaf):
    """Every cut between known codes with the missing rows left or right, and the missing rows
    alone: the kernel's best score is the best of them all (scores from the definitions)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, n_codes, n).astype(np.int32)  # -1: missing
    w = rng.integers(1, 4, n).astype(float)
    regression = crit in (SQUARED_ERROR, ABSOLUTE_ERROR)
    y = rng.integers(0, 3, n)
    ycls = y.astype(np.int32)
    yreg = y.astype(float)
    out, _ = _search_codes(codes, n_codes, False, w, ycls, yreg, crit, MISSING_LEARN,
                           min_leaf=min_leaf, n_classes=3)
    res = out[levels.R_SCORE:levels.R_SCORE + 1]
    known = sorted(set(codes[codes >= 0].tolist()))
    miss = codes < 0
    best = -np.inf
    candidates = [(known[:j + 1], side) for j in range(len(known) - 1) for side in (0, 1)]
    if miss.any() and known:
        candidates.append((known, 1))  # known left, missing alone right
    for left_codes, side in candidates:
        left = np.isin(codes, left_codes) | (miss & (side == 0))
        if left.sum() < min_leaf or (~left).sum() < min_leaf:
            continue
        if not miss.any() and side == 0:
            continue
        yy = yreg if regression else ycls
        best = max(best, split_score(yy[left], w[left], yy[~left], w[~left], crit,
                                     None if regression else 3))
    if best == -np.inf:
        assert res[0] == -np.inf
    else:
        assert res[0] == pytest.approx(best, rel=1e-9, abs=1e-9)


@given(st.integers(0, 2**31 - 1), st.integers(1, 60), st.integers(1, 300))
def test_summarize_sorted_equals_numpy(seed, n, n_codes):
    """The per-level summary of a node's sorted list against np.unique / np.bincount."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(-1, n_codes, n)
    v = np.where(codes < 0, np.nan, codes).astype(np.float32)
    order = np.argsort(v, kind="stable")
    rw = rng.random(n)
    ycls = rng.integers(0, 2, n).astype(np.int32)
    V = v[order].reshape(1, n)
    C = ycls[order].reshape(1, n)
    W = rw[order].reshape(1, n)
    nm = int(exact.tail_missing(V, 0, 0, n))
    ws, iw, stw = levels.workspace(n + 1, 2)
    u = exact.summarize_sorted(V, C, None, W, 0, 0, n - nm, stw, ws, iw)
    mw = exact.range_stats(stw, levels.SR_MISS, C, None, W, 0, n - nm, n)
    known = codes >= 0
    np.testing.assert_array_equal(iw[levels.I_UCODE, :u], np.unique(codes[known]))
    for j, code in enumerate(iw[levels.I_UCODE, :u]):
        sel = codes == code
        assert iw[levels.I_UN, j] == sel.sum()
        assert ws[levels.W_UW, j] == pytest.approx(rw[sel].sum())
        np.testing.assert_allclose(stw[levels.SR_ENTRIES + j], np.bincount(ycls[sel], rw[sel], 2))
    assert nm == (~known).sum() and mw == pytest.approx(rw[~known].sum())
    np.testing.assert_allclose(stw[levels.SR_MISS], np.bincount(ycls[~known], rw[~known], 2))


def test_multiway_model_pickles_and_prints():
    import pickle

    est, X, _ = _multiway_model()
    again = pickle.loads(pickle.dumps(est))
    assert again.tree_ == est.tree_
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    text = tl.export_text(est, max_depth=2)
    assert "a = " in text or "c = " in text
    assert "truncated branch" in text


def test_encoding_without_pandas_matches(monkeypatch):
    """The pure-Python fallback of the level lookups gives the same codes as pandas'."""
    import treelearn.engine.columns as features

    X = pd.DataFrame({"c": pd.Categorical(["a", None, "b", "a"]), "s": ["x", None, "y", 3],
                      "n": [1.0, np.nan, 2.0, 3.0]})
    mask = np.array([True, True, False])
    levels = features.learn_levels(X, mask)
    fast = features.encode_table(X, mask, levels)
    new = X.assign(s=["zzz", "x", None, 3])
    fast_new = features.encode_table(new, mask, levels)
    monkeypatch.setattr(features, "_pd", None)
    obj = X.astype(object).to_numpy()
    slow_levels = features.learn_levels(obj, mask)
    assert [list(a) for a in slow_levels[:2]] == [list(a) for a in levels[:2]]
    np.testing.assert_array_equal(features.encode_table(obj, mask, levels), fast)
    np.testing.assert_array_equal(features.encode_table(new.astype(object).to_numpy(), mask,
                                                        levels), fast_new)
    assert list(levels[1]) == [3, "x", "y"]  # mixed types: by type name, then value
    assert np.isnan(fast_new[0, 1]) and np.isnan(fast_new[2, 1]) and fast_new[1, 1] == 1


@pytest.mark.parametrize("missing", ["learn", "c45", "impute"])
@pytest.mark.parametrize("split", ["binary", "multiway"])
def test_absolute_error_on_tables(missing, split):
    """Absolute error in the general engine: node values are weighted medians and impurities
    mean absolute deviations of the node's (possibly fractional) rows; the stump's split on a
    categorical feature with missing values lowers the deviation."""
    from naive import min_abs_cost, weighted_median

    rng = np.random.default_rng(14)
    n = 150
    X = pd.DataFrame({"c": rng.choice(["a", "b", "c", "d", None], n),
                      "x": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n))})
    y = np.where(X["c"].isin(["a", "b"]), 5.0, 0.0) + rng.normal(size=n)
    w = rng.integers(1, 3, n).astype(float)
    est = tl.DecisionTreeRegressor(criterion="absolute_error", categorical_split=split,
                                   missing=missing, max_depth=3, random_state=0)
    est.fit(X, y, sample_weight=w)
    t = est.tree_
    assert t.impurity[t.children(0)].max() < t.impurity[0]
    leaves = est.apply(X)
    if missing != "c45":  # each row in exactly one leaf with its full weight
        for leaf in np.unique(leaves):
            sel = leaves == leaf
            assert t.value[leaf, 0, 0] == pytest.approx(weighted_median(y[sel], w[sel]))
            assert t.impurity[leaf] == pytest.approx(min_abs_cost(y[sel], w[sel]) / w[sel].sum())
    assert np.isfinite(est.predict(X)).all() and est.score(X, y) > 0.5


def test_remaining_error_messages():
    """Error paths listed as untested in the categorical issue's closing note."""
    df = pd.DataFrame({"c": list("abab"), "x": [0.0, 1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="column indices or names"):
        tl.DecisionTreeClassifier(categorical_features=[1.5]).fit(df, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="feature_costs names feature 'z'"):
        tl.DecisionTreeClassifier(feature_costs={"z": 2.0}).fit(df, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="0 sample"):
        tl.DecisionTreeClassifier().fit(df.iloc[:0], [])
    model = tl.ID3Classifier().fit(df, [0, 1, 0, 1])
    with pytest.raises(TypeError, match="binary numeric"):
        model.tree_.apply(sp.csr_matrix(np.zeros((2, 2))))
    t = model.tree_
    with pytest.raises(ValueError, match="cat_ptr"):
        tl.Tree(t.n_features, t.n_classes, t.children_left, t.children_right, t.feature,
             t.threshold, t.impurity, t.n_node_samples, t.weighted_n_node_samples, t.value,
             branch_ptr=t.branch_ptr, branch_child=t.branch_child,
             cat_ptr=np.r_[t.cat_ptr[:-1], t.cat_ptr[-1] + 5], cat_branch=t.cat_branch,
             missing_branch=t.missing_branch)


def _info(counts) -> float:
    p = np.asarray(counts, dtype=float)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log2(p)).sum())


def test_c45_gain_ratio_chooses_among_tests_of_at_least_average_gain():
    """Quinlan (1993), C4.5 ch. 2: "select a test to maximize the gain ratio, subject to the
    constraint that the information gain must be large -- at least as great as the average
    gain over all tests examined". Here A isolates two cases of class 1 (gain 0.108 bits,
    split information 0.469, ratio 0.230) and B halves the data 7:3 / 3:7 (gain 0.119, split
    information 1, ratio 0.119): A has the best ratio but a gain below the average 0.1135, so
    C4.5 splits on B."""
    y = np.array([1] * 10 + [0] * 10)
    X = pd.DataFrame({"A": ["x"] * 2 + ["y"] * 18,
                      "B": ["p"] * 7 + ["q"] * 3 + ["p"] * 3 + ["q"] * 7})
    gain_a = 1.0 - 0.9 * _info([8, 10])
    gain_b = 1.0 - _info([7, 3])
    assert round(gain_a, 3) == 0.108 and round(gain_b, 3) == 0.119
    assert round(gain_a / _info([2, 18]), 3) == 0.230
    assert gain_a < (gain_a + gain_b) / 2 < gain_b
    kw = dict(criterion="gain_ratio", categorical_split="multiway", max_depth=1)
    plain = tl.DecisionTreeClassifier(**kw).fit(X, y)
    rule = tl.DecisionTreeClassifier(**kw, average_gain=True).fit(X, y)
    assert plain.feature_names_in_[plain.tree_.feature[0]] == "A"
    assert rule.feature_names_in_[rule.tree_.feature[0]] == "B"
    assert tl.C45Classifier().get_params()["average_gain"] is True
    assert tl.C45Classifier(prune=None, min_samples_leaf=1, max_depth=1).fit(X, y) \
        .tree_.feature[0] == 1


def test_c45_release8_threshold_penalty():
    """Quinlan (1996), "Improved use of continuous attributes in C4.5": a threshold test's gain
    is lowered by log2(N - 1) / |D| for its N - 1 candidate cuts. The numeric x (40 distinct
    values) has the best gain, 0.531 bits; the categorical c has 0.459; the penalty,
    log2(39) / 40 = 0.132, puts x below c."""
    x = np.arange(40, dtype=float)
    y = (x >= 20).astype(int)
    y[[5, 12, 30, 31]] ^= 1
    c = np.where(x >= 20, "hi", "lo")
    c[25] = "lo"
    X = pd.DataFrame({"x": x, "c": c})
    left = y[x <= 19.5]
    gain_x = _info(np.bincount(y)) - 0.5 * _info(np.bincount(left)) \
        - 0.5 * _info(np.bincount(y[x > 19.5]))
    gain_c = _info(np.bincount(y)) - sum((c == v).mean() * _info(np.bincount(y[c == v]))
                                         for v in ("hi", "lo"))
    penalty = math.log2(39) / 40
    assert round(gain_x, 3) == 0.531 and round(gain_c, 3) == 0.459
    assert gain_x - penalty < gain_c < gain_x
    plain = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(X, y)
    fair = tl.DecisionTreeClassifier(criterion="entropy", max_depth=1,
                                     threshold_penalty=True).fit(X, y)
    assert plain.feature_names_in_[plain.tree_.feature[0]] == "x"
    assert fair.feature_names_in_[fair.tree_.feature[0]] == "c"
    assert tl.C45Classifier().get_params()["threshold_penalty"] is True
