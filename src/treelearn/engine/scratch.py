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
read only the rows they are told to), with the same trailing shape and dtype.
"""

from __future__ import annotations

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
