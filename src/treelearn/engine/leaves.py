"""Kernels over which rows share a leaf: forest proximities (and the leaf index they read).

Breiman's proximity of two rows is the share of a forest's trees in which they land in the
same leaf. Given every row's leaf in every tree (``apply``), the direct count compares every
pair of rows in every tree: ``n * m * T`` steps, 5 * 10^10 for 10k rows and 500 trees.
Here the rows of ``Y`` are first listed leaf by leaf (:func:`rows_by_leaf`, one counting
sort over the global leaf ids ``offsets[t] + leaf``); then each row of ``X`` visits, in every
tree, only the rows of its own leaf. The work is the number of pairs that do share a leaf,
which for fully grown trees is a few rows per leaf and tree.

Rows of ``X`` are split between threads; each writes its own rows of the output (no merge).
The top-k kernel keeps a count per row of ``Y`` for the row of ``X`` at hand, on its thread,
and resets only the entries it touched, so a row costs the pairs it shares, not ``m``.
"""

from __future__ import annotations

import numpy as np

from .config import njit, pjit, prange


@njit
def rows_by_leaf(leaves, offsets, total):
    """The rows of ``leaves`` (m, T) listed leaf by leaf: ``rows[ptr[g]:ptr[g + 1]]`` are the
    rows (ascending) whose leaf in tree ``t`` is ``leaves[r, t] = g - offsets[t]``.
    ``offsets[t]`` is tree ``t``'s first global id; ``total`` the number of global ids."""
    m, T = leaves.shape
    ptr = np.zeros(total + 1, np.int64)
    for r in range(m):
        for t in range(T):
            ptr[offsets[t] + leaves[r, t] + 1] += 1
    for g in range(total):
        ptr[g + 1] += ptr[g]
    fill = ptr[:total].copy()
    rows = np.empty(m * T, np.int32)
    for r in range(m):
        for t in range(T):
            g = offsets[t] + leaves[r, t]
            rows[fill[g]] = r
            fill[g] += 1
    return ptr, rows


@pjit
def shared_leaf_counts(lx, offsets, sizes, ptr, rows, n_parts, out):
    """``out[i, j] +=`` the number of trees in which row ``i`` of ``lx`` (n, T) and row ``j``
    of the listed rows share a leaf (``out`` (n, m) zeroed by the caller). A leaf of ``lx``
    beyond ``sizes[t]`` (no listed row reaches it) is skipped."""
    n, T = lx.shape
    per = (n + n_parts - 1) // n_parts
    for c in prange(n_parts):
        for i in range(c * per, min(n, (c + 1) * per)):
            for t in range(T):
                leaf = lx[i, t]
                if leaf < sizes[t]:
                    g = offsets[t] + leaf
                    for k in range(ptr[g], ptr[g + 1]):
                        out[i, rows[k]] += 1.0


@pjit
def top_shared_leaf_counts(lx, offsets, sizes, ptr, rows, m, k, n_parts,
                           top_rows, top_counts, nnz):
    """For each row ``i`` of ``lx``, the ``k`` listed rows (of ``m``) that share a leaf with
    it in the most trees, by count descending, then row ascending: ``top_rows[i, :nnz[i]]``
    and ``top_counts[i, :nnz[i]]``."""
    n, T = lx.shape
    per = (n + n_parts - 1) // n_parts
    for c in prange(n_parts):
        counts = np.zeros(m, np.int64)
        touched = np.empty(m, np.int64)
        keys = np.empty(m, np.int64)
        for i in range(c * per, min(n, (c + 1) * per)):
            nt = 0
            for t in range(T):
                leaf = lx[i, t]
                if leaf < sizes[t]:
                    g = offsets[t] + leaf
                    for q in range(ptr[g], ptr[g + 1]):
                        r = rows[q]
                        if counts[r] == 0:
                            touched[nt] = r
                            nt += 1
                        counts[r] += 1
            for q in range(nt):
                r = touched[q]
                # ascending keys: most trees first, then the lower row
                keys[q] = (T - counts[r]) * m + r
                counts[r] = 0
            nk = nt
            if nk > k:
                sel = np.sort(np.partition(keys[:nk], k - 1)[:k])
            else:
                sel = np.sort(keys[:nk])
            for q in range(sel.shape[0]):
                top_rows[i, q] = sel[q] % m
                top_counts[i, q] = T - sel[q] // m
            nnz[i] = sel.shape[0]
