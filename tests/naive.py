"""Slow, plain-Python reference twins of treelearn's kernels.

Each function here recomputes from scratch what a kernel computes incrementally, with the
formulas written as the literature writes them. Tests compare kernels against these on fixed and
random (hypothesis) inputs.
"""

from __future__ import annotations

import math

import numpy as np

GINI, ENTROPY, MISCLASSIFICATION, GAIN_RATIO, CHI2, SQUARED_ERROR, ABSOLUTE_ERROR = range(7)
FEATURE_THRESHOLD = np.float32(1e-7)
EPSILON = float(np.finfo(np.float64).eps)
RAND_R_MAX = 0x7FFFFFFF


# -- impurities --------------------------------------------------------------------------------


def entropy(counts) -> float:
    """``-sum p log2 p`` over the non-empty classes (log2 p written ln p / ln 2, as the kernels
    and scikit-learn write it, so that equal splits round equally)."""
    total = float(sum(counts))
    h = 0.0
    for c in counts:
        if c > 0:
            h -= (c / total) * (math.log(c / total) / math.log(2.0))
    return h


def gini(counts) -> float:
    """``1 - sum p_k^2``, written ``1 - sum c_k^2 / W^2`` as the kernels and scikit-learn write
    it, so that splits that tie exactly also round equally."""
    total = float(sum(counts))
    return 1.0 - sum(c * c for c in counts) / (total * total)


def misclassification(counts) -> float:
    total = float(sum(counts))
    return 1.0 - max(counts) / total


def weighted_median(ys, ws) -> float:
    """Smallest y whose cumulative weight reaches half; the mean with the next one on equality."""
    order = sorted(range(len(ys)), key=lambda i: (ys[i], i))
    total = sum(ws)
    cum = 0.0
    for pos, i in enumerate(order):
        cum += ws[i]
        if cum >= total / 2:
            if cum == total / 2 and pos + 1 < len(order):
                return (ys[i] + ys[order[pos + 1]]) / 2
            return ys[i]
    return ys[order[-1]]


def min_abs_cost(ys, ws) -> float:
    """``min_m sum w |y - m|`` by trying every y as m (a weighted median is among them)."""
    if len(ys) == 0:
        return 0.0
    return min(sum(w * abs(y - m) for y, w in zip(ys, ws, strict=True)) for m in ys)


def node_impurity(ys, ws, crit, n_classes=None) -> float:
    """Impurity of a node holding targets ``ys`` with weights ``ws``."""
    W = float(sum(ws))
    if crit == SQUARED_ERROR:
        # From the sums, as scikit-learn and the engine compute it: a split that leaves the
        # variance exactly as it was (improvement 0) then rounds to the same tiny negative
        # improvement, and the same side of the rule ``improvement + EPSILON < minimum`` (a
        # two-pass variance would split where both of them stop: seed 3413 of test_builder).
        mean = sum(w * y for y, w in zip(ys, ws, strict=True)) / W
        return sum(w * y * y for y, w in zip(ys, ws, strict=True)) / W - mean * mean
    if crit == ABSOLUTE_ERROR:
        return min_abs_cost(ys, ws) / W
    counts = class_weights(ys, ws, n_classes)
    if crit == GINI:
        return gini(counts)
    if crit == MISCLASSIFICATION:
        return misclassification(counts)
    return entropy(counts)


def class_weights(ys, ws, n_classes):
    counts = [0.0] * n_classes
    for y, w in zip(ys, ws, strict=True):
        counts[int(y)] += w
    return counts


