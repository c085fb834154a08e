"""Pruning: cost-complexity path (scikit-learn's and rpart's), the Pruner, cross-validated alpha,
reduced-error, C4.5 pessimistic and MDL pruning, C4.5 rules, the presets' defaults, pictures.

Sources of worked numbers: Quinlan (1993), *C4.5*, chapter 4 (the pessimistic estimates of the
congressional-voting subtree); ../shared/LITERATURE.md (the tutorial's pruning experiment).
"""

import copy
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scipy.special
import scipy.stats
from conftest import JIT_DISABLED
from hypothesis import given
from hypothesis import strategies as st
from naive import (
    naive_route,
    naive_subtree_loss,
    naive_subtree_raising,
    naive_weakest_links,
)
from sklearn import tree as sktree
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.model_selection import GridSearchCV, ShuffleSplit, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from test_sklearn_equivalence import assert_same_tree

import treelearn as tl
from treelearn import datasets
from treelearn._tree import Tree
from treelearn.pruning import (
    CVPruning,
    Pruner,
    RuleSet,
    choose_alpha,
    cost_complexity_path,
    description_length,
    extract_rules,
    mdl_prune,
    pessimistic_prune,
    prune_to_alpha,
    reduced_error_prune,
    u_cf,
)
from treelearn.pruning._loss import node_losses
from treelearn.pruning.cost_complexity import node_risk, prune_steps, sequence_errors
from treelearn.pruning.mdl import leaf_bits
from treelearn.pruning.pessimistic import estimated_errors, pessimistic_prune_cases

matplotlib.use("Agg")


def _noisy(seed=0, n=400, p=4, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.8, size=n)) > 0).astype(int)
    if classes == 3:
        y = y + (X[:, 2] > 0.8)
    return X, y


