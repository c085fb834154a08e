"""Linear models at the nodes of a grown tree (M5), from per-node sufficient statistics.

Rows are sorted so that every node's training rows are one range (leaves in preorder); the
raw moment matrix ``Z = sum_i w_i z_i z_i^T`` of ``z = (x_1 .. x_q, 1, y)`` is accumulated
from the rows only at leaves and summed up the tree, children into parents, so no row is read
twice for statistics. A node's model uses a subset ``S`` of the ``q`` columns (the attributes
tested in its subtree, or on its path): its centred normal equations are the ``S`` block of
``Z`` minus the mean outer product, and they are solved with the sweep operator (Goodnight
1979), which also gives what attribute dropping needs: the residual sum of squares after the
sweep, and the increase ``b_j**2 / (C^-1)_jj`` of removing ``j`` (Seber & Lee, *Linear
Regression Analysis*, 3.7).

Processing is one pass over the nodes in postorder: statistics, model, attribute dropping,
and the pruning decision (the children's final estimates are known when their parent is
reached). Statistics live on a stack (the pending children of the nodes on the current
path), so memory is ``O(depth * q**2)`` whatever the tree's size.

Error estimates (``est_code``): ``EST_M5`` is Quinlan's and Witten & Frank's
``mean |residual| * (n + v) / (n - v)`` with ``v`` the model's parameters (intercept
included), the mean over at most :data:`ERROR_ROWS` of the node's rows taken at an even
stride (a bound on the work at large nodes; the estimate of a mean absolute value from 10,000
rows has a relative standard error near 1%); ``EST_WEKA`` is Weka's M5P,
``rmse * (n + 2 v) / (n - v)``, computed from the statistics alone. Both use 10 for the
factor when ``n <= v``, as Weka does.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit

EST_M5 = 0
EST_WEKA = 1
#: At most this many of a node's rows are read for a mean absolute residual.
ERROR_ROWS = 10_000
#: A column enters a model only if sweeping leaves it this much of its own variance: below,
#: it is (numerically) a combination of the columns already in, and the model does without it.
COLLINEAR_TOL = 1e-9
#: A column whose centred sum of squares at a node is below this fraction of its raw one is
#: constant there: centring in float64 leaves a few ulps of the raw sum (1e4 of margin).
ROUNDING_TOL = 1e-12


@njit
def allowed_features(parent, feature, is_leaf, n_features, subtree):
    """Per node, the features its model may use: those tested in its subtree (``subtree``)
    or on the path from the root to it (parents come before their children)."""
    n = parent.shape[0]
    out = np.zeros((n, n_features), dtype=np.bool_)
    if subtree:
        for i in range(n - 1, -1, -1):
            if not is_leaf[i]:
                out[i, feature[i]] = True
            p = parent[i]
            if p >= 0:
                for f in range(n_features):
                    if out[i, f]:
                        out[p, f] = True
    else:
        for i in range(1, n):
            p = parent[i]
            for f in range(n_features):
                out[i, f] = out[p, f]
            out[i, feature[p]] = True
    return out


@njit
def centred_rows(Xq, rows, w):
    """The model columns gathered into the order ``rows``, in float64, centred on their
    weighted means of known values, a missing value (NaN) set to 0 (the mean): ``(Xc, mu)``
    with ``mu`` the means (0 for a column without known values)."""
    n = rows.shape[0]
    q = Xq.shape[1]
    s = np.zeros(q)
    sw = np.zeros(q)
    for r in range(Xq.shape[0]):
        for j in range(q):
            x = Xq[r, j]
            if not math.isnan(x):
                s[j] += w[r] * np.float64(x)
                sw[j] += w[r]
    mu = np.zeros(q)
    for j in range(q):
        if sw[j] > 0.0:
            mu[j] = s[j] / sw[j]
    out = np.empty((n, q))
    for t in range(n):
        r = rows[t]
        for j in range(q):
            x = Xq[r, j]
            out[t, j] = 0.0 if math.isnan(x) else np.float64(x) - mu[j]
    return out, mu


@njit
def _depth_first(branch_ptr, branch_child, last_first):
    """Nodes depth-first, each before its subtree, its branches first to last (or last to
    first)."""
    n = branch_ptr.shape[0] - 1
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    top = 1
    stack[0] = 0
    k = 0
    while top > 0:
        top -= 1
        i = stack[top]
        order[k] = i
        k += 1
        nb = branch_ptr[i + 1] - branch_ptr[i]
        for u in range(nb):
            # pushed so that the branch to visit next is on top
            b = branch_ptr[i] + u if last_first else branch_ptr[i + 1] - 1 - u
            stack[top] = branch_child[b]
            top += 1
    return order


@njit
def preorder(branch_ptr, branch_child):
    """Nodes in preorder (first branch first) and the size of every node's subtree."""
    order = _depth_first(branch_ptr, branch_child, False)
    n = order.shape[0]
    size = np.ones(n, dtype=np.int64)
    # children come after their parents, so one backward pass sums the sizes
    for i in range(n - 1, -1, -1):
        for b in range(branch_ptr[i], branch_ptr[i + 1]):
            size[i] += size[branch_child[b]]
    return order, size


