"""Unbiased choice of the split feature: a p-value per feature, the smallest one wins.

A criterion compares the *best* cut of each feature, and a feature with many levels (or many
distinct values) has many more cuts to choose its best from: it wins by chance far more often
than it should (selection bias; Loh & Shih 1997). ``selection="test"`` chooses the feature
first by a test of association between the feature and the target at the node, in the manner
of conditional inference trees (Hothorn, Hornik & Zeileis 2006) and GUIDE (Loh 2002), and only
then the cut by the criterion.

The test, per feature: the node's rows are cross-tabulated by *group* x *class*, with

* groups: the levels present (categorical); the quartiles of the node's values, values more
  than 1e-7 apart as the splitters tell them apart, ties kept in one group (numeric, GUIDE's
  grouping); one more group for the missing values;
* classes: the classes (classification); for regression, whether the target is above the
  node's mean (GUIDE's sign of the residual);

and Pearson's statistic ``X2 = sum (O - E)^2 / E``, ``E = row total x column total / N``
(weighted counts), is referred to a chi-square distribution with ``(r - 1)(c - 1)`` degrees
of freedom, ``r`` and ``c`` the non-empty groups and classes (scipy's ``chi2_contingency``
without continuity correction gives the same p-value; the tests check it). The p-values of the
``m`` features examined are adjusted for multiplicity as ``1 - (1 - p)^m`` (Šidák, as
partykit's ``ctree``); with ``selection_alpha < 1`` a node whose smallest adjusted p-value is
not below ``alpha`` is not split. Everything is computed on the log scale, so p-values far
below the smallest float still order the features.

``selection="screened"`` (the default's rule where a categorical feature has more than 20
levels) uses the test as a screen, not as the choice: the winner is the criterion's best
among the features whose (unadjusted) p-value at the node is below :data:`SCREEN_ALPHA`, and
where no feature passes, the smallest p-value as under "test". Why: "test" removes the
many-level bias but also moves every other choice off the criterion's (the chi-square on
quartile groups ranks numeric features by association, not by the best cut), which costs
accuracy on tables where nothing needs protecting: 0.3 points on modeldata's credit table
(4,454 rows), and the old default switched to it for the whole tree as soon as one column
had more than 20 levels. Under the screen a pure-noise column competes at about
``SCREEN_ALPHA`` of the nodes, and at nodes where nothing is associated the choice is the
unbiased one of "test" (so under the null every feature is chosen about equally often; the
tests check it). Measured (``benchmarks/bench_selection.py``: ``max_depth=6,
min_samples_leaf=20``, 3 seeds x 10-fold CV, accuracy in points; loss: what a pure-noise
column of 30 / 60 / 200 levels costs, mean over seeds), by the screen's level:

============  ================  ================  ================  =================
table         criterion         test              screen 0.05       screen 0.01
============  ================  ================  ================  =================
credit        76.69; 1.5-4.2    76.37; 0.0-0.1    76.81; 0.1-0.5    76.64; 0.0-0.2
churn         93.25; 0.3-2.3    93.86; 0.0        93.89; 0.0-0.1    93.86; 0.0-0.1
churn-shaped  90.52; 0.7-1.3    90.80; 0.1-0.2    90.77; 0.1-0.2    90.85; 0.1
adult-shaped  74.68; 0.2-3.2    75.83; 0.0-0.1    76.01; 0.2-0.3    75.93; 0.0-0.1
============  ================  ================  ================  =================

(screen 0.001: credit 76.47, losses at most 0.1.) 0.01 keeps the criterion's accuracy on the
table without many-level columns (credit: -0.05 points) and holds every noise loss under 0.2
points; 0.05 lets the 200-level column cost 0.46 points on credit. Fit times equal those of
"test" (the same p-values are computed), within 6%. The default as it now resolves
("criterion" on credit as it is, "screened" once the noise column is there or a column has
more than 20 levels), its losses counted from the criterion's score on the clean table:
credit 0.17 / 0.04 / 0.24, churn 0.09 / 0.03 / -0.01, churn-shaped 0.11 / 0.11 / 0.11,
adult-shaped 0.07 / 0.03 / 0.02 points.
"""

from __future__ import annotations

import math

import numpy as np

from .config import FEATURE_THRESHOLD, noref, tiny

#: The screen of ``selection="screened"``: a feature competes by the criterion at a node
#: where its p-value is below this (see the module notes for the measurements).
SCREEN_ALPHA = 0.01

_FPMIN = 1e-300
_EPS = 1e-15


@noref
def gamma_log_q(a, x):
    """``log Q(a, x)``, the regularised upper incomplete gamma function, for ``a > 0``:
    the power series of ``P`` for ``x < a + 1``, Lentz's continued fraction otherwise."""
    if x <= 0.0:
        return 0.0
    lg = math.lgamma(a)
    if x < a + 1.0:
        ap = a
        s = 1.0 / a
        d = s
        for _ in range(10000):
            ap += 1.0
            d *= x / ap
            s += d
            if abs(d) < abs(s) * _EPS:
                break
        log_p = math.log(s) - x + a * math.log(x) - lg
        p = math.exp(log_p)
        if p >= 1.0:
            return -np.inf
        return math.log1p(-p)
    b = x + 1.0 - a
    c = 1.0 / _FPMIN
    d = 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _FPMIN:
            d = _FPMIN
        c = b + an / c
        if abs(c) < _FPMIN:
            c = _FPMIN
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.log(h) - x + a * math.log(x) - lg


@noref
def chi2_logsf(x, df):
    """Log of the chi-square survival function ``P(chi2_df >= x)``; 0 for ``df <= 0``."""
    if df <= 0:
        return 0.0
    return gamma_log_q(0.5 * df, 0.5 * x)


