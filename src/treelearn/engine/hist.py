"""The histogram splitter's kernels: bin matrix, histograms, summaries of bins, row moves.

**Bins.** Every feature is a column of small integers: a numeric feature's bin (quantile bins
of :class:`treelearn.engine.binning.Binner`, or one per value when it has few), a categorical
feature's level (its code; features with more than 255 levels take two bytes, the most
frequent 65,535 levels at most keep their own bin), and for both the *missing bin* right
after the value bins. The matrix is uint8, row-major (one row of a few dozen bytes per
sample), features with one byte first, two-byte ones after them, rows padded to a multiple of
eight bytes so that a row moves as a few words.

**Rows grouped by node.** Every open node owns a contiguous range of rows of one of two
buffers (its depth's parity); splitting copies the rows, stably, into the same range of the
other buffer, branch after branch, with their class codes or targets and weights. C4.5's
fractional cases (a row whose split value is missing) are copied into every child with their
share of the weight; such children go to fresh space at the end of the buffers (the arena).
Histograms are therefore built by reading memory sequentially, whatever the depth.

**Histograms** are flat: feature ``f`` owns rows ``hoff[f] .. hoff[f] + nbins[f]`` (the last
one the missing bin) of a ``(n_bins_total, H)`` array, so that a feature with 5 values costs
6 rows, not 256. Columns: the weight of each class (classification), or the weight, the
weighted sum of targets and, when asked, of squared targets (regression); with sample weights
one more column counts rows (for ``min_samples_leaf``). A node's histogram is the parent's
minus its siblings' (built from their rows, or subtracted row by row when they are small).

A feature's histogram becomes the per-level summary that :mod:`treelearn.engine.levels`
searches: bins present, in increasing order, and the missing bin apart.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import levels as lvl
from .bits import popcount
from .config import noref, pjit, prange, tiny
from .criteria import monotone_ok, proxy_two, split_proxy

#: The two row buffers of a fit (a node's rows are in the buffer of its depth's parity):
#: bins ``B0``/``B1``, class codes ``C``, targets ``R`` and weights ``W`` (None where the fit
#: has none), and each bin matrix seen as uint64 words ``V`` (a row moves as a few words).
#: Where each feature's bins are: :data:`treelearn.engine.binning.BinLayout`.
RowBuffers = namedtuple("RowBuffers", ("B0", "B1", "C0", "C1", "R0", "R1", "W0", "W1", "V0",
                                       "V1"))


@noref
def row_bin(B, i, col, wide):
    """The bin of row ``i`` of a feature stored at column ``col`` (two bytes when ``wide``)."""
    b = np.int64(B[i, col])
    if wide:
        b += np.int64(B[i, col + 1]) << 8
    return b


@noref
def hist_rows(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sign, sq):
    """Add (``sign`` +1) or remove (-1) rows ``[lo, hi)`` to ``hist`` (see module doc);
    ``sq``: regression histograms have the column of squared targets."""
    hist_rows_cols(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sign, sq, np.int64(0),
                   hoff.shape[0] - 1)


@tiny
def _add_class(hist, r, k, x, W, sign, cnt):
    """A row of class ``k`` and weight ``x`` into histogram row ``r`` (with weights, the row
    count column too)."""
    hist[r, k] += x
    if W is not None:
        hist[r, cnt] += sign


@tiny
def _add_target(hist, r, x, xy, xyy, sq, W, sign, cnt):
    """A row of weight ``x``, weighted target ``xy`` and squared target ``xyy`` into
    histogram row ``r``."""
    hist[r, 0] += x
    hist[r, 1] += xy
    if sq:
        hist[r, 2] += xyy
    if W is not None:
        hist[r, cnt] += sign


@noref
def narrow(fcol, fwide):
    """Whether every feature is one byte in its own column (``fcol[f] == f``; no category of
    over 255 levels), as in every table without such a category. Checked per call (p
    look-ups) by the kernels whose work is rows x features."""
    for f in range(fcol.shape[0]):
        if fwide[f] or fcol[f] != f:
            return False
    return True


@noref
def hist_rows_cols(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sign, sq, f0, f1):
    """:func:`hist_rows` for features ``f0 .. f1 - 1`` only (a small node's histogram is
    built one drawn feature at a time: a forest draws a few of many)."""
    if narrow(fcol, fwide):
        _hist_rows_narrow(B, C, R, W, lo, hi, hist, hoff, sign, sq, f0, f1)
        return
    H = hist.shape[1]
    cnt = H - 1
    for i in range(lo, hi):
        x = sign
        if W is not None:
            x = sign * W[i]
        if C is not None:
            k = C[i]
            for f in range(f0, f1):
                _add_class(hist, hoff[f] + row_bin(B, i, fcol[f], fwide[f] != 0), k, x, W,
                           sign, cnt)
        if R is not None:
            y = R[i]
            for f in range(f0, f1):
                _add_target(hist, hoff[f] + row_bin(B, i, fcol[f], fwide[f] != 0), x, x * y,
                            x * y * y, sq, W, sign, cnt)


@noref
def _hist_rows_narrow(B, C, R, W, lo, hi, hist, hoff, sign, sq, f0, f1):
    """:func:`hist_rows_cols` where every feature is one byte in its own column. Without the
    per-cell column and width look-ups, and with unsigned indices (a signed index costs a
    negative-index test per cell), 1M x 28 with two classes takes 0.055 s on one core and
    0.039 s on two, against 0.21 s and 0.11 s: most of the histogram splitter's slowdown on
    numeric data since tables joined the engine."""
    H = hist.shape[1]
    cnt = H - 1
    for i in range(lo, hi):
        x = sign
        if W is not None:
            x = sign * W[i]
        if C is not None:
            k = np.uint64(C[i])
            for f in range(f0, f1):
                _add_class(hist, np.uint64(hoff[f]) + np.uint64(B[i, f]), k, x, W, sign, cnt)
        if R is not None:
            y = R[i]
            xy = x * y
            xyy = xy * y
            for f in range(f0, f1):
                _add_target(hist, np.uint64(hoff[f]) + np.uint64(B[i, f]), x, xy, xyy, sq, W,
                            sign, cnt)


@noref
def hist_feature_rows(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sq, f, mask):
    """Add rows ``[lo, hi)`` to feature ``f``'s part of ``hist`` (zero there before) and mark
    the bins they fill in the bitmap ``mask`` (zero before; bit ``b`` of word ``b >> 6``), so
    that the search and the clearing visit the filled bins only."""
    H = hist.shape[1]
    cnt = H - 1
    col = fcol[f]
    wide = fwide[f] != 0
    base = hoff[f]
    for i in range(lo, hi):
        x = 1.0
        if W is not None:
            x = W[i]
        b = row_bin(B, i, col, wide)
        mask[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
        r = base + b
        if C is not None:
            hist[r, C[i]] += x
        if R is not None:
            y = R[i]
            xy = x * y
            hist[r, 0] += x
            hist[r, 1] += xy
            if sq:
                hist[r, 2] += xy * y
        if W is not None:
            hist[r, cnt] += 1.0


@noref
def mask_order(mask, n_bits, order):
    """The bins marked in ``mask`` (of ``n_bits``), increasing, into ``order``; clears the
    mask. Returns how many."""
    t = 0
    for w in range((n_bits + 63) >> 6):
        m = mask[w]
        mask[w] = np.uint64(0)
        while m != np.uint64(0):
            low = m & (~m + np.uint64(1))
            order[t] = (w << 6) + popcount(low - np.uint64(1))
            t += 1
            m ^= low
    return t


@noref
def clear_bins(hist, base, order, n_order):
    """Zero the histogram rows ``base + order[:n_order]``."""
    for j in range(n_order):
        r = base + order[j]
        for c in range(hist.shape[1]):
            hist[r, c] = 0.0


@noref
def zero(hist):
    """``hist[...] = 0`` as loops (array expressions pull in seconds of compilation)."""
    for r in range(hist.shape[0]):
        for c in range(hist.shape[1]):
            hist[r, c] = 0.0


@noref
def clear_rows(B, lo, hi, hist, hoff, fcol, fwide):
    """Zero the cells of ``hist`` that rows ``[lo, hi)`` touch (undoing :func:`hist_rows` on
    a histogram that was zero: a small node's cost stays proportional to its rows)."""
    clear_rows_cols(B, lo, hi, hist, hoff, fcol, fwide, np.int64(0), hoff.shape[0] - 1)


@noref
def clear_rows_cols(B, lo, hi, hist, hoff, fcol, fwide, f0, f1):
    """:func:`clear_rows` for features ``f0 .. f1 - 1`` only."""
    H = hist.shape[1]
    if narrow(fcol, fwide):
        for i in range(lo, hi):
            for f in range(f0, f1):
                r = hoff[f] + np.int64(B[i, f])
                for c in range(H):
                    hist[r, c] = 0.0
        return
    for i in range(lo, hi):
        for f in range(f0, f1):
            b = np.int64(B[i, fcol[f]])
            if fwide[f]:
                b += np.int64(B[i, fcol[f] + 1]) << 8
            r = hoff[f] + b
            for c in range(H):
                hist[r, c] = 0.0


@noref
def hist_node(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, sq):
    """``hist`` = the histogram of rows ``[lo, hi)``, on one thread."""
    zero(hist)
    hist_rows(B, C, R, W, lo, hi, hist, hoff, fcol, fwide, 1.0, sq)


@pjit
def hist_node_parallel(B, C, R, W, lo, hi, hist, priv, hoff, fcol, fwide, sq):
    """``hist`` = the histogram of rows ``[lo, hi)``: each thread fills a private histogram
    (``priv[t]``) from its share of the rows; they are then summed."""
    T = priv.shape[0]
    chunk = (hi - lo + T - 1) // T
    for t in prange(T):
        h = priv[t]
        zero(h)
        a = lo + t * chunk
        b = min(hi, a + chunk)
        if a < b:
            hist_rows(B, C, R, W, a, b, h, hoff, fcol, fwide, 1.0, sq)
    # Summing the private histograms serially costs less than a second parallel region.
    for r in range(hist.shape[0]):
        for c in range(hist.shape[1]):
            s = 0.0
            for t in range(T):
                s += priv[t, r, c]
            hist[r, c] = s


@noref
def subtract(parent, child):
    """``parent -= child``: the sibling's histogram, without reading its rows."""
    for r in range(parent.shape[0]):
        for c in range(parent.shape[1]):
            parent[r, c] -= child[r, c]


@noref
def summarize_hist(hist, f, hoff, nbins, classification, weighted, st, ws, iw, order, n_order):
    """The per-level summary of feature ``f`` from its histogram (bins with rows, in
    increasing order; with ``n_order >= 0`` only the bins ``order[:n_order]``, a small node's
    bins) into the levels module's workspace; the missing bin into ``st[SR_MISS]``. Returns
    ``(u, mw, mn)``."""
    S = st.shape[1]
    H = hist.shape[1]
    base = hoff[f]
    nb = nbins[f]
    u = 0
    n_it = nb if n_order < 0 else n_order
    for j in range(n_it):
        b = j if n_order < 0 else order[j]
        if b >= nb:
            break
        r = base + b
        if classification:
            wt = 0.0
            for k in range(S):
                wt += hist[r, k]
        else:
            wt = hist[r, 0]
        cnt = hist[r, H - 1] if weighted else wt
        if cnt <= 0.0:
            continue
        row = lvl.SR_ENTRIES + u
        if classification:
            for k in range(S):
                st[row, k] = hist[r, k]
        else:
            st[row, 0] = hist[r, 1]
            st[row, 1] = hist[r, 2] if H - (1 if weighted else 0) > 2 else 0.0
        ws[lvl.W_UW, u] = wt
        iw[lvl.I_UN, u] = np.int64(cnt + 0.5)
        iw[lvl.I_UCODE, u] = b
        u += 1
    r = base + nb
    if classification:
        mw = 0.0
        for k in range(S):
            st[lvl.SR_MISS, k] = hist[r, k]
            mw += hist[r, k]
    else:
        mw = hist[r, 0]
        st[lvl.SR_MISS, 0] = hist[r, 1]
        st[lvl.SR_MISS, 1] = hist[r, 2] if H - (1 if weighted else 0) > 2 else 0.0
    mc = hist[r, H - 1] if weighted else mw
    return u, mw, np.int64(mc + 0.5)


@tiny
def _bin_two(hist, r, classification, weighted, H):
    """A bin's two statistics, weight and row count as :func:`summarize_hist` computes them
    (same operations, so that sums round alike)."""
    if classification:
        s0 = hist[r, 0]
        s1 = hist[r, 1]
        wt = 0.0
        wt += s0
        wt += s1
    else:
        wt = hist[r, 0]
        s0 = hist[r, 1]
        s1 = hist[r, 2] if H - (1 if weighted else 0) > 2 else 0.0
    cnt = hist[r, H - 1] if weighted else wt
    return s0, s1, wt, cnt


@tiny
def _no_cut(out):
    """Reset the result slots a search fills (no cut yet)."""
    out[lvl.R_SCORE] = -np.inf
    out[lvl.R_REAL] = -np.inf
    out[lvl.R_GAIN] = -np.inf
    out[lvl.R_TRIES] = 0.0
    out[lvl.R_SPLITINFO] = 0.0


@tiny
def _cut(out, tries, best, best_b, best_next, best_nl, ntot):
    """Write the best cut (after bin ``best_b``; ``best_next`` the next bin with rows) as the
    summary search writes it; the missing branch is the side with more rows."""
    out[lvl.R_TRIES] = tries
    if best_b < 0:
        return
    out[lvl.R_SCORE] = best
    out[lvl.R_KIND] = lvl.KIND_NUMERIC
    out[lvl.R_NB] = 2
    out[lvl.R_MB] = 0 if best_nl > ntot - best_nl else 1
    out[lvl.R_LO] = best_b
    out[lvl.R_HI] = best_next


@noref
def scan_hist_two(hist, f, hoff, nbins, classification, weighted, crit, min_leaf, min_wleaf,
                  order, n_order, out, cst, lower, upper):
    """The best cut of numeric feature ``f`` straight from its histogram, for two statistics
    (two classes, or regression) under gini, entropy or squared error, when the node has no
    row with a missing value of ``f``: :func:`summarize_hist` followed by
    :func:`treelearn.engine.levels.search_summary` with the same operations in the same
    order (tests compare them), without copying the bins into a summary first. Bins are
    read in increasing order, all of them or (``n_order >= 0``) ``order[:n_order]``.

    Fills ``out`` like ``search_summary`` and returns whether the feature is usable (at
    least two bins hold rows). ``cst`` not 0: a monotonic constraint, the node's bounds
    ``[lower, upper]`` (:func:`treelearn.engine.criteria.monotone_ok`)."""
    H = hist.shape[1]
    base = hoff[f]
    nb = nbins[f]
    _no_cut(out)
    n_it = nb if n_order < 0 else n_order
    # totals over the present bins, in order (the summary's total row)
    t0 = 0.0
    t1 = 0.0
    wtot = 0.0
    ntot = 0
    u = 0
    for j in range(n_it):
        b = j if n_order < 0 else order[j]
        if b >= nb:
            break
        s0, s1, wt, cnt = _bin_two(hist, base + b, classification, weighted, H)
        if cnt <= 0.0:
            continue
        t0 += s0
        t1 += s1
        wtot += wt
        ntot += np.int64(cnt + 0.5)
        u += 1
    if u < 2:
        return False
    l0 = 0.0
    l1 = 0.0
    wl = 0.0
    nl = 0
    best = -np.inf
    best_b = -1
    best_next = -1
    best_nl = 0
    tries = 0
    e = 0
    pending = False
    for j in range(n_it):
        b = j if n_order < 0 else order[j]
        if b >= nb:
            break
        s0, s1, wt, cnt = _bin_two(hist, base + b, classification, weighted, H)
        if cnt <= 0.0:
            continue
        if pending:
            best_next = b
            pending = False
        if e == u - 1:
            break
        e += 1
        l0 += s0
        l1 += s1
        wl += wt
        nl += np.int64(cnt + 0.5)
        wr = wtot - wl
        nr = ntot - nl
        if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
            continue
        if wl <= 0.0 or wr <= 0.0:
            continue
        tries += 1
        sc = proxy_two(l0, l1, wl, t0 - l0, t1 - l1, wr, crit)
        if sc > best and (cst == 0 or monotone_ok(cst, lower, upper, l0, wl, t0 - l0, wr)):
            best = sc
            best_b = b
            best_nl = nl
            pending = True
    _cut(out, tries, best, best_b, best_next, best_nl, ntot)
    return True


@noref
def scan_hist_classes(hist, f, hoff, nbins, weighted, crit, min_leaf, min_wleaf, order,
                      n_order, st, out):
    """:func:`scan_hist_two` for any number of classes (gini, entropy, misclassification):
    the running sums in the rows ``SR_LEFT``, ``SR_RIGHT`` and ``SR_TOTAL`` of the levels
    workspace ``st``, scored by :func:`treelearn.engine.criteria.split_proxy` like the
    summary search (tests compare them)."""
    H = hist.shape[1]
    S = st.shape[1]
    base = hoff[f]
    nb = nbins[f]
    _no_cut(out)
    n_it = nb if n_order < 0 else n_order
    for k in range(S):
        st[lvl.SR_TOTAL, k] = 0.0
        st[lvl.SR_LEFT, k] = 0.0
    wtot = 0.0
    ntot = 0
    u = 0
    for j in range(n_it):
        b = j if n_order < 0 else order[j]
        if b >= nb:
            break
        r = base + b
        wt = 0.0
        for k in range(S):
            wt += hist[r, k]
        cnt = hist[r, H - 1] if weighted else wt
        if cnt <= 0.0:
            continue
        for k in range(S):
            st[lvl.SR_TOTAL, k] += hist[r, k]
        wtot += wt
        ntot += np.int64(cnt + 0.5)
        u += 1
    if u < 2:
        return False
    wl = 0.0
    nl = 0
    best = -np.inf
    best_b = -1
    best_next = -1
    best_nl = 0
    tries = 0
    e = 0
    pending = False
    for j in range(n_it):
        b = j if n_order < 0 else order[j]
        if b >= nb:
            break
        r = base + b
        wt = 0.0
        for k in range(S):
            wt += hist[r, k]
        cnt = hist[r, H - 1] if weighted else wt
        if cnt <= 0.0:
            continue
        if pending:
            best_next = b
            pending = False
        if e == u - 1:
            break
        e += 1
        for k in range(S):
            st[lvl.SR_LEFT, k] += hist[r, k]
        wl += wt
        nl += np.int64(cnt + 0.5)
        wr = wtot - wl
        nr = ntot - nl
        if nl < min_leaf or nr < min_leaf or wl < min_wleaf or wr < min_wleaf:
            continue
        if wl <= 0.0 or wr <= 0.0:
            continue
        tries += 1
        for k in range(S):
            st[lvl.SR_RIGHT, k] = st[lvl.SR_TOTAL, k] - st[lvl.SR_LEFT, k]
        sc = split_proxy(st[lvl.SR_LEFT], st[lvl.SR_RIGHT], wl, wr, crit, 0.0)
        if sc > best:
            best = sc
            best_b = b
            best_nl = nl
            pending = True
    _cut(out, tries, best, best_b, best_next, best_nl, ntot)
    return True


@noref
def rows_stats(C, R, W, lo, hi, stats):
    """``stats`` = class weights, or ``[sum w y, sum w y^2]``, of rows ``[lo, hi)``; returns
    their weight."""
    for k in range(stats.shape[0]):
        stats[k] = 0.0
    wn = 0.0
    for i in range(lo, hi):
        x = 1.0
        if W is not None:
            x = W[i]
        if C is not None:
            stats[C[i]] += x
        if R is not None:
            y = R[i]
            stats[0] += x * y
            stats[1] += x * y * y
        wn += x
    return wn


@noref
def branch_of_bin(b, nb, kind, lo_bin, mb, fmap):
    """Branch of a row with bin ``b`` (``nb``: the missing bin) at a node splitting
    numerically after bin ``lo_bin``, or by the level map ``fmap``; -1: every branch."""
    if b >= nb:
        return mb
    if kind == 0:
        return 0 if b <= lo_bin else 1
    br = fmap[b]
    return br if br >= 0 else mb


@noref
def mark_rows(B, lo, hi, col, wide, nb, kind, lo_bin, mb, fmap, bmark, counts, k):
    """Branch of every row of ``[lo, hi)`` into ``bmark[i - lo]``; ``counts[b]`` rows going
    to branch ``b`` only, ``counts[k]`` rows with a missing value; returns the number going to
    every branch (fractional)."""
    for b in range(k + 1):
        counts[b] = 0
    n_all = 0
    for i in range(lo, hi):
        bin_ = row_bin(B, i, col, wide)
        if bin_ >= nb:
            counts[k] += 1
        br = branch_of_bin(bin_, nb, kind, lo_bin, mb, fmap)
        bmark[i - lo] = br
        if br >= 0:
            counts[br] += 1
        else:
            n_all += 1
    return n_all


@noref
def _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, d):
    for c in range(Vs.shape[1]):  # the row's bins, eight at a time
        Vd[d, c] = Vs[i, c]
    if Cs is not None:
        Cd[d] = Cs[i]
    if Rs is not None:
        Rd[d] = Rs[i]
    if Ws is not None:
        Wd[d] = Ws[i]


