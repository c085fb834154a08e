"""OptimalTreeClassifier: the optimum against a brute-force twin, the literature's optima,
the time limit, and the readers every tree has."""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

import treelearn as tl
from treelearn import OptimalTreeClassifier
from treelearn.engine import optimal as kernel
from treelearn.engine.config import njit

DATA = Path(__file__).parent / "data" / "contree"
JIT = os.environ.get("NUMBA_DISABLE_JIT", "0") != "1"


def brute_force(X, y, w, K, depth, alpha, min_leaf, is_cat=None):
    """The least objective over every tree of depth <= ``depth``, by trying every split of
    every node, as printed: the misclassified weight of each leaf plus ``alpha`` per leaf.
    A numeric column splits at each midpoint between two distinct values at the node; a
    categorical one (``is_cat``; NaN: missing) by ``x == v`` against the rest, for every
    value ``v`` at the node, missing as a value of its own (the estimator's test per level)."""
    def sides(rows, f):
        x = X[rows, f]
        if is_cat is None or not is_cat[f]:
            vals = np.unique(x)
            return [x <= (a + b) / 2 for a, b in zip(vals[:-1], vals[1:], strict=True)]
        nan = np.isnan(x)
        tests = [x == v for v in np.unique(x[~nan])] + ([nan] if nan.any() else [])
        return [t for t in tests if 0 < t.sum() < len(rows)]

    def cost(rows, k):
        cw = np.bincount(y[rows], weights=w[rows], minlength=K)
        best = cw.sum() - cw.max() + alpha
        if k == 0:
            return best
        for f in range(X.shape[1]):
            for go_left in sides(rows, f):
                left, right = rows[go_left], rows[~go_left]
                if len(left) >= min_leaf and len(right) >= min_leaf:
                    best = min(best, cost(left, k - 1) + cost(right, k - 1))
        return best

    return cost(np.arange(len(y)), depth)


def tree_objective(model, X, y, w, alpha):
    """The fitted tree's objective from its predictions: misclassified weight plus alpha per
    leaf (what the search claims in ``objective_``)."""
    wrong = model.predict(X) != y
    return float(w[wrong].sum()) + alpha * model.tree_.n_leaves


@st.composite
def tables(draw):
    n = draw(st.integers(1, 22))
    p = draw(st.integers(1, 3))
    K = draw(st.integers(2, 5))
    levels = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(np.float64)
    y = rng.integers(0, K, size=n)
    w = rng.choice([0.5, 1.0, 2.0], size=n) if draw(st.booleans()) else np.ones(n)
    depth = draw(st.integers(1, 3 if n <= 12 else 2))
    alpha = draw(st.sampled_from([0.0, 0.5, 1.0, 2.5]))
    min_leaf = draw(st.sampled_from([1, 1, 2, 3]))
    return X, y, w, depth, alpha, min_leaf


@settings(max_examples=60 if JIT else 15, deadline=None)
@given(tables())
def test_optimum_equals_brute_force(case):
    X, y, w, depth, alpha, min_leaf = case
    model = OptimalTreeClassifier(max_depth=depth, ccp_alpha=alpha,
                                  min_samples_leaf=min_leaf).fit(X, y, sample_weight=w)
    classes, codes = np.unique(y, return_inverse=True)
    best = brute_force(X.astype(np.float32), codes, w, classes.size, depth, alpha, min_leaf)
    assert model.optimal_
    assert model.objective_ == pytest.approx(best, abs=1e-9)
    assert model.lower_bound_ == model.objective_
    assert model.objective_ <= model.greedy_objective_ + 1e-9
    assert tree_objective(model, X, y, w, alpha) == pytest.approx(model.objective_, abs=1e-9)
    assert model.get_depth() <= depth
    if model.tree_.node_count > 1:  # a lone root is a tree whatever its size
        assert model.tree_.n_node_samples[model.tree_.children_left == -1].min() >= min_leaf


