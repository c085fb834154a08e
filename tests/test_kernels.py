"""Kernels against their plain-Python twins in tests/naive.py (fixed and random inputs)."""

import naive
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treelearn.engine import abserr, exact, levels, nodes, random
from treelearn.engine import criteria as _criteria
from treelearn.engine.columns import presort
from treelearn.engine.criteria import node_impurity, split_proxy
from treelearn.engine.layouts import sparse

CLASS_CRITS = [naive.GINI, naive.ENTROPY, naive.MISCLASSIFICATION, naive.GAIN_RATIO, naive.CHI2]

counts_st = arrays(np.float64, st.integers(2, 5),
                   elements=st.floats(0, 50, allow_nan=False).map(lambda x: float(round(x))))


@given(counts_st)
def test_class_impurities_match_definitions(counts):
    if counts.sum() == 0:
        counts[0] = 1.0
    w = counts.sum()
    assert node_impurity(counts, w, _criteria.GINI) == pytest.approx(naive.gini(counts))
    assert node_impurity(counts, w, _criteria.ENTROPY) == pytest.approx(naive.entropy(counts))
    assert node_impurity(counts, w, _criteria.MISCLASSIFICATION) == pytest.approx(
        naive.misclassification(counts))


@given(counts_st, counts_st)
def test_split_scores_order_like_the_definitions(a, b):
    """For each criterion the kernel's proxy is the naive score up to a constant per node."""
    K = min(a.size, b.size)
    left = a[:K].copy()
    right = b[:K].copy()
    left[0] += 1
    right[-1] += 1
    wl, wr = left.sum(), right.sum()
    parent = node_impurity(left + right, wl + wr, _criteria.ENTROPY)
    ys_l = np.repeat(np.arange(K), left.astype(int))
    ys_r = np.repeat(np.arange(K), right.astype(int))
    for crit in CLASS_CRITS:
        got = split_proxy(left, right, wl, wr, crit, parent)
        want = naive.split_score(list(ys_l), [1.0] * len(ys_l), list(ys_r), [1.0] * len(ys_r),
                                 crit, K)
        if crit in (naive.GINI, naive.ENTROPY, naive.MISCLASSIFICATION):
            # the proxy drops nothing: -sum_c w_c impurity_c
            assert got == pytest.approx(want, abs=1e-9)
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(-100, 100)),
       st.integers(0, 2**31 - 1))
def test_prefix_abs_cost_matches_brute_force(ys, seed):
    ws = np.random.default_rng(seed).integers(1, 4, ys.size).astype(float)
    out = np.empty(ys.size + 1)
    fs, _ = abserr.scratch(ys.size, 1)
    abserr.prefix_abs_cost(ys, ws, ys.size, out, fs)
    for i in range(ys.size + 1):
        assert out[i] == pytest.approx(naive.min_abs_cost(list(ys[:i]), list(ws[:i])),
                                       rel=1e-9, abs=1e-7)


@given(arrays(np.float64, st.integers(1, 30), elements=st.floats(-10, 10)),
       st.integers(0, 2**31 - 1))
def test_weighted_median_matches_definition(ys, seed):
    ws = np.random.default_rng(seed).integers(1, 4, ys.size).astype(float)
    fs, js = abserr.scratch(ys.size, 1)
    assert abserr.weighted_median(ys, ws, ys.size, fs, js) == \
        naive.weighted_median(list(ys), list(ws))


@given(st.integers(0, 2**31 - 2), st.integers(1, 30))
def test_rand_r_matches_twin(seed, n):
    state = np.array([seed], dtype=np.int64)
    twin = naive.RandR(seed)
    for _ in range(n):
        assert random.rand_r(state) == twin.next()
    assert random.rand_int(3, 17, state) == twin.randint(3, 17)
    assert random.rand_uniform(-1.5, 2.0, state) == twin.uniform(-1.5, 2.0)


def _scan_naive(vals, ys, ws, crit, K, min_leaf=1, min_wleaf=0.0):
    """Best cut of sorted values by brute force: (score, threshold, n_left)."""
    best = (-np.inf, np.nan, -1)
    for p in range(1, len(vals)):
        if not vals[p] > vals[p - 1] + naive.FEATURE_THRESHOLD:
            continue
        if p < min_leaf or len(vals) - p < min_leaf:
            continue
        if sum(ws[:p]) < min_wleaf or sum(ws[p:]) < min_wleaf:
            continue
        sc = naive.split_score(list(ys[:p]), list(ws[:p]), list(ys[p:]), list(ws[p:]), crit, K)
        if sc > best[0] + 1e-9 * max(1.0, abs(best[0])) or best[2] < 0:
            thr = float(vals[p - 1]) / 2 + float(vals[p]) / 2
            best = (sc, thr, p)
    return best