@noref
def adjusted_log_pvalue(log_p, m):
    """Šidák's adjustment ``1 - (1 - p)^m`` of the smallest of ``m`` p-values, on the log
    scale (``log m + log p`` where ``p`` is too small for the exact form to resolve)."""
    if m <= 1:
        return log_p
    p = math.exp(log_p)
    if p >= 1.0:
        return 0.0  # log1p(-1) is -inf (a domain error in plain Python)
    if p < 1e-10:
        return math.log(m) + log_p
    return math.log(-math.expm1(m * math.log1p(-p)))


@noref
def _class_of(C, R, f, i, mean):
    if C is not None:
        return C[f, i]
    if R is not None:
        return 1 if R[f, i] > mean else 0
    return 0


@tiny
def _margin(col, K):
    """Total weight of the class margin ``col[:K]`` and how many classes it holds."""
    N = 0.0
    kc = 0
    for c in range(K):
        N += col[c]
        if col[c] > 0.0:
            kc += 1
    return N, kc


@noref
def _add_group(row, col, N, acc):
    """Add a finished group's cells to the statistic ``acc = [X2, groups]``."""
    rt = 0.0
    for c in range(row.shape[0]):
        rt += row[c]
    if rt <= 0.0:
        return
    acc[1] += 1.0
    for c in range(row.shape[0]):
        if col[c] > 0.0:
            e = rt * col[c] / N
            acc[0] += (row[c] - e) * (row[c] - e) / e


@noref
def feature_log_pvalue(V, C, R, W, f, lo, hi, categorical, nstats, wn, crit, st, ws, iw):
    """Log p-value of the association of feature ``f`` with the target at the node
    ``[lo, hi)`` of the exact splitter's sorted list (see the module docstring)."""
    K = nstats.shape[0] if C is not None else 2
    # scratch: the stats workspace's first rows (width >= 2) and result slots
    col = st[0]
    row = st[1]
    acc = ws[0]
    for c in range(K):
        col[c] = 0.0
        row[c] = 0.0
    acc[0] = 0.0
    acc[1] = 0.0
    mean = 0.0
    if C is None:
        mean = nstats[0] / wn
    for i in range(lo, hi):
        col[_class_of(C, R, f, i, mean)] += 1.0 if W is None else W[f, i]
    N, kc = _margin(col, K)
    # known entries, then the missing ones (NaN, last)
    hk = hi
    while hk > lo and np.isnan(V[f, hk - 1]):
        hk -= 1
    nk = hk - lo
    g = 0
    prev = np.float32(0.0)
    for i in range(lo, hk):
        x = V[f, i]
        if i > lo:
            new_group = False
            if categorical:
                new_group = x != prev
            elif x > prev + FEATURE_THRESHOLD and (i - lo) * 4 >= (g + 1) * nk:
                new_group = True
            if new_group:
                _add_group(row, col, N, acc)
                for c in range(K):
                    row[c] = 0.0
                g += 1
        row[_class_of(C, R, f, i, mean)] += 1.0 if W is None else W[f, i]
        prev = x
    _add_group(row, col, N, acc)
    for c in range(K):
        row[c] = 0.0
    for i in range(hk, hi):
        row[_class_of(C, R, f, i, mean)] += 1.0 if W is None else W[f, i]
    _add_group(row, col, N, acc)
    df = (int(acc[1]) - 1) * (kc - 1)
    return chi2_logsf(acc[0], df)


@noref
def rows_log_pvalue(B, C, R, W, lo, hi, col, wide, nb, categorical, nstats, wn, st, ws, iw):
    """:func:`feature_log_pvalue` for the histogram splitter: the node's rows ``[lo, hi)`` of
    a bin matrix, the feature's bins at column ``col`` (two bytes when ``wide``), ``nb`` its
    missing bin. Numeric bins are grouped into quartiles of the node's rows (whole bins)."""
    K = nstats.shape[0] if C is not None else 2
    mean = 0.0
    if C is None:
        mean = nstats[0] / wn
    # rows per bin (iw row 0), then the group of each bin (iw row 1)
    cnt = iw[0]
    grp = iw[1]
    for b in range(nb + 1):
        cnt[b] = 0
    for i in range(lo, hi):
        b = np.int64(B[i, col])
        if wide:
            b += np.int64(B[i, col + 1]) << 8
        cnt[b] += 1
    nk = 0
    for b in range(nb):
        nk += cnt[b]
    g = -1
    acc_rows = 0
    for b in range(nb):
        if cnt[b] == 0:
            continue
        if categorical or g < 0 or acc_rows * 4 >= (g + 1) * nk:
            g += 1
        grp[b] = g
        acc_rows += cnt[b]
    n_groups = g + 1
    grp[nb] = n_groups  # missing values: a group of their own
    G = n_groups + 1
    col_t = st[0]
    for c in range(K):
        col_t[c] = 0.0
    tab = st[1:]
    for q in range(G):
        for c in range(K):
            tab[q, c] = 0.0
    for i in range(lo, hi):
        b = np.int64(B[i, col])
        if wide:
            b += np.int64(B[i, col + 1]) << 8
        x = 1.0 if W is None else W[i]
        k = 0
        if C is not None:
            k = C[i]
        if R is not None:
            k = 1 if R[i] > mean else 0
        tab[grp[b], k] += x
        col_t[k] += x
    N, kc = _margin(col_t, K)
    acc = ws[0]
    acc[0] = 0.0
    acc[1] = 0.0
    for q in range(G):
        _add_group(tab[q], col_t, N, acc)
    df = (int(acc[1]) - 1) * (kc - 1)
    return chi2_logsf(acc[0], df)