def split_score(yl, wl, yr, wr, crit, n_classes=None) -> float:
    """Quality of a split (larger is better), straight from the definitions."""
    Wl, Wr = float(sum(wl)), float(sum(wr))
    W = Wl + Wr
    if crit == MISCLASSIFICATION:
        # minus the misclassified weight (exact for integer weights)
        return -(Wl - max(class_weights(yl, wl, n_classes))) - (
            Wr - max(class_weights(yr, wr, n_classes)))
    if crit == SQUARED_ERROR:
        # SSE_l + SSE_r = sum w y^2 - (S_l^2 / W_l + S_r^2 / W_r) with S = sum w y: the first
        # term is the same for every cut, so the cut maximising S_l^2/W_l + S_r^2/W_r is the one
        # minimising the squared error (written this way, equal partitions round equally).
        sl = sum(w * y for y, w in zip(yl, wl, strict=True))
        sr = sum(w * y for y, w in zip(yr, wr, strict=True))
        return sl * sl / Wl + sr * sr / Wr
    if crit in (GINI, ENTROPY, ABSOLUTE_ERROR):
        # minus the weighted children impurity: the same order as the impurity decrease
        return -(Wl * node_impurity(yl, wl, crit, n_classes)
                 + Wr * node_impurity(yr, wr, crit, n_classes))
    cl = class_weights(yl, wl, n_classes)
    cr = class_weights(yr, wr, n_classes)
    if crit == GAIN_RATIO:
        parent = [a + b for a, b in zip(cl, cr, strict=True)]
        gain = entropy(parent) - Wl / W * entropy(cl) - Wr / W * entropy(cr)
        split_info = -((Wl / W) * math.log(Wl / W) + (Wr / W) * math.log(Wr / W)) / math.log(2.0)
        return gain / split_info
    if crit == CHI2:
        chi = 0.0
        for k in range(n_classes):
            nk = cl[k] + cr[k]
            for obs, side in ((cl[k], Wl), (cr[k], Wr)):
                exp = side * nk / W
                if exp > 0:
                    chi += (obs - exp) ** 2 / exp
        return chi
    raise ValueError(crit)


# -- scikit-learn's random number generator and feature draw --------------------------------------


class RandR:
    """scikit-learn's ``our_rand_r``: xorshift on a 32-bit state, results modulo 2**31."""

    def __init__(self, seed: int):
        self.state = seed

    def next(self) -> int:
        s = self.state or 1
        s ^= (s << 13) % 2**32
        s ^= s >> 17
        s ^= (s << 5) % 2**32
        self.state = s
        return s % (RAND_R_MAX + 1)

    def randint(self, low: int, high: int) -> int:
        return low + self.next() % (high - low)

    def uniform(self, low: float, high: float) -> float:
        return (high - low) * float(self.next()) / float(RAND_R_MAX) + low


# -- a whole tree, recursively ---------------------------------------------------------------


def _is_constant(v):
    return v.max() <= v.min() + FEATURE_THRESHOLD


