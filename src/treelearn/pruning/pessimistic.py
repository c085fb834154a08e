"""C4.5's pessimistic (error-based) pruning, Quinlan (1993), *C4.5: Programs for Machine
Learning*, chapter 4.

A leaf covering ``N`` training cases of which ``E`` are misclassified is taken to err on
``N * U_CF(E, N)`` future cases, where ``U_CF(E, N)`` is the upper limit of the one-sided
binomial confidence interval at confidence factor ``CF``: the error probability ``p`` with
``P(X <= E) = CF`` for ``X ~ Binomial(N, p)`` (Clopper-Pearson). Equivalently ``U_CF`` is the
``1 - CF`` quantile of ``Beta(E + 1, N - E)``, which also serves fractional ``E`` and ``N``
(sample weights, C4.5's fractional cases); for ``E = 0`` it is ``1 - CF ** (1 / N)``.
This exact limit is the default (``method="exact"``). Quinlan's program approximates it, and
the numbers printed in his book come from that approximation (``method="c45"``): with ``z``
the normal deviate for ``CF`` interpolated linearly in a short table (Documenta Geigy), ``U =
1 - CF ** (1 / N)`` for ``E = 0``, linear in ``E`` between ``E = 0`` and ``E = 1``, ``U = (E +
0.67 (N - E)) / N`` when ``E + 0.5 >= N``, else the upper root of the normal approximation
with continuity correction, ``(E + 0.5 + z^2/2 + z sqrt((E + 0.5)(1 - (E + 0.5)/N) + z^2/4))
/ (N + z^2)``. The two agree for ``E = 0`` and differ by about 0.003 at ``E = 1``; his worked
example (``U_0.25(0, 6) = 0.206``, ``U_0.25(0, 9) = 0.143``, ``U_0.25(0, 1) = 0.750``,
``U_0.25(1, 16) = 0.157``) is a test of ``method="c45"``.

Working bottom-up, a subtree is replaced by a leaf when the leaf's estimated errors are at
most the sum of its leaves' estimated errors plus 0.1 (the slack in Quinlan's program):
:func:`pessimistic_prune`, from the counts stored in the tree. Subtree raising (the subtree of
the most used branch replaces its parent, taking all the parent's cases) needs the training
cases: :func:`pessimistic_prune_cases`, which estimators use (``subtree_raising``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import betaincinv

from .._tree import Tree
from ..engine.config import njit
from ._bottom_up import check_classification, collapse_bottom_up

#: Quinlan's slack: a leaf replaces a subtree if its estimate is at most this much higher.
C45_SLACK = 0.1


#: Quinlan's table of confidence levels and normal deviates (his program's ``Val``/``Dev``).
_C45_CF = np.array([0.0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00])
_C45_Z = np.array([4.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00])
METHODS = ("exact", "c45")


def _u_c45(e: np.ndarray, n: np.ndarray, cf: float) -> np.ndarray:
    """Quinlan's approximation of ``U_CF`` (module docstring), for ``n > 0``."""
    z2 = float(np.interp(cf, _C45_CF, _C45_Z)) ** 2
    u0 = 1.0 - np.exp(np.log(cf) / n)

    def normal(e):
        h = e + 0.5
        pr = (h + z2 / 2 + np.sqrt(z2 * (h * (1 - h / n) + z2 / 4))) / (n + z2)
        return np.where(h >= n, (e + 0.67 * (n - e)) / n, pr)

    return np.where(e < 1e-6, u0,
                    np.where(e < 0.9999, u0 + e * (normal(np.ones_like(e)) - u0), normal(e)))