def _noisy_regression(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, np.round(3 * X[:, 0] + X[:, 1] ** 2 + rng.normal(scale=2, size=n))


def _tutorial_data():
    """LITERATURE.md's pruning tutorial: 500 points uniform in the unit square, class 1 where
    x + y > 1, 10% of the labels flipped, numpy seed 20180904 (test_datasets checks the
    generator; the tutorial's own draw order is not known, so the numbers are close to, not
    equal to, the tutorial's)."""
    return datasets.make_noisy_square()


# -- U_CF and pessimistic pruning -------------------------------------------------------------

def _binomial_upper(e: int, n: int, cf: float) -> float:
    """Independent twin: bisection on P(X <= e; n, p) = cf with the binomial sum."""
    def cdf(p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(e + 1))
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(mid) > cf:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_u_cf_quinlan_worked_numbers():
    """Quinlan (1993), ch. 4: U_0.25(0,6) = 0.206, U_0.25(0,9) = 0.143, U_0.25(0,1) = 0.750,
    U_0.25(1,16) = 0.157 (his program's approximation; the exact limit agrees for E = 0 and
    gives 0.160 for E = 1)."""
    got = u_cf([0, 0, 0, 1], [6, 9, 1, 16], 0.25, method="c45")
    np.testing.assert_array_equal(np.round(got, 3), [0.206, 0.143, 0.750, 0.157])
    exact = u_cf([0, 0, 0, 1], [6, 9, 1, 16], 0.25)
    np.testing.assert_array_equal(np.round(exact, 3), [0.206, 0.143, 0.750, 0.160])
    # his remaining branches: linear in E below 1, 0.67 (N - E) extra errors near E = N
    half = u_cf(0.5, 16, 0.25, method="c45")
    assert half == pytest.approx((got[3] + (1 - 0.25 ** (1 / 16))) / 2)
    assert u_cf(3, 3.2, 0.25, method="c45") == pytest.approx((3 + 0.67 * 0.2) / 3.2)
    with pytest.raises(ValueError, match="method"):
        u_cf(0, 5, method="normal")


@pytest.mark.parametrize("cf", [0.05, 0.25, 0.5, 0.9])
def test_u_cf_equals_binomial_bisection_and_scipy_beta(cf):
    for n in (1, 2, 5, 16, 40):
        for e in range(0, n):
            ref = _binomial_upper(e, n, cf)
            assert u_cf(e, n, cf) == pytest.approx(ref, abs=1e-9)
            assert u_cf(e, n, cf) == pytest.approx(scipy.stats.beta.ppf(1 - cf, e + 1, n - e),
                                                   abs=1e-9)
    assert u_cf(0, 7, cf) == pytest.approx(1 - cf ** (1 / 7))


@given(st.floats(0.0, 1.0), st.floats(1e-3, 1e8), st.floats(0.001, 0.999),
       st.sampled_from(["exact", "c45"]))
def test_compiled_u_cf_equals_u_cf(frac, n, cf, method):
    """The limit the compiled pruning uses (its own inverse incomplete beta function) equals
    :func:`u_cf` (SciPy's ``betaincinv``; Quinlan's formulas) on fractional and huge
    ``E`` and ``N``."""
    from treelearn.pruning.pessimistic import _C45_CF, _C45_Z, _u_one

    e = frac * n
    z2 = float(np.interp(cf, _C45_CF, _C45_Z)) ** 2
    got = _u_one(e, n, cf, z2, method == "exact")
    want = float(u_cf(e, n, cf, method))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    if method == "exact":  # Quinlan's formulas pass 1 for fractional N below 1.5
        assert 0.0 <= got <= 1.0


def test_compiled_u_cf_edges():
    from treelearn.pruning.pessimistic import _beta_quantile, _u_one

    assert _u_one(0.0, 0.0, 0.25, 0.0, True) == 0.0
    assert _u_one(5.0, 5.0, 0.25, 0.0, True) == 1.0
    assert _u_one(-1e-12, 7.0, 0.25, 0.0, True) == pytest.approx(1 - 0.25 ** (1 / 7))
    # a nearly pure leaf (B tiny) and a huge one: still the quantile
    for a, b in [(3.0, 1e-9), (5e5 + 1, 5e5), (1.0, 1e-6), (2.0, 1e7), (40.5, 3e8)]:
        want = scipy.special.betaincinv(a, b, 0.75)
        assert _beta_quantile(a, b, 0.75) == pytest.approx(want, rel=1e-9, abs=0.0)


def test_u_cf_edges_and_errors():
    assert u_cf(0, 0) == 0.0
    assert u_cf(5, 5) == 1.0
    # fractional cases (C4.5's): continuous in E and N, between the integer neighbours
    assert u_cf(1, 10) < u_cf(1.5, 10) < u_cf(2, 10)
    with pytest.raises(ValueError, match="confidence_factor"):
        u_cf(0, 5, 0.0)
    with pytest.raises(ValueError, match="non-negative"):
        u_cf(-1, 5)


def _voting_subtree() -> Tree:
    """Quinlan's example: a test with three leaves of 6, 9 and 1 cases, no errors, whose
    node covers 16 cases with 1 error."""
    value = np.array([[15 / 16, 1 / 16], [1, 0], [1, 0], [0, 1]])
    return Tree(3, [2], [1, -1, -1, -1], [3, -1, -1, -1], [0, -2, -2, -2],
                [-2.0, -2, -2, -2], [0.1, 0, 0, 0], [16, 6, 9, 1], [16.0, 6, 9, 1], value,
                branch_ptr=[0, 3, 3, 3, 3], branch_child=[1, 2, 3],
                cat_ptr=[0, 3, 3, 3, 3], cat_branch=[0, 1, 2],
                missing_branch=[-1, -2, -2, -2])


def test_pessimistic_pruning_quinlan_example():
    """Subtree: 6 x 0.206 + 9 x 0.143 + 1 x 0.750 = 3.273 estimated errors; as a leaf
    16 x 0.157 = 2.512, so the subtree is replaced by a leaf."""
    tree = _voting_subtree()
    n = tree.weighted_n_node_samples
    est = estimated_errors(tree, 0.25, method="c45")
    # the book multiplies the rounded factors
    rounded = n * np.round(est / n, 3)
    assert round(rounded[1:].sum(), 3) == 3.273 and round(rounded[0], 3) == 2.512
    for method in ("c45", "exact"):
        pruned = pessimistic_prune(tree, method=method)
        assert pruned.node_count == 1
        np.testing.assert_allclose(pruned.value[0], tree.value[0])


@pytest.mark.parametrize("seed", range(4))
def test_pessimistic_never_grows_and_is_a_subtree(seed):
    X, y = _noisy(seed, classes=3)
    est = tl.DecisionTreeClassifier(random_state=seed).fit(X, y)
    sizes = []
    for cf in (0.01, 0.1, 0.25, 0.5, 0.9):
        t = pessimistic_prune(est.tree_, cf)
        assert t.node_count <= est.tree_.node_count
        sizes.append(t.node_count)
        # every leaf of the pruned tree is a node of the original: same value and weight
        leaves = t.children_left == -1
        for v, w in zip(t.value[leaves, 0], t.weighted_n_node_samples[leaves], strict=True):
            hit = np.flatnonzero(np.isclose(est.tree_.weighted_n_node_samples, w)
                                 & np.all(np.isclose(est.tree_.value[:, 0], v), axis=1))
            assert hit.size
    assert sizes[0] < sizes[-1]  # smaller CF prunes more


@pytest.mark.parametrize("seed", range(4))
def test_subtree_raising(seed):
    X, y = _noisy(seed, n=600, classes=3)
    est = tl.DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    t, w = est.tree_, np.ones(600)
    # without raising, the case-driven procedure is the count-driven one
    assert pessimistic_prune_cases(t, X.astype(np.float32), y, w, 1, raising=False) == \
        pessimistic_prune(t)
    r = pessimistic_prune_cases(t, X.astype(np.float32), y, w, 1)
    assert r == naive_subtree_raising(t, X.astype(np.float32), y, w)
    # counts of the new tree are those of the training cases routed through it
    acc = r.node_sums(X, np.eye(3)[y])
    np.testing.assert_allclose(acc, r.value[:, 0] * r.weighted_n_node_samples[:, None],
                               atol=1e-9)
    np.testing.assert_allclose(r.impurity[0], t.impurity[0])
    # raising is taken only where it lowers the estimate: the total is never higher
    leaves = lambda tree: estimated_errors(tree)[tree.children_left == -1].sum()  # noqa: E731
    assert leaves(r) <= leaves(pessimistic_prune(t)) + 1e-9
    via_fit = tl.DecisionTreeClassifier(criterion="entropy", random_state=0,
                                        prune="pessimistic", subtree_raising=True).fit(X, y)
    assert via_fit.tree_ == r


@pytest.mark.parametrize("case", range(8))
def test_subtree_raising_equals_the_case_by_case_twin(case):
    """The pruning (cases grouped by branch, the leaves among a node's children estimated at
    once) equals its twin, which routes every case alone: binary and multiway trees,
    fractional missing values, sample weights, both limits, with and without raising."""
    from treelearn.engine.columns import encode_table

    rng = np.random.default_rng(case)
    n = 300
    df = pd.DataFrame({"a": rng.choice([f"v{i}" for i in range(12)], n),
                       "b": rng.normal(size=n).round(1), "c": rng.integers(0, 4, n)})
    y = ((df["a"].isin(["v0", "v1", "v2", "v3"]) ^ (df["b"] > 0.3)) ^ (rng.random(n) < 0.25)
         ).astype(int).to_numpy()
    if case % 2:
        df.loc[rng.random(n) < 0.15, "a"] = None
        df.loc[rng.random(n) < 0.15, "b"] = np.nan
    w = rng.integers(1, 4, n).astype(float) if case % 4 >= 2 else np.ones(n)
    est = tl.C45Classifier(prune=None, min_samples_leaf=1, random_state=0,
                           threshold_penalty=False).fit(df, y, sample_weight=w)
    t = est.tree_
    X = encode_table(df, est.is_categorical_, est.categories_, list(df.columns))
    method = "exact" if case < 4 else "c45"
    for raising in (True, False):
        ours = pessimistic_prune_cases(t, X, y, w, 1, 0.25, method, raising=raising)
        twin = naive_subtree_raising(t, X, y, w, 0.25, method, raising)
        assert ours == twin
    assert t.node_count > 20 and any(t.n_branches > 2)


def test_subtree_raising_resumes_between_chunks(monkeypatch):
    """The raising kernel stops after a budget of routed cases and resumes where it stopped
    (so Ctrl-C is taken between chunks): many small chunks give the same tree as one."""
    from treelearn.pruning import pessimistic as pm

    X, y = _noisy(1, n=800, classes=3)
    t = tl.DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y).tree_
    X32, w = X.astype(np.float32), np.ones(800)
    whole = pessimistic_prune_cases(t, X32, y, w, 1)
    calls = []
    inner = pm._prune_cases
    monkeypatch.setattr(pm, "_prune_cases", lambda *a: calls.append(1) or inner(*a))
    monkeypatch.setattr(pm, "PRUNE_CHUNK", 50)
    assert pessimistic_prune_cases(t, X32, y, w, 1) == whole
    assert len(calls) > 20


