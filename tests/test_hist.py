"""The histogram splitter: binning, kernels against their naive twins, whole trees against the
exact splitter.

On data with at most ``max_bins`` distinct values per feature every cut of the exact splitter
is a bin edge, so the two splitters must grow the same tree (same features, partitions,
impurities and values; thresholds may differ between the same two neighbouring values).
Where two features give the same partition of a node (common in small nodes of such data),
the splitters may pick different ones, since they examine features in different orders: the
comparison allows a few such exact ties and checks that they are ties.
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import JIT_DISABLED
from hypothesis import given
from hypothesis import strategies as st
from naive import naive_best_bin, naive_hist, naive_partition, split_score
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, train_test_split

import treelearn as tl
from treelearn.engine import levels
from treelearn.engine.binning import feature_edges, sort_floats, table_layout
from treelearn.engine.criteria import (
    CLASSIFICATION_CRITERIA,
    REGRESSION_CRITERIA,
    node_impurity,
)
from treelearn.engine.hist import (
    clear_bins,
    clear_rows,
    hist_feature_rows,
    hist_node,
    hist_node_parallel,
    mark_rows,
    mask_order,
    move_rows,
    move_rows_parallel,
    narrow,
    scan_hist_classes,
    scan_hist_two,
    subtract,
    summarize_hist,
)
from treelearn.engine.layouts import bins as _grow_hist

# -- binning ---------------------------------------------------------------------------------


def test_binner_bins_are_counts_of_edges_below(rng):
    X = rng.normal(size=(5000, 4)).astype(np.float32)
    X[:, 3] = np.round(X[:, 3])  # few distinct values
    b = tl.Binner(max_bins=32).fit(X)
    B = b.transform(X)
    assert B.dtype == np.uint8 and B.shape == X.shape
    for f in range(4):
        e = b.bin_edges_[f]
        assert np.all(np.diff(e) > 0)
        np.testing.assert_array_equal(B[:, f], np.searchsorted(e, X[:, f], side="left"))
        # the cut "bin <= k" is the real threshold x <= e[k]
        for k in range(0, e.size, 7):
            np.testing.assert_array_equal(B[:, f] <= k, X[:, f] <= b.threshold(f, k))
    assert b.n_bins_[:3].tolist() == [32, 32, 32]
    assert b.exact_.tolist() == [False, False, False, True]
    counts = np.bincount(B[:, 0], minlength=32)
    assert counts.min() > 0.5 * 5000 / 32 and counts.max() < 1.5 * 5000 / 32  # quantiles


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), p=st.integers(1, 5),
       n_cat=st.integers(0, 2), holes=st.booleans())
def test_table_bin_matrix_is_edges_below_codes_and_missing_bins(seed, n, p, n_cat, holes):
    """The engine's bin matrix, numeric tables (the fast loop) and tables with categories
    alike: a numeric value's bin counts its feature's edges below it, a category its code, a
    hole the feature's missing bin (after its value bins)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p + n_cat)) * rng.integers(1, 40), 1).astype(np.float32)
    n_levels = np.zeros(p + n_cat)
    is_cat = np.zeros(p + n_cat, dtype=bool)
    for j in range(p, p + n_cat):
        L = int(rng.integers(1, 300))  # past 255 levels: two bytes
        X[:, j] = rng.integers(0, L, size=n)
        is_cat[j] = True
        n_levels[j] = L
    if holes:
        X[rng.random(X.shape) < 0.2] = np.nan
    binner = tl.Binner(max_bins=int(rng.integers(2, 256))).fit(X)
    B, (hoff, nbins, fcol, fwide), _, _ = table_layout(X, binner, is_cat, n_levels)
    for f in range(X.shape[1]):
        col = X[:, f]
        got = B[:, fcol[f]].astype(np.int64)
        if fwide[f]:
            got += B[:, fcol[f] + 1].astype(np.int64) << 8
        if is_cat[f]:
            want = np.where(np.isnan(col), n_levels[f], np.nan_to_num(col)).astype(np.int64)
        else:
            want = np.searchsorted(binner.bin_edges_[f], col, side="left")
            want[np.isnan(col)] = binner.n_bins_[f]
        np.testing.assert_array_equal(got, want)
        assert nbins[f] == (n_levels[f] if is_cat[f] else binner.n_bins_[f])


