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

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import betaincinv

from .._interrupt import check as check_interrupt
from .._tree import Tree
from .._tree import _branch_of as branch_of_value
from ..engine.columns import sparse_value
from ..engine.config import njit, noref, tiny
from ..engine.criteria import node_impurity
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


# --- U_CF in compiled code -------------------------------------------------------------
# The case-driven pruning decides at every node from U_CF of the leaves below it, so the
# limit must be computable inside the compiled loop, where SciPy's betaincinv is not. The
# regularized incomplete beta function is evaluated by its continued fraction (DLMF 8.17.22,
# modified Lentz), on the side of the mean where it converges fast (DLMF 8.17.4 for the
# other), and inverted by Newton's method kept inside a bisection bracket. Tests compare it
# with SciPy on random arguments.

_TINY = 1e-300


@noref
def _beta_cf(a: float, b: float, x: float) -> float:
    """``1 / (1 + d1 / (1 + d2 / (1 + ...)))`` of DLMF 8.17.22, by modified Lentz."""
    f = _TINY
    c = f
    d = 0.0
    for j in range(1, 20000):
        if j == 1:
            aj = 1.0
        else:
            i = j - 1  # d_i
            m = i // 2
            if i % 2 == 1:
                aj = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
            else:
                aj = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
        d = 1.0 + aj * d
        if abs(d) < _TINY:
            d = _TINY
        c = 1.0 + aj / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = c * d
        f *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return f


@noref
def _betainc(a: float, b: float, x: float, lbeta: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``; ``lbeta = ln B(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - lbeta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


@noref
def _lbeta(a: float, b: float) -> float:
    """``ln B(a, b)``. For a large argument ``lgamma(b) - lgamma(a + b)`` cancels (digits of
    ``lgamma(1e7) ~ 1.5e8`` lost), so that difference is taken from Stirling's series
    (DLMF 5.11.1, four terms), with ``log1p`` for the leading part."""
    if a > b:
        a, b = b, a
    if b < 100.0:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    c = a + b
    corr_b = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - 1.0 / (1680 * b * b)) / (b * b))
              / (b * b)) / b
    corr_c = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - 1.0 / (1680 * c * c)) / (c * c))
              / (c * c)) / c
    return (math.lgamma(a) - (b - 0.5) * math.log1p(a / b) - a * math.log(c) + a
            + corr_b - corr_c)


@noref
def _beta_quantile(a: float, b: float, p: float) -> float:
    """The ``x`` with ``I_x(a, b) = p`` (``a >= 1``, ``b > 0``, ``0 < p < 1``)."""
    if a == 1.0:  # I_x(1, b) = 1 - (1 - x)^b
        return -math.expm1(math.log1p(-p) / b)
    lbeta = _lbeta(a, b)
    lo = 0.0
    hi = 1.0
    x = a / (a + b)
    for _ in range(400):
        g = _betainc(a, b, x, lbeta) - p
        if g == 0.0:
            return x
        if g < 0.0:
            lo = x
        else:
            hi = x
        pdf = math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - lbeta)
        xn = x - g / pdf if pdf > 0.0 else -1.0
        if not lo < xn < hi:
            xn = 0.5 * (lo + hi)
        if abs(xn - x) <= 1e-15 * xn or hi - lo <= 1e-17:
            return xn
        x = xn
    return x


@noref
def _u_one(e: float, n: float, cf: float, z2: float, exact: bool) -> float:
    """:func:`u_cf` of one leaf (``exact``, or Quinlan's approximation with ``z2`` the
    squared normal deviate of ``cf``), same branches."""
    e = max(e, 0.0)
    if n <= 0.0:
        return 0.0
    if exact:
        if n - e <= 1e-12:
            return 1.0
        return _beta_quantile(e + 1.0, n - e, 1.0 - cf)
    u0 = 1.0 - math.exp(math.log(cf) / n)
    if e < 1e-6:
        return u0
    if e < 0.9999:
        return u0 + e * (_u_normal(1.0, n, z2) - u0)
    return _u_normal(e, n, z2)


@noref
def _u_normal(e: float, n: float, z2: float) -> float:
    h = e + 0.5
    if h >= n:
        return (e + 0.67 * (n - e)) / n
    return (h + z2 / 2 + math.sqrt(z2 * (h * (1 - h / n) + z2 / 4))) / (n + z2)