def test_subtree_raising_changes_a_tree_and_handles_missing_and_sparse():
    import scipy.sparse as sp
    X, y = _noisy(0, n=600, classes=3)
    t = tl.DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y).tree_
    r = pessimistic_prune_cases(t, X.astype(np.float32), y, np.ones(600), 1)
    assert r != pessimistic_prune(t)  # on this data some subtree is raised
    Xs = np.where(X > 0, X, 0.0)
    est = tl.DecisionTreeClassifier(prune="pessimistic", subtree_raising=True,
                                    random_state=0)
    np.testing.assert_array_equal(est.fit(sp.csr_matrix(Xs), y).predict(Xs),
                                  clone(est).fit(Xs, y).predict(Xs))
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.choice(list("pqrst"), 500), "b": rng.normal(size=500)})
    yy = (df["a"].isin(["p", "q"]) ^ (rng.random(500) < 0.2)).astype(int)
    df.loc[rng.random(500) < 0.15, "a"] = None
    df.loc[rng.random(500) < 0.15, "b"] = np.nan
    c45 = tl.C45Classifier(random_state=0).fit(df, yy)
    total = c45.tree_.weighted_n_node_samples
    assert total[0] == 500 and c45.tree_.node_count <= c45.unpruned_tree_.node_count
    c45.tree_.check()
    np.testing.assert_allclose(c45.predict_proba(df).sum(axis=1), 1.0)


def test_c45_preset_prunes_pessimistically():
    X, y = _noisy(1)
    c45 = tl.C45Classifier(random_state=0).fit(X, y)
    assert c45.prune == "pessimistic" and c45.confidence_factor == 0.25
    assert c45.subtree_raising
    assert c45.tree_.node_count < c45.unpruned_tree_.node_count
    no_raise = tl.C45Classifier(random_state=0, subtree_raising=False).fit(X, y)
    assert no_raise.tree_ == pessimistic_prune(c45.unpruned_tree_, 0.25)
    unpruned = tl.C45Classifier(prune=None, random_state=0).fit(X, y)
    assert unpruned.tree_ == c45.unpruned_tree_


def test_pessimistic_on_categorical_c45_tree_with_missing_values():
    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame({"a": rng.choice(list("pqrstu"), n), "b": rng.normal(size=n)})
    y = ((df["a"].isin(["p", "q"])) ^ (rng.random(n) < 0.15)).astype(int)
    df.loc[rng.random(n) < 0.1, "a"] = None
    # Without Release 8's threshold penalty the noise column b grows splits to prune (with
    # it, C4.5 does not split on b at all: the unpruned tree is already the stump).
    full = tl.C45Classifier(prune=None, threshold_penalty=False).fit(df, y)
    pruned = tl.C45Classifier(threshold_penalty=False).fit(df, y)
    assert pruned.tree_.node_count < full.tree_.node_count
    assert tl.C45Classifier(prune=None).fit(df, y).tree_.max_depth == 1
    assert pruned.tree_.n_branches.max() > 2  # multiway nodes survive where they help
    assert pruned.score(df, y) > 0.8
    pruned.predict_proba(df)


def test_pessimistic_and_mdl_need_classifiers():
    X, y = _noisy_regression()
    for method in ("pessimistic", "mdl"):
        with pytest.raises(ValueError, match="classification"):
            tl.DecisionTreeRegressor(prune=method).fit(X, y)
    reg = tl.DecisionTreeRegressor().fit(X, y)
    with pytest.raises(ValueError, match="classification"):
        pessimistic_prune(reg.tree_)
    with pytest.raises(ValueError, match="classification"):
        mdl_prune(reg.tree_)


# -- MDL --------------------------------------------------------------------------------------

def test_mdl_leaf_bits_formula():
    """Mehta, Rissanen & Agrawal (1995): n H + (k-1)/2 log2(n/2) + log2(pi^(k/2)/Gamma(k/2))."""
    tree = _voting_subtree()
    bits = leaf_bits(tree)
    n, counts = 16.0, np.array([15.0, 1.0])
    ref = 1 + sum(c * math.log2(n / c) for c in counts) + 0.5 * math.log2(n / 2) + math.log2(
        math.pi / math.gamma(1.0))
    assert bits[0] == pytest.approx(ref)
    assert bits[1] == pytest.approx(1 + 0.5 * math.log2(3) + math.log2(math.pi))


def test_mdl_split_bits():
    """A threshold costs log2(n - 1) bits, a subset of m routed levels log2(2^(m-1) - 1), a
    multiway split nothing beyond naming the feature (log2 of the number of features)."""
    from treelearn.pruning.mdl import split_bits
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"c": rng.choice(list("abcde"), 400), "x": rng.normal(size=400)})
    y = (df["c"].isin(["a", "b"]) ^ (df["x"] > 1)).astype(int)
    for split in ("binary", "multiway"):
        t = tl.DecisionTreeClassifier(categorical_split=split, max_depth=3,
                                      random_state=0).fit(df, y).tree_
        bits = split_bits(t)
        for i in np.flatnonzero(t.children_left != -1):
            cats = t.cat_branch[t.cat_ptr[i]:t.cat_ptr[i + 1]]
            if cats.size == 0:
                extra = math.log2(t.weighted_n_node_samples[i] - 1)
            elif split == "multiway":
                extra = 0.0 if t.n_branches[i] > 2 else math.log2(2 ** ((cats >= 0).sum() - 1) - 1)
            else:
                extra = math.log2(2 ** ((cats >= 0).sum() - 1) - 1)
            assert bits[i] == pytest.approx(1 + math.log2(2) + extra)
        assert (t.cat_ptr[1:] > t.cat_ptr[:-1]).any()


@pytest.mark.parametrize("seed", range(3))
def test_mdl_never_lengthens_the_description(seed):
    X, y = _noisy(seed, classes=3)
    t = tl.DecisionTreeClassifier(random_state=seed).fit(X, y).tree_
    p = mdl_prune(t)
    assert p.node_count < t.node_count
    assert description_length(p) <= description_length(t) + 1e-9
    est = tl.DecisionTreeClassifier(prune="mdl", random_state=seed).fit(X, y)
    assert est.tree_ == p


# -- route accumulation, sequence losses (kernels vs naive twins) -----------------------------

@given(st.integers(0, 10_000), st.sampled_from(["learn", "c45", "impute"]))
def test_node_sums_equal_naive_route(seed, missing):
    rng = np.random.default_rng(seed)
    n = 120
    df = pd.DataFrame({"c": rng.choice(list("abcd"), n), "x": rng.normal(size=n)})
    y = (df["c"].isin(["a", "b"]) ^ (df["x"] > 0.3)).astype(int)
    df.loc[rng.random(n) < 0.2, "c"] = None
    df.loc[rng.random(n) < 0.2, "x"] = np.nan
    est = tl.DecisionTreeClassifier(categorical_split="multiway", missing=missing,
                                    max_depth=4).fit(df, y)
    Xe = est._validate_X_predict(df)
    stats = rng.random((n, 3))
    _, ref = naive_route(est.tree_, Xe, stats)
    np.testing.assert_allclose(est.tree_.node_sums(Xe, stats), ref, atol=1e-10)