@settings(max_examples=40 if JIT else 10, deadline=None)
@given(tables())
def test_search_kernel_bounds(case):
    """With any upper bound the kernel returns the optimum when it is below the bound and a
    value at least the bound (a lower bound of the optimum) otherwise."""
    X, y, w, depth, alpha, min_leaf = case
    classes, y = np.unique(y, return_inverse=True)
    X = X.astype(np.float32)
    best = brute_force(X, y, w, classes.size, depth, alpha, min_leaf)
    n, p = X.shape
    ranks = np.stack([np.unique(X[:, f], return_inverse=True)[1] for f in range(p)])
    ranks = ranks.astype(np.int32)
    # one memo kept over the calls, so answers stored under one bound serve the next; a
    # memo of two slots overwrites them all the time
    memos = [kernel.memo(n, depth), kernel.memo(n, depth, capacity=2)]
    for ub in (best - 1.0, best, best + 1e-6, np.inf, best - 0.5):
        for memo in memos:
            # y and w: 0/1 tables of rows weighing alike take the depth-two solver of counts
            bufs = kernel.buffers(ranks, classes.size, depth, y, w)
            ctl = np.zeros(kernel.CTL_FIELDS)
            v = kernel.solve((ranks, y.astype(np.int64), w), bufs, memo,
                             np.array([alpha, 1e-9]),
                             np.array([min_leaf, int(min_leaf == 1)], dtype=np.int64), ctl, 0,
                             depth, ub)
            if best < ub:
                assert v == pytest.approx(best, abs=1e-9)
            else:
                assert best + 1e-9 >= v >= ub - 1e-9


def _bank():
    d = np.loadtxt(DATA / "bank.txt")
    return d[:, 1:], d[:, 0].astype(int)


@pytest.mark.jit_only
def test_banknote_optima_nineteen_errors_at_depth_three_none_at_four():
    # ConTree (Briţa, van der Linden, Demirović, AAAI 2025) reports 19 training errors for
    # the optimal depth-3 tree on its bank table, and greedy CART about 74
    X, y = _bank()
    model = OptimalTreeClassifier(max_depth=3).fit(X, y)
    assert model.optimal_
    assert model.objective_ == 19.0
    assert (model.predict(X) != y).sum() == 19
    assert model.greedy_objective_ == 74.0
    # and 0 errors at depth 4 (the same paper), proven
    four = OptimalTreeClassifier(max_depth=4, time_limit=300).fit(X, y)
    assert four.optimal_ and four.objective_ == 0.0 == (four.predict(X) != y).sum()


def side_values(X, y, w, K, f, t, alpha):
    """Each side's least cost over its leaf and each feature's stumps after ``x_f <= t``, as
    printed: ``V[s, g] = min(leaf, min over cuts of g of the two leaves' errors + 2 alpha)``."""
    V = np.empty((2, X.shape[1]))
    for s, rows in enumerate((np.flatnonzero(X[:, f] <= t), np.flatnonzero(X[:, f] > t))):
        cw = np.bincount(y[rows], weights=w[rows], minlength=K)
        leaf = cw.sum() - cw.max() + alpha
        for g in range(X.shape[1]):
            best = leaf
            vals = np.unique(X[rows, g])
            for a, b in zip(vals[:-1], vals[1:], strict=True):
                cost = 2 * alpha
                for part in (rows[X[rows, g] <= (a + b) / 2], rows[X[rows, g] > (a + b) / 2]):
                    pc = np.bincount(y[part], weights=w[part], minlength=K)
                    cost += pc.sum() - pc.max()
                best = min(best, cost)
            V[s, g] = best
    return V


@settings(max_examples=80 if JIT else 20, deadline=None)
@given(st.integers(0, 2**31), st.integers(6, 40), st.integers(1, 4), st.integers(2, 4),
       st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 3.0]), st.booleans())