@tiny
def _x_at(X, sdata, sind, sptr, r, f) -> float:
    """``X[r, f]`` of the dense ``X``, or of the CSR matrix ``(sdata, sind, sptr)`` (sorted
    indices) when ``X`` is empty."""
    if X.shape[0] > 0:
        return np.float64(X[r, f])
    return np.float64(sparse_value(sptr, sind, sdata, r, f))


@noref
def _branch_of(X, sdata, sind, sptr, r, nd, feature, threshold, cptr, cbranch, mbranch):
    """The branch row ``r`` takes at original node ``nd``, as prediction routes it; -1:
    every branch, with its share (fractional)."""
    return branch_of_value(_x_at(X, sdata, sind, sptr, r, feature[nd]), nd, threshold, cptr,
                           cbranch, mbranch)


@noref
def _leaf_dists(X, sdata, sind, sptr, codes, ar, aw, off, m, start, node, leaf, feature,
                threshold, bptr, bchild, cptr, cbranch, mbranch, share, dist, mark, touched, ss,
                sw, n_t, skip_node, skip_branch):
    """Route the cases ``ar[off:off + m]`` (weights ``aw[...]``) from slot ``start`` down the
    slots' current tree and add their class weights to ``dist[leaf slot]``; with
    ``skip_node >= 0``, not the cases that take branch ``skip_branch`` at original node
    ``skip_node``.

    Slot ``s`` uses the test of original node ``node[s]`` (its children are the slots of
    that node's children) unless ``leaf[s]``. Returns how many leaf slots are listed in
    ``touched`` (the ``n_t`` already there, then those reached, flagged in ``mark``, in the
    order first reached); ``ss``/``sw`` are a stack of (slot, weight).
    """
    for q in range(off, off + m):
        r = ar[q]
        if skip_node >= 0 and _branch_of(X, sdata, sind, sptr, r, skip_node, feature,
                                         threshold, cptr, cbranch, mbranch) == skip_branch:
            continue
        ss[0] = start
        sw[0] = aw[q]
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
            b = _branch_of(X, sdata, sind, sptr, r, nd, feature, threshold, cptr, cbranch,
                           mbranch)
            if b < 0:
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


@noref
def _own_leaves(start, node, leaf, bptr, bchild, dist_out, dist, mark, touched, ss):
    """List the leaf slots of slot ``start``'s current subtree in ``touched`` (flagged in
    ``mark``) with their class weights from ``dist_out`` copied into ``dist``; returns how
    many."""
    n_t = 0
    ss[0] = start
    top = 1
    while top > 0:
        top -= 1
        s = ss[top]
        if leaf[s]:
            mark[s] = True
            touched[n_t] = s
            n_t += 1
            for k in range(dist.shape[1]):
                dist[s, k] = dist_out[s, k]
            continue
        nd = node[s]
        for k in range(bptr[nd], bptr[nd + 1]):
            ss[top] = bchild[k]
            top += 1
    return n_t


@tiny
def _deposit(r, wq, j, codes, kd, tot, npos, fill, ar, aw):
    """Case ``r`` with weight ``wq`` goes to branch ``j``: its class weights and totals, and
    its place in the branch's block of the arena when the branch is a subtree."""
    kd[j, codes[r]] += wq
    tot[j] += wq
    if wq > 0:
        npos[j] += 1
    if fill[j] >= 0:
        ar[fill[j]] = r
        aw[fill[j]] = wq
        fill[j] += 1


@tiny
def _leaf_estimate(dist, cf, z2, exact):
    """``(N * U_CF(E, N), N)`` of a leaf with class weights ``dist``."""
    cases = 0.0
    top = 0.0
    for k in range(dist.shape[0]):
        cases += dist[k]
        top = max(top, dist[k])
    errors = cases - top if cases > 0 else 0.0
    return cases * _u_one(errors, cases, cf, z2, exact), cases


