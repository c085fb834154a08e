"""The level-wise kernels of the data-parallel fit (treelearn.engine.levelwise) against plain
twins: histograms of row ranges summed row by row, rows moved to their children by the split
rule written out, and the small-node search from rows against the search of the rows'
histogram."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import treelearn as tl
from treelearn._estimators import _resolve
from treelearn.dask._estimators import level_config
from treelearn.dask._grow import _empty_bufs
from treelearn.engine.binning import table_layout
from treelearn.engine.counter_random import node_seeds
from treelearn.engine.fit import search_work
from treelearn.engine.hist import RowBuffers
from treelearn.engine.levelwise import (
    L_FOUND,
    N_L,
    partition_histograms,
    partition_level,
    rows_node_stats,
    split_node,
    split_node_rows,
)


def _problem(seed: int, n: int, p: int, n_classes: int | None, weighted: bool,
             max_features, min_leaf: int = 1):
    """Binned rows of few-valued features with holes, and the level configuration the Dask
    estimators make for them."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 7, size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < 0.1] = np.nan
    if n_classes:
        y = rng.integers(0, n_classes, size=n)
        classes = np.arange(n_classes)
        est = tl.DecisionTreeClassifier(splitter="hist", max_features=max_features,
                                        min_samples_leaf=min_leaf, random_state=0)
        crit = est._criteria["gini"]
    else:
        y = rng.normal(size=n)
        classes = None
        est = tl.DecisionTreeRegressor(splitter="hist", max_features=max_features,
                                       min_samples_leaf=min_leaf, random_state=0)
        crit = est._criteria["squared_error"]
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    binner = tl.Binner().fit(X)
    is_cat = np.zeros(p, dtype=bool)
    n_levels = np.zeros(p, dtype=np.int64)
    B, lay, _, _ = table_layout(X, binner, is_cat, n_levels)
    total = float(n if w is None else w.sum())
    settings_ = _resolve(est, n, p, np.array([total]))
    cfg_all, n_cols, _, _ = level_config(crit, settings_, classes, binner, is_cat, n_levels,
                                         weighted, total, 0.0)
    C = y.astype(np.int32) if n_classes else None
    R = None if n_classes else y.astype(np.float64)
    return B, C, R, w, lay, cfg_all, n_cols


def twin_histograms(B, C, R, W, lo, hi, lay, n_cols):
    """Each range's histogram, row by row and feature by feature."""
    hoff, nbins, fcol, fwide = lay
    out = np.zeros((len(lo), int(hoff[-1]), n_cols))
    for j in range(len(lo)):
        for i in range(lo[j], hi[j]):
            x = 1.0 if W is None else W[i]
            for f in range(len(fcol)):
                b = int(B[i, fcol[f]]) + (int(B[i, fcol[f] + 1]) << 8 if fwide[f] else 0)
                r = int(hoff[f]) + b
                if C is not None:
                    out[j, r, C[i]] += x
                else:
                    out[j, r, 0] += x
                    out[j, r, 1] += x * R[i]
                    out[j, r, 2] += x * R[i] * R[i]
                if W is not None:
                    out[j, r, n_cols - 1] += 1.0
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), p=st.integers(1, 5),
       n_classes=st.sampled_from([None, 2, 3]), weighted=st.booleans())
def test_partition_histograms_sum_rows(seed, n, p, n_classes, weighted):
    B, C, R, W, lay, _, n_cols = _problem(seed, n, p, n_classes, weighted, None)
    cuts = np.sort(np.random.default_rng(seed).integers(0, n + 1, size=3))
    lo = np.array([0, cuts[0], cuts[1]], dtype=np.int64)
    hi = np.array([cuts[0], cuts[1], n], dtype=np.int64)
    hoff, nbins, fcol, fwide = lay
    got = partition_histograms(B, C, R, W, lo, hi, hoff, fcol, fwide, n_cols)
    np.testing.assert_allclose(got, twin_histograms(B, C, R, W, lo, hi, lay, n_cols),
                               rtol=1e-12, atol=1e-12)
    wn, rows = rows_node_stats(C, R, W, 0, n, 3 if n_classes == 3 else 2, np.zeros(3))
    assert rows == n and np.isclose(wn, n if W is None else W.sum())


