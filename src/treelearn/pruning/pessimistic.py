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
most the sum of its leaves' estimated errors plus 0.1 (the slack in Quinlan's program).
Subtree raising (grafting the most used branch in place of its parent) needs the training
cases re-routed and is not done.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaincinv

from .._tree import Tree
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