@noref
def _route(X, sdata, sind, sptr, ar, off, m, nd, feature, threshold, cptr, cbranch, mbranch,
           br, cnt):
    """The branch of each case ``ar[off:off + m]`` at node ``nd`` into ``br`` (-1:
    fractional), the cases per branch into ``cnt``; returns how many are fractional."""
    n_miss = 0
    for q in range(m):
        b = _branch_of(X, sdata, sind, sptr, ar[off + q], nd, feature, threshold, cptr,
                       cbranch, mbranch)
        br[q] = b
        if b < 0:
            n_miss += 1
        else:
            cnt[b] += 1
    return n_miss


@noref
def _touched_estimate(dist, mark, touched, n_t, cf, z2, exact):
    """The summed leaf estimates of the ``n_t`` slots in ``touched`` (in that order), whose
    class weights are rows of ``dist``; clears those rows and flags for the next walk."""
    total = 0.0
    for q in range(n_t):
        t = touched[q]
        total += _leaf_estimate(dist[t], cf, z2, exact)[0]
        for k in range(dist.shape[1]):
            dist[t, k] = 0.0
        mark[t] = False
    return total


@njit
def _prune_cases(X, sdata, sind, sptr, codes, K, node, leaf, feature, threshold,
                 bptr, bchild, cptr, cbranch, mbranch, share, cf, z2, exact, raising, slack,
                 dist_out, cases_out, count_out, ar, aw, kv, koff, klen, frames, f_leaf, wdist,
                 mark, touched, ss, sw, gs, fret, budget):
    """Quinlan's case-driven pruning with subtree raising (see
    :func:`pessimistic_prune_cases`), on the flat slot state ``node``/``leaf`` (changed in
    place), writing each surviving slot's class weights, weight and case count.

    The recursion of the procedure runs on an explicit stack of frames (Numba's cache does
    not hold recursive functions): a frame's cases sit in the arena ``ar``/``aw`` below
    ``f_top[frame]``; routing a frame writes each internal child's cases above it (the
    branch's own cases in order, then the fractional ones), and ``kv`` collects the
    children's estimates, summed in branch order once all are known. The raised branch's
    estimate on all the node's cases starts, when no case is fractional at the node, from
    its leaves' class weights as its own cases left them, and walks only the other cases.

    Resumable: all state lives in the arguments (:func:`_prune_state`; ``gs`` holds the
    stack depth and whether the work is done, ``fret`` the last estimate), and a call stops
    at a frame boundary once it has routed about ``budget`` cases, so Python can take a
    Ctrl-C between calls. Returns the arena and the estimate tables, which grow by doubling.
    """
    f_s = frames[0]
    f_off = frames[1]
    f_m = frames[2]
    f_top = frames[3]
    f_kb = frames[4]
    f_j = frames[5]
    f_big = frames[6]
    f_nmiss = frames[7]
    dist = np.empty(K)
    depth = gs[0]
    ret = fret[0]
    work = 0
    while depth >= 0:
        if work >= budget:
            gs[0] = depth
            fret[0] = ret
            return ar, aw, kv, koff, klen
        fr = depth
        s = f_s[fr]
        off = f_off[fr]
        m = f_m[fr]
        work += m + 1
        if f_j[fr] < 0:  # first visit (or again after raising): the node's own estimate
            for k in range(K):
                dist[k] = 0.0
            count = 0
            for q in range(off, off + m):
                dist[codes[ar[q]]] += aw[q]
                if aw[q] > 0:
                    count += 1
            leaf_est, cases = _leaf_estimate(dist, cf, z2, exact)
            for k in range(K):
                dist_out[s, k] = dist[k]
            cases_out[s] = cases
            count_out[s] = count
            if leaf[s]:
                ret = leaf_est
                depth -= 1
                if depth >= 0:
                    kv[f_kb[depth] + f_j[depth]] = ret
                    f_j[depth] += 1
                continue
            f_leaf[fr] = leaf_est
            nd = node[s]
            k0 = bptr[nd]
            nk = bptr[nd + 1] - k0
            br = np.empty(m, dtype=np.int64)
            cnt = np.zeros(nk, dtype=np.int64)
            n_miss = _route(X, sdata, sind, sptr, ar, off, m, nd, feature, threshold, cptr,
                            cbranch, mbranch, br, cnt)
            kd = np.zeros((nk, K))
            tot = np.zeros(nk)
            npos = np.zeros(nk, dtype=np.int64)
            kb = f_kb[fr]
            if kb + nk > kv.shape[0]:  # room for this node's children (doubling)
                size = max(kb + nk, 2 * kv.shape[0])
                kv2 = np.empty(size)
                koff2 = np.empty(size, dtype=np.int64)
                klen2 = np.empty(size, dtype=np.int64)
                for q in range(kv.shape[0]):
                    kv2[q] = kv[q]
                    koff2[q] = koff[q]
                    klen2[q] = klen[q]
                kv = kv2
                koff = koff2
                klen = klen2
            top = f_top[fr]
            for j in range(nk):  # where each internal child's cases go
                if leaf[bchild[k0 + j]]:
                    klen[kb + j] = -1
                else:
                    koff[kb + j] = top
                    klen[kb + j] = cnt[j] + n_miss
                    top += cnt[j] + n_miss
            if top > ar.shape[0]:  # room for the children's cases (doubling)
                size = max(top, 2 * ar.shape[0])
                ar2 = np.empty(size, dtype=np.int64)
                aw2 = np.empty(size)
                for q in range(ar.shape[0]):
                    ar2[q] = ar[q]
                    aw2[q] = aw[q]
                ar = ar2
                aw = aw2
            fill = np.empty(nk, dtype=np.int64)
            for j in range(nk):
                fill[j] = koff[kb + j] if klen[kb + j] >= 0 else -1
            for q in range(m):
                b = br[q]
                if b < 0:
                    continue
                _deposit(ar[off + q], aw[off + q], b, codes, kd, tot, npos, fill, ar, aw)
            if n_miss:
                for j in range(nk):
                    sh = share[bchild[k0 + j]]
                    for q in range(m):
                        if br[q] >= 0:
                            continue
                        _deposit(ar[off + q], aw[off + q] * sh, j, codes, kd, tot, npos, fill,
                                 ar, aw)
            for j in range(nk):
                c = bchild[k0 + j]
                if leaf[c]:
                    est, kc = _leaf_estimate(kd[j], cf, z2, exact)
                    kv[kb + j] = est
                    for k in range(K):
                        dist_out[c, k] = kd[j, k]
                    cases_out[c] = kc
                    count_out[c] = npos[j]
            f_big[fr] = np.argmax(tot)  # the first most used branch
            f_nmiss[fr] = n_miss
            f_j[fr] = 0
            # the children's frames put their cases and estimates above this frame's
            f_top[fr] = top
        nd = node[s]
        k0 = bptr[nd]
        nk = bptr[nd + 1] - k0
        kb = f_kb[fr]
        j = f_j[fr]
        while j < nk and klen[kb + j] < 0:
            j += 1
        f_j[fr] = j
        if j < nk:  # descend into the next internal child
            c = depth + 1
            f_s[c] = bchild[k0 + j]
            f_off[c] = koff[kb + j]
            f_m[c] = klen[kb + j]
            f_top[c] = f_top[fr]
            f_kb[c] = kb + nk
            f_j[c] = -1
            depth = c
            continue
        subtree = 0.0
        for q in range(nk):
            subtree += kv[kb + q]
        leaf_est = f_leaf[fr]
        branch_est = np.inf
        big = f_big[fr]
        if raising:
            c = bchild[k0 + big]
            skip = -1
            n_t = 0
            if f_nmiss[fr] == 0:
                # The raised branch's own cases are those its subtree was just estimated
                # with: its leaves hold their class weights, only the other branches' cases
                # need a walk (most of a node's cases take its most used branch).
                n_t = _own_leaves(c, node, leaf, bptr, bchild, dist_out, wdist, mark, touched,
                                  ss)
                skip = nd
            n_t = _leaf_dists(X, sdata, sind, sptr, codes, ar, aw, off, m, c,
                              node, leaf, feature, threshold, bptr, bchild, cptr, cbranch,
                              mbranch, share, wdist, mark, touched, ss, sw, n_t, skip, big)
            branch_est = _touched_estimate(wdist, mark, touched, n_t, cf, z2, exact)
            work += m
        if leaf_est <= branch_est + slack and leaf_est <= subtree + slack:
            leaf[s] = True
            ret = leaf_est
        elif branch_est <= subtree + slack:  # raise the branch, examine the node again
            c = bchild[k0 + big]
            node[s] = node[c]
            leaf[s] = leaf[c]
            f_j[fr] = -1
            f_top[fr] = off + m if fr == 0 else f_top[fr - 1]
            continue
        else:
            ret = subtree
        depth -= 1
        if depth >= 0:
            kv[f_kb[depth] + f_j[depth]] = ret
            f_j[depth] += 1
    gs[0] = depth
    gs[1] = 1
    fret[0] = ret
    return ar, aw, kv, koff, klen