def _search(kind: str, B, C, R, W, lay, cfg_all, n_cols, perm0, seed):
    """One node of all the rows searched from its histogram or from its rows."""
    lay, edges, cfg, costs, crit = (cfg_all.lay, cfg_all.edges, cfg_all.cfg, cfg_all.costs,
                                    cfg_all.crit)
    params, classification, weighted = (cfg_all.params,
                                        cfg_all.classification, cfg_all.weighted)
    n_stats, n_values, width = cfg_all.n_stats, cfg_all.n_values, cfg_all.width
    p = len(lay.nbins)
    n = B.shape[0]
    work = search_work(0, p, n_stats, width, 1, False, hist=True)
    work.perm[:] = perm0
    work.rng[0] = seed
    res, values = np.zeros(N_L), np.zeros(n_values)
    fmap = np.full(width, -1, dtype=np.int64)
    cstats, cw, cn = np.zeros((width, n_stats)), np.zeros(width), np.zeros(width)
    if kind == "hist":
        hoff, nbins, fcol, fwide = lay
        hist = partition_histograms(B, C, R, W, np.array([0]), np.array([n]), hoff, fcol,
                                    fwide, n_cols)[0]
        split_node(hist, np.int64(0), np.int64(0), lay, edges, cfg, costs, crit, params,
                   work, classification, weighted, _empty_bufs(classification, weighted),
                   res, fmap, values, cstats, cw, cn)
    else:
        V = B.view(np.uint64)
        scratch = np.zeros((int(lay[0][-1]), n_cols))
        split_node_rows(RowBuffers(B, B, C, C, R, R, W, W, V, V), 0, n, scratch, np.int64(0),
                        np.int64(0), lay, edges, cfg, costs, crit, params, work,
                        classification, weighted, res, fmap, values, cstats, cw, cn)
        assert not scratch.any()  # left clean for the next node
    return res, values, fmap, cstats, cw, cn, work.perm.copy()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 80), p=st.integers(1, 6),
       n_classes=st.sampled_from([None, 2, 3]), weighted=st.booleans(),
       max_features=st.sampled_from([None, 1, 2]), min_leaf=st.integers(1, 5))
def test_the_small_node_search_from_rows_is_the_search_of_their_histogram(
        seed, n, p, n_classes, weighted, max_features, min_leaf):
    if max_features is not None:
        max_features = min(max_features, p)
    B, C, R, W, lay, cfg_all, n_cols = _problem(seed, n, p, n_classes, weighted,
                                                max_features, min_leaf)
    perm0 = np.random.default_rng(seed).permutation(p)
    node_seed = int(node_seeds(seed, 0, np.array([3]))[0])
    a = _search("hist", B, C, R, W, lay, cfg_all, n_cols, perm0, node_seed)
    b = _search("rows", B, C, R, W, lay, cfg_all, n_cols, perm0, node_seed)
    # the same split, the same draw (feature order after the search), the same statistics
    np.testing.assert_array_equal(a[6], b[6])
    assert a[0][L_FOUND] == b[0][L_FOUND]
    for x, y in zip(a[:6], b[:6], strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9)


def twin_partition(B, lo, hi, splits, fmaps, lay):
    """The rows' order after a level: each split node's rows, branch after branch, in their
    order; rows of nodes that do not split are gone."""
    hoff, nbins, fcol, fwide = lay
    order, kid_lo, kid_hi = [], [], []
    for j in range(len(lo)):
        k, f, kind, lo_bin, mb = splits[j]
        if k == 0:
            continue
        branch = {}
        for i in range(lo[j], hi[j]):
            b = int(B[i, fcol[f]])
            if b >= nbins[f]:
                branch[i] = mb
            elif kind == 0:
                branch[i] = 0 if b <= lo_bin else 1
            else:
                branch[i] = fmaps[j][b] if fmaps[j][b] >= 0 else mb
        for c in range(k):
            kid_lo.append(len(order))
            order += [i for i in range(lo[j], hi[j]) if branch[i] == c]
            kid_hi.append(len(order))
    return np.array(order, dtype=np.int64), kid_lo, kid_hi


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 60), p=st.integers(1, 4),
       weighted=st.booleans())
def test_partition_level_moves_rows_to_their_children(seed, n, p, weighted):
    rng = np.random.default_rng(seed)
    B, C, R, W, lay, cfg_all, _ = _problem(seed, n, p, 2, weighted, None)
    width = cfg_all.width
    cut = int(rng.integers(0, n + 1))
    lo = np.array([0, cut], dtype=np.int64)
    hi = np.array([cut, n], dtype=np.int64)
    splits = np.zeros((2, 5), dtype=np.int64)
    fmaps = np.full((2, width), -1, dtype=np.int64)
    for j in range(2):
        if rng.random() < 0.2:
            continue  # a leaf: its rows go
        f = int(rng.integers(0, p))
        nb = int(lay[1][f])
        if rng.random() < 0.5:  # numeric, missing values to a learned branch
            splits[j] = (2, f, 0, int(rng.integers(0, nb)), int(rng.integers(0, 2)))
        else:  # a level map onto three branches
            splits[j] = (3, f, 1, 0, int(rng.integers(0, 3)))
            fmaps[j, :nb] = rng.integers(0, 3, size=nb)
    Bd, Cd, Rd, Wd, kid_lo, kid_hi = partition_level(B, C, R, W, B.view(np.uint64), lo, hi,
                                                     splits, fmaps, lay)
    order, want_lo, want_hi = twin_partition(B, lo, hi, splits, fmaps, lay)
    np.testing.assert_array_equal(Bd, B[order])
    np.testing.assert_array_equal(Cd, C[order])
    if W is not None:
        np.testing.assert_array_equal(Wd, W[order])
    assert kid_lo.tolist() == want_lo and kid_hi.tolist() == want_hi