def test_depth_two_pass_bounds_per_feature(seed, n, p, K, alpha, margin, slack):
    """The depth-2 pass's per-feature values are lower bounds of the printed ones, exact below
    the side's best plus the margin where no bound was given; given valid lower bounds it
    skips features and still finds both sides' best stumps."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, p)).astype(np.float32)
    y = rng.integers(0, K, size=n)
    w = rng.choice([0.5, 1.0, 2.0], size=n)
    ranks = np.stack([np.unique(X[:, g], return_inverse=True)[1] for g in range(p)])
    ranks = ranks.astype(np.int32)
    vals = np.unique(X[:, 0])
    if vals.size < 2:
        return
    t = float(vals[rng.integers(0, vals.size - 1)])
    V = side_values(X, y, w, K, 0, t, alpha)
    bufs = kernel.buffers(ranks, K, 2)
    i = int((X[:, 0] <= t).sum())
    thr = int(ranks[0][bufs.lists[0, 0, i - 1]])
    glb = np.full((2, p), -np.inf)
    if slack:  # valid bounds below the truth
        glb = V - rng.choice([0.0, 0.0, 0.5, 5.0], size=V.shape)
    gv = np.empty((2, p))
    kernel._stumps_below((ranks, y, w), bufs, np.array([alpha, 1e-9]),
                         np.array([1, 1], dtype=np.int64), 0, 0, thr, i, glb, margin, gv)
    best = bufs.out[0, :, 0]
    np.testing.assert_allclose(best, V.min(axis=1), atol=1e-9)
    assert (gv <= V + 1e-9).all()
    if not slack:  # every feature scanned
        exact = V < best[:, None] + margin - 1e-9
        np.testing.assert_allclose(gv[exact], V[exact], atol=1e-9)


@pytest.mark.jit_only
def test_anneal_binary_features_ninety_one_errors_at_depth_four():
    # DL8.5 (Aglin, Nijssen, Schaus, AAAI 2020) and MurTree (Demirovic et al., JMLR 2022)
    # benchmark on pydl8.5's anneal table (93 binary features): the optimal depth-4 tree
    # makes 91 training errors
    d = np.loadtxt(Path(__file__).parent / "data" / "dl85" / "anneal.txt")
    X, y = d[:, 1:], d[:, 0].astype(int)
    model = OptimalTreeClassifier(max_depth=4, verbose=False).fit(X, y)
    assert model.optimal_ and model.objective_ == 91.0 == (model.predict(X) != y).sum()
    assert model.greedy_objective_ > 91.0
    # stopped early, the bound is the 34 rows that share their features with rows of the
    # other class and are outvoted (counted by pandas here)
    import pandas as pd
    groups = pd.DataFrame(X).assign(y=y).groupby(list(range(X.shape[1])))["y"]
    assert (groups.size() - groups.agg(lambda s: s.value_counts().max())).sum() == 34
    stopped = OptimalTreeClassifier(max_depth=5, time_limit=0.05, verbose=False).fit(X, y)
    assert not stopped.optimal_ and stopped.lower_bound_ == 34.0 <= stopped.objective_


def test_banknote_depth_two_and_a_time_limit():
    X, y = _bank()
    if not JIT:
        X, y = X[::4], y[::4]
    two = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert two.optimal_ and two.objective_ <= two.greedy_objective_
    if JIT:
        assert two.objective_ == 82.0  # ConTree's depth-2 optimum on the same table
    limited = OptimalTreeClassifier(max_depth=4, time_limit=0.3).fit(X, y)
    assert limited.objective_ <= limited.greedy_objective_
    assert tree_objective(limited, X, y, np.ones(len(y)), 0.0) == limited.objective_
    if not limited.optimal_:
        assert limited.lower_bound_ <= limited.objective_


@pytest.mark.jit_only
def test_iris_depth_two_is_greedy_and_depth_three_beats_it():
    X, y = load_iris(return_X_y=True)
    two = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert two.objective_ == 6.0 == two.greedy_objective_
    three = OptimalTreeClassifier(max_depth=3).fit(X, y)
    assert three.optimal_ and three.objective_ < three.greedy_objective_


@pytest.mark.jit_only
def test_cost_per_leaf_prefers_smaller_trees():
    X, y = load_iris(return_X_y=True)
    free = OptimalTreeClassifier(max_depth=3).fit(X, y)
    costly = OptimalTreeClassifier(max_depth=3, ccp_alpha=10.0).fit(X, y)
    assert costly.tree_.n_leaves < free.tree_.n_leaves
    assert costly.objective_ == pytest.approx(
        tree_objective(costly, X, y, np.ones(len(y)), 10.0))


def test_readers_files_and_sklearn(tmp_path):
    X, y = load_iris(return_X_y=True)
    model = OptimalTreeClassifier(max_depth=2).fit(X, y)
    assert "class:" in tl.export_text(model)
    path = tl.save(model, tmp_path / "optimal.tlm")
    back = tl.load(path)
    assert isinstance(back, OptimalTreeClassifier)
    assert back.optimal_ and back.objective_ == model.objective_
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    sk = tl.to_sklearn(model)
    np.testing.assert_allclose(sk.predict_proba(X), model.predict_proba(X))


def test_bad_input_is_refused_clearly():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="max_depth"):
        OptimalTreeClassifier(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match="max_depth"):
        OptimalTreeClassifier(max_depth=7).fit(X, y)
    with pytest.raises(ValueError, match="time_limit"):
        OptimalTreeClassifier(time_limit=-1.0).fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        OptimalTreeClassifier().fit(Xn, y)
    fitted = OptimalTreeClassifier(max_depth=1).fit(X, y)
    for method in (fitted.predict, fitted.predict_proba, fitted.apply, fitted.decision_path):
        with pytest.raises(ValueError, match="NaN"):  # no branch for a missing value
            method(Xn)
    with pytest.raises(TypeError):
        OptimalTreeClassifier().fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="Unknown label type"):
        OptimalTreeClassifier().fit(X, X[:, 0])


@parametrize_with_checks([OptimalTreeClassifier(max_depth=2)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def _noisy(n=1500, p=6, seed=0):
    """A table whose depth-4 optimum takes the search minutes: one weak signal in noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 2.0 * rng.normal(size=n) > 0).astype(int)


