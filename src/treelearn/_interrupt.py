"""Ctrl-C during compiled work: stop within about a second, cleanly, in every thread.

Python runs a signal handler at the next bytecode the main thread executes. During a call of
a compiled (Numba) kernel that can be the boxing of the kernel's results, which runs a little
Python (``numba.core.serialize._numba_unpickle``); a ``KeyboardInterrupt`` raised there leaves
an exception set under a returned value, and the call fails with ``SystemError:
CPUDispatcher(...) returned a result with an exception set`` (seen in 1 of 2 interrupted
1M-row fits before this module). Our SIGINT handler therefore looks at where it was called:
inside Numba's boxing it only notes the signal, and the next :func:`check` (the node loops call
it after every kernel call) or the end of the estimator's method hands it over, in plain
Python, to the handler ours replaced (by default: raise ``KeyboardInterrupt``); anywhere else
it hands over at once. (Tripping the signal again from the handler does not work: the handler
then runs again inside itself.) The kernels return often because the node loops do a
bounded chunk of work per call (:data:`treelearn.engine.fit.CHUNK_WORK`, ~0.1 s on one core).

Numba also runs that module while it compiles (writing and reading its cache), where raising
is safe and where a held signal would wait for the whole compilation (a first fit's chain
compiles for tens of seconds). Boxing is told apart by its caller: the first Python frame
above ``numba.core.serialize`` is the kernel's caller there, and Numba's own code
(``numba.*``) while compiling.

One loss is Python's own: a handler that runs inside a garbage-collector callback (hypothesis
installs one), a ``__del__`` or a weakref callback has its ``KeyboardInterrupt`` printed and
dropped. The session is noted as stopped before the raise, so the node loops still stop at
their next :func:`check`; a compilation under way then runs to its end (a test saw a Ctrl-C
at 0.3 s stop a forest fit at 22 s, the time its all-threads kernels took to compile).

Signal handlers run only in the main thread, so compiled work on other threads (the folds of
cross-validated pruning with ``n_jobs``, the presorting pool, the command line's parallel jobs)
would run to its end. Each outermost :func:`handling_sigint` is a numbered session; when the
replaced handler raises ``KeyboardInterrupt``, ours also notes the session as stopped, and
those loops call :func:`check` between chunks, which raises it in their thread if the session
they work for was stopped (the main thread's current one, or the one a :func:`map_threads`
thread was started under). The note outlives the session: a thread of :func:`map_threads` may
be inside work that cannot stop (Numba compiling a kernel for the first time, tens of
seconds), the interrupted call does not wait for it, and the thread stops at its next
:func:`check` after the session has ended. The next session has a new number, so it does not
inherit the stop.

The main thread must itself run bytecode to take the signal: a wait on a thread pool's result
without a timeout blocks in a lock, which a simulated signal (``_thread.interrupt_main``, as
IDEs and kernels send it) and Windows' Ctrl-C do not wake, so the interrupt waited for a whole
tree to end (1.2 s after a Ctrl-C at 0.3 s into a 200k-row forest fit with ``n_jobs=2``, 3.0 s
with the other core busy). :func:`map_threads` waits in short slices instead.

The handler is installed only from the main thread (Python's rule) and only in place of a
callable handler (an ignored SIGINT stays ignored); :func:`interruptible` wraps the
estimators' methods, and the command line wraps each command in :func:`handling_sigint`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import wraps
from typing import Any, TypeVar

_lock = threading.Lock()
_previous: Any = None  # the handler ours replaced, while ours is installed
_installs = 0  # nesting of handling_sigint() in the main thread
_deferred = 0  # a signal that arrived during Numba's boxing, to hand over at check()
_session = 0  # number of the outermost handling_sigint() in progress (0: none)
_sessions = 0  # how many have started
# The sessions Ctrl-C stopped: the loops of a stopped session, on any thread, stop at their
# next check() (a map_threads thread names its session in _local.session).
_stopped: set[int] = set()
_local = threading.local()  # .session: the session a map_threads thread works for

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

#: Seconds the main thread waits on a pool before it runs bytecode (and so a pending signal).
_POLL = 0.05

#: How many frames up the handler looks for Numba's boxing of results.
_FRAMES = 8


def _module(frame) -> str:
    return str(frame.f_globals.get("__name__", ""))


def _in_numba_boxing(frame) -> bool:
    """Whether ``frame`` runs Numba's boxing of a kernel's results: inside
    ``numba.core.serialize`` called from outside Numba (Numba's compiler calls it too, from
    ``numba.*`` frames, where raising is safe)."""
    for _ in range(_FRAMES):
        if frame is None:
            return False
        if _module(frame) == "numba.core.serialize":
            caller = frame.f_back
            while caller is not None and _module(caller) == "numba.core.serialize":
                caller = caller.f_back
            return caller is None or not _module(caller).startswith("numba.")
        frame = frame.f_back
    return False


def _handler(signum, frame) -> None:
    global _deferred
    if _in_numba_boxing(frame):
        # Raising here would break the kernel call; the next check() (or the end of the
        # method) hands the signal over instead.
        _deferred = signum
        return
    _hand_over(signum, frame)


def _hand_over(signum, frame) -> None:
    previous = _previous
    if not callable(previous):  # pragma: no cover - ours is uninstalled before it is None
        raise KeyboardInterrupt
    try:
        previous(signum, frame)
    except KeyboardInterrupt:
        if _session:
            _stopped.add(_session)
        raise


def requested() -> bool:
    """Whether Ctrl-C was pressed during the work under way (the loops of other threads stop
    at their next :func:`check`)."""
    return _session in _stopped


def check() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed during the work under way (call it
    between chunks of compiled work, from any thread)."""
    _flush_deferred()
    if _session in _stopped or getattr(_local, "session", 0) in _stopped:
        raise KeyboardInterrupt