@given(st.integers(0, 10_000))
def test_sequence_errors_equal_naive_twin(seed):
    rng = np.random.default_rng(seed)
    X, y = _noisy(seed % 50, n=150, classes=3)
    tree = tl.DecisionTreeClassifier(random_state=0).fit(X, y).tree_
    nodes = cost_complexity_path(tree).pruned_nodes
    err = rng.random(tree.node_count)
    got = sequence_errors(tree.branch_ptr, tree.branch_child, nodes, err)
    for k in range(nodes.size + 1):
        assert got[k] == pytest.approx(naive_subtree_loss(tree, nodes[:k], err))


def test_node_losses_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    est = tl.DecisionTreeClassifier(max_depth=1).fit(X, y)
    Xv, yv = np.array([[0.5], [2.5], [2.7], [0.1]]), np.array([1, 1, 0, 2])  # 2: unseen
    loss = node_losses(est, Xv, yv)
    # root predicts class 0 (tie: first): wrong for 1, 1, 2; left leaf (0): rows 0 and 3
    # wrong; right leaf (1): row 2 wrong
    np.testing.assert_allclose(loss, [3.0, 2.0, 1.0])
    reg = tl.DecisionTreeRegressor(max_depth=1).fit(X, y.astype(float))
    loss = node_losses(reg, X, [1.0, 0.0, 1.0, 3.0])
    np.testing.assert_allclose(loss, [0.25 + 0.25 + 0.25 + 6.25, 1.0, 4.0])


# -- the cost-complexity path -----------------------------------------------------------------

_DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast_cancer": lambda: load_breast_cancer(return_X_y=True),
    "noisy3": lambda: _noisy(5, classes=3),
    "diabetes": lambda: (load_diabetes(return_X_y=True)[0],
                         np.round(load_diabetes(return_X_y=True)[1])),
    "noisy_reg": lambda: _noisy_regression(2),
}