@pytest.mark.jit_only
def test_a_time_limit_keeps_a_valid_tree_of_a_search_it_cannot_finish():
    X, y = _noisy()
    OptimalTreeClassifier(max_depth=2).fit(X[:100], y[:100])  # compiled before the clock
    t = time.perf_counter()
    limited = OptimalTreeClassifier(max_depth=4, time_limit=0.5).fit(X, y)
    assert time.perf_counter() - t < 3.0
    assert not limited.optimal_
    assert limited.lower_bound_ <= limited.objective_ <= limited.greedy_objective_
    assert tree_objective(limited, X, y, np.ones(len(y)), 0.0) == limited.objective_


@pytest.mark.jit_only
@pytest.mark.parametrize("mode", ["raise", "keep"])
def test_ctrl_c_stops_the_search_and_raises_or_keeps_the_incumbent(mode):
    X, y = _noisy()
    OptimalTreeClassifier(max_depth=2).fit(X[:100], y[:100])  # compiled before the signal
    est = OptimalTreeClassifier(max_depth=4, on_interrupt=mode)
    timer = threading.Timer(0.5, _thread.interrupt_main, args=(signal.SIGINT,))
    t = time.perf_counter()
    timer.start()
    try:
        if mode == "raise":
            with pytest.raises(KeyboardInterrupt):
                est.fit(X, y)
            assert not hasattr(est, "tree_")  # no half-fitted model
        else:
            est.fit(X, y)
            assert not est.optimal_
            assert est.objective_ <= est.greedy_objective_
            assert tree_objective(est, X, y, np.ones(len(y)), 0.0) == est.objective_
        assert time.perf_counter() - t < 3.0
    finally:
        timer.cancel()
        timer.join()


