"""The first run: a line on the terminal while kernels compile, and a warm-up for deployments.

treelearn's kernels are compiled by Numba the first time a fit or prediction needs them and
stored in Numba's cache (``__pycache__`` beside the sources, or ``NUMBA_CACHE_DIR``); later
processes load them in a fraction of a second. The first fit on a fresh install, after an
upgrade or in a new CI job therefore waits for the compiler: about 9 s for an exact tree on
this project's 2-core machine, about 15 s more for the histogram splitter and 11 s more for
a first table with category columns (2026-12-04, :data:`TYPICAL_SECONDS`; the README
gives today's figures, and :mod:`treelearn.engine.linking` how kernels reach their callees,
which decides much of it). Two things make that wait visible and avoidable:

- **The notice.** A listener on Numba's ``numba:compile`` event (sent only on a cache miss,
  never when a kernel is loaded from the cache) writes one line to standard error while
  treelearn's kernels compile for more than a second, with the seconds so far and, for the
  growers, the measured total (:data:`TYPICAL_SECONDS`), and ends it when compilation ends.
  It writes only when standard error is a terminal; :func:`compile_notice` (or
  ``TREELEARN_COMPILE_NOTICE=0``, or the command line's ``--quiet``) switches it off.
- **The warm-up.** :func:`treelearn.compile_kernels` (``treelearn compile``; in
  :mod:`treelearn._warmup`) fits and applies each estimator on small generated data of every
  kind it accepts, so a Docker image or a CI cache built with it starts warm.
- **Both cores.** Numba compiles one kernel at a time in a process (a compiler lock), and a
  grower's chain compiles for minutes on one core. The warm-up therefore runs each estimator
  in a Python process of its own, one per CPU at a time, all storing into Numba's cache
  (``treelearn compile``: 329 s -> 214 s on this machine), and :func:`compiled_beside` lets a
  program that will need a second specialisation (``treelearn demo``: a categorical table,
  then numbers) compile it in a background process meanwhile (demo's first run 136 s -> 73 s).
  :func:`signatures_beside` does the same for the kernels a grower types last, which wait
  for all the others: the exact, histogram and ranked growers' split, children and table
  growth, the tree's assembly, and the histogram grower's threaded steps, which a fit of
  80,000 row-features or more compiles (empty cache, whole process, one run each: first
  numeric fit 17.8 s -> 12.7 s, first hist fit on 100,000 x 10 53.2 s -> 39.1 s; the
  README has the table). It also takes kernels a grower reaches deep in its chain but
  seconds after it starts: the histogram's scans and the ranked grower's numeric search
  (not the exact grower's, which reaches it too soon), and, through :func:`beside_also`,
  the kernels a caller runs after the grower (a forest's packing): first hist fit after a
  numeric one 26.2 s -> 20.9 s, first forest 17.0 s -> 12.2 s.

Why not compile ahead of time at install: Numba's AOT module (``numba.pycc``) is deprecated
and takes no overloads or parallel loops, which the kernels use; the measured compile time and
the levers tried are in :mod:`treelearn.engine.config`, and the one that cut it most (kernels
that call their callees instead of copying them; opt-in, since it slows warm fits) in
:mod:`treelearn.engine.linking`.

This module belongs to the engine (it knows the exact grower, whose cache stands for all
kernels, and the search's ``Config``, which tells a table's compilation from a numeric one);
the one thing the engine's modules need from below, a kernel call's signature, is in
:mod:`treelearn._compiling`, which imports nothing of treelearn.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import numpy as np

from .._compiling import signature
from . import linking

__all__ = ["beside_also", "cache_location", "compile_notice", "compiled_beside", "silenced",
           "signatures_beside"]


#: Measured compile seconds of a first fit's growers (empty cache, this project's 2-core
#: machine, fresh process, 2026-12-04, two runs: inclusive time of the outermost
#: ``numba:compile`` event, a background process compiling beside it as a fit does), by the
#: kernel that starts the compilation and the data it is compiled for: ``"numbers"``, or
#: ``"table"`` (category columns: the level search is compiled into the same loop; measured
#: after a numeric fit, whose kernels it then loads). A faster machine takes less; the runs
#: moved by a quarter either way. The notice quotes them; other kernels compile in a few
#: seconds.
TYPICAL_SECONDS = {
    ("grow_depth_first_Exact", "numbers"): 9,  # 8.6, 8.3 s (13 s copying callees, 12-02)
    ("grow_depth_first_Exact", "table"): 11,  # 10.6, 10.8 s, after a numeric fit (29 s)
    ("grow_best_first_Exact", "numbers"): 14,  # 14.0, 14.5 s (18 s)
    ("grow_depth_first_Hist", "numbers"): 14,  # 13.5, 15.2 s (22 s)
    ("grow_depth_first_Hist", "table"): 16,  # 15.5, 16.5 s, after a numeric hist fit (43 s)
    ("grow_best_first_Hist", "numbers"): 16,  # 16.9, 15.3 s (26 s)
    ("grow_depth_first_Sparse", "numbers"): 14,  # 13.8, 13.3 s (20 s)
    ("grow_depth_first_Ranked", "numbers"): 9,  # forests drawing few features: 8.7, 9.6 s
}


def data_kind(arg_types: Any) -> str:
    """``"table"`` when a compilation's argument types hold a search
    :data:`~treelearn.engine.search.Config` with a category search (a fit on a table with
    category columns), else ``"numbers"``: the second key of :data:`TYPICAL_SECONDS`."""
    from numba.core import types as nt

    from .search import Config

    todo = list(arg_types or ())
    while todo:
        t = todo.pop()
        if not isinstance(t, nt.BaseTuple):
            continue
        if getattr(t, "instance_class", None) is Config:
            category = t.types[Config._fields.index("category")]
            return "numbers" if isinstance(category, nt.NoneType) else "table"
        todo.extend(t.types)
    return "numbers"


#: Seconds a compilation runs before the notice shows (short ones stay silent).
_DELAY = 1.0


class _Notice:
    """The listener: counts nested ``numba:compile`` events of treelearn's kernels and keeps
    one line on ``stream`` up to date while they run (a ticker thread, alive only during a
    compilation, redraws it)."""

    def __init__(self) -> None:
        self.enabled = os.environ.get("TREELEARN_COMPILE_NOTICE", "1").strip().lower() not in (
            "0", "no", "false", "off")
        self.stream: TextIO | None = None  # None: sys.stderr at the time of writing
        self._lock = threading.Lock()
        self._depth = 0
        self._started = 0.0  # start of the outermost compilation, when ours to report
        self._typical: int | None = None
        self._shown = False
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()

    def _out(self) -> TextIO | None:
        out = self.stream if self.stream is not None else sys.stderr
        try:
            return out if out is not None and out.isatty() else None
        except (AttributeError, ValueError, OSError):  # closed or odd streams: stay silent
            return None

    def start(self, name: str, module: str, arg_types: Any = ()) -> None:
        with self._lock:
            self._depth += 1
            if self._depth > 1:
                return  # a callee: part of the compilation under way
            # only a compilation treelearn started is ours to report
            if (not module.startswith("treelearn.") or not self.enabled
                    or self._out() is None):
                return
            self._started = time.perf_counter()
            self._typical = (TYPICAL_SECONDS.get((name, data_kind(arg_types)))
                             if name.startswith("grow_") else None)
            if self._ticker is None or not self._ticker.is_alive():
                self._ticker = threading.Thread(target=self._tick, name="treelearn-compile",
                                                daemon=True)
                self._ticker.start()
            self._wake.set()

    def end(self) -> None:
        with self._lock:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth == 0:
                self._finish()

    def _line(self, seconds: float) -> str:
        total = f" of about {self._typical} s" if self._typical else ""
        # short enough for an 80-column terminal: a wrapped line cannot be redrawn by "\r"
        return f"compiling treelearn's kernels for this machine, once: {seconds:.0f} s{total}"

    def _finish(self) -> None:
        if self._shown:
            out = self._out()
            if out is not None:
                seconds = time.perf_counter() - self._started
                out.write(f"\r{self._line(seconds)}, done\n")
                out.flush()
        self._shown = False
        self._started = 0.0

    def _tick(self) -> None:
        while True:
            self._wake.wait(0.5)
            self._wake.clear()
            with self._lock:
                if self._depth == 0:
                    self._ticker = None  # no thread between compilations; start() makes one
                    return
                if not self._started:
                    continue
                seconds = time.perf_counter() - self._started
                out = self._out()
                if seconds < _DELAY or out is None:
                    continue
                out.write(f"\r{self._line(seconds)}")
                out.flush()
                self._shown = True


_notice = _Notice()


def compile_notice(enabled: bool | None = None) -> bool:
    """Switch the first-run notice on or off; return whether it is on.

    The notice is one line on standard error, written only when that is a terminal, while
    treelearn's kernels compile for more than a second (the first fit after an install or
    upgrade). It is on by default; the environment variable
    ``TREELEARN_COMPILE_NOTICE=0`` switches it off for every process.

    Parameters
    ----------
    enabled : bool or None, default=None
        The new setting; None leaves it as it is.

    Returns
    -------
    bool
        Whether the notice is on (after the change).
    """
    if enabled is not None:
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool or None; got {enabled!r}.")
        _notice.enabled = enabled
    return _notice.enabled


@contextmanager
def silenced() -> Iterator[None]:
    """The notice off for the duration (the command line's ``--quiet``)."""
    before = _notice.enabled
    _notice.enabled = False
    try:
        yield
    finally:
        _notice.enabled = before


def _install() -> None:
    """Register the listener with Numba (once, at import)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            _notice.start(getattr(fn, "__name__", ""), getattr(fn, "__module__", "") or "",
                          ev.data.get("args", ()))

        def on_end(self, ev: Any) -> None:
            _notice.end()

    event.register("numba:compile", Listener())


_install()


#: The registered name (:data:`treelearn.engine.linking.KERNELS`) of the exact grower, the
#: builder's depth-first loop for the presorted lists, whose cache stands for all kernels.
#: Looked up by name rather than imported: the layouts import this module.
WITNESS = ("treelearn.engine.builder", "grow_depth_first_Exact")


def witness() -> Any:
    """The exact grower (:data:`WITNESS`), or None where the kernels are plain Python
    (``NUMBA_DISABLE_JIT``: nothing registered, nothing cached)."""
    return linking.KERNELS.get(WITNESS)


def caching() -> bool:
    """Whether a kernel compiled in another process reaches this one: Numba compiles and
    caches (``cache=True``) here."""
    return linking.keeps_cache(witness())


def first_run() -> bool:
    """Whether Numba's cache holds no exact grower for treelearn's current sources (a fresh
    install, an upgrade, a new cache folder). An unreadable index counts as a first run."""
    return not linking.cached_keys(witness())


def _beside_allowed() -> bool:
    """Whether a background process may compile for this one: two CPUs or more, Numba
    compiling and caching here, not switched off (``TREELEARN_COMPILE_BESIDE=0``), and no
    other background compilation of this process running (a third compiler on two cores
    slowed ``treelearn demo``'s first run from 30 s to 34 s)."""
    return ((os.cpu_count() or 1) >= 2 and not _running and caching()
            and os.environ.get("TREELEARN_COMPILE_BESIDE", "1") != "0")


#: Background compilations this process has started and not yet stopped.
_running: set[Any] = set()


def child_env() -> dict[str, str]:
    """The environment of a process started to compile beside others (a background process,
    the warm-up's processes): it starts no background process of its own, the cores are in
    use, and it takes this process's verdict on treelearn's linking of kernels
    (:func:`treelearn.engine.linking.verdict_env`) instead of testing it again."""
    return {**os.environ, "TREELEARN_COMPILE_BESIDE": "0", **linking.verdict_env()}


def _stop(proc: Any) -> None:
    """End a background compilation that is still running (its finished cache entries stay:
    Numba writes each to a temporary file and renames it)."""
    import subprocess

    _running.discard(proc)
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def compiled_beside(target: str) -> Iterator[None]:
    """Run ``target`` (``"module:function"``, no arguments, output discarded) in a background
    Python process while the ``with`` block runs, so that the kernels it needs compile on
    another core while this process compiles others.

    Numba's compiler holds one lock per process, so the kernels of one process compile one
    after the other; a program that will need two specialisations of a grower (a table with
    categories, then numbers: ``treelearn demo``) compiles them in parallel this way, and
    this process loads what the other one stored in Numba's cache (written atomically) when
    it comes to it, or compiles it itself if it comes first. The background process is
    stopped when the block ends (a half-written cache entry is never read: Numba writes to a
    temporary file and renames it).

    Nothing is started when the exact grower is already in the cache (not a first run: on a
    warm cache the background process would cost the block 0.5-2 s of a 5 s demo), with a
    single CPU, without the compiler (``NUMBA_DISABLE_JIT``) or Numba's cache, or when
    ``TREELEARN_COMPILE_BESIDE=0``.
    """
    import subprocess

    proc = None
    if _beside_allowed() and first_run():
        module, _, function = target.partition(":")
        code = f"import {module} as m; m.{function}()"
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=child_env())
        _running.add(proc)
    try:
        yield
    finally:
        _stop(proc)


def _compiled(kernel: Any, sig: tuple) -> bool:
    """Whether ``kernel`` holds ``sig`` compiled, in memory or in Numba's cache (an index
    that cannot be read counts as compiled: nothing is started for it)."""
    return sig in kernel.overloads or linking.is_cached(kernel, sig)


@contextmanager
def signatures_beside(top: Any, args: dict[str, Any], frame: Callable[[], dict[str, Any]],
                      jobs: Callable[[dict[str, Any]], Iterable[tuple[Any, tuple]]]
                      ) -> Iterator[None]:
    """Compile each ``(kernel, signature)`` of ``jobs(frame())`` that is neither loaded nor
    cached in a background process while the ``with`` block runs (see
    :func:`compiled_beside`).

    For the kernels a grower (``top``) comes to late: it compiles its callees in the order
    it types them, so the kernels typed last (the exact grower's split and table growth:
    about 6 s of a first fit's 19 s of compilation; the histogram grower's threaded steps,
    which only fits of 80,000 row-features or more compile: 17 s of 63 s) wait for all the
    others, while another core could compile them; this process then loads them from the
    cache. ``args``: the fit's arguments by name, which tell the grower's specialisations
    apart; ``frame()``: all of the grower's parameters by name (the arguments and the node
    tables a fit allocates), built only on the first fit of a specialisation in this process
    (later fits pay for typing ``args`` cheaply, ~0.05 ms). Nothing is started under the
    conditions of :func:`compiled_beside`, when ``top`` is already compiled for the frame,
    or when every signature is cached."""
    import pickle
    import subprocess

    todo = []
    proc = None
    key = (top, _kinds(args))
    # a forest's trees grown on two threads: one of them looks, and starts one process
    with _beside_lock:
        if key not in _looked_at and _beside_allowed():
            _looked_at.add(key)
            values = frame()
            if signature(top, values, {}) not in top.overloads:
                todo = [(k.py_func.__module__, k.py_func.__name__, sig)
                        for k, sig in [*jobs(values), *(job for more in _also
                                                         for job in more())]
                        if not _compiled(k, sig)]
        if todo:
            code = "from treelearn.engine.compiling import _compile_stdin; _compile_stdin()"
            proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    env=child_env())
            _running.add(proc)
    if proc is not None:
        try:
            proc.stdin.write(pickle.dumps(todo))
            proc.stdin.close()
        except OSError:  # the process is gone: this one compiles what it needs itself
            pass
    try:
        yield
    finally:
        _stop(proc)