def test_binner_exact_values_and_rounding():
    # Adjacent float32 values: their float64 midpoint rounds to the upper one, so the edge must
    # fall back to the lower (scikit-learn's rule), else the upper value lands in the wrong bin.
    a = np.float32(1.0)
    nxt = np.nextafter(a, np.float32(2.0))
    X = np.array([[a], [nxt], [a], [3.0]], dtype=np.float32)
    b = tl.Binner().fit(X)
    assert b.exact_[0] and b.n_bins_[0] == 3
    assert b.transform(X)[:, 0].tolist() == [0, 1, 0, 2]


def test_binner_subsample_keeps_rare_values():
    X = np.zeros((3000, 1), dtype=np.float32)
    X[::2, 0] = 1.0
    X[1234, 0] = 7.0  # absent from most subsamples of 100 rows
    b = tl.Binner(subsample=100).fit(X)
    assert b.exact_[0] and b.n_bins_[0] == 3
    assert b.transform(X)[1234, 0] == 2


_SPECIAL = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38]


@given(st.lists(st.one_of(st.floats(width=32, allow_nan=True), st.sampled_from(_SPECIAL)),
                max_size=300))
def test_radix_sort_is_numpy_sort(values):
    a = np.array(values, dtype=np.float32)
    got = a.copy()
    sort_floats(got)
    # NaN last; -0.0 and 0.0 compare equal (NumPy leaves them in either order)
    np.testing.assert_array_equal(got, np.sort(a))


def test_radix_sort_large_column_and_binner_edges(rng):
    # every digit of the three passes in use, repeated values, holes; the binner's edges from
    # its subsample equal those of NumPy's sort of the same rows
    X = np.concatenate([rng.normal(size=(4000, 1)) * 1e6, rng.integers(0, 40, (4000, 1))], 1)
    X = X.astype(np.float32)
    X[::37, 0] = np.nan
    col = X[:, 0].copy()
    sort_floats(col)
    np.testing.assert_array_equal(col, np.sort(X[:, 0]))
    b = tl.Binner(max_bins=64, subsample=1000, random_state=3).fit(X)
    keep = np.zeros(X.shape[0], dtype=bool)
    keep[np.random.default_rng(3).choice(X.shape[0], 1000, replace=False)] = True
    want = feature_edges(np.sort(X[keep, 0]), 64)
    np.testing.assert_array_equal(b.bin_edges_[0], want[0])
    assert not b.exact_[0] and b.exact_[1] and b.n_bins_[1] == 40


def test_binner_missing_values_get_their_bin():
    X = np.array([[1.0], [np.nan], [2.0], [np.nan]])
    b = tl.Binner(max_bins=10).fit(X)
    assert b.missing_bin == 10
    assert b.transform(X)[:, 0].tolist() == [0, 10, 1, 10]
    assert feature_edges(np.array([np.nan, np.nan], dtype=np.float32), 5)[0].size == 0


def test_binner_padded_layout(rng):
    X = rng.normal(size=(50, 11))
    b = tl.Binner().fit(X)
    P = b.transform_padded(X)
    assert P.shape == (50, 16) and P.flags.c_contiguous
    np.testing.assert_array_equal(P[:, :11], b.transform(X))


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"max_bins": 1}, ValueError, "max_bins"),
    ({"max_bins": 256}, ValueError, "max_bins"),
    ({"max_bins": 2.5}, ValueError, "max_bins"),
    ({"subsample": 0}, ValueError, "subsample"),
])
def test_binner_rejects_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        tl.Binner(**kwargs)


def test_binner_rejects_bad_input(rng):
    b = tl.Binner()
    with pytest.raises(ValueError, match="not fitted"):
        b.transform(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="2-D"):
        b.fit(np.zeros(3))
    with pytest.raises(TypeError, match="numeric"):
        b.fit(np.array([["a"]]))
    b.fit(rng.normal(size=(10, 3)))
    with pytest.raises(ValueError, match="3 features"):
        b.transform(np.zeros((2, 2)))
    assert "n_features=3" in repr(b)