def test_the_progress_bar_follows_the_root_features_and_the_incumbent(monkeypatch):
    import treelearn.optimal as module

    calls, seen = [], []

    class Bar:
        n = 0

        def __init__(self, disable):
            self.disable = disable

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def set_postfix_str(self, text):
            seen.append((self.n, text))

    def fake_progress(total, desc, *, quiet, unit):
        calls.append((total, quiet))
        return Bar(quiet)

    monkeypatch.setattr(module, "progress", fake_progress)
    X, y = _noisy(n=400, p=3)
    OptimalTreeClassifier(max_depth=3, time_limit=1.0).fit(X, y)
    OptimalTreeClassifier(max_depth=1, verbose=False).fit(X, y)
    assert calls == [(3, False), (3, True)]
    assert seen, "the bar was never updated"
    assert all(0 <= n <= 3 and text.startswith("objective ") for n, text in seen)
    assert all(", bound " in text for _, text in seen)
    objectives = [float(text.split()[1].rstrip(",")) for _, text in seen]
    assert objectives == sorted(objectives, reverse=True)  # the incumbent only improves


# -- category columns ------------------------------------------------------------------------

@settings(max_examples=40 if JIT else 10, deadline=None)
@given(tables(), st.integers(0, 2**31))
def test_optimum_with_category_columns_equals_brute_force(case, seed):
    X, y, w, depth, alpha, min_leaf = case
    rng = np.random.default_rng(seed)
    is_cat = rng.random(X.shape[1]) < 0.7
    X = X.copy()
    X[(rng.random(X.shape) < 0.2) & is_cat] = np.nan  # missing: a level of its own
    frame = np.asarray(X, dtype=object)
    model = OptimalTreeClassifier(max_depth=depth, ccp_alpha=alpha, min_samples_leaf=min_leaf,
                                  categorical_features=list(np.flatnonzero(is_cat))).fit(
        frame, y, sample_weight=w)
    classes, codes = np.unique(y, return_inverse=True)
    best = brute_force(X, codes, w, classes.size, depth, alpha, min_leaf, is_cat)
    assert model.optimal_
    assert model.objective_ == pytest.approx(best, abs=1e-9)
    assert tree_objective(model, frame, y, w, alpha) == pytest.approx(model.objective_, abs=1e-9)
    assert model.get_depth() <= depth