def u_cf(errors, n, confidence_factor: float = 0.25, method: str = "exact") -> np.ndarray:
    """Upper confidence limit ``U_CF(E, N)`` of the error rate (see the module docstring).

    Arrays broadcast; ``N = 0`` gives 0 and ``E >= N`` gives 1 (``method="exact"``).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    cf = float(confidence_factor)
    if not 0.0 < cf < 1.0:
        raise ValueError(f"confidence_factor must be in (0, 1); got {confidence_factor}.")
    e = np.asarray(errors, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 0) or np.any(e < -1e-9):
        raise ValueError("errors and n must be non-negative.")
    e = np.clip(e, 0.0, None)
    e, n = np.broadcast_arrays(e, n)
    return _u_limit(e, n, cf, method)


def _u_limit(e: np.ndarray, n: np.ndarray, cf: float, method: str) -> np.ndarray:
    """:func:`u_cf` of float arrays of one shape already checked (``e``, ``n`` >= 0, ``cf`` in
    (0, 1), a known method): the pruning loops call it per node without the checks."""
    out = np.ones(e.shape)
    if method == "c45":
        ok = n > 0.0
        with np.errstate(invalid="ignore", divide="ignore"):
            out[ok] = _u_c45(e[ok], n[ok], cf)
    else:
        ok = n - e > 1e-12
        out[ok] = betaincinv(e[ok] + 1.0, n[ok] - e[ok], 1.0 - cf)
    out[n <= 0.0] = 0.0
    return out


def estimated_errors(tree: Tree, confidence_factor: float = 0.25,
                     method: str = "exact") -> np.ndarray:
    """``N * U_CF(E, N)`` of every node as a leaf (training weights, majority class)."""
    check_classification(tree, "pessimistic pruning")
    n = tree.weighted_n_node_samples
    e = n * (1.0 - tree.value[:, 0, :].max(axis=1))
    return n * u_cf(e, n, confidence_factor, method)


def pessimistic_prune(tree: Tree, confidence_factor: float = 0.25,
                      method: str = "exact") -> Tree:
    """The tree after C4.5's pessimistic pruning at ``confidence_factor`` (smaller CF prunes
    more); ``method`` picks the exact limit or Quinlan's approximation. Never adds nodes."""
    keep_leaf, _ = collapse_bottom_up(tree, estimated_errors(tree, confidence_factor, method),
                                      slack=C45_SLACK)
    return tree.subtree(keep_leaf)


class _Slot:
    """A node of the tree being pruned with subtree raising: the original node whose test it
    uses, its current children, and the training cases' class weights that reach it."""

    __slots__ = ("sid", "node", "kids", "dist", "cases", "count")

    def __init__(self, node: int, kids: list):
        self.sid = node  # the slot's own index (its original node): its row in flat state
        self.node = node
        self.kids = kids
        self.dist = None
        self.cases = 0.0
        self.count = 0


class _CaseRouter:
    """Sends training cases down a tree's tests as prediction does (missing values and levels
    unseen at a node follow ``missing_branch``; ``-1``: every branch with the branch's share of
    the node's training weight)."""

    def __init__(self, tree: Tree, X):
        self.tree = tree
        self.X = X.tocsc() if sp.issparse(X) else X
        self._columns: dict[int, np.ndarray] = {}

    def _column(self, f: int) -> np.ndarray:
        # Sparse X: each used feature densified once (float32, like the tree's comparisons).
        if f not in self._columns:
            self._columns[f] = np.asarray(self.X[:, [f]].toarray(), dtype=np.float32).ravel()
        return self._columns[f]

    def assign(self, node: int, rows: np.ndarray, wts: np.ndarray):
        """The node's cases by branch: ``(rows, weights, branch, bounds)`` of the cases with
        a branch, sorted stably by it (branch ``k`` holds ``[bounds[k], bounds[k + 1])``,
        in the given order), then ``(rows, weights)`` of the cases that go to every branch
        (missing value at a fractional node) and the branches' shares of the node's weight.

        One stable sort instead of one mask per branch: a node with a thousand branches
        (C4.5 on a many-level column) made the masks quadratic."""
        t = self.tree
        kids = t.branch_child[t.branch_ptr[node]:t.branch_ptr[node + 1]]
        f = int(t.feature[node])
        x = (self._column(f)[rows] if sp.issparse(self.X) else self.X[rows, f]
             ).astype(np.float64)
        missing = np.isnan(x)
        c0, c1 = t.cat_ptr[node], t.cat_ptr[node + 1]
        if c1 > c0:
            code = np.where(missing, -1, x).astype(np.int64)
            ok = (code >= 0) & (code < c1 - c0)
            b = np.full(rows.shape[0], -1, dtype=np.int64)
            b[ok] = t.cat_branch[c0 + code[ok]]
            missing = b < 0
        else:
            b = np.where(x <= t.threshold[node], 0, 1)
        mb = t.missing_branch[node]
        if mb >= 0:
            b = np.where(missing, mb, b)
            missing = np.zeros(rows.shape[0], dtype=bool)
        share = t.weighted_n_node_samples[kids]
        share = share / share.sum() if share.sum() > 0 else np.full(kids.size, 1.0 / kids.size)
        known = ~missing
        kb = b[known]
        order = np.argsort(kb, kind="stable")
        bounds = np.zeros(kids.size + 1, dtype=np.int64)
        bounds[1:] = np.cumsum(np.bincount(kb, minlength=kids.size))
        return (rows[known][order], wts[known][order], kb[order], bounds, rows[missing],
                wts[missing], share)


