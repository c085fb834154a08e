import os

# Every tree treelearn's growers assemble is checked against the Tree invariants in the tests
# (outside them the growers' trees skip the check; see treelearn._tree.CHECK_TRUSTED).
os.environ["TREELEARN_CHECK_TREES"] = "1"

# No kernel is compiled in a background process for the test run's fits (each test that
# tests it switches it on): the cache index then holds only what the fits themselves compiled,
# which test_compiling reads to check the signatures given to the background process.
os.environ["TREELEARN_COMPILE_BESIDE"] = "0"

import signal  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Without the JIT every kernel runs as Python (coverage mode): fewer random examples.
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"
settings.register_profile("default", max_examples=60 if not JIT_DISABLED else 15,
                          deadline=None)
settings.load_profile("default")

# A command started with `&` by a non-interactive shell (CI's coverage pass in .ci/run, a
# `nohup` run) inherits SIGINT *ignored*, and Python then leaves it ignored: treelearn rightly
# installs no Ctrl-C handler there (test_the_handler_is_left_alone_when_sigint_is_ignored), so
# the tests of Ctrl-C would see nothing. They test an interactive session's Ctrl-C, so the
# suite runs with Python's usual handler wherever it was started (a handled signal is reset
# to its default in the child processes the tests start, so they get Ctrl-C as usual too).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