def _shop(n=500, seed=0):
    """A table whose best depth-2 tree tests a level and a missing value: the class is
    "buys" for colour b, or when size is missing, with a little noise."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "price": rng.normal(size=n).round(2),
        "colour": pd.Categorical(rng.choice(list("abcd"), size=n)),
        "size": rng.choice(np.array(["S", None], dtype=object), size=n, p=[0.7, 0.3]),
    })
    y = np.where((frame.colour == "b") | frame["size"].isna(), "buys", "leaves")
    flip = rng.random(n) < 0.05
    y[flip] = np.where(y[flip] == "buys", "leaves", "buys")
    return frame, y


def test_category_columns_read_as_level_tests_by_every_reader(tmp_path):
    from test_export import check_code_exports, random_rows

    frame, y = _shop()
    model = OptimalTreeClassifier(max_depth=2).fit(frame, y)
    assert model.optimal_ and list(model.is_categorical_) == [False, True, True]
    assert model.objective_ < OptimalTreeClassifier(
        max_depth=2, categorical_features=None).fit(frame[["price"]], y).objective_
    text = tl.export_text(model)
    assert "colour = b" in text and "size is missing" in text
    assert "colour in {a, c, d}" in text and "size = S" in text
    rules = tl.export_rules(model)
    assert "size is missing" in rules and "in {}" not in rules
    # Python and SQL predict exactly, with unseen levels and missing categories mixed in
    # (numbers have no missing value in these trees)
    rows = random_rows(model, frame, 3000, np.random.default_rng(1))
    rows["price"] = rows["price"].fillna(0.0)
    sql = check_code_exports(model, rows)
    assert "IN ()" not in sql
    # a level not seen at fit takes the branch of every other level
    seen = frame.iloc[:1].copy()
    seen["colour"] = seen["colour"].astype(object)
    seen.loc[seen.index[0], ["colour", "size"]] = ["b", "S"]
    unseen = seen.copy()
    unseen.loc[unseen.index[0], "colour"] = "violet"
    other = seen.copy()
    other.loc[other.index[0], "colour"] = "a"
    assert model.predict(seen)[0] == "buys"
    assert model.predict(unseen)[0] == model.predict(other)[0] == "leaves"
    back = tl.load(tl.save(model, tmp_path / "shop.tlm"))
    np.testing.assert_array_equal(back.predict(frame), model.predict(frame))
    assert "graph" in tl.export_graphviz(model)
    with pytest.raises(ValueError, match="binary tree on numeric features"):
        tl.to_sklearn(model)


def test_missing_numbers_are_refused_with_the_column_named():
    frame, y = _shop()
    frame.loc[3, "price"] = np.nan
    with pytest.raises(ValueError, match="NaN in numeric column 'price'.*categorical"):
        OptimalTreeClassifier(max_depth=1).fit(frame, y)
    model = OptimalTreeClassifier(max_depth=1).fit(frame.dropna(subset=["price"]), y[
        frame.price.notna().to_numpy()])
    with pytest.raises(ValueError, match="NaN in numeric column 'price'"):
        model.predict(frame)
    with pytest.raises(ValueError, match="NaN in numeric column 0"):
        OptimalTreeClassifier(max_depth=1).fit(np.array([[1.0], [np.nan]]), [0, 1])


def test_bad_new_parameters_are_refused_by_name():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="verbose"):
        OptimalTreeClassifier(verbose="yes").fit(X, y)
    with pytest.raises(ValueError, match="on_interrupt.*keep"):
        OptimalTreeClassifier(on_interrupt="ignore").fit(X, y)
    with pytest.raises(ValueError, match="categorical_features"):
        OptimalTreeClassifier(categorical_features="all").fit(X, y)


def test_the_memo_is_one_slot_where_nothing_is_memoised():
    assert kernel.memo(5000, 2).val.shape == (1,) and kernel.memo(5000, 2).z.shape == (1, 2)
    assert kernel.memo(5000, 3).val.shape == (1 << 16,)
    assert kernel.memo(5000, 3).z.shape == (5000, 2)


@settings(max_examples=80 if JIT else 20, deadline=None)
@given(st.integers(1, 70), st.integers(2, 5), st.integers(2, 4), st.integers(0, 2**31),
       st.sampled_from([0.0, 0.5, 2.0]), st.sampled_from([1, 1, 2, 3]),
       st.sampled_from([1.0, 0.5, 3.0]))
def test_depth_two_from_counts_equals_brute_force(n, p, K, seed, alpha, min_leaf, weight):
    """The depth-two solver of 0/1 features (bitsets and pair counts) against every tree of
    depth <= 2; rows of more than 64 bits' worth span several words."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.uniform(0.1, 0.9, size=p)).astype(np.float32)
    y = rng.integers(0, K, size=n)
    w = np.full(n, weight)
    ranks = np.stack([np.unique(X[:, f], return_inverse=True)[1] for f in range(p)])
    ranks = ranks.astype(np.int32)
    bufs = kernel.buffers(ranks, K, 2, y, w)
    assert bufs.wunit[0] == weight  # constant features included: ranks 0 only
    # a node of some rows, in the order of feature 0's list as the search keeps them
    keep = np.flatnonzero(rng.random(n) < 0.8) if n > 3 else np.arange(n)
    lst = bufs.lists[0, 0][np.isin(bufs.lists[0, 0], keep)]
    bufs.lists[1, 0, :lst.size] = lst
    bufs.size[1] = lst.size
    v = kernel.depth_two_bits(bufs, np.array([alpha, 1e-9]), np.array([min_leaf, 1]), 1)
    best = brute_force(X[lst], y[lst], w[lst], K, 2, alpha, min_leaf)
    assert v == pytest.approx(best, abs=1e-9)
    # the recorded tree (ranks 0 | 1 at every split) costs what the solver says
    rec = [(int(f), 0.5) if f >= 0 else (-1, 0.0) for f in bufs.res[1, 0, :bufs.rlen[1]]]
    from treelearn.optimal import objective
    assert objective(rec, X[lst], y[lst], w[lst], K, alpha) == pytest.approx(v, abs=1e-9)