def naive_tree(X, y, w, crit, *, n_classes=None, max_depth=2**31 - 1, min_samples_split=2,
               min_samples_leaf=1, min_weight_leaf=0.0, min_impurity_decrease=0.0,
               max_features=None, seed=0, random_split=False):
    """Grow a depth-first tree by brute force; return its node arrays as a dict of lists.

    Every candidate cut of every drawn feature is scored with :func:`split_score` computed from
    the raw targets of the two sides. Features are drawn like scikit-learn (Fisher-Yates with
    its generator and constant-feature bookkeeping), so that ties are broken the same way.
    """
    X = np.asarray(X, dtype=np.float32)
    n, F = X.shape
    max_features = F if max_features is None else max_features
    min_samples_split = max(min_samples_split, 2 * min_samples_leaf)
    rng = RandR(seed)
    features = list(range(F))
    constant_features = [0] * F
    W_total = float(np.sum(w))
    out = {k: [] for k in ("left", "right", "feature", "threshold", "impurity", "n", "w", "value")}

    def leaf_value(idx):
        if crit >= SQUARED_ERROR:
            ys = [y[i] for i in idx]
            ws = [w[i] for i in idx]
            if crit == SQUARED_ERROR:
                return [sum(a * b for a, b in zip(ys, ws, strict=True)) / sum(ws)]
            return [weighted_median(ys, ws)]
        counts = class_weights([y[i] for i in idx], [w[i] for i in idx], n_classes)
        total = sum(counts)
        return [c / total for c in counts]

    def add(idx):
        node = len(out["left"])
        ys = [y[i] for i in idx]
        ws = [w[i] for i in idx]
        out["left"].append(-1)
        out["right"].append(-1)
        out["feature"].append(-2)
        out["threshold"].append(-2.0)
        out["impurity"].append(node_impurity(ys, ws, crit, n_classes))
        out["n"].append(len(idx))
        out["w"].append(float(sum(ws)))
        out["value"].append(leaf_value(idx))
        return node

    def draw(idx, n_known):
        """The drawn non-constant features (and random thresholds), scikit-learn's order."""
        f_i, visited, found, drawn, total = F, 0, 0, 0, n_known
        chosen = []
        while f_i > total and (visited < max_features or visited <= found + drawn):
            visited += 1
            f_j = rng.randint(drawn, f_i - found)
            if f_j < n_known:
                features[drawn], features[f_j] = features[f_j], features[drawn]
                drawn += 1
                continue
            f_j += found
            f = features[f_j]
            v = X[idx, f]
            if _is_constant(v):
                features[f_j], features[total] = features[total], features[f_j]
                found += 1
                total += 1
                continue
            f_i -= 1
            features[f_i], features[f_j] = features[f_j], features[f_i]
            thr = None
            if random_split:
                lo, hi = float(v.min()), float(v.max())
                thr = rng.uniform(lo, hi)
                if thr == hi:
                    thr = lo
            chosen.append((f, thr))
        features[:n_known] = constant_features[:n_known]
        constant_features[n_known:total] = features[n_known:total]
        return chosen, total

    def best_split(idx, chosen):
        best = (-np.inf, None, None)
        for f, rthr in chosen:
            order = sorted(idx, key=lambda i: (X[i, f], i))
            vals = X[order, f]
            for p in range(1, len(order)):
                a, b = vals[p - 1], vals[p]
                if not b > a + FEATURE_THRESHOLD:
                    continue
                if rthr is not None and not (a <= rthr < b):
                    continue
                left, right = order[:p], order[p:]
                if len(left) < min_samples_leaf or len(right) < min_samples_leaf:
                    continue
                wl = [w[i] for i in left]
                wr = [w[i] for i in right]
                if sum(wl) < min_weight_leaf or sum(wr) < min_weight_leaf:
                    continue
                if sum(wl) <= 0 or sum(wr) <= 0:
                    continue
                sc = split_score([y[i] for i in left], wl, [y[i] for i in right], wr, crit,
                                 n_classes)
                if sc > best[0]:
                    if rthr is not None:
                        thr = rthr
                    else:
                        thr = float(a) / 2 + float(b) / 2
                        if thr == float(b):
                            thr = float(a)
                    best = (sc, f, thr)
        return best

    def grow(idx, depth, parent, is_left, n_known):
        node = add(idx)
        if parent >= 0:
            out["left" if is_left else "right"][parent] = node
        imp, W = out["impurity"][node], out["w"][node]
        if (depth >= max_depth or len(idx) < min_samples_split or len(idx) < 2 * min_samples_leaf
                or W < 2 * min_weight_leaf or imp <= EPSILON):
            return
        chosen, n_total = draw(np.asarray(idx), n_known)
        sc, f, thr = best_split(idx, chosen)
        if f is None:
            return
        left = [i for i in idx if X[i, f] <= thr]
        right = [i for i in idx if X[i, f] > thr]
        Wl = float(sum(w[i] for i in left))
        Wr = float(sum(w[i] for i in right))
        imp_l = node_impurity([y[i] for i in left], [w[i] for i in left], crit, n_classes)
        imp_r = node_impurity([y[i] for i in right], [w[i] for i in right], crit, n_classes)
        improvement = W / W_total * (imp - Wr / W * imp_r - Wl / W * imp_l)
        if improvement + EPSILON < min_impurity_decrease:
            return
        out["feature"][node] = f
        out["threshold"][node] = thr
        grow(left, depth + 1, node, True, n_total)
        grow(right, depth + 1, node, False, n_total)

    grow(list(range(n)), 0, -1, False, 0)
    return {k: np.asarray(v) for k, v in out.items()}


def naive_apply(X, left, right, feature, threshold):
    """Leaf of every row, following ``x[feature] <= threshold`` (x in float32)."""
    X = np.asarray(X, dtype=np.float32)
    out = []
    for row in X:
        node = 0
        while left[node] != -1:
            node = left[node] if row[feature[node]] <= threshold[node] else right[node]
        out.append(node)
    return np.asarray(out)