@njit
def _leaf_dists(X, codes, rows, wts, start, node, leaf, feature, threshold, bptr, bchild, cptr,
                cbranch, mbranch, share, dist, mark, touched, ss, sw):
    """Route the cases ``rows`` (weights ``wts``) from slot ``start`` down the slots' current
    tree, as :class:`_CaseRouter` does, and add their class weights to ``dist[leaf slot]``.

    Slot ``s`` uses the test of original node ``node[s]`` (its children are the slots of
    that node's children) unless ``leaf[s]``. Returns how many leaf slots were reached, their
    ids in ``touched`` (flagged in ``mark``); ``ss``/``sw`` are a stack of (slot, weight).
    """
    n_t = 0
    for q in range(rows.shape[0]):
        r = rows[q]
        ss[0] = start
        sw[0] = wts[q]
        top = 1
        while top > 0:
            top -= 1
            s = ss[top]
            w = sw[top]
            if leaf[s]:
                if not mark[s]:
                    mark[s] = True
                    touched[n_t] = s
                    n_t += 1
                dist[s, codes[r]] += w
                continue
            nd = node[s]
            x = np.float64(X[r, feature[nd]])
            miss = np.isnan(x)
            b = -1
            c0 = cptr[nd]
            c1 = cptr[nd + 1]
            if c1 > c0:
                if not miss:
                    code = np.int64(x)
                    if 0 <= code < c1 - c0:
                        b = cbranch[c0 + code]
                miss = b < 0  # a level the node never saw goes as missing
            elif not miss:
                b = 0 if x <= threshold[nd] else 1
            if miss:
                if mbranch[nd] >= 0:
                    b = mbranch[nd]
                else:
                    for k in range(bptr[nd], bptr[nd + 1]):
                        c = bchild[k]
                        ss[top] = c
                        sw[top] = w * share[c]
                        top += 1
                    continue
            ss[top] = bchild[bptr[nd] + b]
            sw[top] = w
            top += 1
    return n_t