@contextmanager
def beside_also(jobs: Callable[[], Iterable[tuple[Any, tuple]]]) -> Iterator[None]:
    """While the block runs, :func:`signatures_beside` also compiles the ``(kernel,
    signature)`` pairs of ``jobs()``: for a caller whose own kernels run after a grower's
    (a forest's packing of its trees)."""
    _also.append(jobs)
    try:
        yield
    finally:
        _also.remove(jobs)


#: The ``jobs`` of the :func:`beside_also` blocks running.
_also: list[Callable[[], Iterable[tuple[Any, tuple]]]] = []

#: ``(grower, _kinds(args))`` that :func:`signatures_beside` has looked at in this process.
_looked_at: set[tuple[Any, Any]] = set()
_beside_lock = threading.Lock()


def _kinds(value: Any) -> Any:
    """A cheap stand-in for the Numba types of ``value`` (a dict or tuple of arrays and
    scalars): what tells two of a grower's specialisations apart, in ~1/10 of the time Numba
    takes to type them (0.5 ms, a third of a 200-row fit)."""
    if isinstance(value, dict):
        return tuple(_kinds(v) for v in value.values())
    if isinstance(value, tuple):
        return tuple(_kinds(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.dtype.num, value.ndim, value.flags.c_contiguous
    return type(value)


def _compile_stdin() -> None:
    """The background process of :func:`signatures_beside`: compile the kernels named on
    standard input (a pickle of ``(module, name, signature)``, written by the parent)."""
    import importlib
    import pickle

    for module, name, sig in pickle.loads(sys.stdin.buffer.read()):
        getattr(importlib.import_module(module), name).compile(sig)


def cache_location() -> str:
    """The folder where Numba keeps the compiled exact grower (``NUMBA_CACHE_DIR`` when set;
    else ``__pycache__`` beside treelearn's sources, or the user's cache folder when those
    are read-only): the one to keep in a Docker layer or a CI cache."""
    path = linking.cache_folder(witness())
    return str(path) if path else "(no cache: NUMBA_DISABLE_JIT or caching is off)"