@pytest.mark.parametrize("name", list(_DATASETS))
def test_path_and_every_pruned_tree_equal_sklearns(name):
    X, y = _DATASETS[name]()
    regression = name in ("diabetes", "noisy_reg")
    ours = (tl.DecisionTreeRegressor if regression else tl.DecisionTreeClassifier)(
        random_state=0, min_samples_leaf=2)
    theirs = (sktree.DecisionTreeRegressor if regression else sktree.DecisionTreeClassifier)(
        random_state=0, min_samples_leaf=2)
    a = ours.cost_complexity_pruning_path(X, y)
    b = theirs.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(a.ccp_alphas, b.ccp_alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(a.impurities, b.impurities, rtol=1e-9, atol=1e-15)
    step = 1 if not JIT_DISABLED else max(1, len(b.ccp_alphas) // 6)
    for alpha in b.ccp_alphas[1:-1:step]:
        assert_same_tree(clone(ours).set_params(ccp_alpha=float(alpha)).fit(X, y),
                         clone(theirs).set_params(ccp_alpha=float(alpha)).fit(X, y))


def test_path_sizes_match_the_pruned_trees():
    X, y = _noisy(2, classes=3)
    for model in (tl.DecisionTreeClassifier(random_state=0),
                  tl.ID3Classifier(max_depth=6)):
        df = pd.DataFrame({"a": pd.Categorical(np.digitize(X[:, 0], [-1, 0, 1])),
                           "b": X[:, 1], "c": X[:, 2]})
        tree = model.fit(df, y).tree_
        for risk in ("impurity", "misclassification"):
            path = cost_complexity_path(tree, risk)
            assert np.all(np.diff(path.ccp_alphas) >= 0)
            assert np.all(np.diff(path.n_leaves) <= 0) and np.all(np.diff(path.n_nodes) < 0)
            assert path.n_leaves[-1] == 1 and path.n_nodes[-1] == 1
            for k in range(path.n_steps + 1):
                t = prune_steps(tree, path, k)
                assert (t.node_count, t.n_leaves) == (path.n_nodes[k], path.n_leaves[k])
                r = node_risk(t, risk)[t.children_left == -1].sum()
                assert r == pytest.approx(path.impurities[k], abs=1e-12)


def test_misclassification_risk_and_cp_table():
    X, y = load_breast_cancer(return_X_y=True)
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    t = est.tree_
    r = node_risk(t, "misclassification")
    w = t.weighted_n_node_samples
    np.testing.assert_allclose(r * w[0], w * (1 - t.value[:, 0].max(axis=1)))
    path = cost_complexity_path(t, "misclassification")
    assert path.impurities[0] == 0.0  # grown until pure
    assert path.impurities[-1] == pytest.approx(212 / 569)
    table = path.cp_table()
    assert table["rel_error"][0] == 1.0 and table["nsplit"][0] == 0
    assert np.all(np.diff(table["nsplit"]) > 0) and np.all(np.diff(table["CP"]) < 0)
    assert np.all(np.diff(table["rel_error"]) < 0)
    assert table["CP"][-1] == 0.0
    # CP of row j: the tree of that row is what pruning with alpha = CP * root risk keeps
    assert table["CP"].size < path.n_steps  # equal alphas (up to rounding) share a row
    for cp, nsplit in zip(table["CP"], table["nsplit"], strict=True):
        kept = prune_to_alpha(t, cp * path.impurities[-1] * (1 + 1e-9), "misclassification")
        assert kept.n_leaves - 1 == nsplit
    with pytest.raises(ValueError, match="classification"):
        node_risk(tl.DecisionTreeRegressor().fit(X, y).tree_, "misclassification")
    with pytest.raises(ValueError, match="risk must be"):
        node_risk(t, "gini")


# -- the Pruner ---------------------------------------------------------------------------------

def test_pruner_round_trips_in_any_order():
    X, y = _noisy(4, classes=3)
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    original = est.tree_
    p = Pruner(est)
    n = p.n_steps
    fresh = {k: prune_steps(original, p.path, k) for k in range(n + 1)}
    rng = np.random.default_rng(0)
    for k in rng.permutation(np.r_[np.arange(n + 1), -np.arange(1, n + 2)])[:60]:
        t = p.prune(int(k))
        assert t == fresh[k if k >= 0 else n + 1 + k]
    assert p.prune(0) == original
    assert p.prune(-1).node_count == 1 and p.prune(n).node_count == 1
    assert p.prune(-(n + 1)) == original
    assert est.tree_ is original and p.original == original
    with pytest.raises(ValueError, match="between"):
        p.prune(n + 1)
    with pytest.raises(TypeError, match="integer"):
        p.prune(1.5)


def test_pruner_cost_complexity_curve_and_estimator():
    X, y = _tutorial_data()
    est = tl.DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    p = Pruner(est)
    for complexity in ("leaves", "nodes"):
        for weight in (0.0, 1.0, 2.7, 10.0):
            cc = p.cost_complexity(weight, complexity)
            manual = [p.prune(k).weighted_n_node_samples[p.tree.children_left == -1]
                      @ p.tree.impurity[p.tree.children_left == -1]
                      + weight * (p.tree.n_leaves if complexity == "leaves"
                                  else p.tree.node_count) for k in range(p.n_steps + 1)]
            np.testing.assert_allclose(cc, manual, rtol=1e-9, atol=1e-9)
            k = p.best_step(weight, complexity)
            assert cc[k] == pytest.approx(cc.min())
            assert p.prune_to_minimum(weight, complexity).node_count == p.path.n_nodes[k]
    # with leaves as complexity the minimiser for weight W is the ccp_alpha = W / N subtree
    for alpha in p.path.ccp_alphas[1:-1:5] * 1.000001:
        k = p.best_step(alpha * p.path.root_weight)
        assert p.path.n_leaves[k] == p.prune_to_alpha(alpha).n_leaves
        assert p.tree == clone(est).set_params(ccp_alpha=alpha).fit(X, y).tree_
    p.prune(5)
    small = p.to_estimator()
    assert small.tree_ is p.tree and est.tree_ is p.original
    np.testing.assert_array_equal(small.predict(X), np.argmax(p.tree.predict(X)[:, 0], 1))
    assert Pruner(p.original).prune(5) == p.tree
    with pytest.raises(ValueError, match="built from a Tree"):
        Pruner(p.original).to_estimator()
    with pytest.raises(ValueError, match="weight"):
        p.cost_complexity(-1.0)
    with pytest.raises(ValueError, match="complexity"):
        p.sizes("depth")
    with pytest.raises(ValueError, match="risk"):
        Pruner(est, risk="gini")
    with pytest.raises(TypeError, match="Pruner needs"):
        Pruner(object())
    assert "step=5" in repr(p)


def test_pruner_on_a_sklearn_tree():
    X, y = load_iris(return_X_y=True)
    sk = sktree.DecisionTreeClassifier(random_state=0).fit(X, y)
    p = Pruner(sk)
    path = sk.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(p.path.ccp_alphas, path.ccp_alphas, atol=1e-15)
    alpha = float(path.ccp_alphas[-3])
    theirs = sktree.DecisionTreeClassifier(random_state=0, ccp_alpha=alpha).fit(X, y)
    p.prune_to_alpha(alpha)
    np.testing.assert_array_equal(p.to_estimator().predict(X), theirs.predict(X))
    assert p.tree.node_count == theirs.tree_.node_count


# -- cross-validation --------------------------------------------------------------------------

def _manual_scores(est, X, y, splits, eval_alphas, risk):
    """Naive twin of the fold loop: fit, prune at each alpha, score on the held-out rows."""
    rows = []
    for tr, te in splits:
        f = clone(est).fit(X[tr], y[tr])
        row = []
        for a in eval_alphas:
            path = cost_complexity_path(f.tree_, risk)
            t = (prune_to_alpha(f.tree_, a, risk) if np.isfinite(a)
                 else prune_steps(f.tree_, path, path.n_steps))
            g = copy.deepcopy(f)
            g.tree_ = t
            if tl.DecisionTreeClassifier in type(est).__mro__:
                row.append(np.mean(g.predict(X[te]) == y[te]))
            else:
                row.append(-np.mean((g.predict(X[te]) - y[te]) ** 2))
        rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("task,risk", [
    ("clf", "impurity"), ("clf", "misclassification"),
    # the regression twin refits ~100 trees per fold: 37 s with the kernels as Python
    pytest.param("reg", "impurity", marks=pytest.mark.jit_only)])
def test_cv_scores_equal_refitting_and_pruning_each_alpha(task, risk):
    if task == "clf":
        X, y = _noisy(7, n=300, classes=3)
        est = tl.DecisionTreeClassifier(random_state=0)
    else:
        X, y = _noisy_regression(7)
        X, y = X[:300], y[:300]
        est = tl.DecisionTreeRegressor(random_state=0)
    res = choose_alpha(est, X, y, cv=5, risk=risk, random_state=3)
    assert isinstance(res, CVPruning)
    from treelearn.pruning.cv import make_splitter
    splits = list(make_splitter(5, task == "clf", y, 3).split(X, y))
    ref = _manual_scores(est, X, y, splits, res.eval_alphas, risk)
    np.testing.assert_allclose(res.scores, ref, atol=1e-9)
    np.testing.assert_allclose(res.mean_score, ref.mean(axis=0), atol=1e-9)
    assert res.n_splits == 5 and res.scores.shape == (5, res.alphas.size)
    assert res.alphas[0] == 0.0 and res.n_leaves[-1] == 1
    assert np.all(np.diff(res.alphas) > 0) and np.all(np.diff(res.n_leaves) < 0)
    # the rules: "min" takes the best mean; "1se" a tree no larger, within one SE
    assert res.mean_score[res.best_index] == pytest.approx(res.mean_score.max())
    assert res.chosen_index >= res.best_index
    assert res.mean_score[res.chosen_index] >= (res.mean_score[res.best_index]
                                                - res.se_score[res.best_index] - 1e-12)
    later = np.arange(res.alphas.size) > res.chosen_index
    assert np.all(res.mean_score[later] < res.mean_score[res.best_index]
                  - res.se_score[res.best_index])
    np.testing.assert_allclose(res.se_score, res.std_score / np.sqrt(5))
    mn = choose_alpha(est, X, y, cv=5, risk=risk, rule="min", random_state=3)
    assert mn.chosen_index == res.best_index
    table = res.table()
    assert set(table) == {"alpha", "mean_score", "std_score", "se_score", "n_leaves",
                          "n_nodes"}
    cp = res.cp_table()
    assert cp["xerror"].shape == cp["CP"].shape and cp["xstd"].min() >= 0


def test_cv_parallel_folds_and_repeated_splits():
    X, y = _noisy(8, n=300)
    est = tl.DecisionTreeClassifier(random_state=0)
    a = choose_alpha(est, X, y, cv=4, random_state=0, n_jobs=1)
    b = choose_alpha(est, X, y, cv=4, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a.scores, b.scores)
    rep = choose_alpha(est, X, y, cv=ShuffleSplit(n_splits=7, test_size=0.3, random_state=0))
    assert rep.n_splits == 7
    # with class weights, held-out cases weigh as in the fit: equal to prune="cv" in fit
    bal = tl.DecisionTreeClassifier(random_state=0, class_weight="balanced")
    res = choose_alpha(bal, X, y, cv=4, random_state=5)
    fitted = clone(bal).set_params(prune="cv", prune_cv=__import__(
        "sklearn.model_selection").model_selection.StratifiedKFold(4, shuffle=True,
                                                                   random_state=5)).fit(X, y)
    np.testing.assert_allclose(fitted.pruning_.scores, res.scores)
    np.testing.assert_allclose(fitted.pruning_.xerror, res.xerror)
    with pytest.raises(ValueError, match="rule"):
        choose_alpha(est, X, y, rule="2se")
    with pytest.raises(TypeError, match="treelearn"):
        choose_alpha(sktree.DecisionTreeClassifier(), X, y)


def test_prune_cv_in_fit_equals_choose_alpha_then_ccp_alpha():
    X, y = load_breast_cancer(return_X_y=True)
    est = tl.DecisionTreeClassifier(prune="cv", prune_cv=5, random_state=0).fit(X, y)
    assert est.pruning_.chosen_alpha == est.ccp_alpha_
    assert est.unpruned_tree_.node_count > est.tree_.node_count
    again = tl.DecisionTreeClassifier(random_state=0, ccp_alpha=est.ccp_alpha_).fit(X, y)
    assert again.tree_ == est.tree_
    with pytest.raises(ValueError, match="ccp_alpha"):
        tl.DecisionTreeClassifier(prune="cv", ccp_alpha=0.01).fit(X, y)
    with pytest.raises(ValueError, match="prune_cv"):
        tl.DecisionTreeClassifier(prune="cv", prune_cv=1).fit(X, y)


@pytest.mark.jit_only  # 70 fits of unpruned regression trees: 30 s with the kernels as Python
def test_cart_presets_prune_by_10_fold_1se():
    X, y = load_breast_cancer(return_X_y=True)
    cart = tl.CARTClassifier(random_state=0).fit(X, y)
    assert (cart.prune, cart.prune_cv, cart.prune_rule, cart.ccp_risk) == (
        "cv", 10, "1se", "misclassification")
    assert cart.pruning_.n_splits == 10
    assert cart.tree_.n_leaves == cart.pruning_.n_leaves[cart.pruning_.chosen_index]
    Xr, yr = load_diabetes(return_X_y=True)
    reg = tl.CARTRegressor(random_state=0).fit(Xr, yr)
    assert reg.pruning_.n_splits == 10
    assert reg.tree_.node_count < reg.unpruned_tree_.node_count
    unpruned = cross_val_score(tl.DecisionTreeRegressor(random_state=0), Xr, yr, cv=5).mean()
    assert cross_val_score(reg, Xr, yr, cv=5).mean() > unpruned + 0.2


def test_prune_cv_on_tiny_data_and_in_grid_search():
    # a class with one case: plain K-fold; two rows: still a fit
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 0, 0, 1, 2])
    tl.CARTClassifier(random_state=0).fit(X, y).predict(X)
    tl.CARTClassifier(random_state=0).fit(X[:2], [0, 1]).predict(X)
    tl.CARTClassifier(random_state=0).fit(X[:1], [0]).predict(X)
    Xb, yb = _noisy(9, n=300)
    grid = GridSearchCV(make_pipeline(StandardScaler(), tl.DecisionTreeClassifier(
        random_state=0)), {"decisiontreeclassifier__prune": [None, "cv", "pessimistic",
                                                            "mdl", "reduced_error"]}, cv=3)
    grid.fit(Xb, yb)
    assert grid.best_params_["decisiontreeclassifier__prune"] is not None


