"""Every estimator, preset and ensemble grows the trees it grew when the golden file was
written (``tests/golden_trees.py`` says how and when to rewrite it)."""

import golden_trees as g
import numpy as np
import pytest


@pytest.fixture(scope="module")
def golden():
    with np.load(g.GOLDEN) as f:
        return {k: f[k] for k in f.files}


def test_the_golden_file_holds_every_case_and_nothing_else(golden):
    names = {k.split("/")[0] for k in golden}
    assert names == set(g.cases())


@pytest.mark.parametrize("name", list(g.cases()))
def test_trees_equal_the_golden_trees_node_by_node(name, golden):
    got = g.snapshot(g.fit(name))
    want = {k[len(name) + 1:]: v for k, v in golden.items() if k.split("/")[0] == name}
    assert sorted(got) == sorted(want), "a different number of trees"
    for key in sorted(want, key=lambda k: (int(k.split("/")[0]), k)):
        field = key.split("/")[1]
        if field in g.INT_FIELDS:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{name}: {key}")
        else:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-9, atol=1e-12,
                                       err_msg=f"{name}: {key}")