@pytest.mark.parametrize("crit", CLASS_CRITS + [naive.SQUARED_ERROR, naive.ABSOLUTE_ERROR])
@pytest.mark.parametrize("min_leaf", [1, 3])
def test_scan_feature_finds_the_brute_force_cut(crit, min_leaf):
    rng = np.random.default_rng(crit * 10 + min_leaf)
    for _ in range(15):
        n = int(rng.integers(2, 25))
        vals = np.sort(rng.integers(0, 8, n).astype(np.float32))  # ties on purpose
        idx = rng.permutation(n).astype(np.int32)
        K = 3
        if crit >= naive.SQUARED_ERROR:
            y = rng.normal(size=n)
            ycls = np.zeros(0, np.int32)
            S = 2
        else:
            y = rng.integers(0, K, n)
            ycls = y.astype(np.int32)
            S = K
        w = rng.integers(1, 3, n).astype(float)
        yreg = y.astype(float)
        ys = y[idx]
        ws = w[idx]
        V = vals.reshape(1, n)
        C = ycls[idx].reshape(1, n) if crit < naive.SQUARED_ERROR else None
        R = yreg[idx].reshape(1, n) if crit >= naive.SQUARED_ERROR else None
        W = w[idx].reshape(1, n)
        out = np.zeros(levels.N_RES)
        if crit == naive.ABSOLUTE_ERROR:
            fs, js = abserr.scratch(n, 1)
            wn = w.sum()
            imp, _ = abserr.abs_node(R, W, 0, 0, n, wn, fs, js)
            abserr.search_feature_abs(V, R, W, 0, 0, n, False, 0, imp, levels.MISSING_LEARN,
                                      False, min_leaf, 0.0, np.zeros(1, np.int64), out, fs, js)
        else:
            st_ws, iw, stw = levels.workspace(n, S)
            stats = np.zeros(S)
            wn = exact.range_stats(stats.reshape(1, -1), 0, C, R, W, 0, 0, n)
            pimp = node_impurity(stats, wn, crit)
            exact.search_numeric(V, C, R, W, 0, 0, n, 0, stw, st_ws, stats, wn, crit, pimp,
                                 levels.MISSING_LEARN, min_leaf, 0.0, np.nan, True, out,
                                 np.bool_(True), 0, np.array([-np.inf, np.inf]))
            # the plain path (extras None: C4.5's scoring pruned at compile time) finds the
            # same cut
            plain = np.zeros(levels.N_RES)
            exact.search_numeric(V, C, R, W, 0, 0, n, 0, stw, st_ws, stats, wn, crit, pimp,
                                 levels.MISSING_LEARN, min_leaf, 0.0, np.nan, False, plain, None,
                                 0, np.array([-np.inf, np.inf]))
            for r in (levels.R_SCORE, levels.R_THR, levels.R_NLEFT, levels.R_WLEFT):
                assert plain[r] == out[r]
        sc = out[levels.R_SCORE]
        thr = out[levels.R_THR]
        nl = int(out[levels.R_NLEFT])
        wl = out[levels.R_WLEFT]
        if crit == naive.ABSOLUTE_ERROR and sc > -np.inf:
            # the absolute-error search reports the cut by its threshold only
            nl = int((vals <= thr).sum())
            wl = ws[:nl].sum()
        want = _scan_naive(vals, ys, ws, crit, K, min_leaf)
        if want[2] < 0:
            assert sc == -np.inf
            continue
        assert wl == pytest.approx(ws[:nl].sum())
        if crit == naive.ABSOLUTE_ERROR:
            # equal-cost cuts are common (moving a sample between the two medians costs
            # nothing) and rounding picks among them: the chosen cut must be optimal
            got = naive.split_score(list(ys[:nl]), list(ws[:nl]), list(ys[nl:]), list(ws[nl:]),
                                    crit, K)
            assert got == pytest.approx(want[0], rel=1e-9, abs=1e-9)
            assert vals[nl] > vals[nl - 1]
        else:
            assert nl == want[2]
            assert thr == want[1]


def test_sparse_bucket_groups_and_sorts_non_zeros(rng):
    import scipy.sparse as sp

    dense = rng.integers(-2, 3, (30, 6)).astype(np.float32) * (rng.random((30, 6)) < 0.4)
    X = sp.csr_matrix(dense)
    samples = rng.permutation(30).astype(np.int32)
    lo, hi = 5, 25
    offsets, bvals, bsamps = sparse.bucket_sparse(
        X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, samples, lo, hi, 6)
    node = set(samples[lo:hi].tolist())
    for f in range(6):
        got = list(zip(bvals[offsets[f]:offsets[f + 1]], bsamps[offsets[f]:offsets[f + 1]],
                       strict=True))
        want = sorted(((dense[s, f], s) for s in node if dense[s, f] != 0),
                      key=lambda t: t[0])
        assert [v for v, _ in got] == [v for v, _ in want]
        assert sorted(s for _, s in got) == sorted(s for _, s in want)
        mn, mx = sparse.sparse_feature_range(offsets, bvals, f, hi - lo)
        col = dense[list(node), f]
        assert (mn, mx) == (col.min(), col.max())
        for s in node:
            assert sparse.sparse_value(X.indptr.astype(np.int64),
                                             X.indices.astype(np.int32), X.data, s, f) \
                == dense[s, f]