@njit
def postorder(branch_ptr, branch_child):
    """Nodes in postorder (children, first branch first, before their parent): the
    preorder that takes branches last to first, reversed."""
    return _depth_first(branch_ptr, branch_child, True)[::-1].copy()


@njit
def row_ranges(leaf, order, size):
    """Rows sorted by their leaf's preorder position, and each node's range ``[lo, hi)`` of
    that order (a node's leaves are consecutive in preorder)."""
    n_nodes = order.shape[0]
    pos = np.empty(n_nodes, dtype=np.int64)
    for k in range(n_nodes):
        pos[order[k]] = k
    count = np.zeros(n_nodes + 1, dtype=np.int64)
    for r in range(leaf.shape[0]):
        count[pos[leaf[r]] + 1] += 1
    for k in range(n_nodes):
        count[k + 1] += count[k]
    rows = np.empty(leaf.shape[0], dtype=np.int64)
    fill = count[:n_nodes].copy()
    for r in range(leaf.shape[0]):
        p = pos[leaf[r]]
        rows[fill[p]] = r
        fill[p] += 1
    lo = np.empty(n_nodes, dtype=np.int64)
    hi = np.empty(n_nodes, dtype=np.int64)
    for i in range(n_nodes):
        lo[i] = count[pos[i]]
        hi[i] = count[pos[i] + size[i]]
    return rows, lo, hi


@njit
def sweep(A, k, m, sign):
    """Sweep the symmetric matrix ``A`` on pivot ``k`` in place (Dempster's form: sweeping
    the pivots of a set ``S`` of ``[[C, c], [c', s]]`` leaves ``-C_SS^-1`` in the ``S`` block,
    the coefficients ``C_SS^-1 c`` in the last column and the residual sum of squares in the
    corner); ``sign=-1.0`` is the reverse sweep, which undoes a sweep on ``k`` (``sign=1.0``).
    Only the leading ``m x m`` block is read and written. ``A[k, k]`` must be nonzero."""
    d = A[k, k]
    for i in range(m):
        if i == k:
            continue
        aik = A[i, k]
        if aik == 0.0:
            continue
        f = aik / d
        for j in range(m):
            if j != k:
                A[i, j] -= f * A[k, j]
    for i in range(m):
        if i != k:
            A[i, k] = sign * A[i, k] / d
            A[k, i] = A[i, k]
    A[k, k] = -1.0 / d


@njit
def factor(n, v, penalty):
    """``(n + penalty * v) / (n - v)``, 10 when ``n <= v`` (Weka's convention)."""
    if n <= v:
        return 10.0
    return (n + penalty * v) / (n - v)


@njit
def _leaf_moments(Xc, yc, w, rows, lo, hi, Z):
    """``Z = sum w z z'`` over rows ``rows[lo:hi]``, ``z = (x, 1, y)`` (upper triangle summed,
    then mirrored)."""
    q = Xc.shape[1]
    m = q + 2
    z = np.empty(m)
    for a in range(m):
        for b in range(m):
            Z[a, b] = 0.0
    for t in range(lo, hi):
        r = rows[t]
        wr = w[r]
        for a in range(q):
            z[a] = Xc[r, a]
        z[q] = 1.0
        z[q + 1] = yc[r]
        for a in range(m):
            wa = wr * z[a]
            for b in range(a, m):
                Z[a, b] += wa * z[b]
    for a in range(m):
        for b in range(a):
            Z[a, b] = Z[b, a]


