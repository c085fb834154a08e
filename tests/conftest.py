import os

import numpy as np
import pytest
from hypothesis import settings

# Without the JIT every kernel runs as Python (coverage mode): fewer random examples.
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"
settings.register_profile("default", max_examples=60 if not JIT_DISABLED else 15,
                          deadline=None)
settings.load_profile("default")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