def naive_ccp_path(left, right, weighted_n, impurity):
    """Weakest-link pruning by rescanning every node after each collapse (Breiman et al. 1984).

    Returns the effective alphas (starting with 0) and total leaf risks of the subtrees.
    """
    n = len(left)
    r = [weighted_n[i] * impurity[i] / weighted_n[0] for i in range(n)]
    collapsed = [left[i] == -1 for i in range(n)]

    def leaves(i):
        if collapsed[i]:
            return [i]
        return leaves(left[i]) + leaves(right[i])

    def alive(i, acc):
        acc.append(i)
        if not collapsed[i]:
            alive(left[i], acc)
            alive(right[i], acc)
        return acc

    alphas = [0.0]
    risks = [sum(r[i] for i in leaves(0))]
    while not collapsed[0]:
        best, best_i = np.inf, -1
        for i in sorted(alive(0, [])):
            if collapsed[i]:
                continue
            lv = leaves(i)
            a = (r[i] - sum(r[j] for j in lv)) / (len(lv) - 1)
            if a < best:
                best, best_i = a, i
        collapsed[best_i] = True
        alphas.append(best)
        risks.append(sum(r[i] for i in leaves(0)))
    return np.asarray(alphas), np.asarray(risks)


# -- histogram splitter ------------------------------------------------------------------------


def naive_hist(bins, y, w, *, n_features, n_bins, n_classes=None, weighted=False):
    """Histogram of rows, as :mod:`treelearn.engine.hist` lays it out (one block per feature)."""
    H = (n_classes if n_classes is not None else 2) + (1 if weighted else 0)
    hist = np.zeros((n_features, n_bins, H))
    for i in range(bins.shape[0]):
        for f in range(n_features):
            b = bins[i, f]
            if n_classes is not None:
                hist[f, b, int(y[i])] += w[i]
            else:
                hist[f, b, 0] += w[i]
                hist[f, b, 1] += w[i] * y[i]
            if weighted:
                hist[f, b, H - 1] += 1
    return hist


def naive_best_bin(bins_f, y, w, crit, *, n_bins, n_classes=None, min_leaf=1, min_wleaf=0.0):
    """Best cut "bin <= b" by trying every b and scoring it from the definitions.

    Returns ``(b, n_left)``, or ``(-1, 0)`` when no cut is valid; ties go to the smallest b.
    """
    best, best_b, best_nl = -np.inf, -1, 0
    for b in range(n_bins - 1):
        left = bins_f <= b
        nl = int(left.sum())
        nr = len(bins_f) - nl
        if nl == 0 or nr == 0 or nl < min_leaf or nr < min_leaf:
            continue
        if not np.any(bins_f == b):  # same partition as the previous cut
            continue
        if w[left].sum() < min_wleaf or w[~left].sum() < min_wleaf:
            continue
        sc = split_score(y[left], w[left], y[~left], w[~left], crit, n_classes)
        if best_b < 0 or sc > best + 1e-12 * max(1.0, abs(best)):
            best, best_b, best_nl = sc, b, nl
    return best_b, best_nl


def naive_partition(bins, f, tb):
    """Rows with ``bins[:, f] <= tb`` first, then the others, each group in order."""
    go = bins[:, f] <= tb
    return np.concatenate([np.flatnonzero(go), np.flatnonzero(~go)])


# -- tables: fractional routing, subset splits ----------------------------------------------


def naive_branch(tree, node: int, x: float) -> int:
    """The branch value ``x`` takes at ``node`` as the tree's rules read: NaN the missing
    branch, a category code its level's branch (an unseen level the missing branch), a number
    ``x <= threshold`` the first; -1: every branch, by the training shares."""
    c0, c1 = tree.cat_ptr[node], tree.cat_ptr[node + 1]
    if math.isnan(x):
        return int(tree.missing_branch[node])
    if c1 > c0:
        code = int(x)
        b = tree.cat_branch[c0 + code] if 0 <= code < c1 - c0 else -1
        return int(b if b >= 0 else tree.missing_branch[node])
    return 0 if x <= tree.threshold[node] else 1