@njit
def _abs_error(Xc, yc, w, rows, lo, hi, cols, coef, n_in, icpt):
    """Weighted mean absolute residual of ``icpt + sum coef * x[cols]`` over an even stride
    of at most :data:`ERROR_ROWS` of the rows ``[lo, hi)``."""
    n = hi - lo
    step = 1.0
    m = n
    if n > ERROR_ROWS:
        m = ERROR_ROWS
        step = n / ERROR_ROWS
    s = 0.0
    sw = 0.0
    for t in range(m):
        r = rows[lo + int(t * step)]
        p = icpt
        for a in range(n_in):
            p += coef[a] * Xc[r, cols[a]]
        s += w[r] * abs(yc[r] - p)
        sw += w[r]
    return s / sw if sw > 0.0 else 0.0


@njit
def _model(Z, attr_row, Xc, yc, w, rows, lo, hi, n_count, alpha, est_code, drop, A, cols,
           incl, bcoef, B, coef, ccols):
    """Fit, and drop attributes from, the model of one node: the columns where ``attr_row``
    is set. Writes the coefficients (dense, length ``q``) to ``bcoef`` and returns
    ``(intercept, estimate)`` in the centred coordinates of ``Xc``/``yc``."""
    q = Xc.shape[1]
    W = Z[q, q]
    ym = Z[q, q + 1] / W
    s = 0
    for j in range(q):
        bcoef[j] = 0.0
        if attr_row[j]:
            cols[s] = j
            s += 1
    # centred normal equations of the candidate columns, y last
    for a in range(s + 1):
        ca = cols[a] if a < s else q + 1
        ma = Z[ca, q] / W
        for b in range(s + 1):
            cb = cols[b] if b < s else q + 1
            A[a, b] = Z[ca, cb] - W * ma * (Z[cb, q] / W)
    n_in = 0
    for a in range(s):
        incl[a] = False
        d0 = A[a, a]
        if alpha > 0.0:
            A[a, a] = d0 * (1.0 + alpha)
        # a column enters when it varies at the node beyond rounding (the centred sum of
        # squares against the raw one) and still has variance left after the columns in
        # (else it is a combination of them): otherwise the model does without it
        if d0 > ROUNDING_TOL * Z[cols[a], cols[a]] and \
                A[a, a] > COLLINEAR_TOL * d0 * (1.0 + alpha):
            sweep(A, a, s + 1, 1.0)
            incl[a] = True
            n_in += 1
    n = n_count
    penalty = 1.0 if est_code == EST_M5 else 2.0
    # the current model: coefficients and estimate (``B``, ``coef``, ``ccols``: scratch)
    est, raw, v = _estimate(A, s, incl, cols, Z, W, ym, Xc, yc, w, rows, lo, hi, n, penalty,
                            est_code, coef, ccols)
    if drop:
        while n_in > 0:
            best = -1
            best_inc = np.inf
            for a in range(s):
                if incl[a]:
                    inv_aa = -A[a, a]
                    inc = A[a, s] * A[a, s] / inv_aa if inv_aa > 0.0 else 0.0
                    if inc < best_inc:
                        best_inc = inc
                        best = a
            if best < 0:
                break
            for a in range(s + 1):
                for b in range(s + 1):
                    B[a, b] = A[a, b]
            sweep(A, best, s + 1, -1.0)
            incl[best] = False
            e2, raw2, v2 = _estimate(A, s, incl, cols, Z, W, ym, Xc, yc, w, rows, lo, hi, n,
                                     penalty, est_code, coef, ccols)
            if e2 <= est:
                est = e2
                raw = raw2
                v = v2
                n_in -= 1
            else:
                for a in range(s + 1):
                    for b in range(s + 1):
                        A[a, b] = B[a, b]
                incl[best] = True
                break
    icpt = ym
    for a in range(s):
        if incl[a]:
            b = A[a, s]
            bcoef[cols[a]] = b
            icpt -= b * (Z[cols[a], q] / W)
    return icpt, est, raw, v