# -- kernels against naive twins -------------------------------------------------------------


def _rows(rng, n, p, n_bins, n_classes, weighted):
    B = np.zeros((n, -(-p // 8) * 8), dtype=np.uint8)
    B[:, :p] = rng.integers(0, n_bins, size=(n, p))
    if n_classes:
        y = rng.integers(0, n_classes, size=n)
    else:
        y = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else np.ones(n)
    return B, y, w


def _layout(p, n_bins):
    """One-byte features of ``n_bins`` histogram rows each, stored in columns 0..p-1."""
    return (np.arange(p + 1, dtype=np.int64) * n_bins, np.arange(p, dtype=np.int64),
            np.zeros(p, dtype=np.bool_))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), p=st.integers(1, 9),
       n_classes=st.sampled_from([None, 2, 3]), weighted=st.booleans())
def test_hist_kernels_match_naive(seed, n, p, n_classes, weighted):
    rng = np.random.default_rng(seed)
    NB = 6
    B, y, w = _rows(rng, n, p, NB, n_classes, weighted)
    ref = naive_hist(B, y, w, n_features=p, n_bins=NB, n_classes=n_classes, weighted=weighted)
    C = y.astype(np.int32) if n_classes else None
    R = None if n_classes else y.astype(np.float64)
    W = w if weighted else None
    hoff, fcol, fwide = _layout(p, NB)
    H = ref.shape[2]
    hist = np.full((p * NB, H), 99.0)
    hist_node(B, C, R, W, 0, n, hist, hoff, fcol, fwide, False)
    np.testing.assert_allclose(hist.reshape(ref.shape), ref, rtol=1e-12, atol=1e-12)
    par = np.full(hist.shape, 99.0)
    hist_node_parallel(B, C, R, W, 0, n, par, np.empty((3, *hist.shape)), hoff, fcol, fwide,
                       False)
    np.testing.assert_allclose(par.reshape(ref.shape), ref, rtol=1e-12, atol=1e-12)
    # sibling subtraction: parent minus the first rows = the other rows
    k = n // 3
    first = np.empty_like(hist)
    hist_node(B, C, R, W, 0, k, first, hoff, fcol, fwide, False)
    subtract(hist, first)
    rest = naive_hist(B[k:], y[k:], w[k:], n_features=p, n_bins=NB, n_classes=n_classes,
                      weighted=weighted)
    np.testing.assert_allclose(hist.reshape(ref.shape), rest, atol=1e-9)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), p=st.integers(1, 6),
       n_classes=st.sampled_from([None, 2]), weighted=st.booleans(), wide=st.booleans())
def test_hist_kernels_any_column_layout(seed, n, p, n_classes, weighted, wide):
    """Features stored at other columns (shuffled, or one of them on two bytes): the general
    loops of the histogram kernels, beside the fast one of the one-byte identity layout, give
    the brute-force histogram, and clearing the rows leaves it zero."""
    rng = np.random.default_rng(seed)
    NB = 6
    B, y, w = _rows(rng, n, p, NB, n_classes, weighted)
    ref = naive_hist(B, y, w, n_features=p, n_bins=NB, n_classes=n_classes, weighted=weighted)
    cols = rng.permutation(p)
    fwide = np.zeros(p, dtype=np.bool_)
    width = p + 1
    if wide:
        fwide[p - 1] = True
        cols = np.arange(p)
    stored = np.zeros((n, width), dtype=np.uint8)
    stored[:, cols] = B[:, :p]  # a wide feature's high byte (column p) stays 0
    C = y.astype(np.int32) if n_classes else None
    R = None if n_classes else y.astype(np.float64)
    W = w if weighted else None
    hoff = np.arange(p + 1, dtype=np.int64) * NB
    fcol = cols.astype(np.int64)
    assert narrow(fcol, fwide) == (not wide and np.array_equal(cols, np.arange(p)))
    hist = np.full((p * NB, ref.shape[2]), 99.0)
    hist_node(stored, C, R, W, 0, n, hist, hoff, fcol, fwide, False)
    np.testing.assert_allclose(hist.reshape(ref.shape), ref, rtol=1e-12, atol=1e-12)
    clear_rows(stored, 0, n, hist, hoff, fcol, fwide)
    assert not hist.any()


