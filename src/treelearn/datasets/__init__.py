"""The small tables of the literature's worked examples, shipped with the package.

Every table is also available to the command line (``treelearn datasets list`` /
``treelearn datasets export NAME``). Sources are named in ``../shared/LITERATURE.md`` terms:

- ``sunburn``: the sunburn table (8 people; ``Name`` is an identifier, not a feature), the
  ID3 worked example of the graduate lecture.
- ``loan``: the bank-loan example of the lecture, 80 cases (income, credit -> loan).
- ``ads``: the ads-response example of the lecture, 14 cases (income, previous customer ->
  response).
- ``square``: the pruning tutorial's data, 500 points uniform in the unit square, class 1 where
  ``x1 + x2 > 1``, 10% of the labels flipped, NumPy seed 20180904 (:func:`make_noisy_square`).
- ``iris``: Fisher's iris as scikit-learn ships it (the classification-trees notebook).
- ``reviews``: synthetic short reviews for the NLP textbook's bag-of-characters pipeline (their
  review data is not available; :func:`make_reviews`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["DATASETS", "Dataset", "load", "load_ads", "load_iris", "load_loan", "load_sunburn",
           "make_noisy_square", "make_reviews"]


def _read_csv(name: str):
    import pandas as pd

    with resources.files(__package__).joinpath("data", name).open("r") as f:
        # "None" is a class of the sunburn table, not a missing value
        return pd.read_csv(f, keep_default_na=False, dtype=str)


def load_sunburn():
    """The sunburn table as a DataFrame (columns Name, Hair, Height, Weight, Lotion, Result)."""
    return _read_csv("sunburn.csv")


def load_loan():
    """The bank-loan cases as a DataFrame (income, credit, loan): 40 Yes and 40 No."""
    return _read_csv("loan.csv")


def load_ads():
    """The ads-response cases as a DataFrame (income, previous_customer, response): 9 + / 5 -."""
    return _read_csv("ads.csv")


def make_noisy_square(n: int = 500, seed: int = 20180904, *, as_frame: bool = False):
    """The pruning tutorial's data: ``n`` points uniform in the unit square, class 1 where
    ``x1 + x2 > 1``, then 10% of the labels flipped (``n // 10`` points chosen without
    replacement), drawn with ``numpy.random.RandomState(seed)``.

    Returns ``(X, y)`` (float64 of shape (n, 2), int labels), or with ``as_frame`` a DataFrame
    with columns x1, x2, label.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1; got {n}.")
    rs = np.random.RandomState(seed)
    X = rs.rand(n, 2)
    y = (X[:, 0] + X[:, 1] > 1).astype(np.int64)
    flip = rs.choice(n, n // 10, replace=False)
    y[flip] = 1 - y[flip]
    if not as_frame:
        return X, y
    import pandas as pd

    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "label": y})


def make_reviews(n: int = 600, seed: int = 0, *, as_frame: bool = False):
    """Synthetic movie reviews labelled "pos"/"neg": eight neutral words, up to two words of
    the label's sentiment and sometimes one of the other. Returns ``(texts, labels)`` or a
    DataFrame (text, label)."""
    if n < 1:
        raise ValueError(f"n must be at least 1; got {n}.")
    rng = np.random.default_rng(seed)
    good = ["great", "lovely", "superb", "enjoyed", "wonderful", "best"]
    bad = ["awful", "boring", "worst", "dull", "terrible", "waste"]
    neutral = ["the", "film", "plot", "actor", "was", "and", "a", "movie", "scene", "it"]
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(0, 2))
        words = list(rng.choice(neutral, 8))
        k = int(rng.integers(0, 3))
        words += list(rng.choice(good if label else bad, k))
        if rng.random() < 0.15:
            words += list(rng.choice(bad if label else good, 1))
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append("pos" if label else "neg")
    if not as_frame:
        return texts, np.asarray(labels)
    import pandas as pd

    return pd.DataFrame({"text": texts, "label": labels})


def load_iris():
    """Fisher's iris (scikit-learn's copy) as a DataFrame with a ``species`` column."""
    from sklearn.datasets import load_iris as sk_iris

    data = sk_iris(as_frame=True)
    frame = data.data.rename(columns=lambda c: c.replace(" (cm)", "").replace(" ", "_"))
    frame["species"] = np.asarray(data.target_names)[data.target]
    return frame


@dataclass(frozen=True)
class Dataset:
    """A shipped table: its name, target column, a one-line description and its loader."""

    name: str
    target: str
    description: str
    loader: Callable


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("sunburn", "Result", "8 people, hair/height/weight/lotion -> burn (ID3's worked "
            "example; Name is an identifier)", load_sunburn),
    Dataset("loan", "loan", "80 bank-loan cases, income and credit -> loan (information gain "
            "0.19 vs 0.31)", load_loan),
    Dataset("ads", "response", "14 ads-response cases, income and previous customer -> "
            "response (gain 0.151 vs 0.048)", load_ads),
    Dataset("square", "label", "500 points in the unit square, class x1 + x2 > 1, 10% flipped "
            "(pruning tutorial, seed 20180904)", lambda: make_noisy_square(as_frame=True)),
    Dataset("iris", "species", "Fisher's iris, 150 flowers, 4 measurements -> species",
            load_iris),
    Dataset("reviews", "label", "600 synthetic short reviews -> pos/neg (bag-of-characters "
            "pipeline)", lambda: make_reviews(as_frame=True)),
)}


def load(name: str):
    """The shipped table ``name`` as a DataFrame (see :data:`DATASETS`)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")
    return DATASETS[name].loader()