@pytest.mark.jit_only  # a cross-validated experiment: its lines run in the faster tests too
def test_tutorial_experiment(capsys):
    """LITERATURE.md: unpruned 5-fold CV accuracy 0.782 +/- 0.039; pruned 0.83 (weight ~2.7,
    chosen by repeated random splits). Cross-validated pruning must cut the tree to a small
    fraction of its nodes and raise the cross-validated accuracy clearly."""
    X, y = _tutorial_data()
    full = tl.DecisionTreeClassifier(criterion="entropy", random_state=0)
    pruned = tl.DecisionTreeClassifier(criterion="entropy", random_state=0, prune="cv",
                                       prune_rule="min",
                                       prune_cv=ShuffleSplit(20, test_size=0.2,
                                                             random_state=0))
    a = cross_val_score(full, X, y, cv=5)
    b = cross_val_score(pruned, X, y, cv=5)
    f, p = full.fit(X, y), pruned.fit(X, y)
    with capsys.disabled():
        print(f"\ntutorial experiment: unpruned {a.mean():.3f} +/- {a.std():.3f} "
              f"({f.tree_.node_count} nodes); pruned {b.mean():.3f} +/- {b.std():.3f} "
              f"({p.tree_.node_count} nodes, weight {p.ccp_alpha_ * 500:.2f} in cases)")
    assert p.tree_.node_count <= 0.2 * f.tree_.node_count
    assert b.mean() >= a.mean() + 0.03


# -- reduced-error pruning -----------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_reduced_error_never_lowers_validation_accuracy(seed):
    X, y = _noisy(seed, n=500, classes=3)
    Xt, yt, Xv, yv = X[:350], y[:350], X[350:], y[350:]
    est = tl.DecisionTreeClassifier(random_state=seed).fit(Xt, yt)
    t = reduced_error_prune(est, Xv, yv)
    small = copy.deepcopy(est)
    small.tree_ = t
    assert small.score(Xv, yv) >= est.score(Xv, yv)
    assert t.node_count < est.tree_.node_count
    # ...and no single further collapse of the result keeps the validation error as low
    base = np.mean(np.argmax(t.predict(Xv)[:, 0], 1) != yv)
    for node in np.flatnonzero(t.children_left != -1):
        keep = np.zeros(t.node_count, bool)
        keep[node] = True
        err = np.mean(np.argmax(t.subtree(keep).predict(Xv)[:, 0], 1) != yv)
        assert err > base
    Xr, yr = _noisy_regression(seed)
    reg = tl.DecisionTreeRegressor(random_state=seed).fit(Xr[:300], yr[:300])
    tr = reduced_error_prune(reg, Xr[300:], yr[300:])
    mse = lambda tree: np.mean((tree.predict(Xr[300:])[:, 0, 0] - yr[300:]) ** 2)  # noqa: E731
    assert mse(tr) <= mse(reg.tree_) and tr.node_count < reg.tree_.node_count


def test_reduced_error_in_fit_holds_out_rows():
    X, y = _noisy(3, n=500)
    est = tl.DecisionTreeClassifier(prune="reduced_error", validation_fraction=0.3,
                                    random_state=0).fit(X, y)
    assert est.unpruned_tree_.weighted_n_node_samples[0] == 350
    assert est.tree_.node_count < est.unpruned_tree_.node_count
    reg = tl.DecisionTreeRegressor(prune="reduced_error", random_state=0).fit(
        *_noisy_regression(1))
    assert reg.unpruned_tree_.weighted_n_node_samples[0] == 320
    assert reg.tree_.node_count < reg.unpruned_tree_.node_count