def naive_route(tree, X, stats=None):
    """Value of every row, recursively (twin of ``treelearn._tree.route``).

    A missing value (or an unseen level) follows ``missing_branch``; -1 splits the row over all
    branches in proportion to their training weights (value: the shares times the branches'
    values). With ``stats`` (n_rows, S) also returns
    the per-node sums of ``stats`` times each row's weight at the node (``Tree.node_sums``).
    """
    V = tree.value.shape[2]
    out = np.zeros((X.shape[0], V))
    acc = None if stats is None else np.zeros((tree.node_count, stats.shape[1]))

    def walk(i, node, wt):
        """Value of ``node`` for row ``i`` reached with weight ``wt``."""
        if acc is not None:
            acc[node] += wt * stats[i]
        kids = tree.children(node)
        if len(kids) == 0:
            return tree.value[node, 0].copy()
        b = naive_branch(tree, node, X[i, tree.feature[node]])
        if b >= 0:
            return walk(i, kids[b], wt)
        ws = tree.weighted_n_node_samples[kids]
        total = ws.sum()
        return sum(wk / total * walk(i, k, wt * wk / total)
                   for k, wk in zip(kids, ws, strict=True))

    for i in range(X.shape[0]):
        out[i] = walk(i, 0, 1.0)
    return out if acc is None else (out, acc)


def naive_subtree_loss(tree, collapsed, err):
    """Sum of ``err`` over the leaves of ``tree`` cut at the nodes in ``collapsed``
    (twin of ``treelearn.pruning.cost_complexity.sequence_errors``)."""
    cut = set(int(c) for c in collapsed)
    total = 0.0
    stack = [0]
    while stack:
        i = stack.pop()
        kids = tree.children(i)
        if i in cut or len(kids) == 0:
            total += err[i]
        else:
            stack.extend(int(k) for k in kids)
    return total


def impurity_decrease(groups, crit, n_classes=None) -> float:
    """``I(parent) - sum_c W_c / W I(c)`` for children given as (ys, ws) pairs."""
    ys = [y for g in groups for y in g[0]]
    ws = [w for g in groups for w in g[1]]
    W = float(sum(ws))
    dec = node_impurity(ys, ws, crit, n_classes)
    for gy, gw in groups:
        dec -= float(sum(gw)) / W * node_impurity(gy, gw, crit, n_classes)
    return dec


def naive_best_subset(codes, y, w, crit, n_classes=None):
    """Best impurity decrease over every two-way partition of the levels present (brute
    force over all subsets; Breiman et al.'s search space for a categorical CART split)."""
    from itertools import combinations

    present = sorted(set(int(c) for c in codes))
    best = -math.inf
    for r in range(1, len(present)):
        for subset in combinations(present, r):
            left = np.isin(codes, subset)
            groups = [(y[left], w[left]), (y[~left], w[~left])]
            best = max(best, impurity_decrease(groups, crit, n_classes))
    return best


class _Slot:
    """A node of the tree being pruned by the twin: the original node whose test it uses,
    its children (slots), and the training cases' class weights that reach it."""

    __slots__ = ("sid", "node", "kids", "dist", "cases", "count")

    def __init__(self, node: int, kids: list):
        self.sid = node  # the slot's own index (its original node)
        self.node = node
        self.kids = kids
        self.dist = None
        self.cases = 0.0
        self.count = 0


