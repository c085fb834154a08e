"""Forest proximities, the outlier score and the scaling coordinates
(treelearn/ensemble/_proximity.py, kernels in treelearn/engine/leaves.py).

The twins count shared leaves pair by pair from ``apply`` (Breiman 2001, section 12 / Breiman
and Cutler's manual: "if cases k and n are in the same terminal node increase their proximity
by one"; then divide by the number of trees) and write the outlier measure and the classical
scaling as the manual and Torgerson (1952) print them.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification

import treelearn as tl
from treelearn import ensemble as E
from treelearn.engine.leaves import rows_by_leaf, shared_leaf_counts, top_shared_leaf_counts
from treelearn.ensemble import _proximity
from treelearn.ensemble._proximity import leaf_lists, scaling_coordinates


def twin_proximities(lx, ly):
    """Pair by pair, tree by tree."""
    n, T = lx.shape
    m = ly.shape[0]
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            same = 0
            for t in range(T):
                if lx[i, t] == ly[j, t]:
                    same += 1
            out[i, j] = same / T
    return out


def twin_top(P, k):
    """Each row's k largest entries (ties: the lower column), zeros left out."""
    out = np.zeros_like(P)
    for i in range(P.shape[0]):
        cols = sorted((j for j in range(P.shape[1]) if P[i, j] > 0),
                      key=lambda j: (-P[i, j], j))[:k]
        out[i, cols] = P[i, cols]
    return out


def twin_outlier(P, y):
    """Breiman and Cutler: P(n) = sum of prox(n, k)**2 over the other cases k of n's class;
    raw = n_cases / P(n); per class, (raw - median) / median absolute deviation."""
    n = len(y)
    raw = np.empty(n)
    for i in range(n):
        s = sum(P[i, k] ** 2 for k in range(n) if k != i and y[k] == y[i])
        raw[i] = n / s if s > 0 else np.inf
    out = np.empty(n)
    for c in set(y.tolist()):
        idx = [i for i in range(n) if y[i] == c]
        vals = np.array([raw[i] for i in idx if np.isfinite(raw[i])])
        med = np.median(vals)
        mad = np.median(np.abs(vals - med)) or np.mean(np.abs(vals - med)) or 1.0
        for i in idx:
            out[i] = (raw[i] - med) / mad if np.isfinite(raw[i]) else np.inf
    return out


leaf_matrices = st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(1, 8),
                          st.integers(1, 6), st.integers(0, 2**31 - 1))


@settings(max_examples=60, deadline=None)
@given(leaf_matrices, st.integers(1, 12))
def test_leaf_kernels_equal_pairwise_count(shape, k):
    n, m, T, n_leaves, seed = shape
    rng = np.random.RandomState(seed)
    ly = rng.randint(0, n_leaves, (m, T)).astype(np.int64)
    lx = rng.randint(0, n_leaves + 2, (n, T)).astype(np.int64)  # leaves no row of Y reaches
    offsets, sizes, ptr, rows = leaf_lists(ly)
    for t in range(T):  # the listing: rows ascending within each leaf
        for leaf in range(sizes[t]):
            g = offsets[t] + leaf
            np.testing.assert_array_equal(rows[ptr[g]:ptr[g + 1]],
                                          np.flatnonzero(ly[:, t] == leaf))
    want = twin_proximities(lx, ly)
    got = np.zeros((n, m))
    shared_leaf_counts(lx, offsets, sizes, ptr, rows, 2, got)
    np.testing.assert_array_equal(got / T, want)
    kk = min(k, m)
    top_rows = np.zeros((n, kk), np.int64)
    top_counts = np.zeros((n, kk), np.int64)
    nnz = np.zeros(n, np.int64)
    top_shared_leaf_counts(lx, offsets, sizes, ptr, rows, m, kk, 2, top_rows, top_counts, nnz)
    top = np.zeros((n, m))
    for i in range(n):
        top[i, top_rows[i, :nnz[i]]] = top_counts[i, :nnz[i]] / T
        # in order: most trees first, then the lower row
        keys = [(-c, r) for r, c in zip(top_rows[i, :nnz[i]], top_counts[i, :nnz[i]],
                                        strict=True)]
        assert keys == sorted(keys)
    np.testing.assert_array_equal(top, twin_top(want, kk))


def test_rows_by_leaf_of_no_rows():
    ptr, rows = rows_by_leaf(np.zeros((0, 3), np.int64), np.zeros(3, np.int64), 0)
    assert ptr.tolist() == [0] and rows.size == 0


@pytest.fixture(scope="module")
def forest():
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    return X, y, E.RandomForestClassifier(n_estimators=25, random_state=0).fit(X, y)


def test_forest_proximities_against_direct_count(forest):
    X, y, f = forest
    L = f.apply(X)
    P = f.proximities(X)
    assert isinstance(P, np.ndarray) and P.shape == (300, 300)
    np.testing.assert_array_equal(P, twin_proximities(L, L))
    np.testing.assert_array_equal(np.diagonal(P), 1.0)
    Y = X[:40] + 0.05
    PY = f.proximities(X[:70], Y)
    np.testing.assert_array_equal(PY, twin_proximities(L[:70], f.apply(Y)))
    S = f.proximities(X[:70], Y, top_k=5)
    assert sp.issparse(S) and S.shape == (70, 40) and S.format == "csr"
    np.testing.assert_array_equal(S.toarray(), twin_top(PY, 5))