# -- rules -------------------------------------------------------------------------------------

def test_unsimplified_rules_predict_like_the_tree():
    X, y = _noisy(6, classes=3)
    est = tl.DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    rs = extract_rules(est, X, y, simplify=False)
    assert len(rs.rules_) == est.tree_.n_leaves
    Xn = np.random.default_rng(1).normal(size=(500, 4))
    np.testing.assert_array_equal(rs.predict(Xn), est.predict(Xn))
    np.testing.assert_allclose(rs.predict_proba(X).sum(axis=1), 1.0)
    # values next to thresholds (float32 neighbours of midpoints), and a table with missing
    # values and a level unseen at fit: the rules route exactly as the tree
    rng = np.random.default_rng(2)
    Xg = np.round(rng.random((400, 3)), 1).astype(np.float32) + np.float32(1e-7)
    yg = (Xg[:, 0] + rng.normal(scale=0.2, size=400) > 0.5).astype(int)
    tg = tl.DecisionTreeClassifier(random_state=0).fit(Xg, yg)
    np.testing.assert_array_equal(extract_rules(tg, Xg, yg, simplify=False).predict(Xg),
                                  tg.predict(Xg))
    df = pd.DataFrame({"c": rng.choice(list("abcd"), 300), "x": rng.normal(size=300)})
    yt = (df["c"].isin(["a", "b"]) ^ (df["x"] > 0)).astype(int)
    df.loc[rng.random(300) < 0.2, "c"] = None
    df.loc[rng.random(300) < 0.2, "x"] = np.nan
    tt = tl.ID3Classifier(max_depth=4).fit(df, yt)
    new = pd.DataFrame({"c": ["a", "zz", None, "d", "c"], "x": [0.5, np.nan, -1.0, 2.0, np.nan]})
    new = pd.concat([new, df.iloc[:50]], ignore_index=True)
    np.testing.assert_array_equal(extract_rules(tt, df, yt, simplify=False).predict(new),
                                  tt.predict(new))


@pytest.mark.parametrize("seed", range(3))
def test_simplified_rules(seed):
    X, y = _noisy(seed, classes=3)
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    plain = {tuple(sorted(map(repr, r.conditions))): r for r in
             extract_rules(est, X, y, simplify=False).rules_}
    rs = extract_rules(est, X, y)
    assert len(rs.rules_) <= est.tree_.n_leaves
    keys = [r._key() for r in rs.rules_]
    assert len(keys) == len(set(keys))  # no duplicates
    n_conds = sum(len(r.conditions) for r in rs.rules_)
    assert n_conds < sum(len(r.conditions) for r in plain.values())
    for r in rs.rules_:
        cov = r.covers(X)
        assert r.cases == cov.sum() and r.errors == (y[cov] != r.klass).sum()
        assert r.pessimistic_error == pytest.approx(u_cf(r.errors, r.cases, 0.25))
    # classes in blocks; within a class, by pessimistic error
    ks = [r.klass for r in rs.rules_]
    assert all(ks.count(k) == len(list(g)) for k, g in __import__("itertools").groupby(ks))
    for k in set(ks):
        errs = [r.pessimistic_error for r in rs.rules_ if r.klass == k]
        assert errs == sorted(errs)
    # a better generaliser than the unpruned tree on this noisy data
    Xn, yn = _noisy(seed + 100, n=2000, classes=3)
    assert rs.score(Xn, yn) > est.score(Xn, yn)


def test_rules_on_the_sunburn_table_read_like_the_book():
    from test_tables import SUNBURN, SUNBURN_Y
    est = tl.ID3Classifier().fit(SUNBURN, SUNBURN_Y)
    rs = RuleSet(est, simplify=False).fit(SUNBURN, SUNBURN_Y)
    text = str(rs)
    assert "if Hair = Red\n    then Burn" in text
    assert "if Hair = Brown\n    then None" in text
    assert "Hair = Blonde and Lotion = No" in text and "Default:" in text
    np.testing.assert_array_equal(rs.predict(SUNBURN), SUNBURN_Y)
    simple = RuleSet(tl.ID3Classifier()).fit(SUNBURN, SUNBURN_Y)  # fits its own tree
    assert simple.score(SUNBURN, SUNBURN_Y) >= 0.75
    assert isinstance(simple.estimator_, tl.ID3Classifier)


def test_rules_with_missing_values_and_errors():
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"c": rng.choice(list("abc"), n), "x": rng.normal(size=n)})
    y = np.where(df["c"] == "a", "yes", "no")
    df.loc[rng.random(n) < 0.15, "c"] = None
    est = tl.C45Classifier().fit(df, y)
    rs = extract_rules(est, df, y)
    assert "or missing" in str(rs)
    assert rs.score(df, y) > 0.8
    proba = rs.predict_proba(df)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="regressor"):
        extract_rules(tl.DecisionTreeRegressor().fit(*_noisy_regression()), *_noisy_regression())
    with pytest.raises(ValueError, match="one label per row"):
        extract_rules(est, df, y[:5])
    with pytest.raises(ValueError, match="estimator"):
        RuleSet().fit(df, y)
    assert cross_val_score(RuleSet(tl.C45Classifier()), df, y, cv=3).mean() > 0.8


# -- pictures ----------------------------------------------------------------------------------

