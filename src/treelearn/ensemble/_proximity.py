"""Forest proximities, the outlier score built on them, and their scaling coordinates.

Breiman (2001) and Breiman & Cutler's random forest manual ("Random forests", section
"Proximities"): the proximity of two rows is the share of the trees in which both land in the
same leaf. It is what the forest "thinks alike": Breiman and Cutler use it to find outliers,
to fill in missing values, and to draw the data (scaling coordinates, the metric MDS of
``1 - proximity``).

Why the results take the forms they do:

* ``proximities(X, Y)`` is an ``(n, m)`` matrix; dense it needs ``8 n m`` bytes (800 MB for
  10k x 10k rows). So by default (``top_k="auto"``) it is dense up to
  :data:`AUTO_DENSE_CELLS` cells and otherwise a sparse matrix of each row's
  :data:`AUTO_TOP_K` largest proximities (Breiman and Cutler's own programs keep the largest
  proximities of each row for large data, for the same reason). Both are computed from
  the leaf lists of :mod:`treelearn.engine.leaves`: the work is the number of row pairs
  that share a leaf, not ``n m T``.
* Proximities count every tree and every row (in-bag and out-of-bag), as Breiman's original
  forests and R's ``randomForest(proximity=TRUE)`` do for the training data.
* The outlier score is Breiman and Cutler's: for row ``n`` of class ``j``,
  ``P(n) = sum_k prox(n, k)**2`` over the other rows ``k`` of class ``j``; the raw measure
  ``n_rows / P(n)``; then, within each class, its median subtracted and the result divided
  by the median absolute deviation. A row that shares no leaf with any row of its class has
  ``P(n) = 0`` and the score ``inf``. Without ``y`` (regression, unsupervised use) all rows
  form one class.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .._interrupt import check as check_interrupt
from .._memory import check as check_memory
from ..engine.config import get_num_threads
from ..engine.leaves import rows_by_leaf, shared_leaf_counts, top_shared_leaf_counts

#: ``top_k="auto"`` returns a dense matrix up to this many cells (200 MB of float64).
AUTO_DENSE_CELLS = 25_000_000
#: ... and otherwise each row's this many largest proximities.
AUTO_TOP_K = 100
#: Scaling coordinates of more rows than this use Lanczos iterations (scipy's ``eigsh``):
#: the full eigendecomposition of 10k rows takes minutes.
EIGSH_FROM = 1500


def _resolve_top_k(top_k, n: int, m: int) -> int | None:
    if top_k == "auto":
        return None if n * m <= AUTO_DENSE_CELLS else AUTO_TOP_K
    if top_k is None:
        return None
    if isinstance(top_k, Integral) and not isinstance(top_k, bool) and top_k >= 1:
        return int(top_k)
    raise ValueError(f"top_k must be 'auto', None (dense) or a positive int; got {top_k!r}.")


def leaf_lists(leaves: np.ndarray):
    """``(offsets, sizes, ptr, rows)``: the rows of ``leaves`` (m, T), as ``apply`` gives
    them, listed leaf by leaf (:func:`treelearn.engine.leaves.rows_by_leaf`)."""
    leaves = np.ascontiguousarray(leaves, dtype=np.int64)
    sizes = leaves.max(axis=0) + 1 if leaves.shape[0] else np.zeros(leaves.shape[1], np.int64)
    offsets = np.zeros(leaves.shape[1], np.int64)
    np.cumsum(sizes[:-1], out=offsets[1:])
    ptr, rows = rows_by_leaf(leaves, offsets, int(sizes.sum()))
    return offsets, sizes.astype(np.int64), ptr, rows


def proximity_matrix(lx: np.ndarray, ly: np.ndarray | None, top_k):
    """Proximities of the rows with leaves ``lx`` (n, T) to those with ``ly`` (m, T; None:
    the same rows): dense ``(n, m)`` or, with ``top_k``, CSR with each row's ``top_k``
    largest (see the module notes)."""
    same = ly is None
    ly = lx if same else ly
    n, T = lx.shape
    m = ly.shape[0]
    k = _resolve_top_k(top_k, n, m)
    offsets, sizes, ptr, rows = leaf_lists(ly)
    lx = np.ascontiguousarray(lx, dtype=np.int64)
    parts = get_num_threads()
    step = max(1, 2_000_000 // max(T, 1))  # rows per call: a Ctrl-C is taken between calls
    if k is None:
        check_memory(8.0 * n * m, f"A dense proximity matrix of {n:,} x {m:,} rows",
                     "Pass top_k=100 (a sparse matrix of each row's largest proximities).")
        out = np.zeros((n, m))
        for a in range(0, n, step):
            shared_leaf_counts(lx[a:a + step], offsets, sizes, ptr, rows, parts,
                               out[a:a + step])
            check_interrupt()
        out /= T
        return out
    k = min(k, m)
    check_memory(16.0 * n * k, f"The {k} largest proximities of {n:,} rows",
                 "Pass a smaller top_k.")
    top_rows = np.zeros((n, k), np.int64)
    top_counts = np.zeros((n, k), np.int64)
    nnz = np.zeros(n, np.int64)
    for a in range(0, n, step):
        b = min(n, a + step)
        top_shared_leaf_counts(lx[a:b], offsets, sizes, ptr, rows, m, k, parts,
                               top_rows[a:b], top_counts[a:b], nnz[a:b])
        check_interrupt()
    keep = np.arange(k)[None, :] < nnz[:, None]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(nnz, out=indptr[1:])
    return sp.csr_matrix((top_counts[keep] / T, top_rows[keep].astype(np.int32), indptr),
                         shape=(n, m))


def outlier_scores_from(P, groups: np.ndarray) -> np.ndarray:
    """Breiman and Cutler's outlier score (module notes) from the proximities ``P`` of the
    rows among themselves (dense or sparse, diagonal included) and each row's class code."""
    n = groups.shape[0]
    if sp.issparse(P):
        C = P.tocoo()
        keep = (groups[C.row] == groups[C.col]) & (C.row != C.col)
        pbar = np.bincount(C.row[keep], weights=C.data[keep] ** 2, minlength=n)
    else:
        pbar = np.zeros(n)
        for g in np.unique(groups):
            idx = np.flatnonzero(groups == g)
            block = P[np.ix_(idx, idx)]
            pbar[idx] = (block ** 2).sum(axis=1) - np.diagonal(block) ** 2
    with np.errstate(divide="ignore"):
        raw = np.where(pbar > 0, n / np.where(pbar > 0, pbar, 1.0), np.inf)
    out = np.empty(n)
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        r = raw[idx]
        finite = r[np.isfinite(r)]
        if finite.size == 0:
            out[idx] = np.inf
            continue
        med = np.median(finite)
        mad = np.median(np.abs(finite - med))
        if mad == 0.0:
            mad = np.mean(np.abs(finite - med))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[idx] = np.where(np.isfinite(r), (r - med) / (mad if mad > 0 else 1.0), np.inf)
    return out