@njit
def _estimate(A, s, incl, cols, Z, W, ym, Xc, yc, w, rows, lo, hi, n, penalty, est_code,
              coef, ccols):
    """Error estimate of the model of the swept columns of ``A``: ``(estimate, raw error,
    parameters)``, the raw error being the mean absolute residual (M5) or the root mean
    squared one (Weka)."""
    q = Xc.shape[1]
    v = 1
    for a in range(s):
        if incl[a]:
            v += 1
    f = factor(float(n), float(v), penalty)
    if est_code == EST_WEKA:
        # the corner holds the residual sum of squares of the swept columns (syy for none)
        raw = math.sqrt(max(A[s, s], 0.0) / W)
        return raw * f, raw, v
    icpt = ym
    k = 0
    for a in range(s):
        if incl[a]:
            coef[k] = A[a, s]
            ccols[k] = cols[a]
            icpt -= A[a, s] * (Z[cols[a], q] / W)
            k += 1
    raw = _abs_error(Xc, yc, w, rows, lo, hi, ccols, coef, k, icpt)
    return raw * f, raw, v


@njit
def fit_node_models(Xc, yc, w, rows, lo, hi, post, branch_ptr, branch_child, n_count, attr,
                    alpha, est_code, drop, prune, stack_cap):
    """Every node's model, and which nodes become leaves after M5's pruning.

    Parameters are the centred data (``Xc`` n x q, ``yc``, weights ``w``), the row order and
    node ranges of :func:`row_ranges`, the nodes in postorder, the tree's branches, the cases
    per node (``n`` of the estimates), ``attr`` (node x q, nonzero: the column may enter the
    node's model), the relative ridge ``alpha`` (each diagonal entry of the centred normal
    equations times ``1 + alpha``), the estimate code, and whether to drop attributes and to
    prune. Returns ``coef`` (node x q), ``icpt``, ``est`` (the node's final estimate: its
    model's if it ends as a leaf, its subtree's otherwise), ``model_est`` (its model's) and
    ``leafy`` (True: the node is a leaf of the pruned tree, or inside a pruned subtree).

    A subtree's estimate is its error on the node's rows (the sum of its leaves' residuals)
    times ``(n + p v) / (n - v)`` with ``v`` all its parameters: its leaves' models' and one
    per split (Weka's M5P); averaging the children's own estimates instead, leaves of one
    or two cases (error 0) make every subtree look better than any model above it.
    """
    n_nodes = post.shape[0]
    q = Xc.shape[1]
    m = q + 2
    coef = np.zeros((n_nodes, q))
    icpt = np.zeros(n_nodes)
    est = np.zeros(n_nodes)
    model_est = np.zeros(n_nodes)
    leafy = np.zeros(n_nodes, dtype=np.bool_)
    err_sum = np.zeros(n_nodes)
    params = np.zeros(n_nodes, dtype=np.int64)
    penalty = 1.0 if est_code == EST_M5 else 2.0
    stack = np.empty((stack_cap, m, m))
    top = 0
    A = np.empty((q + 1, q + 1))
    B = np.empty((q + 1, q + 1))
    cols = np.empty(q + 1, dtype=np.int64)
    ccols = np.empty(q + 1, dtype=np.int64)
    incl = np.empty(q + 1, dtype=np.bool_)
    scoef = np.empty(q + 1)
    for k in range(n_nodes):
        i = post[k]
        nb = branch_ptr[i + 1] - branch_ptr[i]
        if nb == 0:
            _leaf_moments(Xc, yc, w, rows, lo[i], hi[i], stack[top])
        else:
            # the children's statistics are the top nb entries: sum them into the first
            base = top - nb
            for c in range(base + 1, top):
                for a in range(m):
                    for b in range(m):
                        stack[base, a, b] += stack[c, a, b]
            top = base
        Wi = stack[top, q, q]
        icpt[i], model_est[i], raw, v = _model(stack[top], attr[i], Xc, yc, w, rows, lo[i],
                                               hi[i], n_count[i], alpha, est_code, drop, A,
                                               cols, incl, coef[i], B, scoef, ccols)
        top += 1
        # the model's error as a sum over the node's rows (absolute or squared residuals)
        msum = raw * Wi if est_code == EST_M5 else raw * raw * Wi
        if nb == 0:
            est[i] = model_est[i]
            err_sum[i] = msum
            params[i] = v
            leafy[i] = True
            continue
        # the subtree's error on the node's rows, penalised for all its parameters (each
        # leaf's model's and one per split), as Weka's M5P weighs a subtree
        ssum = 0.0
        sparams = 1
        for b in range(branch_ptr[i], branch_ptr[i + 1]):
            c = branch_child[b]
            ssum += err_sum[c]
            sparams += params[c]
        sraw = ssum / Wi if est_code == EST_M5 else math.sqrt(ssum / Wi)
        sub = sraw * factor(float(n_count[i]), float(sparams), penalty)
        if prune and model_est[i] <= sub:
            est[i] = model_est[i]
            err_sum[i] = msum
            params[i] = v
            leafy[i] = True
        else:
            est[i] = sub
            err_sum[i] = ssum
            params[i] = sparams
    return coef, icpt, est, model_est, leafy