def test_pictures():
    from treelearn.export.plot_pruning import (
        KEPT_COLOR,
        PRUNED_COLOR,
        plot_cost_complexity,
        plot_cv_pruning,
        plot_pruned_tree,
        plot_tree_size,
        tree_layout,
    )
    X, y = _tutorial_data()
    est = tl.DecisionTreeClassifier(criterion="entropy", prune="cv", prune_cv=5,
                                    random_state=0).fit(X, y)
    p = Pruner(est.unpruned_tree_)
    weights = [0.5, 2.7, 8.0]
    ax = plot_cost_complexity(p, weights, complexity="nodes")
    assert len(ax.get_lines()) == 2 * len(weights)
    for i, wgt in enumerate(weights):
        marker = ax.get_lines()[2 * i + 1]
        k = p.best_step(wgt, "nodes")
        assert marker.get_xdata()[0] == p.path.n_nodes[k]
        assert marker.get_ydata()[0] == pytest.approx(p.cost_complexity(wgt, "nodes").min())
    ax = plot_cv_pruning(est.pruning_)
    vlines = [ln.get_xdata()[0] for ln in ax.get_lines()[1:]]
    assert vlines == [est.pruning_.best_alpha, est.pruning_.chosen_alpha]
    assert len(ax.collections) == 1  # the std band
    ax = plot_tree_size(p)
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), p.path.n_leaves)
    p.prune_to_alpha(est.ccp_alpha_)
    ax = plot_pruned_tree(p)
    colors = ax.collections[0].get_facecolors()
    kept = p.kept_mask()
    rgba = matplotlib.colors.to_rgba_array([KEPT_COLOR, PRUNED_COLOR])
    assert np.all(colors[kept] == rgba[0]) and np.all(colors[~kept] == rgba[1])
    assert kept.sum() == p.tree.node_count
    inner = np.flatnonzero(p.original.children_left != -1)
    # only splits with a pruning cost of their own are labelled: never "nan"
    own = inner[np.isfinite(p.pruning_alpha[inner])]
    assert 0 < own.size < inner.size
    assert len(ax.texts) == own.size
    assert {t.get_text() for t in ax.texts} == {f"{c:.2f}" for c in p.pruning_alpha[own]}
    width, height = ax.figure.get_size_inches()
    assert width >= 0.2 * p.original.n_leaves and height >= 0.5 * (p.original.max_depth + 1)
    x, yy = tree_layout(p.original)
    leaves = p.original.children_left == -1
    assert sorted(x[leaves]) == list(range(leaves.sum()))
    assert np.all(x[inner] == [x[p.original.children(i)].mean() for i in inner])
    matplotlib.pyplot.close("all")


# -- inputs and errors -------------------------------------------------------------------------

def test_node_sums_sparse_and_errors():
    import scipy.sparse as sp
    X, y = _noisy(11, n=200)
    X[X < 0] = 0.0
    est = tl.DecisionTreeClassifier(random_state=0).fit(sp.csr_matrix(X), y)
    stats = np.random.default_rng(0).random((200, 2))
    np.testing.assert_allclose(est.tree_.node_sums(sp.csr_matrix(X), stats),
                               est.tree_.node_sums(X, stats))
    with pytest.raises(ValueError, match="row_stats"):
        est.tree_.node_sums(X, stats[:5])
    table = tl.ID3Classifier().fit(pd.DataFrame({"c": list("abab")}), [0, 1, 0, 1])
    with pytest.raises(TypeError, match="binary numeric"):
        table.tree_.node_sums(sp.csr_matrix(np.zeros((2, 1))), np.ones((2, 1)))


def test_cost_matrix_losses_and_risk():
    X, y = _noisy(12, n=300)
    C = np.array([[0.0, 1.0], [5.0, 0.0]])
    est = tl.DecisionTreeClassifier(max_depth=3, misclassification_cost=C,
                                    random_state=0).fit(X, y)
    loss = node_losses(est, X, y)
    pred = est.predict(X)
    leaves = est.apply(X)
    assert loss[np.unique(leaves)].sum() == pytest.approx(C[y, pred].sum())
    with pytest.raises(ValueError, match="never saw"):
        node_losses(est, X[:3], [0, 1, 7])
    p = Pruner(est, risk="misclassification")
    t = est.tree_
    expected = (t.weighted_n_node_samples * (t.value[:, 0] @ C).min(axis=1)
                / t.weighted_n_node_samples[0])
    np.testing.assert_allclose(node_risk(t, "misclassification", C), expected)
    assert p.costs()[0] == pytest.approx(expected[t.children_left == -1].sum() * 300)
    res = choose_alpha(est, X, y, cv=3, risk="misclassification", random_state=0)
    assert np.all(res.mean_score <= 0)  # -mean cost
    with pytest.raises(ValueError, match="1-d"):
        node_losses(est, X, np.c_[y, y])


def test_prune_cv_on_tables_and_lists():
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame({"c": rng.choice(list("abcde"), n), "x": rng.normal(size=n)})
    y = (df["c"].isin(["a", "b"]) ^ (rng.random(n) < 0.2)).astype(int)
    df.loc[rng.random(n) < 0.1, "c"] = None
    cart = tl.CARTClassifier(random_state=0, prune_cv=5).fit(df, y)
    assert cart.tree_.node_count < cart.unpruned_tree_.node_count
    assert cart.is_categorical_[0] and cart.score(df, y) > 0.7
    rows = [[c, x] for c, x in zip(df["c"].fillna("z"), df["x"], strict=True)]
    lst = tl.CARTClassifier(random_state=0, prune_cv=5, categorical_features=[0]).fit(
        rows, y.tolist())
    assert lst.pruning_.n_splits == 5
    reg = tl.CARTRegressor(random_state=0, prune_cv=4).fit(df, rng.normal(size=n) + y * 3)
    assert reg.pruning_.n_splits == 4
    w = rng.integers(1, 3, n).astype(float)
    weighted = tl.CARTClassifier(random_state=0, prune_cv=5).fit(df, y, sample_weight=w)
    assert weighted.unpruned_tree_.weighted_n_node_samples[0] == w.sum()


def test_splitter_choice():
    from sklearn.model_selection import KFold, StratifiedKFold

    from treelearn.pruning.cv import make_splitter
    y = np.array([0] * 8 + [1] * 3)
    s = make_splitter(10, True, y, 0)
    assert isinstance(s, StratifiedKFold) and s.n_splits == 3
    s = make_splitter(10, True, np.array([0] * 8 + [1]), 0)
    assert isinstance(s, KFold) and s.n_splits == 9
    assert make_splitter(5, False, np.arange(20.0), 0).n_splits == 5
    with pytest.raises(ValueError, match="at least 2 folds"):
        make_splitter(1, True, y, 0)
    with pytest.raises(ValueError, match="2 samples"):
        make_splitter(5, True, y[:1], 0)


@pytest.mark.parametrize("seed", range(6))
def test_weakest_link_sequence_equals_the_rescanning_twin(seed):
    """The heap with stale keys collapses exactly what a rescan of every node would, ties
    included: risks with few distinct values (misclassified counts) make many."""
    from treelearn.pruning.cost_complexity import weakest_link_sequence

    X, y = _noisy(seed, n=500, classes=3)
    t = tl.DecisionTreeClassifier(random_state=seed, max_depth=None if seed % 2 else 7
                                  ).fit(np.round(X, 1), y).tree_
    misclassified = t.weighted_n_node_samples * (1.0 - t.value[:, 0].max(axis=1))
    for r in (t.impurity * t.weighted_n_node_samples / 500.0, misclassified / 500.0):
        nodes, alphas, _, _, _ = weakest_link_sequence(t.branch_ptr, t.branch_child, r)
        twin_nodes, twin_alphas = naive_weakest_links(t.branch_ptr, t.branch_child, r)
        np.testing.assert_array_equal(nodes, twin_nodes)
        np.testing.assert_array_equal(alphas, twin_alphas)
