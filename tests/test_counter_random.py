"""The counter-based generator of the Dask forests' bootstrap (treelearn.engine.counter_random)
against plain-Python twins: SplitMix64 as Steele, Lea & Flood (2014) define it, and the
Poisson probabilities e^-lam lam^k / k!."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treelearn.engine.counter_random import (
    key_uniforms,
    node_seeds,
    poisson_cdf,
    poisson_counts,
    splitmix64,
)

MASK = 2**64 - 1


def splitmix64_twin(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def uniform_twin(seed: int, tree: int, row: int) -> float:
    base = splitmix64_twin((splitmix64_twin(seed) + 2 * tree) & MASK)
    return (splitmix64_twin((base + row) & MASK) >> 11) / 2**53


def test_splitmix64_first_outputs_of_seed_zero():
    # the reference generator's stream from state 0: state += golden, then the output
    # function; its first output is the well-known 0xE220A8397B1DCDAF
    assert splitmix64_twin(0) == 0xE220A8397B1DCDAF
    got = splitmix64(np.array([0, 0x9E3779B97F4A7C15], dtype=np.uint64))
    assert [int(v) for v in got] == [0xE220A8397B1DCDAF, splitmix64_twin(0x9E3779B97F4A7C15)]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tree=st.integers(0, 1000),
       rows=st.lists(st.integers(0, 2**40), min_size=1, max_size=30))
def test_uniforms_equal_the_twin_and_depend_only_on_the_key(seed, tree, rows):
    got = key_uniforms(seed, tree, np.array(rows, dtype=np.int64))
    want = [uniform_twin(seed, tree, r) for r in rows]
    assert got.tolist() == want
    # a row's number is the same alone or among others, in any order (partition-independent)
    for r, u in zip(rows, got, strict=True):
        assert key_uniforms(seed, tree, np.array([r]))[0] == u
    assert np.all((got >= 0.0) & (got < 1.0))


@given(lam=st.floats(0.05, 5.0))
def test_the_poisson_cdf_is_the_textbook_sum(lam):
    cdf = poisson_cdf(lam)
    for k in range(min(len(cdf), 12)):
        want = sum(math.exp(-lam) * lam**i / math.factorial(i) for i in range(k + 1))
        assert abs(cdf[k] - want) < 1e-12
    assert cdf[-1] > 1 - 1e-15 and np.all(np.diff(cdf) >= 0)


def test_counts_follow_the_poisson_law():
    n = 400_000
    for lam in (1.0, 0.5):
        c = poisson_counts(11, 3, np.arange(n), lam)
        freq = np.bincount(c, minlength=6)[:6] / n
        pmf = [math.exp(-lam) * lam**k / math.factorial(k) for k in range(6)]
        # binomial standard error at n = 400k is below 8e-4: five of them
        np.testing.assert_allclose(freq, pmf, atol=4e-3)
        assert abs(c.mean() - lam) < 0.01
    a = poisson_counts(11, 3, np.arange(1000))
    assert not np.array_equal(a, poisson_counts(11, 4, np.arange(1000)))  # trees differ
    assert not np.array_equal(a, poisson_counts(12, 3, np.arange(1000)))  # seeds differ


def test_node_seeds_are_valid_rand_r_states_and_apart_from_row_counts():
    s = node_seeds(5, 0, np.arange(10_000))
    assert s.min() >= 1 and s.max() < 2**31 - 1
    assert len(np.unique(s)) > 9_990
    # other salt: not the rows' stream
    rows = (key_uniforms(5, 0, np.arange(10)) * 2**53).astype(np.int64)
    assert not np.array_equal(s[:10], rows % (2**31 - 2) + 1)


def test_bad_keys_are_named():
    import pytest

    with pytest.raises(ValueError, match="non-negative"):
        key_uniforms(-1, 0, np.arange(3))
    with pytest.raises(ValueError, match="Poisson mean"):
        poisson_cdf(0.0)