def pessimistic_prune_cases(tree: Tree, X: np.ndarray, codes: np.ndarray, w: np.ndarray,
                            criterion: int, confidence_factor: float = 0.25,
                            method: str = "exact", raising: bool = True) -> Tree:
    """C4.5's pessimistic pruning driven by the training cases, with subtree raising.

    Quinlan's procedure: bottom-up, a node's cases are counted at every node of its subtree
    (class distributions recomputed from the cases that reach each node); the node becomes a
    leaf if the leaf's estimated errors are at most those of the subtree (+0.1); otherwise,
    with ``raising``, the subtree of its most used branch replaces it when that branch's
    estimated errors on *all* the node's cases are at most the subtree's (+0.1), and the
    raised subtree is examined again with those cases. Without ``raising`` this is
    :func:`pessimistic_prune` (computed from the cases instead of the stored counts).

    ``X`` is the encoded training matrix the tree routes, ``codes`` the class codes, ``w`` the
    case weights; ``criterion`` (a code of :mod:`treelearn.engine.criteria`) recomputes the node
    impurities of the new tree.
    """
    import sys

    from ..engine.criteria import node_impurity

    check_classification(tree, "pessimistic pruning")
    u_cf(0, 1, confidence_factor, method)  # validates the arguments
    cf = float(confidence_factor)

    def u_one(e: float, n: float) -> float:
        """:func:`u_cf` of one leaf without NumPy's per-call overhead (same branches)."""
        if method != "exact":
            return float(u_cf(e, n, confidence_factor, method))
        e = max(e, 0.0)
        if n <= 0.0:
            return 0.0
        if n - e <= 1e-12:
            return 1.0
        return float(betaincinv(e + 1.0, n - e, 1.0 - confidence_factor))

    K = tree.value.shape[2]
    router = _CaseRouter(tree, X)
    ptr, bc = tree.branch_ptr, tree.branch_child
    slots = [_Slot(i, []) for i in range(tree.node_count)]
    plist, clist = ptr.tolist(), bc.tolist()  # Python ints: no NumPy scalar per node
    for i, slot in enumerate(slots):
        slot.kids = [slots[c] for c in clist[plist[i]:plist[i + 1]]]

    # Subtree raising asks, at every node, what the most used branch's subtree would err on
    # all the node's cases: a walk of that subtree with every case. In Python (one NumPy pass
    # per node and case subset) that made raising ~19x slower than pruning without it at 50k
    # rows; the walk is compiled for dense X (state: each slot's test node and leaf flag).
    dense = not sp.issparse(X)
    if dense:
        Xd = np.ascontiguousarray(X, dtype=np.float32)
        n = tree.node_count
        node_of = np.arange(n, dtype=np.int64)
        is_leaf = tree.children_left == -1
        share = np.ones(n)
        for i in np.flatnonzero(~is_leaf):
            kids = bc[ptr[i]:ptr[i + 1]]
            tot = tree.weighted_n_node_samples[kids].sum()
            share[kids] = tree.weighted_n_node_samples[kids] / tot if tot > 0 else 1.0 / kids.size
        dist_buf = np.zeros((n, K))
        mark = np.zeros(n, dtype=np.bool_)
        touched = np.zeros(n, dtype=np.int64)
        ss = np.zeros(n + 1, dtype=np.int64)
        sw = np.zeros(n + 1)
        codes64 = np.asarray(codes, dtype=np.int64)
        targs = (tree.feature.astype(np.int64), tree.threshold, ptr.astype(np.int64),
                 bc.astype(np.int64), tree.cat_ptr.astype(np.int64),
                 tree.cat_branch.astype(np.int64), tree.missing_branch.astype(np.int64), share)

    def walk(slot: _Slot, rows, wts) -> float:
        """The estimated errors of ``slot``'s current subtree on the cases, unchanged."""
        if not dense:
            return estimate(slot, rows, wts, False)
        n_t = _leaf_dists(Xd, codes64, rows, wts, slot.sid, node_of, is_leaf, *targs, dist_buf,
                          mark, touched, ss, sw)
        t = touched[:n_t]
        d = dist_buf[t]
        cases = d.sum(axis=1)
        errors = np.where(cases > 0, cases - d.max(axis=1), 0.0)
        dist_buf[t] = 0.0
        mark[t] = False
        return float((cases * _u_limit(errors, cases, cf, method)).sum())

    def estimate(slot: _Slot, rows, wts, update: bool) -> float:
        dist = np.bincount(codes[rows], weights=wts, minlength=K)
        cases = float(dist.sum())
        errors = cases - float(dist.max()) if cases > 0 else 0.0
        leaf = cases * u_one(errors, cases)
        if update:
            slot.dist, slot.cases, slot.count = dist, cases, int((wts > 0).sum())
        if not slot.kids:
            return leaf
        kr, kw, kb, bounds, mr, mw, share = router.assign(slot.node, rows, wts)
        nk = share.size
        # Every branch's class weights in one pass: the leaves among the children (most
        # nodes of a fully grown tree) need nothing else. Same sums as a bincount per
        # branch: its cases in order, then its share of the missing ones.
        owner, keys, weights = kb, kb * K + codes[kr], kw
        if mr.size:
            wm = share[:, None] * mw[None, :]
            owner = np.concatenate([kb, np.repeat(np.arange(nk), mr.size)])
            keys = np.concatenate([keys, (np.arange(nk)[:, None] * K
                                          + codes[mr][None, :]).ravel()])
            weights = np.concatenate([kw, wm.ravel()])
        dists = np.bincount(keys, weights=weights, minlength=nk * K).reshape(nk, K)
        n_pos = np.bincount(owner, weights=weights > 0, minlength=nk).astype(np.int64).tolist()
        kid_cases = dists.sum(axis=1)
        kid_errors = np.where(kid_cases > 0, kid_cases - dists.max(axis=1), 0.0)
        kid_leaf = kid_cases * _u_limit(kid_errors, kid_cases, cf, method)
        subtree = 0.0
        for k, kid in enumerate(slot.kids):
            if kid.kids:
                r, ww = kr[bounds[k]:bounds[k + 1]], kw[bounds[k]:bounds[k + 1]]
                if mr.size:
                    r = np.concatenate([r, mr])
                    ww = np.concatenate([ww, wm[k]])
                subtree += estimate(kid, r, ww, update)
                continue
            if update:
                kid.dist, kid.cases, kid.count = dists[k], float(kid_cases[k]), n_pos[k]
            subtree += float(kid_leaf[k])
        if not update:
            return subtree
        branch = np.inf
        if raising:
            big = int(np.argmax(np.bincount(owner, weights=weights, minlength=nk)))
            branch = walk(slot.kids[big], rows, wts)
        if leaf <= branch + C45_SLACK and leaf <= subtree + C45_SLACK:
            slot.kids = []
            if dense:
                is_leaf[slot.sid] = True
            return leaf
        if branch <= subtree + C45_SLACK:
            child = slot.kids[big]
            slot.node, slot.kids = child.node, child.kids
            if dense:
                node_of[slot.sid] = node_of[child.sid]
                is_leaf[slot.sid] = is_leaf[child.sid]
            return estimate(slot, rows, wts, True)
        return subtree

    keep = w > 0
    rows = np.flatnonzero(keep)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 4 * tree.max_depth + 1000))
    try:
        estimate(slots[0], rows, np.asarray(w, dtype=np.float64)[rows], True)
    finally:
        sys.setrecursionlimit(old_limit)
    return _slots_to_tree(tree, slots[0], criterion, node_impurity)