def _flush_deferred() -> None:
    """Hand a signal held during Numba's boxing over to the replaced handler (main thread)."""
    global _deferred
    if _deferred and threading.current_thread() is threading.main_thread():
        signum, _deferred = _deferred, 0
        _hand_over(signum, None)


@contextmanager
def handling_sigint() -> Iterator[None]:
    """Install the SIGINT handler described in the module docstring for the duration (main
    thread only; elsewhere, or when SIGINT is ignored or handled outside Python, a no-op)."""
    global _previous, _installs, _deferred, _session, _sessions
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _lock:
        outermost = _installs == 0
        _installs += 1
        if outermost:
            _sessions += 1
            _session = _sessions
    installed = False
    try:
        if outermost:
            try:
                current = signal.getsignal(signal.SIGINT)
            except (ValueError, OSError):  # pragma: no cover - no signals here
                current = None
            if callable(current) and current is not _handler:
                _previous = current
                signal.signal(signal.SIGINT, _handler)
                installed = True
        yield
        if outermost:
            _flush_deferred()
    finally:
        with _lock:
            _installs -= 1
        if outermost:
            if installed and signal.getsignal(signal.SIGINT) is _handler:
                signal.signal(signal.SIGINT, _previous)
            _previous = None
            _deferred = 0
            _session = 0


def interruptible(method: F) -> F:
    """Run an estimator method under :func:`handling_sigint`, and leave the estimator as it
    was if the method fails or is interrupted (a fit stopped by Ctrl-C leaves no half-fitted
    model)."""

    @wraps(method)
    def wrapper(self, *args, **kwargs):
        before = dict(self.__dict__)
        try:
            with handling_sigint():
                return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    return wrapper  # type: ignore[return-value]


def interruptible_function(fn: F) -> F:
    """Run a function under :func:`handling_sigint` (for public functions whose work runs on
    a thread pool: the pool's loops then stop on Ctrl-C too)."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        with handling_sigint():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def map_threads(fn: Callable[[Any], T], items: Sequence[Any], workers: int) -> list[T]:
    """``[fn(x) for x in items]`` on ``workers`` threads, in order, stoppable by Ctrl-C.

    The calling thread waits in slices of :data:`_POLL` seconds, so a signal is taken at once
    even where it cannot interrupt a lock (see the module docstring). On an error the items
    not started are cancelled and the running ones are waited for; on an interrupt they are
    cancelled and the running ones are not waited for: ``fn`` should call :func:`check`
    between chunks of its work, as the node loops do, and a running item stops at its next
    check (after a compilation it was in, which nothing can stop). The error raised is the
    first in item order among the items ended when it is seen.
    """
    session = _session

    def run(x):
        _local.session = session
        try:
            return fn(x)
        finally:
            _local.session = 0

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    futures = [pool.submit(run, x) for x in items]
    wait_running = True
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=_POLL, return_when=FIRST_EXCEPTION)
            failed = [f for f in futures if f in done and f.exception() is not None]
            if failed:
                raise failed[0].exception()  # type: ignore[misc]
            check()
        return [f.result() for f in futures]
    except KeyboardInterrupt:
        wait_running = False
        raise
    finally:
        pool.shutdown(wait=wait_running, cancel_futures=True)
