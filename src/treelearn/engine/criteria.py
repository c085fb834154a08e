"""Impurities and split scores computed from summary statistics, chosen by integer code.

A node is summarised by a statistics vector ``stats`` and its total sample weight ``w``:

* classification: ``stats[k]`` is the weight of class ``k`` in the node (length ``n_classes``);
* regression: ``stats[0] = sum(w_i * y_i)`` and ``stats[1] = sum(w_i * y_i**2)`` (length 2).

Criteria (``p_k = stats[k] / w``; logarithms base 2 as the literature computes entropy):

``gini``
    impurity ``1 - sum_k p_k**2`` (Breiman et al. 1984)
``entropy`` (alias ``log_loss``)
    impurity ``-sum_k p_k log2 p_k``; a split maximises the information gain
    ``I(parent) - sum_c (w_c / w) I(child c)`` (Quinlan 1986)
``misclassification``
    impurity ``1 - max_k p_k``: the textbook's accuracy loss
``gain_ratio``
    impurity = entropy; a split maximises ``gain / SplitInfo`` with
    ``SplitInfo = -sum_c (w_c / w) log2 (w_c / w)`` (Quinlan 1993, C4.5)
``chi2``
    impurity = entropy; a split maximises Pearson's statistic of the children x classes
    table, ``sum (O - E)**2 / E`` with ``E_ck = w_c w_k / w``
``squared_error``
    impurity = weighted variance ``stats[1]/w - (stats[0]/w)**2``; leaves predict the mean
``absolute_error``
    impurity = mean absolute deviation from the weighted median; leaves predict the weighted
    median (computed by :mod:`treelearn.engine.abserr`)
``sdr``
    impurity = weighted variance, as ``squared_error``, and leaves predict the mean; a split
    maximises the standard deviation reduction ``sd(T) - sum_c (w_c / w) sd(T_c)`` (Quinlan's
    M5, 1992; Wang & Witten's M5', 1997). The stored impurity stays the variance so that
    ``min_impurity_decrease``, importances and cost-complexity pruning mean what they mean for
    ``squared_error``; only the choice of the split differs.

For ``gain_ratio`` and ``chi2`` the stored node impurity (used by ``min_impurity_decrease``,
feature importances and cost-complexity pruning) is the entropy: the chi-square statistic of a
split is the Pearson approximation of the G statistic, ``2 w ln 2`` times the information gain.

The "proxy" of a split is any quantity ordered like the impurity decrease; for gini, entropy and
squared error it is the same expression scikit-learn maximises, so that the two libraries choose
the same split.
"""

from __future__ import annotations

import math

import numpy as np

from .config import noref, tiny

GINI = 0
ENTROPY = 1
MISCLASSIFICATION = 2
GAIN_RATIO = 3
CHI2 = 4
SQUARED_ERROR = 5
ABSOLUTE_ERROR = 6
SDR = 7

CLASSIFICATION_CRITERIA: dict[str, int] = {
    "gini": GINI,
    "entropy": ENTROPY,
    "log_loss": ENTROPY,
    "misclassification": MISCLASSIFICATION,
    "gain_ratio": GAIN_RATIO,
    "chi2": CHI2,
}
REGRESSION_CRITERIA: dict[str, int] = {
    "squared_error": SQUARED_ERROR,
    "absolute_error": ABSOLUTE_ERROR,
    "sdr": SDR,
}

LN2 = math.log(2.0)


@tiny
def plog2p(c, w):
    """``p log2 p`` of ``p = c / w`` (0 for ``c = 0``): one term of :func:`entropy`, the
    same operations in the same order."""
    if c > 0.0:
        p = c / w
        return p * (math.log(p) / LN2)
    return 0.0


@tiny
def weighted_sd(s0, s1, w):
    """``w`` times the standard deviation of a node with sums ``s0 = sum w y`` and
    ``s1 = sum w y**2`` (0 when rounding makes the variance negative): one term of the
    standard deviation reduction."""
    mean = s0 / w
    var = s1 / w - mean * mean
    if var > 0.0:
        return w * math.sqrt(var)
    return 0.0


@noref
def entropy(stats: np.ndarray, w: float) -> float:
    """Entropy in bits of the class weights ``stats`` summing to ``w``."""
    h = 0.0
    for k in range(stats.shape[0]):
        h -= plog2p(stats[k], w)
    return h


@noref
def node_impurity(stats: np.ndarray, w: float, crit: int) -> float:
    """Impurity of a node with statistics ``stats`` and total weight ``w`` (> 0).

    For ``absolute_error`` the impurity needs the samples themselves and is not computed here.
    """
    if crit == GINI:
        sq = 0.0
        for k in range(stats.shape[0]):
            sq += stats[k] * stats[k]
        return 1.0 - sq / (w * w)
    if crit == ENTROPY or crit == GAIN_RATIO or crit == CHI2:
        return entropy(stats, w)
    if crit == MISCLASSIFICATION:
        m = 0.0
        for k in range(stats.shape[0]):
            if stats[k] > m:
                m = stats[k]
        return 1.0 - m / w
    if crit == SQUARED_ERROR or crit == SDR:
        mean = stats[0] / w
        return stats[1] / w - mean * mean
    return 0.0