CRITS = [(c, 3) for c in ("gini", "entropy", "misclassification", "gain_ratio", "chi2")] + \
    [("gini", 2), ("entropy", 2), ("squared_error", None)]


@pytest.mark.parametrize("crit_name, n_classes", CRITS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 80), weighted=st.booleans(),
       min_leaf=st.integers(1, 4))
def test_hist_summary_search_matches_naive(crit_name, n_classes, seed, n, weighted, min_leaf):
    """A numeric feature's histogram, summarised (all bins, or a small node's own bins) and
    searched by the levels module, gives the brute-force best cut."""
    rng = np.random.default_rng(seed)
    NB = 9
    B, y, w = _rows(rng, n, 1, NB, n_classes, True)  # float weights: no exact ties
    w = w if weighted else np.round(w * 4) / 4 + rng.uniform(0, 1e-3, n)
    crit = (CLASSIFICATION_CRITERIA | REGRESSION_CRITERIA)[crit_name]
    C = y.astype(np.int32) if n_classes else None
    R = None if n_classes else y.astype(np.float64)
    hoff, fcol, fwide = _layout(1, NB + 1)  # value bins, then the missing bin
    nbins = np.array([NB], dtype=np.int64)
    S = n_classes or 2
    H = (n_classes or 3) + 1
    hist = np.empty((NB + 1, H))
    hist_node(B, C, R, w, 0, n, hist, hoff, fcol, fwide, n_classes is None)
    if n_classes:
        stats = np.bincount(y, weights=w, minlength=n_classes).astype(float)
    else:
        stats = np.array([np.sum(w * y), np.sum(w * y * y)])
    imp = node_impurity(stats, float(w.sum()), crit)

    def search(n_order):
        ws, iw, stw = levels.workspace(NB + 1, S)
        out = np.zeros(levels.N_RES)
        order = np.empty(n, dtype=np.int64)
        if n_order >= 0:
            mask = np.zeros(1, dtype=np.uint64)
            own = np.zeros_like(hist)
            hist_feature_rows(B, C, R, w, 0, n, own, hoff, fcol, fwide, n_classes is None, 0,
                              mask)
            np.testing.assert_array_equal(own, hist)
            n_order = mask_order(mask, NB + 1, order)
            np.testing.assert_array_equal(order[:n_order], np.unique(B[:, 0]))
            assert mask[0] == 0
        u, mw, mn = summarize_hist(hist, 0, hoff, nbins, n_classes is not None, True, stw, ws,
                                   iw, order, n_order)
        assert (mw, mn) == (0.0, 0)
        levels.search_summary(stw, ws, iw, u, mw, mn, False, crit, imp, levels.MISSING_LEARN,
                              False, min_leaf, 0.0, True, 0, 0.0,
                              np.zeros(NB + 2, dtype=np.int64), NB, out)
        return out[levels.R_SCORE], int(out[levels.R_LO])

    score, b = search(-1)
    assert search(0) == (score, b)  # visiting only the node's non-empty bins
    b = b if score > -np.inf else -1
    ref_b, ref_nl = naive_best_bin(B[:, 0], y, w, crit, n_bins=NB, n_classes=n_classes,
                                   min_leaf=min_leaf)
    assert (b >= 0) == (ref_b >= 0)
    if b >= 0 and b != ref_b:
        # A different cut is only right if it scores the same (misclassification is piecewise
        # linear: exact ties are common, and rounding decides them).
        def naive_score(cut):
            m = B[:, 0] <= cut
            return split_score(y[m], w[m], y[~m], w[~m], crit, n_classes)

        assert naive_score(b) == pytest.approx(naive_score(ref_b), rel=1e-9, abs=1e-12)
    elif b >= 0:
        assert int((B[:, 0] <= b).sum()) == ref_nl


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 90), n_bins=st.integers(1, 140),
       crit_name=st.sampled_from(["gini", "entropy", "squared_error", "misclassification"]),
       n_classes=st.sampled_from([2, 3, 5]), weighted=st.booleans(), integral=st.booleans(),
       min_leaf=st.integers(1, 5), min_wleaf=st.sampled_from([0, 3.5]), own_bins=st.booleans())
