"""The shipped tables against the literature's (../shared/LITERATURE.md) and the test suite's own
copies of them, and the generators against their descriptions."""

import numpy as np
import pandas as pd
import pytest
from test_literature import ADS, LOAN
from test_tables import SUNBURN, SUNBURN_Y

import treelearn as tl
from treelearn import datasets


def test_sunburn_is_the_lectures_table():
    """Graduate lecture, sunburn (8 people); the text cell "None" is a class, not missing."""
    df = datasets.load_sunburn()
    assert list(df.columns) == ["Name", "Hair", "Height", "Weight", "Lotion", "Result"]
    assert df["Name"].tolist() == ["Sarah", "Dana", "Alex", "Annie", "Emily", "Pete", "John",
                                   "Katie"]
    pd.testing.assert_frame_equal(df[list(SUNBURN.columns)], SUNBURN)
    np.testing.assert_array_equal(df["Result"].to_numpy(), SUNBURN_Y)


def _coded(df, columns, codes):
    """Rows of a shipped text table as the numeric codes of the literature tests."""
    return np.array([[codes[c][v] for c, v in zip(columns, row, strict=True)]
                     for row in df[columns].itertuples(index=False)], dtype=float)


@pytest.mark.parametrize("name, spec, columns, codes", [
    ("loan", LOAN, ["income", "credit"], {"income": {"high": 1, "low": 0},
                                          "credit": {"excellent": 1, "poor": 0}}),
    ("ads", ADS, ["income", "previous_customer"], {"income": {"high": 1, "low": 0},
                                                   "previous_customer": {"yes": 1, "no": 0}}),
])
def test_count_tables_are_the_lectures_cases(name, spec, columns, codes):
    """Graduate lecture, bank loan (80 cases) and ads response (14 cases): the same multiset of
    cases as the literature tests' tables."""
    df = datasets.load(name)
    X, y = _coded(df, columns, codes), df[datasets.DATASETS[name].target].to_numpy()

    def cases(X, y):
        return sorted(zip(map(tuple, X.tolist()), y.tolist(), strict=True))

    assert cases(X, y) == cases(*spec)


def test_noisy_square_follows_its_description():
    """Pruning tutorial: 500 uniform points, class x1 + x2 > 1, 50 labels flipped, seed
    20180904 (draw: the points, then the flipped rows without replacement)."""
    rs = np.random.RandomState(20180904)
    X = rs.rand(500, 2)
    clean = (X[:, 0] + X[:, 1] > 1).astype(int)
    flip = rs.choice(500, 50, replace=False)
    y = clean.copy()
    y[flip] = 1 - y[flip]
    X2, y2 = datasets.make_noisy_square()
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    assert (y2 != clean).sum() == 50
    frame = datasets.make_noisy_square(as_frame=True)
    assert list(frame.columns) == ["x1", "x2", "label"]
    np.testing.assert_array_equal(frame[["x1", "x2"]].to_numpy(), X)
    assert datasets.make_noisy_square(n=30, seed=1)[0].shape == (30, 2)
    with pytest.raises(ValueError, match="n must be at least 1"):
        datasets.make_noisy_square(n=0)


def test_reviews_are_reproducible_and_labelled():
    texts, labels = datasets.make_reviews(50, seed=3)
    again, _ = datasets.make_reviews(50, seed=3)
    assert texts == again and len(texts) == 50
    assert set(labels) == {"pos", "neg"}
    assert datasets.make_reviews(50, seed=4)[0] != texts
    frame = datasets.make_reviews(20, as_frame=True)
    assert list(frame.columns) == ["text", "label"] and len(frame) == 20
    with pytest.raises(ValueError, match="n must be at least 1"):
        datasets.make_reviews(0)


def test_registry_loads_every_table_with_its_target():
    for name, ds in datasets.DATASETS.items():
        df = datasets.load(name)
        assert ds.target in df.columns and len(df) > 0 and ds.description
    iris = datasets.load_iris()
    assert iris.shape == (150, 5) and iris["species"].value_counts().tolist() == [50, 50, 50]
    with pytest.raises(ValueError, match="unknown dataset 'nope'; choose one of: sunburn"):
        datasets.load("nope")
    assert tl.datasets is datasets
