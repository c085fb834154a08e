"""Oblique trees: splits on weighted sums of features, ``w . x <= t``, as ordinary trees.

:class:`ObliqueTreeClassifier` and :class:`ObliqueTreeRegressor` answer the greedy tree's
trouble with regions that are not rectangles: the boundary ``x1 + x2 > 1`` takes one oblique
split, where an axis-aligned tree needs a staircase of dozens.

How a node's split is found (:mod:`treelearn.engine.oblique`): the best split on one feature
first, as CART; then OC1's deterministic perturbation (Murthy, Kasif & Salzberg 1994, which
makes the linear-combination search of Breiman et al. 1984, section 5.2.2, exact): each
weight in turn is set to the value that minimises the children's impurity with the other
weights fixed (one sort and one scan), then the threshold is re-chosen; cycles repeat until
one moves nothing or ``max_cycles`` have run. OC1's random restarts are here as ``n_starts``
sparse random directions (two features each, weights ``+-1`` over the feature's standard
deviation, the form of Tomita et al.'s SPORF projections), each refined the same way; the
best of all is kept when it beats the best single-feature split. Starting from the
single-feature split keeps the weights sparse: a weight becomes nonzero only where moving it
paid; then Breiman et al.'s backward deletion drops the terms that add (almost) nothing
(``deletion_tolerance``), so most splits read as two to four terms.

Weights are scaled to unit length (``0.71*x1 + 0.71*x2 <= 0.71``) and the threshold chosen
again on the scaled sum, which is computed exactly as the tree routes rows (terms in feature
order, float64 from float32 ``x``), so fitting and prediction agree on every row.

The result is a :class:`~treelearn._tree.Tree` whose oblique nodes carry their terms
(``obl_ptr``, ``obl_feature``, ``obl_weight``): predictions, ``apply``, ``decision_path``,
importances (an oblique split's impurity decrease shared equally by its features), model
files and the library's pruning (cost-complexity with ``ccp_alpha`` or ``prune="cv"``,
reduced-error, pessimistic and MDL) work on it as on any tree.

With ``n_projections`` set, a node's split is instead the best of that many sparse random
projections (SPORF, the oblique forests' split): that tree grows depth-first in one compiled
loop (:func:`treelearn.engine.oblique.grow_projections`, called in chunks so that Ctrl-C is
taken between them; its random numbers a SplitMix64 stream from the tree's seed, so a tree
is the same on any thread). OC1's search, and SPORF's with ``max_leaf_nodes`` (best-first),
run a node loop in Python around the compiled node search (Ctrl-C between nodes).

Measured (2026-12-05, 100-tree forests on 4,000 rows of magic, two threads, while a test run
shared the machine): the compiled loop took 7.4 s against 10.2 s for the Python loop; a single
tree's time goes to sorting the projections (``p ** 1.5`` sorts per node), not to the loop.

Not here (refused by name): category columns (encode them as numbers or indicator columns),
missing values (impute them: a missing value has no place in a weighted sum), sparse X.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._docs import CLASS_ATTRIBUTES, FEATURE_ATTRIBUTES, fits
from ._estimators import (
    _COMMON_CONSTRAINTS,
    BaseDecisionTree,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ProbaClassifierMixin,
    _resolve,
)
from ._interrupt import check as check_interrupt
from ._interrupt import interruptible
from ._tree import TREE_LEAF, TREE_UNDEFINED, Tree, larger_child_branch
from ._validation import (
    Interval,
    Options,
    check_sample_weight,
    check_y_1d,
    check_y_missing,
    keep_params,
    validate_params,
)
from .engine import oblique as kernel
from .pruning.cost_complexity import prune_to_alpha

_CLF_CRITERIA = {"gini": kernel.GINI, "entropy": kernel.ENTROPY, "log_loss": kernel.ENTROPY}
_REG_CRITERIA = {"squared_error": kernel.SQUARED_ERROR}
#: Random start directions' number of features (SPORF's sparse projections at density 2/p).
START_TERMS = 2
#: Most random projections per node (YDF's ``sparse_oblique_max_num_projections``).
MAX_PROJECTIONS = 6000
#: Rows times projections searched per call of the compiled grower (about 0.1 s): a Ctrl-C
#: is taken between calls.
CHUNK_WORK = 4_000_000


def refuse_sparse(X, name: str) -> None:
    """TypeError naming ``name`` for sparse X (a weighted sum reads every value)."""
    if sp.issparse(X):
        raise TypeError(f"{name} needs dense X; sparse input is not supported.")


def refuse_missing(X: np.ndarray, name: str) -> None:
    """ValueError naming ``name`` when X holds a missing value (NaN)."""
    if np.isnan(X).any():
        raise ValueError(f"Input X contains NaN. {name} has no branch for a missing value "
                         "in a weighted sum; impute the missing values first.")


def numeric_only(tags):
    """scikit-learn tags of an estimator reading dense numbers without missing values."""
    tags.input_tags.sparse = False
    tags.input_tags.allow_nan = False
    tags.input_tags.categorical = False
    tags.input_tags.string = False
    return tags


def node_impurity(stats: np.ndarray, wt: float, crit: int) -> float:
    """The stored impurity of a node: Gini, entropy (bits) or the weighted variance."""
    if crit == kernel.SQUARED_ERROR:
        mean = stats[0] / wt
        return max(stats[1] / wt - mean * mean, 0.0)
    p = stats / wt
    if crit == kernel.GINI:
        return float(1.0 - np.dot(p, p))
    p = p[p > 0.0]
    return float(-np.sum(p * np.log2(p)))


class Search(NamedTuple):
    """How a node's split is searched: OC1 (``n_projections == 0``) with its cycles, random
    starts and backward deletion, or the best of ``n_projections`` random sparse projections
    (SPORF) with ``projection_density`` features each on average."""

    max_cycles: int
    n_starts: int
    deletion_tolerance: float
    n_projections: int
    projection_density: float


def resolve_projections(spec, n_features: int) -> int:
    """The number of random projections per node: 0 for None (OC1's search), ``spec`` for an
    int, ``n_features ** 2`` for "auto" (at most :data:`MAX_PROJECTIONS`).

    Why ``p ** 2`` (measured 2026-12-05, 100-tree forests, 3,000-4,000 rows, two threads):
    with ``ceil(p ** 1.5)`` projections the forest lost to YDF's sparse oblique forest where
    the structure is a sparse sum (parity of three signs 0.963 against 0.995, x0 + x1 - x2
    0.987 against 0.999); with ``p ** 2`` it matches it (0.995, 0.991) and, scoring
    candidates on bins (:data:`treelearn.engine.oblique.BIN_ROWS`), still fits faster."""
    if spec is None:
        return 0
    if isinstance(spec, str):
        return int(min(MAX_PROJECTIONS, n_features * n_features))
    return int(spec)


def draw_projections(rng: np.random.RandomState, feats: np.ndarray, p: int, k: int,
                     density: float, scale: np.ndarray) -> tuple[np.ndarray, ...]:
    """``k`` sparse random projections over the features ``feats`` (CSR: pointer, features
    in increasing order, weights): each feature is in a projection with probability
    ``density / len(feats)`` (at least one feature each), weight +1 or -1 over the feature's
    standard deviation (SPORF's binary weights on standardized features)."""
    m = feats.shape[0]
    keep = rng.random_sample((k, m)) < min(1.0, density / m)
    empty = ~keep.any(axis=1)
    keep[np.flatnonzero(empty), rng.randint(0, m, int(empty.sum()))] = True
    rows, cols = np.nonzero(keep)  # row-major: features increasing within a projection
    ptr = np.zeros(k + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(rows, minlength=k))
    f = feats[cols].astype(np.int64)
    weights = np.where(rng.random_sample(f.shape[0]) < 0.5, -1.0, 1.0) / scale[f]
    return ptr, f, weights


def grow(X: np.ndarray, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, K: int, crit: int,
         settings, min_impurity_decrease: float, how: Search,
         random_state: np.random.RandomState) -> Tree:
    """The oblique tree of ``(X, y, w)`` (rows of positive weight, no NaN), depth-first or,
    with ``settings.max_leaf_nodes``, best-first by impurity decrease."""
    max_cycles, n_starts, deletion_tolerance = how.max_cycles, how.n_starts, \
        how.deletion_tolerance
    n, p = X.shape
    classify = crit != kernel.SQUARED_ERROR
    n_values = K if classify else 1
    y = ycls.astype(np.int64) if classify else np.zeros(0, dtype=np.int64)
    yr = np.zeros(0) if classify else yreg
    # per-row statistics, summed per node
    if classify:
        stats_rows = np.zeros((n, K))
        stats_rows[np.arange(n), y] = w
    else:
        stats_rows = np.column_stack([w * yreg, w * yreg * yreg])
    w_total = float(w.sum())
    scale = X.std(axis=0, dtype=np.float64)
    scale[~(scale > 0.0)] = 1.0
    tol = kernel.REL_TOL * w_total * (1.0 if classify else max(float(np.var(yreg)), 1e-300))

    left, right, feature, threshold, impurity = [], [], [], [], []
    n_samples, w_samples, value, terms = [], [], [], []

    def new_node(rows: np.ndarray) -> tuple[int, float, float]:
        st = stats_rows[rows].sum(axis=0)
        wt = float(w[rows].sum())
        imp = node_impurity(st, wt, crit)
        left.append(TREE_LEAF)
        right.append(TREE_LEAF)
        feature.append(TREE_UNDEFINED)
        threshold.append(float(TREE_UNDEFINED))
        impurity.append(imp)
        n_samples.append(rows.shape[0])
        w_samples.append(wt)
        value.append(st / wt if classify else np.array([st[0] / wt]))
        terms.append(None)
        return len(left) - 1, wt, imp

    def search(rows: np.ndarray, depth: int, wt: float, imp: float):
        """(decrease, weights, threshold) of the node's best split, or None."""
        m = rows.shape[0]
        if depth >= settings.max_depth or m < settings.min_samples_split \
                or m < 2 * settings.min_samples_leaf or wt < 2.0 * settings.min_weight_leaf \
                or imp <= kernel.REL_TOL:
            return None
        if settings.max_features < p:
            feats = np.sort(random_state.choice(p, settings.max_features, replace=False))
        else:
            feats = np.arange(p)
        if how.n_projections > 0:
            weight, score, thr, n_terms = projections(rows, feats, wt, imp)
        else:
            weight, score, thr, n_terms = oc1(rows, feats)
        if not np.isfinite(score):
            return None
        return finish(rows, m, wt, imp, weight, score, thr, n_terms, how.n_projections == 0)

    def projections(rows: np.ndarray, feats: np.ndarray, wt: float, imp: float):
        """SPORF's search at the node: the best of ``how.n_projections`` random sparse
        projections (weights, score, threshold, number of terms)."""
        ptr, pf, pw = draw_projections(random_state, feats, p, how.n_projections,
                                       how.projection_density, scale)
        score, thr, best = kernel.best_projection(X, rows, ptr, pf, pw, y, yr, w, K, crit,
                                                  settings.min_samples_leaf,
                                                  settings.min_weight_leaf,
                                                  kernel.REL_TOL * wt * imp)
        weight = np.zeros(p)
        if best < 0:
            return weight, np.inf, np.nan, 0
        a, b = ptr[best], ptr[best + 1]
        weight[pf[a:b]] = pw[a:b]
        return weight, score, thr, int(b - a)

    def oc1(rows: np.ndarray, feats: np.ndarray):
        """OC1's search at the node: (weights, score, threshold, number of terms)."""
        starts = np.zeros((n_starts if feats.size >= START_TERMS else 0, p))
        for r in range(starts.shape[0]):
            pick = random_state.choice(feats, START_TERMS, replace=False)
            starts[r, pick] = random_state.choice([-1.0, 1.0], START_TERMS) / scale[pick]
        weight = np.zeros(p)
        score, thr, n_terms = kernel.search_node(
            X, rows, feats.astype(np.int64), starts, y, yr, w, K, crit,
            settings.min_samples_leaf, settings.min_weight_leaf, max_cycles, tol, weight)
        return weight, score, thr, n_terms

    def finish(rows, m, wt, imp, weight, score, thr, n_terms, deletion: bool):
        """Backward deletion (after OC1), unit length, and the stopping rule of the split's
        decrease: (decrease, weights, threshold), or None."""
        if n_terms > 1 and deletion_tolerance > 0.0 and deletion:
            # Breiman et al.'s backward deletion: drop the terms of least effect (|weight|
            # times the feature's spread) while the split keeps (1 - tolerance) of its gain
            full_gain = wt * imp - score
            z = np.empty(m)
            for f in np.argsort(np.abs(weight) * scale, kind="stable"):
                if weight[f] == 0.0 or np.count_nonzero(weight) <= 1:
                    continue
                trial = weight.copy()
                trial[f] = 0.0
                kernel.project(X, rows, trial, z)
                sc, t = kernel.best_cut(z, rows, y, yr, w, K, crit, settings.min_samples_leaf,
                                        settings.min_weight_leaf)
                if np.isfinite(sc) and wt * imp - sc >= (1.0 - deletion_tolerance) * full_gain:
                    weight, score, thr = trial, sc, t
            n_terms = int(np.count_nonzero(weight))
        if n_terms > 1:
            # unit length, the largest weight positive (the same partition, mirrored)
            weight /= np.sqrt(np.dot(weight, weight))
            if weight[np.argmax(np.abs(weight))] < 0.0:
                weight = -weight
            z = np.empty(m)
            kernel.project(X, rows, weight, z)
            score, thr = kernel.best_cut(z, rows, y, yr, w, K, crit, settings.min_samples_leaf,
                                         settings.min_weight_leaf)
            if not np.isfinite(score):
                return None
        elif n_terms == 1 and weight[weight != 0.0][0] != 1.0:
            f = int(np.flatnonzero(weight)[0])
            weight[:] = 0.0
            weight[f] = 1.0
            z = X[rows, f].astype(np.float64)
            score, thr = kernel.best_cut(z, rows, y, yr, w, K, crit, settings.min_samples_leaf,
                                         settings.min_weight_leaf)
        # scikit-learn's weighted impurity decrease, (w / W) (I - sum_c w_c I_c / w)
        decrease = (wt * imp - score) / w_total
        if decrease < min_impurity_decrease - 1e-12:
            return None
        return decrease, weight, thr

    def split(node: int, rows: np.ndarray, found) -> tuple[np.ndarray, np.ndarray]:
        _, weight, thr = found
        nz = np.flatnonzero(weight)
        if nz.size == 1:
            z = X[rows, nz[0]].astype(np.float64)
        else:
            z = np.empty(rows.shape[0])
            kernel.project(X, rows, weight, z)
            terms[node] = (nz, weight[nz])
        mag = np.abs(weight[nz])
        feature[node] = int(nz[int(np.argmax(mag))])
        threshold[node] = float(thr)
        go_left = z <= thr
        return rows[go_left], rows[~go_left]

    root_rows = np.arange(n, dtype=np.int64)
    root, wt, imp = new_node(root_rows)
    best_first = settings.max_leaf_nodes > 0
    # frontier entries: (priority, tiebreak, node, rows, depth, found)
    frontier: list = []
    counter = 0
    found = search(root_rows, 0, wt, imp)
    if found is not None:
        frontier.append((-found[0], counter, root, root_rows, 0, found))
    n_leaves = 1
    while frontier:
        check_interrupt()
        if best_first:
            if n_leaves >= settings.max_leaf_nodes:
                break
            _, _, node, rows, depth, found = heapq.heappop(frontier)
        else:
            _, _, node, rows, depth, found = frontier.pop()
        lrows, rrows = split(node, rows, found)
        kids = []
        for sub in (lrows, rrows):
            kid, kwt, kimp = new_node(sub)
            kids.append((kid, sub, kwt, kimp))
        left[node], right[node] = kids[0][0], kids[1][0]
        n_leaves += 1
        # depth-first: the left child is searched and split first (pushed last)
        for kid, sub, kwt, kimp in (kids if best_first else kids[::-1]):
            kf = search(sub, depth + 1, kwt, kimp)
            if kf is None:
                continue
            counter += 1
            entry = (-kf[0], counter, kid, sub, depth + 1, kf)
            if best_first:
                heapq.heappush(frontier, entry)
            else:
                frontier.append(entry)

    count = len(left)
    nt = np.array([0 if t is None else t[0].size for t in terms], dtype=np.intp)
    obl_ptr = np.zeros(count + 1, dtype=np.intp)
    obl_ptr[1:] = np.cumsum(nt)
    kept = [t for t in terms if t is not None]
    obl_feature = (np.concatenate([t[0] for t in kept]) if kept
                   else np.zeros(0, dtype=np.intp))
    obl_weight = np.concatenate([t[1] for t in kept]) if kept else np.zeros(0)
    left_a = np.array(left, dtype=np.intp)
    right_a = np.array(right, dtype=np.intp)
    n_a = np.array(n_samples, dtype=np.intp)
    return Tree(p, [n_values], left_a, right_a, feature, threshold, impurity, n_a, w_samples,
                np.array(value).reshape(count, 1, n_values),
                missing_branch=larger_child_branch(left_a, right_a, n_a),
                missing_seen=np.zeros(count, dtype=bool), obl_ptr=obl_ptr,
                obl_feature=obl_feature, obl_weight=obl_weight, _trusted=True)


def grow_projections(X: np.ndarray, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray, K: int,
                     crit: int, settings, min_impurity_decrease: float, how: Search,
                     seed: int) -> Tree:
    """SPORF's tree of ``(X, y, w)`` grown depth-first in one compiled loop
    (:func:`treelearn.engine.oblique.grow_projections`), called in chunks of work so that a
    Ctrl-C is taken between them, the node and term tables doubled when full."""
    n, p = X.shape
    classify = crit != kernel.SQUARED_ERROR
    V = K if classify else 1
    y = ycls.astype(np.int64) if classify else np.zeros(0, dtype=np.int64)
    yr = np.zeros(0) if classify else np.ascontiguousarray(yreg, dtype=np.float64)
    scale = X.std(axis=0, dtype=np.float64)
    scale[~(scale > 0.0)] = 1.0
    rows = np.arange(n, dtype=np.int64)
    cap = max(16, min(2 * n, 4096))
    left = np.full(cap, TREE_LEAF, dtype=np.int64)
    right = np.full(cap, TREE_LEAF, dtype=np.int64)
    feature = np.full(cap, TREE_UNDEFINED, dtype=np.int64)
    threshold = np.full(cap, float(TREE_UNDEFINED))
    impurity = np.zeros(cap)
    nsamp = np.zeros(cap, dtype=np.int64)
    wsamp = np.zeros(cap)
    value = np.zeros((cap, V))
    tstart = np.zeros((cap, 2), dtype=np.int64)
    tfeat = np.zeros(16 * p, dtype=np.int64)
    tweight = np.zeros(16 * p)
    depth_cap = min(n, settings.max_depth) + 2
    stack = np.zeros((depth_cap + 1, 4), dtype=np.int64)
    kernel._open_node(0, rows, 0, n, y, yr, w, K, crit, nsamp, wsamp, impurity, value,
                      np.zeros(K if classify else 2))
    stack[0] = (0, 0, n, 0)
    ctl = np.zeros(5, dtype=np.int64)
    ctl[kernel.C_NODES] = 1
    ctl[kernel.C_TOP] = 1
    ctl[kernel.C_RNG] = int(seed)
    ip = np.array([settings.max_depth, settings.min_samples_split, settings.min_samples_leaf,
                   min(settings.max_features, p), how.n_projections,
                   max(1, CHUNK_WORK // how.n_projections)], dtype=np.int64)
    fp = np.array([settings.min_weight_leaf, min_impurity_decrease, float(w.sum()),
                   how.projection_density, kernel.REL_TOL])
    while True:
        kernel.grow_projections(X, y, yr, w, rows, K, crit, ip, fp, scale, stack, left, right,
                                feature, threshold, impurity, nsamp, wsamp, value, tstart,
                                tfeat, tweight, ctl)
        status = ctl[kernel.C_STATUS]
        if status == kernel.ST_DONE:
            break
        if status == kernel.ST_NODES:
            more = left.shape[0]
            left = np.concatenate([left, np.full(more, TREE_LEAF, dtype=np.int64)])
            right = np.concatenate([right, np.full(more, TREE_LEAF, dtype=np.int64)])
            feature = np.concatenate([feature, np.full(more, TREE_UNDEFINED, dtype=np.int64)])
            threshold = np.concatenate([threshold, np.full(more, float(TREE_UNDEFINED))])
            impurity, wsamp = (np.concatenate([a, np.zeros(more)]) for a in (impurity, wsamp))
            nsamp = np.concatenate([nsamp, np.zeros(more, dtype=np.int64)])
            value = np.concatenate([value, np.zeros((more, V))])
            tstart = np.concatenate([tstart, np.zeros((more, 2), dtype=np.int64)])
        elif status == kernel.ST_TERMS:
            tfeat = np.concatenate([tfeat, np.zeros_like(tfeat)])
            tweight = np.concatenate([tweight, np.zeros_like(tweight)])
        check_interrupt()
    count = int(ctl[kernel.C_NODES])
    nt = tstart[:count, 1]
    obl_ptr = np.zeros(count + 1, dtype=np.intp)
    obl_ptr[1:] = np.cumsum(nt)
    take = np.repeat(tstart[:count, 0] - obl_ptr[:-1], nt) + np.arange(int(obl_ptr[-1]))
    left, right, nsamp = left[:count], right[:count], nsamp[:count]
    return Tree(p, [V], left, right, feature[:count], threshold[:count], impurity[:count],
                nsamp, wsamp[:count], value[:count].reshape(count, 1, V),
                missing_branch=larger_child_branch(left, right, nsamp),
                missing_seen=np.zeros(count, dtype=bool), obl_ptr=obl_ptr,
                obl_feature=tfeat[take], obl_weight=tweight[take], _trusted=True)


_DOC_PARAMS = """
    max_depth : int or None, default=None
        Depth limit (None: grow until leaves are pure or the other rules stop).
    min_samples_split : int or float, default=2
        Least rows a node needs to be split (a fraction of the rows when a float).
    min_samples_leaf : int or float, default=1
        Least rows on each side of a split (a fraction of the rows when a float).
    min_weight_fraction_leaf : float, default=0.0
        Least fraction of the total sample weight on each side of a split.
    max_features : int, float, "sqrt", "log2" or None, default=None
        Features a node may use, drawn at random per node (scikit-learn's rules); None: all.
    max_leaf_nodes : int or None, default=None
        Grow best-first (largest impurity decrease first) up to this many leaves.
    min_impurity_decrease : float, default=0.0
        A split must lower the weighted impurity by at least this much (scikit-learn's
        ``N_t / N * (impurity - N_t_R / N_t * right_impurity - N_t_L / N_t * left_impurity)``).
    max_cycles : int, default=5
        OC1's cycles of coordinate perturbation per start (0: splits on one feature only,
        an ordinary CART tree).
    n_starts : int, default=5
        Random sparse start directions refined at each node besides the best single-feature
        split (OC1's restarts; 0: only the single-feature start).
    n_projections : int, "auto" or None, default=None
        None: OC1's search (above). An int or "auto" (``n_features ** 2``, at most 6000):
        instead, the best of that many sparse random projections per node, SPORF's
        split (Tomita et al. 2020; YDF's ``SPARSE_OBLIQUE``), as the oblique forests use.
    projection_density : float, default=2.0
        With ``n_projections``: features per projection on average (SPORF's ``lambda``,
        YDF's ``projection_density_factor``); each weight is +1 or -1 over the feature's
        standard deviation.
    deletion_tolerance : float, default=0.01
        Breiman et al.'s backward deletion: after the search, the terms of least effect
        (``|weight|`` times the feature's standard deviation) are dropped one by one while the
        split keeps at least ``1 - deletion_tolerance`` of its impurity decrease (0: keep
        every term the search moved).
    random_state : int, RandomState or None, default=None
        Draws the features of ``max_features`` and the random starts.
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning after growing (Breiman et al.), as for
        :class:`~treelearn.DecisionTreeClassifier`.
    prune : {"cv", "reduced_error", "pessimistic", "mdl"} or None, default=None
        Post-pruning, as for :class:`~treelearn.DecisionTreeClassifier` ("pessimistic" and
        "mdl" for classifiers; without subtree raising).
    prune_cv : int or cross-validation splitter, default=10
        Folds of ``prune="cv"``.
    prune_rule : {"1se", "min"}, default="1se"
        Choice of ``prune="cv"``: the simplest tree within one standard error, or the least.
    ccp_risk : {"impurity", "misclassification"}, default="impurity"
        The risk cost-complexity pruning weighs against leaves.
    confidence_factor : float, default=0.25
        C4.5's confidence of ``prune="pessimistic"``.
    validation_fraction : float, default=0.2
        Rows held out for ``prune="reduced_error"``.
    n_jobs : int or None, default=None
        Parallel folds of ``prune="cv"``."""


class _ObliqueTree(BaseDecisionTree):
    """Fit and checks shared by the oblique classifier and regressor."""

    #: What the shared tree machinery reads of parameters these trees do not take.
    splitter = "best"
    subtree_raising = False
    categorical_features = "auto"
    warm_up_params = {"max_depth": 2}

    def __sklearn_tags__(self):
        return numeric_only(super().__sklearn_tags__())

    def _constraints(self) -> dict:
        keep = ("max_depth", "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf",
                "max_features", "random_state", "max_leaf_nodes", "min_impurity_decrease",
                "ccp_alpha", "prune_cv", "prune_rule", "ccp_risk", "confidence_factor",
                "validation_fraction", "n_jobs")
        if not isinstance(self, ClassifierMixin):
            keep = tuple(k for k in keep if k != "confidence_factor")
        return {**{k: _COMMON_CONSTRAINTS[k] for k in keep},
                "criterion": [Options(tuple(self._criteria))],
                "prune": [Options(("cv", "reduced_error", "pessimistic", "mdl")), None],
                "max_cycles": [Interval("int", 0, None)],
                "n_projections": [Interval("int", 1, None), Options(("auto",)), None],
                "projection_density": [Interval("real", 0.0, None, "neither"),
                                       Interval("int", 1, None)],
                "deletion_tolerance": [Interval("real", 0.0, 1.0, "left"),
                                       Interval("int", 0, 0)],
                "n_starts": [Interval("int", 0, None)]}

    def _check_numeric(self, X) -> None:
        """Refuse what a weighted sum cannot take: category columns and missing values."""
        name = type(self).__name__
        if self.is_categorical_.any():
            cols = np.flatnonzero(self.is_categorical_).tolist()
            names = getattr(self, "feature_names_in_", None)
            shown = [str(names[c]) for c in cols] if names is not None else cols
            raise ValueError(f"{name} splits on weighted sums of numeric features; columns "
                             f"{shown} hold categories. Encode them as numbers or indicator "
                             "columns, or use DecisionTreeClassifier/Regressor.")
        refuse_missing(X, name)

    @interruptible
    @fits(X="Training data: numbers (converted to float32, as scikit-learn's trees do) "
            "without missing values.",
          y="Class labels (ints, strings, bools) or regression targets.")
    def fit(self, X, y, sample_weight=None):
        """Grow the oblique tree of ``(X, y)`` (see the class docstring)."""
        validate_params(self, self._constraints())
        if self.prune == "cv" and self.ccp_alpha > 0.0:
            raise ValueError('prune="cv" chooses ccp_alpha by cross-validation; leave '
                             'ccp_alpha at 0 (or use prune=None with ccp_alpha).')
        if self.prune in ("pessimistic", "mdl") and not isinstance(self, ClassifierMixin):
            raise ValueError(f'prune="{self.prune}" is defined for classification trees; '
                             'regression trees support "cv" and "reduced_error".')
        check_y_missing(y)
        X_raw = X
        X, y = self._validate_table(X, y, fitting=True)
        y = check_y_1d(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        target = self._encode_target(y, sw)
        return self._fit_encoded(X, X_raw, y, sw if sample_weight is not None else None, target)

    def _validate_table(self, X, y=None, fitting: bool = False):
        refuse_sparse(X, type(self).__name__)
        out = super()._validate_table(X, y, fitting)
        if fitting:
            self._check_numeric(out[0])
        return out

    def _fit_encoded(self, X, X_raw, y, sw, target, shared=None):
        """The fit after validation (as :meth:`BaseDecisionTree._fit_encoded`; forests call it
        with each tree's weights in ``target``; ``shared`` is not used: the search reads X)."""
        ycls, yreg, w, _, n_values, K = target
        crit = self._criteria[self.criterion]
        settings = _resolve(self, X.shape[0], X.shape[1], w)
        rng = check_random_state(settings.seed)
        validation = None
        w_grow = w
        if self.prune == "reduced_error":
            validation = self._validation_rows(X.shape[0], ycls, settings.seed)
            if validation is not None:
                w_grow = np.where(validation, 0.0, w)
        keep = np.flatnonzero(w_grow > 0.0)
        if keep.size == 0:
            raise ValueError("sample_weight has no positive entry: there is nothing to fit.")
        Xk = np.ascontiguousarray(X[keep], dtype=np.float32)
        search = Search(int(self.max_cycles), int(self.n_starts),
                        float(self.deletion_tolerance),
                        resolve_projections(self.n_projections, X.shape[1]),
                        float(self.projection_density))
        yk = (ycls[keep] if ycls.size else ycls, yreg[keep] if yreg.size else yreg,
              np.ascontiguousarray(w_grow[keep]), K if n_values > 1 else 1, crit, settings,
              float(self.min_impurity_decrease), search)
        if search.n_projections > 0 and settings.max_leaf_nodes == 0:
            tree = grow_projections(Xk, *yk, settings.seed)
        else:
            tree = grow(Xk, *yk, rng)
        cost = getattr(self, "cost_matrix_", None)
        if self.ccp_alpha > 0.0:
            tree = prune_to_alpha(tree, self.ccp_alpha, self.ccp_risk, cost)
        self.pruning_ = None
        for stale in ("unpruned_tree_", "ccp_alpha_"):
            self.__dict__.pop(stale, None)
        if self.prune is not None:
            self.unpruned_tree_ = tree
            tree = self._post_prune(tree, X, X_raw, y, sw, ycls, yreg, w, crit, validation,
                                    settings.seed)
        self.tree_ = tree
        self.n_outputs_ = 1
        self.max_features_ = settings.max_features
        return self

    def _validate_X_predict(self, X):
        check_is_fitted(self, "tree_")
        X = self._validate_table(X)  # refuses sparse X
        refuse_missing(X, type(self).__name__)
        return X


_DOC_TREES = """
    tree_ : Tree
        The fitted tree; ``tree_.split_terms(node)`` gives a node's features and weights.
    unpruned_tree_ : Tree
        The tree before ``prune`` (when ``prune`` is set)."""


class ObliqueTreeClassifier(ProbaClassifierMixin, ClassifierMixin, _ObliqueTree):
    __doc__ = """A classification tree whose splits are weighted sums ``w . x <= t``.

    See :mod:`treelearn.oblique` for how a split is found (OC1's coordinate perturbation from
    the best single-feature split and from random sparse starts).

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Split quality (entropy in bits; "log_loss" is the same).""" + _DOC_PARAMS + """
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied into the sample weights.

    Attributes
    ----------
""" + CLASS_ATTRIBUTES + FEATURE_ATTRIBUTES + _DOC_TREES + """

    Examples
    --------
    >>> import numpy as np
    >>> from treelearn import ObliqueTreeClassifier
    >>> X = np.random.default_rng(0).random((500, 2))
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> clf = ObliqueTreeClassifier(random_state=0).fit(X, y)
    >>> clf.get_n_leaves(), clf.score(X, y)
    (2, 1.0)
    """

    _criteria = _CLF_CRITERIA
    misclassification_cost = None

    def __init__(self, *, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 max_leaf_nodes=None, min_impurity_decrease=0.0, max_cycles=5, n_starts=5,
                 deletion_tolerance=0.01, n_projections=None, projection_density=2.0,
                 random_state=None, class_weight=None, ccp_alpha=0.0,
                 prune=None, prune_cv=10, prune_rule="1se", ccp_risk="impurity",
                 confidence_factor=0.25, validation_fraction=0.2, n_jobs=None):
        keep_params(self, locals())

    def _constraints(self) -> dict:
        return {**super()._constraints(),
                **{k: v for k, v in DecisionTreeClassifier()._constraints().items()
                   if k == "class_weight"}}

    _encode_target = DecisionTreeClassifier._encode_target
    _check_cost_matrix = DecisionTreeClassifier._check_cost_matrix
    predict_proba = DecisionTreeClassifier.predict_proba


class ObliqueTreeRegressor(RegressorMixin, _ObliqueTree):
    __doc__ = """A regression tree whose splits are weighted sums ``w . x <= t``.

    See :mod:`treelearn.oblique` for how a split is found. Leaves predict the mean.

    Parameters
    ----------
    criterion : {"squared_error"}, default="squared_error"
        Split quality: the weighted variance of the children.""" + _DOC_PARAMS + """

    Attributes
    ----------
""" + FEATURE_ATTRIBUTES + _DOC_TREES + """
    """

    _criteria = _REG_CRITERIA

    def __init__(self, *, criterion="squared_error", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 max_leaf_nodes=None, min_impurity_decrease=0.0, max_cycles=5, n_starts=5,
                 deletion_tolerance=0.01, n_projections=None, projection_density=2.0,
                 random_state=None, ccp_alpha=0.0, prune=None,
                 prune_cv=10, prune_rule="1se", ccp_risk="impurity", validation_fraction=0.2,
                 n_jobs=None):
        keep_params(self, locals())

    confidence_factor = 0.25
    _encode_target = DecisionTreeRegressor._encode_target
    predict = DecisionTreeRegressor.predict