def test_fast_histogram_scan_is_the_summary_search(seed, n, n_bins, crit_name, n_classes,
                                                   weighted, integral, min_leaf, min_wleaf,
                                                   own_bins):
    """scan_hist_two (two statistics, numeric, no missing value at the node) and
    scan_hist_classes (any number of classes) give exactly what summarize_hist +
    search_summary give: the same score (bit for bit), cut, next bin, missing branch and
    number of cuts tried, over all bins or a node's own bins (from the bitmap of
    hist_feature_rows; the clean slot is clean again after clear_bins)."""
    rng = np.random.default_rng(seed)
    regression = crit_name == "squared_error"
    two = regression or (n_classes == 2 and crit_name != "misclassification")
    B, y, w = _rows(rng, n, 1, n_bins, None if regression else n_classes, weighted)
    if weighted and integral:
        w = np.round(w * 3)
        keep = w > 0
        B, y, w = B[keep], y[keep], w[keep]
        n = len(y)
        if n == 0:
            return
    crit = (CLASSIFICATION_CRITERIA | REGRESSION_CRITERIA)[crit_name]
    C = None if regression else y.astype(np.int32)
    R = y.astype(np.float64) if regression else None
    W = w if weighted else None
    hoff, fcol, fwide = _layout(1, n_bins + 1)
    nbins = np.array([n_bins], dtype=np.int64)
    H = (3 if regression else n_classes) + int(weighted)
    hist = np.zeros((n_bins + 1, H))
    mask = np.zeros(3, dtype=np.uint64)
    hist_feature_rows(B, C, R, W, 0, n, hist, hoff, fcol, fwide, regression, 0, mask)
    order = np.zeros(n_bins + 2, dtype=np.int64)
    n_order = mask_order(mask, n_bins + 1, order) if own_bins else -1
    fast = np.zeros(levels.N_RES)
    S = 2 if regression else n_classes
    if two:
        usable = scan_hist_two(hist, 0, hoff, nbins, not regression, weighted, crit, min_leaf,
                               min_wleaf, order, n_order, fast, 0, -np.inf, np.inf)
    else:
        usable = scan_hist_classes(hist, 0, hoff, nbins, weighted, crit, min_leaf, min_wleaf,
                                   order, n_order, levels.workspace(n_bins + 2, S)[2], fast)
    ws, iw, stw = levels.workspace(n_bins + 2, S)
    u, mw, mn = summarize_hist(hist, 0, hoff, nbins, not regression, weighted, stw, ws, iw,
                               order, n_order)
    stats = stw[levels.SR_ENTRIES:levels.SR_ENTRIES + u].sum(axis=0)
    imp = node_impurity(stats, float(ws[levels.W_UW, :u].sum()), crit) if u else 0.0
    ref = np.zeros(levels.N_RES)
    ref_usable = levels.search_summary(stw, ws, iw, u, mw, mn, False, crit, imp,
                                       levels.MISSING_LEARN, False, min_leaf, min_wleaf, False,
                                       1, 0.0, np.zeros(n_bins + 2, dtype=np.int64), n_bins,
                                       ref)
    assert usable == ref_usable
    assert fast[levels.R_SCORE] == ref[levels.R_SCORE]
    assert fast[levels.R_TRIES] == ref[levels.R_TRIES]
    if ref[levels.R_SCORE] > -np.inf:
        for slot in (levels.R_KIND, levels.R_NB, levels.R_MB, levels.R_LO, levels.R_HI):
            assert fast[slot] == ref[slot]
    if own_bins:
        clear_bins(hist, 0, order, n_order)
        assert not hist.any()


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 70), p=st.integers(1, 10),
       regression=st.booleans(), weighted=st.booleans())