@given(st.integers(2, 60), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_partition_two_is_stable_and_keeps_sorting(n, F, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, (n, F)).astype(np.float32)
    ycls = rng.integers(0, 3, n).astype(np.int32)
    w = rng.random(n)
    sval, sidx = presort(X)
    order_before = sidx.copy()
    C = np.ascontiguousarray(ycls[sidx])
    W = np.ascontiguousarray(w[sidx])
    goes_left = rng.random(n) < 0.5
    bmap = np.where(goes_left, 0, 1).astype(np.int8)
    exact.partition_two(sval, sidx, C, None, W, 0, n, bmap, np.empty(n, np.float32),
                        np.empty(n, np.int32), np.empty(n, np.int32), np.empty(0),
                        np.empty(n), -1)
    nl = int(goes_left.sum())
    for f in range(F):
        left, right = sidx[f, :nl], sidx[f, nl:]
        assert goes_left[left].all() and not goes_left[right].any()
        for part in (slice(0, nl), slice(nl, n)):
            v = sval[f, part]
            assert np.all(np.diff(v) >= 0)
            assert np.array_equal(v, X[sidx[f, part], f])
        # stable: each side keeps the original relative order; targets travel along
        was = order_before[f]
        assert np.array_equal(left, was[goes_left[was]])
        assert np.array_equal(C[f], ycls[sidx[f]])
        assert np.array_equal(W[f], w[sidx[f]])


@given(st.integers(2, 60), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_partition_two_may_skip_the_split_features_own_list(n, F, seed):
    # A threshold on feature j (missing values right) leaves j's sorted list partitioned:
    # skipping it gives the lists a full partition gives.
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, (n, F)).astype(np.float32)
    X[rng.random((n, F)) < 0.2] = np.nan
    R = rng.random(n)
    j = int(rng.integers(0, F))
    thr = float(rng.integers(0, 6)) - 0.5
    bmap = np.where(X[:, j] <= thr, 0, 1).astype(np.int32)
    out = []
    for skip in (-1, j):
        sval, sidx = presort(X)
        RR = np.ascontiguousarray(R[sidx])
        exact.partition_two(sval, sidx, None, RR, None, 0, n, bmap, np.empty(n, np.float32),
                            np.empty(n, np.int32), np.empty(0, np.int32), np.empty(n),
                            np.empty(0), skip)
        out.append((sval, sidx, RR))
    for a, b in zip(*out, strict=True):
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_libstdcxx_heap_pops_in_priority_order():
    rng = np.random.default_rng(1)
    key = rng.integers(0, 5, 200).astype(float)  # many ties
    heap = np.empty(200, dtype=np.int64)
    size = 0
    for i in range(200):
        size = nodes.heap_push(heap, size, key, i)
    popped = []
    while size:
        node, size = nodes.heap_pop(heap, size, key)
        popped.append(key[node])
    assert popped == sorted(popped, reverse=True)


@given(arrays(np.float32, st.tuples(st.integers(1, 50), st.integers(1, 3)),
              elements=st.sampled_from([0.0, -0.0, 1.5, -2.25, 3e38, -3e38, 1e-45, 7.0])))
def test_presort_is_a_stable_argsort(X):
    sval, sidx = presort(X)
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f] + np.float32(0.0), kind="stable")  # -0.0 ties with 0.0
        np.testing.assert_array_equal(sidx[f], order)
        np.testing.assert_array_equal(sval[f], X[order, f])


@given(st.integers(0, 40), st.integers(0, 12), st.integers(0, 14), st.integers(0, 30),
       st.integers(1, 12), st.floats(0, 20), st.floats(0, 3), st.floats(0, 1),
       st.floats(0, 0.5))
def test_the_stopping_rules_are_the_printed_ones(n, depth, max_depth, min_split, min_leaf, wn,
                                                 min_weight_leaf, imp, min_imp):
    """``may_split`` (the depth rule every layout asks of a child) and ``splittable``
    against scikit-learn's rules as its documentation states them: a node splits only below
    ``max_depth``, with at least ``min_samples_split`` rows and ``2 * min_samples_leaf``
    rows, twice the minimum leaf weight and an impurity above ``eps``; and M5's impurity
    floor."""
    given = {"max_depth": max_depth, "min_split": min_split, "min_leaf": min_leaf,
             "mode": levels.MISSING_LEARN, "min_weight_leaf": min_weight_leaf,
             "min_impurity": min_imp}
    params = nodes.Scalars(**{k: np.int64(given.get(k, 0)) if k in nodes.INT_SCALARS
                              else np.float64(given.get(k, 0.0)) for k in nodes.Scalars._fields})
    by_size = depth < max_depth and n >= min_split and n >= 2 * min_leaf
    assert bool(nodes.may_split(n, depth, params)) == by_size
    eps = 1e-7
    rule = by_size and wn >= 2 * min_weight_leaf and imp > eps and imp >= min_imp
    assert bool(nodes.splittable(n, wn, imp, depth, params, eps)) == rule
