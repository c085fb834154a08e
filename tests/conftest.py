import os

# Every tree treelearn's growers assemble is checked against the Tree invariants in the tests
# (outside them the growers' trees skip the check; see treelearn._tree.CHECK_TRUSTED).
os.environ["TREELEARN_CHECK_TREES"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Without the JIT every kernel runs as Python (coverage mode): fewer random examples.
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"
settings.register_profile("default", max_examples=60 if not JIT_DISABLED else 15,
                          deadline=None)
settings.load_profile("default")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