def test_mark_and_move_rows_match_naive(seed, n, p, regression, weighted):
    rng = np.random.default_rng(seed)
    B, y, w = _rows(rng, n, p, 5, None if regression else 3, weighted)
    f = int(rng.integers(0, p))
    tb = int(rng.integers(0, 5))
    order = naive_partition(B, f, tb)
    nl = int((B[:, f] <= tb).sum())
    C = None if regression else y.astype(np.int32)
    R = y.astype(np.float64) if regression else None
    W = w if weighted else None
    bmark = np.empty(n, dtype=np.int64)
    counts = np.empty(3, dtype=np.int64)
    n_all = mark_rows(B, 0, n, f, False, 5, 0, tb, 1, np.zeros(1, np.int64), bmark, counts, 2)
    assert n_all == 0 and counts.tolist() == [nl, n - nl, 0]
    for parallel in (False, True):
        Bd = np.empty_like(B)
        Cd = None if C is None else np.empty_like(C)
        Rd = None if R is None else np.empty_like(R)
        Wd = None if W is None else np.empty_like(W)
        args = (B.view(np.uint64), Bd.view(np.uint64), C, Cd, R, Rd, W, Wd, 0, n, bmark)
        if parallel:
            move_rows_parallel(*args, np.array([0, nl]), 2, np.empty((3, 3), dtype=np.int64))
        else:
            move_rows(*args, np.array([0, nl]), np.ones(2), 2)
        np.testing.assert_array_equal(Bd, B[order])
        np.testing.assert_array_equal(Cd if C is not None else Rd, y[order])
        if weighted:
            np.testing.assert_array_equal(Wd, w[order])


# -- whole trees: hist == exact on low-cardinality data ---------------------------------------


def _improvement(t, i):
    lft, rgt = t.children_left[i], t.children_right[i]
    w = t.weighted_n_node_samples
    return (w[i] * t.impurity[i] - w[lft] * t.impurity[lft] - w[rgt] * t.impurity[rgt])


def _assert_same_partitions(h, e, X, max_ties=3):
    """Same tree node by node, except below a node where the two splitters chose different
    splits of exactly equal quality (a tie: several features give the same partition, or
    mirror images of it, and the splitters examine features in different orders). Such nodes
    must be rare; without them the predictions must agree too."""
    a, b = h.tree_, e.tree_
    # E[y^2] - E[y]^2 cancels: absolute rounding scales with the root's impurity.
    atol = 1e-10 * max(1.0, float(b.impurity[0]))
    ties = 0
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        assert a.n_node_samples[i] == b.n_node_samples[j]
        np.testing.assert_allclose(a.weighted_n_node_samples[i], b.weighted_n_node_samples[j])
        np.testing.assert_allclose(a.impurity[i], b.impurity[j], rtol=1e-9, atol=atol)
        np.testing.assert_allclose(a.value[i], b.value[j], rtol=1e-9, atol=1e-12)
        assert (a.children_left[i] < 0) == (b.children_left[j] < 0), f"node {i}/{j}"
        if a.children_left[i] < 0:
            continue
        same = (a.feature[i] == b.feature[j] and a.n_node_samples[a.children_left[i]]
                == b.n_node_samples[b.children_left[j]])
        if not same:
            ties += 1
            np.testing.assert_allclose(_improvement(a, i), _improvement(b, j), rtol=1e-9,
                                       atol=atol * a.weighted_n_node_samples[i])
            continue
        stack.append((a.children_left[i], b.children_left[j]))
        stack.append((a.children_right[i], b.children_right[j]))
    assert ties <= max_ties
    if ties == 0:
        assert a.node_count == b.node_count
        np.testing.assert_array_equal(a.children_left, b.children_left)
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(h.apply(X), e.apply(X))
        np.testing.assert_allclose(h.predict(X), e.predict(X))


def _low_card(rng, n, p, levels):
    return rng.integers(0, levels, size=(n, p)).astype(np.float64) * 0.5 - 3.0


TREE_PARAMS = [
    {"min_samples_split": 6},
    {"min_samples_split": 6, "max_depth": 4},
    {"min_samples_split": 10, "min_samples_leaf": 3},
    {"min_samples_split": 6, "min_weight_fraction_leaf": 0.02},
    {"min_samples_split": 6, "min_impurity_decrease": 0.002},
    {"min_samples_split": 6, "max_leaf_nodes": 15},
    {"min_samples_split": 6, "max_leaf_nodes": 40, "max_depth": 5},
]