def test_auto_switches_to_top_k_on_large_inputs(forest, monkeypatch):
    X, _, f = forest
    monkeypatch.setattr(_proximity, "AUTO_DENSE_CELLS", 100 * 100)
    monkeypatch.setattr(_proximity, "AUTO_TOP_K", 7)
    assert isinstance(f.proximities(X[:100]), np.ndarray)
    S = f.proximities(X[:101])
    assert sp.issparse(S) and S.getnnz(axis=1).max() == 7


def test_every_forest_kind_has_proximities():
    X, y = make_classification(120, 5, random_state=1)
    yr = X[:, 0] + X[:, 1]
    df = pd.DataFrame(X, columns=list("abcde"))
    df["c"] = pd.Categorical(np.where(y == 1, "u", "v"))
    for model, target, data in (
            (E.ExtraTreesRegressor(n_estimators=5, random_state=0), yr, X),
            (E.BaggingClassifier(n_estimators=5, max_features=0.6, random_state=0), y, X),
            (E.RandomForestClassifier(n_estimators=5, random_state=0), y, df),
            (E.ObliqueRandomForestClassifier(n_estimators=5, random_state=0), y, X),
            (E.RandomForestRegressor(n_estimators=5, splitter="hist", random_state=0), yr, X)):
        model.fit(data, target)
        L = model.apply(data)
        np.testing.assert_array_equal(model.proximities(data), twin_proximities(L, L))


def test_outlier_scores_against_the_manuals_formula(forest):
    X, y, f = forest
    P = f.proximities(X)
    np.testing.assert_allclose(f.outlier_scores(X, y), twin_outlier(P, y), rtol=1e-12)
    np.testing.assert_allclose(f.outlier_scores(X), twin_outlier(P, np.zeros(300, int)),
                               rtol=1e-12)
    # from each row's 20 largest proximities: the same formula on the kept ones
    S = f.proximities(X, top_k=20).toarray()
    np.testing.assert_allclose(f.outlier_scores(X, y, top_k=20), twin_outlier(S, y),
                               rtol=1e-12)


def test_a_planted_outlier_scores_highest():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(0, 1, (150, 2)), rng.normal(6, 1, (150, 2))])
    y = np.repeat([0, 1], 150)
    X[7] = [6.0, 6.0]  # a row of class 0 in the middle of class 1
    f = E.RandomForestClassifier(n_estimators=100, random_state=0).fit(X, y)
    scores = f.outlier_scores(X, y)
    assert np.argmax(np.where(np.isfinite(scores), scores, np.inf)) == 7
    assert scores[7] > 10  # the manual's threshold for an outlier


def test_proximity_errors(forest, monkeypatch):
    X, y, f = forest
    for bad in (0, -1, 2.5, "all", True):
        with pytest.raises(ValueError, match="top_k"):
            f.proximities(X, top_k=bad)
    with pytest.raises(ValueError, match="one value per row"):
        f.outlier_scores(X, y[:10])
    with pytest.raises(ValueError, match="features"):
        f.proximities(X[:, :3])
    monkeypatch.setenv("TREELEARN_MEMORY_LIMIT", "1K")
    with pytest.raises(MemoryError, match="top_k=100"):
        f.proximities(X, top_k=None)
    with pytest.raises(Exception, match="not fitted|fitted"):
        E.RandomForestClassifier().proximities(X)


def twin_scaling(P, k):
    """Torgerson's classical scaling of squared distances D2 = 1 - P: B = -1/2 J D2 J,
    coordinates = leading eigenvectors times the square roots of their eigenvalues."""
    n = P.shape[0]
    J = np.eye(n) - np.ones((n, n)) / n
    B = -0.5 * J @ (1.0 - P) @ J
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:k]
    return vecs[:, order] * np.sqrt(np.clip(vals[order], 0, None))


def test_scaling_coordinates_are_classical_mds(forest, monkeypatch):
    X, y, f = forest
    P = f.proximities(X)
    got = scaling_coordinates(P, 3)
    want = twin_scaling(P, 3)
    for c in range(3):  # an eigenvector's sign is free
        s = np.sign(got[:, c] @ want[:, c])
        np.testing.assert_allclose(got[:, c], s * want[:, c], atol=1e-9)
    # the Lanczos path for many rows gives the same coordinates
    monkeypatch.setattr(_proximity, "EIGSH_FROM", 10)
    np.testing.assert_allclose(scaling_coordinates(P, 3), got, atol=1e-8)
    # the classes of this forest separate along the first coordinate
    c1 = got[:, 0]
    assert abs(c1[y == 0].mean() - c1[y == 1].mean()) > 2 * c1.std() * 0.5
    with pytest.raises(ValueError, match="square"):
        scaling_coordinates(P[:5])
    with pytest.raises(ValueError, match="n_components"):
        scaling_coordinates(P, 0)


def test_proximities_of_a_converted_forest_are_the_same_leaves(forest):
    X, y, f = forest
    sk = tl.to_sklearn(f)
    np.testing.assert_array_equal(sk.apply(X), f.apply(X))