def scaling_coordinates(P, n_components: int = 2) -> np.ndarray:
    """Breiman and Cutler's scaling coordinates: classical (metric) multidimensional scaling
    of the squared distances ``1 - P`` (``P`` dense, the rows' proximities among
    themselves). Returns ``(n, n_components)``, the leading eigenvectors of the doubly
    centred matrix scaled by the square roots of their eigenvalues (components with a
    non-positive eigenvalue are zero)."""
    P = np.asarray(P, dtype=np.float64)
    n = P.shape[0]
    if P.shape != (n, n):
        raise ValueError(f"scaling_coordinates needs a square proximity matrix; got {P.shape}.")
    if not 1 <= n_components < max(n, 2):
        raise ValueError(f"n_components must be in [1, {max(n - 1, 1)}]; got {n_components}.")
    # -1/2 J D2 J with D2 = 1 - P is 1/2 J P J: the constant 1 vanishes under the centring J
    B = P - P.mean(axis=0, keepdims=True)
    B -= B.mean(axis=1, keepdims=True)
    B = 0.25 * (B + B.T)  # the 1/2, and exactly symmetric for eigh
    if n > EIGSH_FROM and n_components < n - 1:
        # Lanczos: a few products with B instead of the full O(n**3) decomposition
        from scipy.sparse.linalg import eigsh

        v0 = np.random.RandomState(0).uniform(-1.0, 1.0, n)
        vals, vecs = eigsh(B, k=n_components, which="LA", v0=v0)
    else:
        vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:n_components]
    vals = vals[order]
    vecs = vecs[:, order]
    # a fixed sign per component: the largest |entry| positive
    flip = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(n_components)])
    vecs = vecs * np.where(flip == 0, 1.0, flip)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


class ProximityMixin:
    """Proximities and the outlier score, for every forest and bagging (module notes)."""

    def proximities(self, X, Y=None, *, top_k="auto"):
        """Breiman's proximities: the share of the trees in which a row of ``X`` and a row of
        ``Y`` land in the same leaf.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        Y : array-like or DataFrame of shape (m_samples, n_features), default=None
            The rows to compare with (None: ``X`` itself; the diagonal is then 1).
        top_k : "auto", int or None, default="auto"
            None: a dense ``(n_samples, m_samples)`` array. An int: a
            ``scipy.sparse.csr_matrix`` keeping each row's ``top_k`` largest proximities
            (ties: the lower row of ``Y``). "auto": dense up to 25 million cells (200 MB),
            otherwise the 100 largest per row.

        Returns
        -------
        proximities : ndarray or scipy.sparse.csr_matrix of shape (n_samples, m_samples)
        """
        check_is_fitted(self, "estimators_")
        _resolve_top_k(top_k, 1, 1)
        lx = self.apply(X)
        ly = None if Y is None else self.apply(Y)
        return proximity_matrix(lx, ly, top_k)

    def outlier_scores(self, X, y=None, *, top_k="auto") -> np.ndarray:
        """Breiman and Cutler's outlier measure of each row of ``X`` among the rows of ``X``:
        large when a row's proximities to the other rows of its class are small (see
        :mod:`treelearn.ensemble._proximity`). Values above about 10 are the manual's
        "outliers"; ``inf`` for a row that shares no leaf with any row of its class.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Usually the training data.
        y : array-like of shape (n_samples,), default=None
            Class of each row (None: all rows one class, as for regression).
        top_k : "auto", int or None, default="auto"
            As for :meth:`proximities`: with an int the sums use each row's ``top_k``
            largest proximities only.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        P = self.proximities(X, top_k=top_k)
        n = P.shape[0]
        if y is None:
            groups = np.zeros(n, np.int64)
        else:
            y = np.asarray(y)
            if y.shape != (n,):
                raise ValueError(f"y must have one value per row of X ({n}); got shape "
                                 f"{y.shape}.")
            groups = np.unique(y, return_inverse=True)[1].ravel()
        return outlier_scores_from(P, groups)