@noref
def move_rows(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, pos, shares, k):
    """Copy rows ``[lo, hi)`` of the source buffers to the destination, row ``i`` to branch
    ``bmark[i - lo]``'s next place ``pos[b]`` (advanced); a row of branch -1 goes to every
    branch with its weight times ``shares[b]``. ``Vs``/``Vd`` are the bin matrices viewed as
    uint64 (a row moves in a few words)."""
    for i in range(lo, hi):
        br = bmark[i - lo]
        if br >= 0:
            d = pos[br]
            pos[br] = d + 1
            _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, d)
        else:
            for q in range(k):
                d = pos[q]
                pos[q] = d + 1
                _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, d)
                if Ws is not None:
                    Wd[d] = Ws[i] * shares[q]


@pjit
def move_rows_parallel(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, bmark, starts, k, tcounts):
    """:func:`move_rows` on all threads for splits without fractional rows: each thread
    counts its chunk's rows per branch, then copies its chunk to offsets given by the counts
    of the chunks before it (the same result). ``tcounts`` is (threads, branches) scratch."""
    T = tcounts.shape[0]
    chunk = (hi - lo + T - 1) // T
    for t in prange(T):
        a = lo + t * chunk
        b = min(hi, a + chunk)
        for q in range(k):
            tcounts[t, q] = 0
        for i in range(a, b):
            tcounts[t, bmark[i - lo]] += 1
    for t in prange(T):
        a = lo + t * chunk
        b = min(hi, a + chunk)
        pos = np.empty(k, dtype=np.int64)
        for q in range(k):
            pos[q] = starts[q]
            for u in range(t):
                pos[q] += tcounts[u, q]
        for i in range(a, b):
            br = bmark[i - lo]
            d = pos[br]
            pos[br] = d + 1
            _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, d)


@noref
def shares_of(W, lo, hi, bmark, k, shares):
    """C4.5's shares: each branch's part of the weight of the rows with a known value."""
    for b in range(k):
        shares[b] = 0.0
    tot = 0.0
    for i in range(lo, hi):
        br = bmark[i - lo]
        if br >= 0:
            x = 1.0 if W is None else W[i]
            shares[br] += x
            tot += x
    for b in range(k):
        shares[b] /= tot