def naive_subtree_raising(tree, X, codes, w, confidence_factor=0.25, method="exact",
                          raising=True, criterion=1):
    """Twin of ``treelearn.pruning.pessimistic.pessimistic_prune_cases``: Quinlan's
    case-driven pessimistic pruning with subtree raising, every case routed one at a time.

    Returns the pruned tree, built from the slots by the module's ``_flat_to_tree``
    (``criterion`` recomputes impurities). Sums run in the order the module's must match: a branch's
    cases in row order, its fractional (missing) cases after its own. A raised branch's
    estimate routes all the node's cases in row order; the module reuses the branch's own
    class weights and routes only the other cases (same sums up to rounding of fractional
    weights, exact for whole ones).
    """
    from treelearn.pruning.pessimistic import C45_SLACK, _flat_to_tree, u_cf

    K = tree.value.shape[2]
    ptr, bc = tree.branch_ptr, tree.branch_child
    slots = [_Slot(i, []) for i in range(tree.node_count)]
    for i in range(tree.node_count):
        slots[i].kids = [slots[c] for c in bc[ptr[i]:ptr[i + 1]]]

    def share(node):
        kids = bc[ptr[node]:ptr[node + 1]]
        ws = tree.weighted_n_node_samples[kids]
        tot = ws.sum()
        return ws / tot if tot > 0 else np.full(kids.size, 1.0 / kids.size)

    def branch(node, r):
        """Branch of row ``r`` at ``node``; -1: every branch (fractional)."""
        x = float(np.float32(X[r, tree.feature[node]]))
        c0, c1 = tree.cat_ptr[node], tree.cat_ptr[node + 1]
        b = -1
        if not math.isnan(x):
            if c1 > c0:
                code = int(x)
                if 0 <= code < c1 - c0:
                    b = int(tree.cat_branch[c0 + code])
            else:
                b = 0 if x <= tree.threshold[node] else 1
        if b < 0 and tree.missing_branch[node] >= 0:
            b = int(tree.missing_branch[node])
        return b

    def parts(slot, rows, wts):
        k = len(slot.kids)
        known = [([], []) for _ in range(k)]
        miss_r, miss_w = [], []
        for r, x in zip(rows, wts, strict=True):
            b = branch(slot.node, r)
            if b < 0:
                miss_r.append(r)
                miss_w.append(x)
            else:
                known[b][0].append(r)
                known[b][1].append(x)
        sh = share(slot.node)
        return [(kr + miss_r, kw + [x * sh[j] for x in miss_w])
                for j, (kr, kw) in enumerate(known)]

    def leaf_estimate(dist):
        cases = float(dist.sum())
        errors = cases - float(dist.max()) if cases > 0 else 0.0
        return cases * float(u_cf(errors, cases, confidence_factor, method)), cases

    def dist_of(rows, wts):
        d = np.zeros(K)
        for r, x in zip(rows, wts, strict=True):
            d[codes[r]] += x
        return d

    def route_all(slot, rows, wts):
        """Estimated errors of the slot's current subtree on the cases, each routed alone."""
        acc = {}
        for r, x in zip(rows, wts, strict=True):
            stack = [(slot, x)]
            while stack:
                s, ww = stack.pop()
                if not s.kids:
                    acc.setdefault(id(s), [s, np.zeros(K)])[1][codes[r]] += ww
                    continue
                b = branch(s.node, r)
                if b < 0:
                    sh = share(s.node)
                    stack.extend((s.kids[j], ww * sh[j]) for j in range(len(s.kids)))
                else:
                    stack.append((s.kids[b], ww))
        # summed in the order the leaves are first reached, as the module sums them
        return sum((leaf_estimate(d)[0] for _, d in acc.values()), 0.0)

    def estimate(slot, rows, wts):
        dist = dist_of(rows, wts)
        leaf, cases = leaf_estimate(dist)
        slot.dist, slot.cases, slot.count = dist, cases, sum(1 for x in wts if x > 0)
        if not slot.kids:
            return leaf
        ps = parts(slot, rows, wts)
        subtree = 0.0
        for kid, (r, ww) in zip(slot.kids, ps, strict=True):
            subtree += estimate(kid, r, ww)
        big_est = np.inf
        if raising:
            big = int(np.argmax([sum(ww) for _, ww in ps]))
            big_est = route_all(slot.kids[big], rows, wts)
        if leaf <= big_est + C45_SLACK and leaf <= subtree + C45_SLACK:
            slot.kids = []
            return leaf
        if big_est <= subtree + C45_SLACK:
            child = slot.kids[big]
            slot.node, slot.kids = child.node, child.kids
            return estimate(slot, rows, wts)
        return subtree

    rows = [int(r) for r in np.flatnonzero(np.asarray(w) > 0)]
    estimate(slots[0], rows, [float(w[r]) for r in rows])
    n = tree.node_count
    node_of = np.arange(n, dtype=np.int64)
    is_leaf = np.ones(n, dtype=np.bool_)
    dist = np.zeros((n, K))
    cases = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    stack = [slots[0]]
    while stack:
        s = stack.pop()
        node_of[s.sid], is_leaf[s.sid] = s.node, not s.kids
        dist[s.sid], cases[s.sid], count[s.sid] = s.dist, s.cases, s.count
        stack.extend(s.kids)
    return _flat_to_tree(tree, node_of, is_leaf, dist, cases, count, criterion)