#: Cases routed per call of :func:`_prune_cases` (~0.1 s), between Ctrl-C checks.
PRUNE_CHUNK = 5_000_000


def _prune_state(n: int, K: int, rows0: np.ndarray, w0: np.ndarray):
    """The arrays :func:`_prune_cases` keeps its state in: the arena holding the root's cases,
    the estimate tables, the frame stack (the root's frame set), and the scratch of the
    raising walks."""
    m0 = rows0.shape[0]
    size = max(2 * m0, 16)
    ar = np.empty(size, dtype=np.int64)
    aw = np.empty(size)
    ar[:m0] = rows0
    aw[:m0] = w0
    k = max(n, 16)
    tables = (np.empty(k), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64))
    frames = np.empty((8, n + 1), dtype=np.int64)
    frames[:, 0] = (0, 0, m0, m0, 0, -1, 0, 0)  # slot, offset, cases, top, kv base, branch
    scratch = (np.empty(n + 1), np.zeros((n, K)), np.zeros(n, dtype=np.bool_),
               np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64), np.empty(n + 1))
    return ar, aw, tables, frames, scratch


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

    ``X`` is the encoded training matrix the tree routes (dense or sparse), ``codes`` the
    class codes, ``w`` the case weights; ``criterion`` (a code of
    :mod:`treelearn.engine.criteria`) recomputes the node impurities of the new tree. The
    procedure runs compiled (:func:`_prune_cases`), ``U_CF`` included.
    """
    if tree.is_oblique:
        raise ValueError("pessimistic pruning from the training cases routes them by one "
                         "feature per node; an oblique tree is pruned from its stored counts "
                         "(subtree_raising=False).")
    check_classification(tree, "pessimistic pruning")
    u_cf(0, 1, confidence_factor, method)  # validates the arguments
    cf = float(confidence_factor)
    z2 = float(np.interp(cf, _C45_CF, _C45_Z)) ** 2
    K = tree.value.shape[2]
    n = tree.node_count
    ptr = tree.branch_ptr.astype(np.int64)
    bc = tree.branch_child.astype(np.int64)
    is_leaf = tree.children_left == -1
    share = np.ones(n)
    for i in np.flatnonzero(~is_leaf):
        kids = bc[ptr[i]:ptr[i + 1]]
        tot = tree.weighted_n_node_samples[kids].sum()
        share[kids] = tree.weighted_n_node_samples[kids] / tot if tot > 0 else 1.0 / kids.size
    if sp.issparse(X):
        Xc = sp.csr_matrix(X, copy=True)
        Xc.sort_indices()
        Xd = np.empty((0, 1), dtype=np.float32)
        sparse = (Xc.data.astype(np.float32), Xc.indices.astype(np.int64),
                  Xc.indptr.astype(np.int64))
    else:
        Xd = np.ascontiguousarray(X, dtype=np.float32)
        sparse = (np.empty(0, dtype=np.float32), np.empty(0, dtype=np.int64),
                  np.zeros(1, dtype=np.int64))
    w = np.asarray(w, dtype=np.float64)
    rows = np.flatnonzero(w > 0).astype(np.int64)
    node_of = np.arange(n, dtype=np.int64)
    dist = np.zeros((n, K))
    cases = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    ar, aw, (kv, koff, klen), frames, scratch = _prune_state(n, K, rows, w[rows])
    gs = np.zeros(2, dtype=np.int64)
    fret = np.zeros(1)
    fixed = (Xd, *sparse, np.asarray(codes, dtype=np.int64), K, node_of, is_leaf,
             tree.feature.astype(np.int64), tree.threshold, ptr, bc,
             tree.cat_ptr.astype(np.int64), tree.cat_branch.astype(np.int64),
             tree.missing_branch.astype(np.int64), share, cf, z2, method == "exact",
             bool(raising), C45_SLACK, dist, cases, count)
    while not gs[1]:
        ar, aw, kv, koff, klen = _prune_cases(*fixed, ar, aw, kv, koff, klen, frames,
                                              *scratch, gs, fret, PRUNE_CHUNK)
        check_interrupt()
    return _flat_to_tree(tree, node_of, is_leaf, dist, cases, count, criterion)


@njit
def _impurities(value, cases, criterion):
    out = np.zeros(cases.shape[0])
    for i in range(cases.shape[0]):
        if cases[i] != 0.0:
            out[i] = node_impurity(value[i] * cases[i], cases[i], criterion)
    return out


def _flat_to_tree(tree: Tree, node_of: np.ndarray, is_leaf: np.ndarray, dist: np.ndarray,
                  cases: np.ndarray, count: np.ndarray, criterion: int) -> Tree:
    """The pruned tree of the slot state (slot ``s``, one per original node, tests original
    node ``node_of[s]``
    unless ``is_leaf[s]``; its children are the slots of that node's children), numbered in
    preorder from slot 0, counts from the cases (a slot no case reached takes its nearest
    ancestor's class shares)."""
    ptr0, bc0 = tree.branch_ptr.tolist(), tree.branch_child.tolist()
    nof, lf = node_of.tolist(), is_leaf.tolist()
    order, parent, kids_of = [], [], []
    stack = [(0, -1)]
    while stack:
        s, p = stack.pop()
        i = len(order)
        order.append(s)
        parent.append(p)
        kids_of.append([])
        if p >= 0:
            kids_of[p].append(i)
        if not lf[s]:
            nd = nof[s]
            stack.extend((c, i) for c in reversed(bc0[ptr0[nd]:ptr0[nd + 1]]))
    o = np.asarray(order, dtype=np.int64)
    n = o.size
    nodes = node_of[o]
    weight = cases[o]
    value = np.zeros((n, tree.value.shape[2]))
    own = weight > 0
    value[own] = dist[o][own] / weight[own, None]
    for i in np.flatnonzero(~own).tolist():  # preorder: a parent's row is already final
        inherited = parent[i]
        while inherited >= 0 and not own[inherited]:
            inherited = parent[inherited]
        value[i] = value[inherited] if inherited >= 0 else tree.value[nodes[i], 0]
    internal = ~is_leaf[o]
    left = np.full(n, -1, dtype=np.intp)
    right = np.full(n, -1, dtype=np.intp)
    feature = np.full(n, -2, dtype=np.intp)
    threshold = np.full(n, -2.0)
    missing = np.full(n, -2, dtype=np.intp)
    seen = np.zeros(n, dtype=np.bool_)
    inner = nodes[internal]
    feature[internal] = tree.feature[inner]
    threshold[internal] = tree.threshold[inner]
    missing[internal] = tree.missing_branch[inner]
    seen[internal] = tree.missing_seen[inner]
    first = [k[0] if k else -1 for k in kids_of]
    last = [k[-1] if k else -1 for k in kids_of]
    left[:], right[:] = first, last
    n_kids = np.array([len(k) for k in kids_of], dtype=np.intp)
    ptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(n_kids, out=ptr[1:])
    kids = np.fromiter((c for k in kids_of for c in k), dtype=np.intp, count=int(ptr[-1]))
    c0 = tree.cat_ptr[nodes]
    n_cats = np.where(internal, tree.cat_ptr[nodes + 1] - c0, 0)
    cptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(n_cats, out=cptr[1:])
    take = np.repeat(c0 - cptr[:-1], n_cats) + np.arange(cptr[-1])
    cats = tree.cat_branch[take].astype(np.intp)
    impurity = _impurities(value, weight, criterion)
    return Tree(tree.n_features, tree.n_classes, left, right, feature, threshold, impurity,
                count[o].astype(np.intp), weight, value, branch_ptr=ptr, branch_child=kids,
                cat_ptr=cptr, cat_branch=cats, missing_branch=missing, missing_seen=seen)