def test_the_depth_two_solver_of_counts_applies_to_0_1_tables_of_equal_weights_only():
    ranks = np.array([[0, 1, 1, 0], [1, 1, 0, 0]], dtype=np.int32)
    y = np.array([0, 1, 1, 0])
    assert kernel.buffers(ranks, 2, 3, y, np.ones(4)).wunit[0] == 1.0
    assert kernel.buffers(ranks, 2, 3, y, np.array([1.0, 2, 1, 1])).wunit[0] == 0.0
    assert kernel.buffers(ranks, 2, 3).wunit[0] == 0.0
    three = ranks.copy()
    three[0, 0] = 2
    assert kernel.buffers(three, 2, 3, y, np.ones(4)).wunit[0] == 0.0


@njit
def _compiled_popcount(v):
    return kernel.popcount(v)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_popcount_counts_the_set_bits(x):
    """The compiled count (LLVM's ctpop) and the plain one against the printed bits."""
    expected = bin(x).count("1")
    assert _compiled_popcount(np.uint64(x)) == expected == kernel.popcount(np.uint64(x))


def test_the_equivalent_points_bound_counts_what_no_tree_separates():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    y = np.array([0, 1, 1, 0, 1, 1])
    w = np.array([1.0, 0.5, 0.25, 2.0, 3.0, 9.0])
    from treelearn.optimal import equivalent_points_bound
    # groups: rows 0-2 (class weights 1 | 0.75), rows 3-4 (2 | 3), row 5 alone
    assert equivalent_points_bound(X, y, w, 2) == pytest.approx(0.75 + 2.0)
    deep = OptimalTreeClassifier(max_depth=6).fit(X, y, sample_weight=w)
    assert deep.objective_ == pytest.approx(2.75)  # the bound is met: the optimum's cost


@pytest.mark.jit_only
def test_the_warm_up_fits_the_shallowest_search_on_numbers_and_categories(monkeypatch):
    from treelearn import _warmup

    fits, real = [], OptimalTreeClassifier.fit

    def fit(self, X, y, sample_weight=None):
        fits.append((self.max_depth, self.verbose))
        return real(self, X, y, sample_weight)

    monkeypatch.setattr(OptimalTreeClassifier, "fit", fit)
    lines = _warmup._warm_up(OptimalTreeClassifier(max_depth=6, verbose=True))
    kinds = [line.split(": ")[1] for line in lines]
    assert kinds == ["numbers", "many rows", "weights", "categories"]
    assert fits == [(2, False)] * 4


def test_category_columns_of_one_value_give_a_leaf_of_their_width():
    X = np.array([["a", "u"], ["a", "u"], ["a", "u"]], dtype=object)
    model = OptimalTreeClassifier(categorical_features=[0, 1]).fit(X, [0, 1, 1])
    assert model.tree_.node_count == 1 and model.tree_.n_features == 2
    np.testing.assert_array_equal(model.predict(np.array([["b", None]], dtype=object)), [1])
