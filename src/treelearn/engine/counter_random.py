"""Counter-based random numbers: a row's bootstrap count as a function of (seed, tree, row id).

A data-parallel forest (:mod:`treelearn.dask`) draws each tree's sample where the rows live,
partition by partition. scikit-learn's bootstrap (``n`` draws of a row index, with replacement)
needs all rows in one place and gives other samples when the rows are cut differently. The
Poisson bootstrap does not: each row's count is drawn on its own, Poisson with mean ``lam``
(the limit of the multinomial counts for many rows; Oza & Russell 2001, "Online bagging and
boosting"; Chamandy et al. 2012, "Estimating uncertainty for massive data streams"). Here the
count is a pure function of ``(seed, tree, global row id)``: the uniform number behind it is
SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators") applied
three times to the key, so the sample does not depend on the partitioning, the order of the
work, or a partition recomputed after a lost worker.
"""

from __future__ import annotations

import math

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of ``x + golden`` (uint64 arrays; arithmetic mod 2**64)."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


#: Salts keeping the streams of one (seed, tree) apart: rows' counts, nodes' search seeds.
SALT_ROWS, SALT_NODES = 0, 1


def key_hashes(seed: int, tree: int, ids: np.ndarray, salt: int = SALT_ROWS) -> np.ndarray:
    """64-bit hashes (uint64), one per id of ``ids``, for the key (seed, tree, salt)."""
    if seed < 0 or tree < 0:
        raise ValueError(f"seed and tree must be non-negative, got {seed} and {tree}.")
    with np.errstate(over="ignore"):
        base = splitmix64(splitmix64(np.array([seed], dtype=np.uint64))
                          + np.uint64(2 * tree + salt))
        return splitmix64(base + np.asarray(ids, dtype=np.uint64))


def key_uniforms(seed: int, tree: int, rows: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1), one per row id of ``rows``, for the key (seed, tree)."""
    h = key_hashes(seed, tree, rows, SALT_ROWS)
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def node_seeds(seed: int, tree: int, nodes: np.ndarray) -> np.ndarray:
    """Seeds in [1, 2**31 - 1) of the split search's draws (``rand_r`` states), one per node
    id: a node's features are drawn alike whichever task, group or order searches it."""
    h = key_hashes(seed, tree, nodes, SALT_NODES)
    return (h % np.uint64(2**31 - 2)).astype(np.int64) + 1


def poisson_cdf(lam: float) -> np.ndarray:
    """P(K <= k) for k = 0, 1, ... of a Poisson(``lam``) count, up to where it reaches 1 in
    float64 (counts beyond have probability below 1e-16)."""
    if not (lam > 0 and math.isfinite(lam)):
        raise ValueError(f"the Poisson mean must be positive and finite, got {lam!r}.")
    out, term, total, k = [], math.exp(-lam), 0.0, 0
    while True:
        total += term
        out.append(min(total, 1.0))
        k += 1
        term *= lam / k
        if total >= 1.0 - 1e-16 or (k > lam and term < 1e-300):
            break
    return np.array(out)


def poisson_counts(seed: int, tree: int, rows: np.ndarray, lam: float = 1.0) -> np.ndarray:
    """Bootstrap counts (int64) of the rows with global ids ``rows`` in tree ``tree`` of the
    forest seeded ``seed``: Poisson(``lam``) each, by inversion of the CDF."""
    u = key_uniforms(seed, tree, rows)
    return np.searchsorted(poisson_cdf(lam), u, side="right").astype(np.int64)


__all__ = ["splitmix64", "key_hashes", "key_uniforms", "node_seeds", "poisson_cdf",
           "poisson_counts"]