@pytest.mark.parametrize("params", TREE_PARAMS)
@pytest.mark.parametrize("criterion", ["gini", "entropy", "misclassification", "gain_ratio",
                                       "chi2"])
def test_hist_equals_exact_classification(rng, params, criterion):
    X = _low_card(rng, 300, 5, 12)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=300) > 0).astype(int)
    y[::7] = 2
    w = rng.uniform(0.5, 2.0, size=300)  # no exact ties between different cuts
    h = tl.DecisionTreeClassifier(splitter="hist", criterion=criterion, **params).fit(X, y, w)
    e = tl.DecisionTreeClassifier(criterion=criterion, **params).fit(X, y, w)
    # Misclassification is piecewise linear in the weights: exact ties are frequent.
    _assert_same_partitions(h, e, X, 3 if criterion != "misclassification" else 40)


@pytest.mark.parametrize("params", TREE_PARAMS)
@pytest.mark.parametrize("criterion", ["squared_error", "absolute_error"])
@pytest.mark.parametrize("weighted", [False, True])
def test_hist_equals_exact_regression(rng, params, criterion, weighted):
    n = 120 if criterion == "absolute_error" else 300
    X = _low_card(rng, n, 4, 10)
    y = X[:, 0] * X[:, 1] + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    h = tl.DecisionTreeRegressor(splitter="hist", criterion=criterion, **params).fit(X, y, w)
    e = tl.DecisionTreeRegressor(criterion=criterion, **params).fit(X, y, w)
    _assert_same_partitions(h, e, X)


@pytest.mark.jit_only
def test_hist_equals_exact_with_threads(rng):
    # 8,000 x 12 crosses the thresholds of the parallel histogram and partition kernels.
    X = _low_card(rng, 8000, 12, 40)
    y = X[:, 0] * X[:, 1] + X[:, 2] + rng.normal(size=8000)
    for params in ({"min_samples_leaf": 20}, {"min_samples_leaf": 20, "max_leaf_nodes": 200}):
        h = tl.DecisionTreeRegressor(splitter="hist", **params).fit(X, y)
        e = tl.DecisionTreeRegressor(**params).fit(X, y)
        _assert_same_partitions(h, e, X)
        c = (y > 0).astype(int)
        w = rng.uniform(0.5, 2.0, size=8000)
        h = tl.DecisionTreeClassifier(splitter="hist", **params).fit(X, c, w)
        e = tl.DecisionTreeClassifier(**params).fit(X, c, w)
        _assert_same_partitions(h, e, X)


@pytest.mark.parametrize("max_leaf_nodes", [pytest.param(None, marks=pytest.mark.jit_only), 30])
def test_small_histogram_pool_gives_the_same_tree(rng, monkeypatch, max_leaf_nodes):
    """With room for only four histograms, waiting nodes drop theirs and rebuild them from
    their rows: the tree must not change (up to exact ties)."""
    # 6,000 rows: nodes of more than 512 rows (not "small") keep histograms in the pool.
    X = _low_card(rng, 6000, 6, 16)
    y = X[:, 0] - X[:, 3] * X[:, 4] + rng.normal(size=6000)
    params = {"splitter": "hist", "min_samples_split": 6, "max_leaf_nodes": max_leaf_nodes}
    big = tl.DecisionTreeRegressor(**params).fit(X, y)
    monkeypatch.setattr(_grow_hist, "HIST_POOL_BYTES", 1)
    small = tl.DecisionTreeRegressor(**params).fit(X, y)
    # A rebuilt histogram sums in another order than a subtracted one: where two features
    # give the same partition of a small node, rounding may pick the other one.
    _assert_same_partitions(big, small, X, max_ties=60)  # each checked to be a tie


# -- the estimator's hist options --------------------------------------------------------------