def naive_weakest_links(branch_ptr, branch_child, r_node):
    """Twin of ``treelearn.pruning.cost_complexity.weakest_link_sequence``: after every
    collapse, rescan every internal node of the current subtree for the least
    ``(alpha, node)``. Risks below a node are kept with the kernel's arithmetic (leaves in
    index order bubbling up, then each collapse's difference added along the path), so the
    two agree to the bit, exact ties included. Returns ``(nodes, alphas)``."""
    n = len(branch_ptr) - 1
    parent = [-1] * n
    kids = [list(branch_child[branch_ptr[i]:branch_ptr[i + 1]]) for i in range(n)]
    for i in range(n):
        for c in kids[i]:
            parent[c] = i
    leaf = [not kids[i] for i in range(n)]
    r_branch = [0.0] * n
    n_leaves = [0] * n
    for i in range(n):
        if leaf[i]:
            r_branch[i] = r_node[i]
            j = i
            while j != 0:
                r_branch[parent[j]] += r_node[i]
                n_leaves[parent[j]] += 1
                j = parent[j]
    alive = [True] * n
    nodes, alphas = [], []
    while not leaf[0]:
        best = None
        for i in range(n):
            if alive[i] and not leaf[i]:
                a = (r_node[i] - r_branch[i]) / (n_leaves[i] - 1)
                if best is None or a < best[0]:
                    best = (a, i)
        a, i = best
        stack = list(kids[i])
        while stack:
            j = stack.pop()
            alive[j] = False
            if not leaf[j]:
                stack.extend(kids[j])
        leaf[i] = True
        d_leaves, d_risk = n_leaves[i] - 1, r_node[i] - r_branch[i]
        n_leaves[i], r_branch[i] = 0, r_node[i]
        j = parent[i]
        while j != -1:
            n_leaves[j] -= d_leaves
            r_branch[j] += d_risk
            j = parent[j]
        nodes.append(i)
        alphas.append(a)
    return np.asarray(nodes), np.asarray(alphas)


# -- model trees (M5) --------------------------------------------------------------------------


def m5_factor(n: float, v: int, penalty: float) -> float:
    """(n + penalty v) / (n - v); 10 when n <= v (Weka's rule)."""
    return 10.0 if n <= v else (n + penalty * v) / (n - v)


def naive_node_model(X, y, w, cols, *, drop=True, estimate="m5"):
    """M5's model of one node by refitting from rows with numpy.linalg.lstsq: least squares
    on ``cols`` (columns constant at the node left out), then, with ``drop``, the column
    whose removal raises the weighted squared error least removed while the estimate
    (``mean |res| (n + v) / (n - v)``, or Weka's ``rmse (n + 2 v) / (n - v)``) does not
    increase. Returns ``(columns, coefficients, intercept, estimate)``."""
    n = len(y)
    sw = np.sqrt(w)
    W = w.sum()

    def fit(S):
        A = np.column_stack([np.ones(n)] + [X[:, j] for j in S])
        b = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)[0]
        res = y - A @ b
        return b, res

    def est(S, res):
        v = len(S) + 1
        if estimate == "m5":
            return np.dot(w, np.abs(res)) / W * m5_factor(n, v, 1.0)
        return math.sqrt(np.dot(w, res * res) / W) * m5_factor(n, v, 2.0)

    S = [j for j in cols if np.ptp(X[:, j]) > 0]
    b, res = fit(S)
    E = est(S, res)
    while drop and S:
        sse = [np.dot(w, fit([k for k in S if k != j])[1] ** 2) for j in S]
        j = S[int(np.argmin(sse))]
        S2 = [k for k in S if k != j]
        b2, res2 = fit(S2)
        E2 = est(S2, res2)
        if E2 > E:
            break
        S, b, res, E = S2, b2, res2, E2
    return S, b[1:], b[0], E


