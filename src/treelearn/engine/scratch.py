"""Arrays a thread keeps from one tree to the next while an ensemble grows its trees.

Why (the forest-speed issue, measured on ggplot2's diamonds, 100 fully grown trees): every
tree allocated its node table and its sort buffers afresh, and the kernel cleared each new
page on first touch, 6% of the fit against scikit-learn's 0.6%. An ensemble's fit therefore
hands its trees a :class:`Scratch`; each thread takes its arrays from it (those of the
previous tree it grew, when large enough) and gives them back when the tree is assembled.
Nothing a finished tree keeps may point into them: :func:`treelearn.engine.fit.assemble`
copies the node values out of a reused table.

A thread's arrays live in a :class:`threading.local` of the :class:`Scratch`: they are
freed with it, when the ensemble's fit ends, and two threads never share one. Arrays are
reused by capacity: ``take`` gives an array of at least the rows asked for (the kernels
read only the rows they are told to), with the same trailing shape and dtype;
:func:`flat_array` gives a C-contiguous array of exactly the shape asked for, a view of the
first entries of a kept flat array (the kernels are compiled for contiguous arrays).

What this saves was measured on minor page faults per fit (2026-12-05): a covertype-shaped
table (221k rows, 20 trees) faulted 85-411 MB of new pages before and 55-62 MB after; ggplot2's
diamonds (40k rows) faulted as much as before, because glibc already handed its blocks, all
below its 32 MB mmap threshold, from one tree to the next.
"""

from __future__ import annotations

import math
import threading

import numpy as np


class Scratch:
    """Per-thread arrays reused across the trees of one ensemble fit (see the module notes)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _pool(self) -> dict:
        pool = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = {}
            self._local.taken = {}
        return pool

    def take(self, key: str, shape: tuple[int, ...], dtype) -> np.ndarray:
        """An uninitialised array of at least ``shape[0]`` rows and exactly ``shape[1:]``
        and ``dtype``: this thread's ``key`` array when it is large enough (and then no
        longer this thread's until :meth:`give`), else a new one."""
        a = self._pool().pop(key, None)
        dtype = np.dtype(dtype)
        if a is None or a.shape[0] < shape[0] or a.shape[1:] != tuple(shape[1:]) \
                or a.dtype != dtype:
            a = np.empty(shape, dtype=dtype)
        self._local.taken[key] = a
        return a

    def give(self, key: str, a: np.ndarray | None) -> None:
        """Keep ``a`` as this thread's ``key`` array, for its next tree."""
        if a is not None:
            self._pool()[key] = a

    def give_back(self, key: str, a: np.ndarray) -> None:
        """:meth:`give` ``a`` only if it is the array this thread last took as ``key`` (what
        a finished tree holds may be its own arrays, as after pruning)."""
        self._pool()
        if self._local.taken.get(key) is a:
            self.give(key, a)


def flat_array(scratch: Scratch | None, key: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape``: new without ``scratch``, else a view
    of the first entries of this thread's flat ``key`` array (:meth:`Scratch.take`), whose
    ``base`` goes back with :func:`give_back_flat`."""
    if scratch is None:
        return np.empty(shape, dtype=dtype)
    size = math.prod(shape)
    return scratch.take(key, (size,), dtype)[:size].reshape(shape)


def give_back_flat(scratch: Scratch, key: str, a: np.ndarray | None) -> None:
    """:meth:`Scratch.give_back` for an array of :func:`flat_array` (or one that is not the
    scratch's: then nothing is kept)."""
    if a is not None:
        scratch.give_back(key, a if a.base is None else a.base)