@pytest.mark.jit_only  # fits on 20k+ rows: minutes with the kernels as Python
def test_hist_quality_close_to_exact():
    X, y = make_classification(n_samples=20_000 if not JIT_DISABLED else 3000, n_features=10,
                               n_informative=6, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    for depth in (8, None):
        h = tl.DecisionTreeClassifier(splitter="hist", max_depth=depth).fit(Xtr, ytr)
        e = tl.DecisionTreeClassifier(max_depth=depth).fit(Xtr, ytr)
        assert abs(h.score(Xte, yte) - e.score(Xte, yte)) < 0.015
    X, y = make_regression(n_samples=5000, n_features=8, noise=5.0, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    h = tl.DecisionTreeRegressor(splitter="hist", max_depth=10).fit(Xtr, ytr)
    e = tl.DecisionTreeRegressor(max_depth=10).fit(Xtr, ytr)
    assert abs(h.score(Xte, yte) - e.score(Xte, yte)) < 0.015


def test_hist_max_features_draws_and_falls_back(rng):
    X = rng.normal(size=(300, 6))
    X[:, :3] = 1.0  # constant features: the drawn ones may all be useless
    y = (X[:, 4] > 0).astype(int)
    a = tl.DecisionTreeClassifier(splitter="hist", max_features=2, random_state=3).fit(X, y)
    b = tl.DecisionTreeClassifier(splitter="hist", max_features=2, random_state=3).fit(X, y)
    assert a.tree_ == b.tree_
    assert a.score(X, y) == 1.0  # a split was found at every impure node
    assert set(a.tree_.feature[a.tree_.feature >= 0]) <= {3, 4, 5}
    c = tl.DecisionTreeClassifier(splitter="hist", max_features=2, random_state=4).fit(X, y)
    assert c.score(X, y) == 1.0


def test_binner_reuse_and_clone(rng):
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    b = tl.Binner(max_bins=16).fit(X)
    est = tl.DecisionTreeClassifier(splitter="hist", binner=b).fit(X, y)
    assert est.binner_ is b
    assert np.all(np.isin(est.tree_.threshold[est.tree_.feature == 0], b.bin_edges_[0]))
    cl = clone(est)
    assert cl.binner is not b and cl.binner.is_fitted
    np.testing.assert_array_equal(cl.binner.bin_edges_[1], b.bin_edges_[1])
    unfitted = tl.Binner(max_bins=8)
    est2 = tl.DecisionTreeClassifier(splitter="hist", binner=unfitted).fit(X, y)
    assert not unfitted.is_fitted and est2.binner_.n_bins_.max() == 8
    est3 = tl.DecisionTreeClassifier(splitter="hist", max_bins=4).fit(X, y)
    assert est3.binner_.n_bins_.tolist() == [4, 4, 4]
    search = GridSearchCV(tl.DecisionTreeClassifier(splitter="hist", binner=b),
                          {"max_depth": [2, 4]}, cv=3).fit(X, y)
    assert search.best_estimator_.binner_.is_fitted
    with pytest.raises(ValueError, match="binner was fitted on 3 features"):
        tl.DecisionTreeClassifier(splitter="hist", binner=b).fit(X[:, :2], y)
    assert copy.deepcopy(b).n_bins_.tolist() == b.n_bins_.tolist()


def test_hist_rejects_sparse_and_bad_bins(rng):
    X = rng.normal(size=(20, 3))
    y = np.arange(20) % 2
    with pytest.raises(TypeError, match="dense"):
        tl.DecisionTreeClassifier(splitter="hist").fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="max_bins"):
        tl.DecisionTreeClassifier(splitter="hist", max_bins=300).fit(X, y)
    with pytest.raises(ValueError, match="binner"):
        tl.DecisionTreeClassifier(splitter="hist", binner="quantile").fit(X, y)


def test_hist_zero_weights_and_ccp(rng):
    X = _low_card(rng, 200, 3, 8)
    y = (X[:, 0] > -1).astype(int) ^ (X[:, 1] > 0).astype(int)
    w = np.ones(200)
    w[:50] = 0.0
    h = tl.DecisionTreeClassifier(splitter="hist", min_samples_split=6).fit(X, y, w)
    e = tl.DecisionTreeClassifier(min_samples_split=6).fit(X, y, w)
    _assert_same_partitions(h, e, X)
    path = tl.DecisionTreeClassifier(splitter="hist").cost_complexity_pruning_path(X, y)
    pruned = tl.DecisionTreeClassifier(splitter="hist", ccp_alpha=path.ccp_alphas[-2]).fit(X, y)
    assert pruned.tree_.node_count == 3