@noref
def split_proxy(
    left: np.ndarray,
    right: np.ndarray,
    wl: float,
    wr: float,
    crit: int,
    parent_impurity: float,
) -> float:
    """Score of a split (larger is better); both children must have positive weight."""
    if crit == SQUARED_ERROR:
        return left[0] * left[0] / wl + right[0] * right[0] / wr
    if crit == SDR:
        return -(weighted_sd(left[0], left[1], wl) + weighted_sd(right[0], right[1], wr))
    if crit == GAIN_RATIO:
        w = wl + wr
        gain = (
            parent_impurity - (wl / w) * entropy(left, wl) - (wr / w) * entropy(right, wr)
        )
        pl = wl / w
        pr = wr / w
        split_info = -(pl * math.log(pl) + pr * math.log(pr)) / LN2
        if split_info <= 0.0:
            return -np.inf
        return gain / split_info
    if crit == CHI2:
        w = wl + wr
        chi = 0.0
        for k in range(left.shape[0]):
            nk = left[k] + right[k]
            if nk > 0.0:
                el = wl * nk / w
                er = wr * nk / w
                chi += (left[k] - el) * (left[k] - el) / el
                chi += (right[k] - er) * (right[k] - er) / er
        return chi
    if crit == MISCLASSIFICATION:
        # -(misclassified weight), exact for integer weights so that tied cuts stay tied
        ml = 0.0
        mr = 0.0
        for k in range(left.shape[0]):
            ml = max(ml, left[k])
            mr = max(mr, right[k])
        return (ml - wl) + (mr - wr)
    return -wr * node_impurity(right, wr, crit) - wl * node_impurity(left, wl, crit)


@tiny
def proxy_two(l0, l1, wl, r0, r1, wr, crit):
    """:func:`split_proxy` of two statistics (two classes, or regression's sums) under gini,
    entropy, squared error or standard deviation reduction, written out on scalars for the
    scans of numeric features: the same operations in the same order, so that scores are
    equal bit for bit."""
    if crit == SQUARED_ERROR:
        return l0 * l0 / wl + r0 * r0 / wr
    if crit == SDR:
        return -(weighted_sd(l0, l1, wl) + weighted_sd(r0, r1, wr))
    if crit == GINI:
        return -wr * (1.0 - (r0 * r0 + r1 * r1) / (wr * wr)) \
            - wl * (1.0 - (l0 * l0 + l1 * l1) / (wl * wl))
    hl = 0.0 - plog2p(l0, wl) - plog2p(l1, wl)
    hr = 0.0 - plog2p(r0, wr) - plog2p(r1, wr)
    return -wr * hr - wl * hl



@tiny
def impurity_improvement(
    w_total: float, wn: float, imp: float, wl: float, imp_l: float, wr: float, imp_r: float
) -> float:
    """Weighted impurity decrease of a split, scikit-learn's definition.

    ``(w_node / w_total) * (imp - (w_r / w_node) imp_r - (w_l / w_node) imp_l)``
    """
    return (wn / w_total) * (imp - (wr / wn) * imp_r - (wl / wn) * imp_l)


@tiny
def two_way_decrease(nstats, left, right, wl, wn, imp, crit, w_total):
    """:func:`impurity_improvement` of a two-way split from the node's statistics
    ``nstats`` (weight ``wn``, impurity ``imp``) and the left child's ``left`` (weight
    ``wl``); the right child's, the node's minus the left's, are written to ``right``
    (which may be ``left`` itself: it is read first). Every splitter computes it this way,
    so that a split of zero improvement rounds the same way in all of them."""
    imp_l = node_impurity(left, wl, crit)
    for q in range(nstats.shape[0]):
        right[q] = nstats[q] - left[q]
    wr = wn - wl
    return impurity_improvement(w_total, wn, imp, wl, imp_l, wr, node_impurity(right, wr, crit))


@tiny
def midpoint(a, b):
    """Threshold between the float32 neighbours ``a < b``: their float64 midpoint, or ``a``
    where rounding would reach ``b`` or overflow (scikit-learn's rule, so thresholds equal
    its own)."""
    thr = np.float64(a) / 2.0 + np.float64(b) / 2.0
    if thr == np.float64(b) or np.isinf(thr):
        thr = np.float64(a)
    return thr


@tiny
def monotone_ok(cst, lower, upper, left0, wl, right0, wr):
    """scikit-learn's check of a candidate split on a feature with constraint ``cst``: both
    children's values within the node's bounds and ordered as ``cst`` asks
    (``(left - right) * cst <= 0``). Values: class-0 fractions or means."""
    vl = left0 / wl
    vr = right0 / wr
    return (vl >= lower and vr >= lower and vl <= upper and vr <= upper
            and (vl - vr) * cst <= 0.0)