@njit
def smooth_leaves(coef, icpt, parent, n_count, leaves, k):
    """Each leaf's model with its ancestors' folded in (Quinlan's smoothing): going up from
    the leaf, ``p = (n p + k q) / (n + k)`` with ``q`` the parent's model and ``n`` the cases
    of the node below; linear models combine coefficient by coefficient. ``k = 0`` keeps the
    leaf's own model."""
    q = coef.shape[1]
    out = np.empty((leaves.shape[0], q))
    out_i = np.empty(leaves.shape[0])
    for t in range(leaves.shape[0]):
        node = leaves[t]
        for j in range(q):
            out[t, j] = coef[node, j]
        c0 = icpt[node]
        if k > 0.0:
            while parent[node] >= 0:
                p = parent[node]
                n = float(n_count[node])
                for j in range(q):
                    out[t, j] = (n * out[t, j] + k * coef[p, j]) / (n + k)
                c0 = (n * c0 + k * icpt[p]) / (n + k)
                node = p
        out_i[t] = c0
    return out, out_i


@njit
def known_means(X, w, rows, lo, hi, nodes, cols, default):
    """Weighted mean of the known (non-NaN) values of columns ``cols`` of ``X`` over the
    rows of each node of ``nodes`` (``default[j]`` where a node has none): what M5' puts in
    place of a missing value when a node's model reads it."""
    out = np.empty((nodes.shape[0], cols.shape[0]))
    for t in range(nodes.shape[0]):
        i = nodes[t]
        for a in range(cols.shape[0]):
            s = 0.0
            sw = 0.0
            for u in range(lo[i], hi[i]):
                r = rows[u]
                x = X[r, cols[a]]
                if not math.isnan(x):
                    s += w[r] * np.float64(x)
                    sw += w[r]
            out[t, a] = s / sw if sw > 0.0 else default[a]
    return out


@njit
def linear_values(X, leaf, lin_ptr, lin_feature, lin_coef, lin_fill, lin_intercept, set_ptr,
                  set_code, set_one, out):
    """``out[i] = intercept + c_1 x_1 + c_2 x_2 + ...`` of row ``i``'s leaf, summed left to
    right from the intercept (the order the exporters write), a missing ``x`` replaced by the
    leaf's fill value; float32 ``X`` as the tree reads it. A categorical term reads the 0/1
    of the row's level in its set (a level not in it: the fill value)."""
    for i in range(X.shape[0]):
        node = leaf[i]
        v = lin_intercept[node]
        for t in range(lin_ptr[node], lin_ptr[node + 1]):
            x = np.float64(X[i, lin_feature[t]])
            if math.isnan(x):
                x = lin_fill[t]
            elif set_ptr[t + 1] > set_ptr[t]:
                code = int(x)
                x = lin_fill[t]
                for u in range(set_ptr[t], set_ptr[t + 1]):
                    if set_code[u] == code:
                        x = 1.0 if set_one[u] else 0.0
                        break
            v = v + lin_coef[t] * x
        out[i] = v
