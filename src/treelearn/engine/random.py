"""scikit-learn's random draws, bit for bit: its ``rand_r`` generator and its feature draw.

Ties between equally good splits are broken as scikit-learn breaks them only if features are
examined in the same order, so the growers draw features exactly as scikit-learn's splitters
do: a Fisher-Yates shuffle driven by ``rand_r`` (a 32-bit xorshift) over a permutation kept
across nodes, where features found constant at a node are moved to the front, remembered for
the node's subtree and skipped, and the draw stops after ``max_features`` visits (constant ones
included, as scikit-learn counts them) unless only constants were seen.

The draw is a small state machine (:func:`draw_start`, :func:`draw_next`, :func:`draw_result`,
:func:`draw_finish`) so that every grower shares it whatever it does with each feature.
"""

from __future__ import annotations

import numpy as np

from .config import njit

RAND_R_MAX = 0x7FFFFFFF


@njit
def rand_r(state):
    """scikit-learn's ``our_rand_r``: a 32-bit xorshift step on ``state[0]``, in [0, RAND_R_MAX]."""
    s = state[0]
    if s == 0:
        s = 1
    s ^= (s << 13) & 0xFFFFFFFF
    s ^= s >> 17
    s ^= (s << 5) & 0xFFFFFFFF
    state[0] = s
    return s % (RAND_R_MAX + 1)


@njit
def rand_int(low, high, state):
    """Random integer in ``[low, high)`` (scikit-learn's ``rand_int``)."""
    return low + rand_r(state) % (high - low)


@njit
def rand_uniform(low, high, state):
    """Random float in ``[low, high)`` (scikit-learn's ``rand_uniform``)."""
    return (high - low) * np.float64(rand_r(state)) / np.float64(RAND_R_MAX) + low


@njit
def random_threshold(low, high, state):
    """scikit-learn's random splitter's threshold for a feature whose values at the node lie
    in ``[low, high]`` (float32 values, compared as float64): uniform in ``[low, high)``,
    and ``low`` if rounding reached ``high``."""
    lo = np.float64(low)
    hi = np.float64(high)
    t = rand_uniform(lo, hi, state)
    if t == hi:
        t = lo
    return t


# The draw's state, an int64 array of these slots.
D_FI, D_VISITED, D_FOUND, D_DRAWN, D_TOTAL, D_KNOWN, D_J = range(7)
N_DRAW = 7


@njit
def draw_start(draw, n_features, n_known):
    """Start the draw of a node that inherits ``n_known`` constant features."""
    draw[D_FI] = n_features
    draw[D_VISITED] = 0
    draw[D_FOUND] = 0
    draw[D_DRAWN] = 0
    draw[D_TOTAL] = n_known
    draw[D_KNOWN] = n_known
    draw[D_J] = -1


@njit
def draw_next(draw, perm, rng, max_features):
    """The next feature to examine, or -1 when the draw is over."""
    while draw[D_FI] > draw[D_TOTAL] and (
            draw[D_VISITED] < max_features
            or draw[D_VISITED] <= draw[D_FOUND] + draw[D_DRAWN]):
        draw[D_VISITED] += 1
        f_j = rand_int(draw[D_DRAWN], draw[D_FI] - draw[D_FOUND], rng)
        if f_j < draw[D_KNOWN]:
            d = draw[D_DRAWN]
            perm[d], perm[f_j] = perm[f_j], perm[d]
            draw[D_DRAWN] += 1
            continue
        f_j += draw[D_FOUND]
        draw[D_J] = f_j
        return perm[f_j]
    return -1


@njit
def draw_result(draw, perm, usable):
    """Record whether the feature :func:`draw_next` gave was usable (not constant here)."""
    f_j = draw[D_J]
    if not usable:
        t = draw[D_TOTAL]
        perm[f_j], perm[t] = perm[t], perm[f_j]
        draw[D_FOUND] += 1
        draw[D_TOTAL] += 1
    else:
        draw[D_FI] -= 1
        i = draw[D_FI]
        perm[i], perm[f_j] = perm[f_j], perm[i]


@njit
def draw_finish(draw, perm, const_feats):
    """Known constants keep their order for siblings and children; new ones are recorded.
    Returns the number of constants the node's children inherit."""
    n_known = draw[D_KNOWN]
    n_total = draw[D_TOTAL]
    for q in range(n_known):
        perm[q] = const_feats[q]
    for q in range(n_known, n_total):
        const_feats[q] = perm[q]
    return n_total