def naive_smoothed_prediction(models, counts, x, k):
    """Quinlan's smoothing applied on the path: ``models[0]`` is the leaf's (intercept,
    coefficients) and ``models[-1]`` the root's, ``counts[d]`` the cases of the node at
    position ``d``; going up, ``p = (n p + k q) / (n + k)`` with ``n`` the cases of the node
    below the parent."""
    def value(m):
        return m[0] + float(np.dot(m[1], x))

    p = value(models[0])
    for d in range(1, len(models)):
        n = counts[d - 1]
        p = (n * p + k * value(models[d])) / (n + k)
    return p


def naive_m5_routing(tree, X, y, w):
    """M5′'s walk of the training rows down a grown tree, written from Witten & Frank,
    *Data Mining*, 6.5: at a node, the rows whose split value is known follow the split; a
    row with an unknown value goes to the branch of the larger mean target (of the known
    rows) when its target is above the average of the two branch means, else to the other
    (a multiway node: the branch of the nearest mean, the first on ties). At prediction an
    unknown value takes the branch of the node's weighted average value (a categorical
    feature: its most frequent level). Returns ``(leaf, missing_branch, node_rows)`` with
    ``node_rows[node]`` the rows reaching each node."""
    n_nodes = tree.node_count
    leaf = np.full(len(y), -1)
    mb = np.full(n_nodes, -2)
    node_rows = [None] * n_nodes

    def visit(node, rows):
        node_rows[node] = rows
        kids = tree.branch_child[tree.branch_ptr[node]:tree.branch_ptr[node + 1]]
        if len(kids) == 0:
            leaf[rows] = node
            return
        f = tree.feature[node]
        x = X[rows, f].astype(np.float64)
        c0, c1 = tree.cat_ptr[node], tree.cat_ptr[node + 1]
        branch = np.full(len(rows), -1)
        for i, v in enumerate(x):
            if np.isnan(v):
                continue
            if c1 > c0:
                branch[i] = tree.cat_branch[c0 + int(v)]
            else:
                branch[i] = 0 if v <= tree.threshold[node] else 1
        k = len(kids)
        means = [np.average(y[rows][branch == b], weights=w[rows][branch == b])
                 if np.any(branch == b) else np.nan for b in range(k)]
        for i in np.flatnonzero(branch < 0):
            t = y[rows[i]]
            if k == 2:
                upper = 1 if means[1] > means[0] else 0
                branch[i] = upper if t > (means[0] + means[1]) / 2 else 1 - upper
            else:
                gaps = [abs(t - m) if not np.isnan(m) else np.inf for m in means]
                branch[i] = int(np.argmin(gaps))
        known = ~np.isnan(x)
        if c1 > c0:
            lw = np.bincount(x[known].astype(int), weights=w[rows][known],
                             minlength=c1 - c0)
            mb[node] = tree.cat_branch[c0 + int(np.argmax(lw))]
        else:
            avg = np.average(x[known], weights=w[rows][known])
            mb[node] = 0 if avg <= tree.threshold[node] else 1
        for b, kid in enumerate(kids):
            visit(kid, rows[branch == b])

    visit(0, np.arange(len(y)))
    return leaf, mb, node_rows


def naive_m5_sdr(x, y, w, threshold):
    """M5′'s standard deviation reduction of the cut ``x <= threshold`` with missing values
    (Witten & Frank, *Data Mining*, 6.5): ``m/|T| * (sd(T) - sum_j |T_j|/|T| sd(T_j))``,
    ``T`` all rows (weighted), ``m`` the known ones, ``T_j`` the known rows of each side."""
    def sd(mask):
        if not mask.any():
            return 0.0
        mu = np.average(y[mask], weights=w[mask])
        return math.sqrt(max(np.average((y[mask] - mu) ** 2, weights=w[mask]), 0.0))

    known = ~np.isnan(x)
    W = w.sum()
    left = known & (x <= threshold)
    right = known & (x > threshold)
    inner = sd(np.ones(len(y), dtype=bool)) - w[left].sum() / W * sd(left) \
        - w[right].sum() / W * sd(right)
    return w[known].sum() / W * inner
