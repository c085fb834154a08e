"""The self-test of treelearn's wrappers of Numba (:mod:`treelearn.engine.linking`).

Three tiny kernels in the shape of the engine's (a leaf called by a chain kernel called by a
driver, all with the decorators of :mod:`treelearn.engine.config`) are compiled and stored in
an empty cache by one process and loaded back by a second: what every first and every warm
fit does with the wrappers, on the Numba of this environment. :mod:`~.linking` runs the two
processes once per environment (its module notes say when) and keeps Numba's own linking if
either reports a problem or fails.
"""

from __future__ import annotations

import numpy as np

from . import linking
from .config import driver, noref


@noref
def leaf(a, i):
    return a[i] * 2.0


@noref
def chain(a):
    total = 0.0
    for i in range(a.shape[0]):
        total += leaf(a, i)
    return total


@noref
@driver
def top(a, rounds):
    total = 0.0
    for _ in range(rounds):
        total += chain(a)
    return total


def run(step: str) -> str:
    """One process of the self-test: ``"fill"`` compiles the kernels into the (empty) cache,
    ``"load"`` must load them from it without compiling. The problems found, or ``""``."""
    a = np.arange(1.0, 6.0)
    problems = []
    low_opt = linking.OPTIMIZED_AT_LOW_LEVEL
    got = top(a, np.int64(3))
    if got != 3 * 2 * a.sum():
        problems.append(f"top returned {got}, not {3 * 2 * a.sum()}")
    (sig,) = top.signatures
    if step == "fill":
        if not top.stats.cache_misses.get(sig):
            problems.append("the kernels were not compiled")
        if linking.driver_level() is not None and linking.OPTIMIZED_AT_LOW_LEVEL == low_opt:
            problems.append("the driver was not optimised at the drivers' level")
    elif top.stats.cache_misses.get(sig) or not top.stats.cache_hits.get(sig):
        problems.append("the kernels were not loaded from the cache")
    return "; ".join(problems)