def _slots_to_tree(tree: Tree, root: _Slot, criterion: int, node_impurity) -> Tree:
    """The flat tree of the pruned slots, numbered in preorder, counts from the cases."""
    order, parent_value = [], {}
    stack = [(root, None)]
    while stack:
        s, pv = stack.pop()
        order.append(s)
        parent_value[id(s)] = pv
        own = s.dist / s.cases if s.cases > 0 else pv
        stack.extend((k, own) for k in reversed(s.kids))
    ids = {id(s): i for i, s in enumerate(order)}
    n = len(order)
    K = tree.value.shape[2]
    left = np.full(n, -1, dtype=np.intp)
    right = np.full(n, -1, dtype=np.intp)
    feature = np.full(n, -2, dtype=np.intp)
    threshold = np.full(n, -2.0)
    impurity = np.zeros(n)
    n_samples = np.zeros(n, dtype=np.intp)
    weight = np.zeros(n)
    value = np.zeros((n, K))
    missing = np.full(n, -2, dtype=np.intp)
    seen = np.zeros(n, dtype=np.bool_)
    ptr, kids, cptr, cats = [0], [], [0], []
    for i, s in enumerate(order):
        pv = parent_value[id(s)]
        value[i] = s.dist / s.cases if s.cases > 0 else (pv if pv is not None
                                                          else tree.value[s.node, 0])
        weight[i], n_samples[i] = s.cases, s.count
        impurity[i] = node_impurity(value[i] * s.cases, s.cases, criterion) if s.cases else 0.0
        if s.kids:
            ch = [ids[id(k)] for k in s.kids]
            left[i], right[i] = ch[0], ch[-1]
            feature[i], threshold[i] = tree.feature[s.node], tree.threshold[s.node]
            missing[i] = tree.missing_branch[s.node]
            seen[i] = tree.missing_seen[s.node]
            kids.extend(ch)
            cats.extend(tree.cat_branch[tree.cat_ptr[s.node]:tree.cat_ptr[s.node + 1]].tolist())
        ptr.append(len(kids))
        cptr.append(len(cats))
    return Tree(tree.n_features, tree.n_classes, left, right, feature, threshold, impurity,
                n_samples, weight, value, branch_ptr=ptr, branch_child=kids, cat_ptr=cptr,
                cat_branch=np.asarray(cats, dtype=np.intp), missing_branch=missing,
                missing_seen=seen)
