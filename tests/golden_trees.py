"""Golden trees: every grower's trees on a grid of settings, kept as they were when written.

The engine is being rewritten around one builder (issue "engine, second design"); a rewrite
that changes no tree must keep every tree of every estimator, preset and ensemble node by
node. :func:`cases` is the grid (small real-shaped tables: few distinct values, ties, a
category column, holes, weights, sparse input), :func:`snapshot` the arrays of a fitted
model's trees. ``python tests/golden_trees.py`` writes ``tests/golden/trees.npz`` from the
working tree; ``tests/test_golden_trees.py`` compares the working tree against it.

Rewrite the file only for a change meant to change trees, and say in the commit which cases
changed and why (a tie broken otherwise is a reason; "the numbers moved" is not).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

import treelearn as tl
from treelearn import ensemble as te

GOLDEN = Path(__file__).parent / "golden" / "trees.npz"

#: Integer arrays compared exactly, float arrays to 1e-9 relative (summation order of threads).
INT_FIELDS = ("children_left", "children_right", "feature", "n_node_samples", "branch_ptr",
              "branch_child", "cat_ptr", "cat_branch", "missing_branch")
FLOAT_FIELDS = ("threshold", "impurity", "weighted_n_node_samples", "value")


def _numeric(seed: int, n: int = 300, holes: bool = False):
    """Features of 5 to 40 distinct values (ties at every node), one continuous; a class
    target of three classes and a continuous target; integer weights."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 5, n), rng.integers(0, 12, n),
                         np.round(rng.normal(size=n), 1), rng.integers(0, 40, n),
                         rng.normal(size=n)]).astype(float)
    score = X[:, 0] - 0.3 * X[:, 1] + X[:, 2] + rng.normal(scale=1.0, size=n)
    ycls = np.digitize(score, [-2.0, 0.0])
    yreg = np.round(2 * X[:, 0] + X[:, 2] * X[:, 3] / 10 + rng.normal(size=n), 2)
    if holes:
        X[rng.random((n, X.shape[1])) < 0.08] = np.nan
    w = rng.integers(1, 4, n).astype(float)
    return X, ycls, yreg, w


def _frame(seed: int, n: int = 300):
    """A table with two category columns (4 and 9 levels, holes in one) beside numbers."""
    X, ycls, yreg, w = _numeric(seed, n)
    rng = np.random.default_rng(seed + 100)
    colour = rng.choice(list("abcd"), n)
    town = rng.choice([f"t{i}" for i in range(9)], n).astype(object)
    town[rng.random(n) < 0.1] = None
    ycls = np.where((colour == "a") & (rng.random(n) < 0.7), 2, ycls)
    yreg = yreg + 3 * (colour == "b")
    df = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2],
                       "colour": pd.Categorical(colour), "town": pd.Categorical(town)})
    df.loc[rng.random(n) < 0.06, "x2"] = np.nan
    return df, ycls, yreg, w


def _sparse(seed: int, n: int = 300):
    X, ycls, yreg, w = _numeric(seed, n)
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < 0.6] = 0.0
    return sp.csr_matrix(X), ycls, yreg, w


Case = tuple[Callable[[], object], str, str, bool]  # estimator, data, target, weighted


def cases() -> dict[str, Case]:
    """Name -> (estimator factory, data kind, target kind, weighted)."""
    DTC, DTR = tl.DecisionTreeClassifier, tl.DecisionTreeRegressor
    out: dict[str, Case] = {}
    def add(name, cls, kind, target, weighted, **kw):
        out[name] = (lambda: cls(**kw), kind, target, weighted)

    for crit in ("gini", "entropy", "misclassification", "gain_ratio", "chi2"):
        for splitter in ("best", "random", "hist"):
            add(f"dtc-{crit}-{splitter}", DTC, "numeric", "cls", True, criterion=crit,
                splitter=splitter, random_state=1)
    for crit in ("squared_error", "absolute_error", "sdr"):
        for splitter in ("best", "hist"):
            add(f"dtr-{crit}-{splitter}", DTR, "numeric", "reg", True, criterion=crit,
                splitter=splitter, random_state=1)
    stops = {"depth3": {"max_depth": 3}, "leaf5": {"min_samples_leaf": 5},
             "split20": {"min_samples_split": 20}, "wleaf": {"min_weight_fraction_leaf": 0.02},
             "mid": {"min_impurity_decrease": 0.002}, "leaves9": {"max_leaf_nodes": 9},
             "feat2": {"max_features": 2}, "ccp": {"ccp_alpha": 0.004}}
    for name, params in stops.items():
        for splitter in ("best", "hist"):
            add(f"dtc-{name}-{splitter}", DTC, "numeric", "cls", False, splitter=splitter,
                random_state=2, **params)
            add(f"dtr-{name}-{splitter}", DTR, "numeric", "reg", True, splitter=splitter,
                random_state=2, **params)
    for missing in ("learn", "impute", "c45"):
        for splitter in ("best", "hist"):
            add(f"dtc-holes-{missing}-{splitter}", DTC, "holes", "cls", True, missing=missing,
                splitter=splitter, random_state=3)
    out["dtr-holes-m5-best"] = (lambda: DTR(criterion="sdr", missing="m5"), "holes", "reg",
                                False)
    for split in ("binary", "multiway"):
        for splitter in ("best", "hist"):
            for crit in ("gini", "entropy"):
                out[f"dtc-frame-{split}-{crit}-{splitter}"] = (
                    lambda p=split, s=splitter, c=crit: DTC(
                        criterion=c, categorical_split=p, splitter=s, random_state=4),
                    "frame", "cls", True)
            out[f"dtr-frame-{split}-{splitter}"] = (
                lambda p=split, s=splitter: DTR(categorical_split=p, splitter=s,
                                                random_state=4, max_depth=6),
                "frame", "reg", False)
    # leaves of 5: in nodes of four fractional cases two features tie, and the p-values of
    # the compiled and the plain-Python run round them apart (the coverage pass runs this too)
    out["dtc-frame-c45-test"] = (
        lambda: DTC(missing="c45", selection="test", min_samples_leaf=5), "frame", "cls", False)
    out["dtc-frame-levelcount"] = (lambda: DTC(min_level_count=5, level_smoothing=2.0),
                                   "frame", "cls", False)
    out["dtc-costs"] = (lambda: DTC(feature_costs=[1, 2, 1, 5, 1], criterion="entropy"),
                        "numeric", "cls", False)
    out["dtc-misclassification-cost"] = (
        lambda: DTC(misclassification_cost=[[0, 1, 4], [1, 0, 1], [2, 1, 0]]),
        "numeric", "cls", False)
    out["dtc-class-weight"] = (lambda: DTC(class_weight="balanced", max_depth=5), "numeric",
                               "cls", False)
    out["dtc-average-gain"] = (lambda: DTC(criterion="gain_ratio", average_gain=True,
                                           threshold_penalty=True), "numeric", "cls", False)
    for crit, splitter in (("gini", "best"), ("entropy", "random")):
        out[f"dtc-sparse-{crit}"] = (lambda c=crit, s=splitter: DTC(criterion=c, splitter=s,
                                                                    random_state=5),
                                     "sparse", "cls", True)
    out["dtr-sparse"] = (lambda: DTR(max_depth=8), "sparse", "reg", True)
    out["id3"] = (lambda: tl.ID3Classifier(), "frame", "cls", False)
    out["c45"] = (lambda: tl.C45Classifier(), "frame", "cls", False)
    out["cart-classifier"] = (lambda: tl.CARTClassifier(), "frame", "cls", False)
    out["cart-regressor"] = (lambda: tl.CARTRegressor(), "numeric", "reg", False)
    out["m5"] = (lambda: tl.M5Regressor(), "numeric", "reg", False)
    for splitter in ("best", "hist"):
        out[f"rf-cls-{splitter}"] = (
            lambda s=splitter: te.RandomForestClassifier(n_estimators=4, splitter=s,
                                                         random_state=6),
            "numeric", "cls", True)
        out[f"rf-reg-{splitter}"] = (
            lambda s=splitter: te.RandomForestRegressor(n_estimators=4, splitter=s,
                                                        max_features=0.4, random_state=6),
            "numeric", "reg", False)
        out[f"rf-frame-{splitter}"] = (
            lambda s=splitter: te.RandomForestClassifier(n_estimators=3, splitter=s,
                                                         random_state=6),
            "frame", "cls", False)
    out["rf-holes"] = (lambda: te.RandomForestRegressor(n_estimators=3, random_state=7),
                       "holes", "reg", False)
    out["et-cls"] = (lambda: te.ExtraTreesClassifier(n_estimators=4, random_state=8),
                     "numeric", "cls", False)
    out["et-reg"] = (lambda: te.ExtraTreesRegressor(n_estimators=4, random_state=8),
                     "numeric", "reg", True)
    out["bagging"] = (lambda: te.BaggingClassifier(
        tl.DecisionTreeClassifier(max_depth=4), n_estimators=4, random_state=9),
        "numeric", "cls", False)
    out["bagging-reg"] = (lambda: te.BaggingRegressor(n_estimators=3, random_state=9),
                          "numeric", "reg", False)
    out["adaboost"] = (lambda: te.AdaBoostClassifier(n_estimators=8, random_state=10),
                       "numeric", "cls", False)
    return out


def data(kind: str, target: str, seed: int = 0):
    if kind == "numeric":
        X, ycls, yreg, w = _numeric(seed)
    elif kind == "holes":
        X, ycls, yreg, w = _numeric(seed, holes=True)
    elif kind == "frame":
        X, ycls, yreg, w = _frame(seed)
    elif kind == "sparse":
        X, ycls, yreg, w = _sparse(seed)
    else:
        raise ValueError(kind)
    return X, (ycls if target == "cls" else yreg), w


def fit(name: str):
    factory, kind, target, weighted = cases()[name]
    X, y, w = data(kind, target)
    est = factory()
    # random_state=None draws the feature order afresh, which breaks ties otherwise each time
    for key, value in est.get_params().items():
        if key.endswith("random_state") and value is None:
            est.set_params(**{key: 0})
    if weighted:
        est.fit(X, y, sample_weight=w)
    else:
        est.fit(X, y)
    return est


def trees(est) -> list:
    """The fitted :class:`treelearn.Tree` objects of a tree or an ensemble, in order."""
    if hasattr(est, "tree_"):
        return [est.tree_]
    return [t.tree_ for t in est.estimators_]


def snapshot(est) -> dict[str, np.ndarray]:
    """``{"<tree>/<field>": array}`` of every tree of ``est``."""
    out = {}
    for i, tree in enumerate(trees(est)):
        for field in INT_FIELDS + FLOAT_FIELDS:
            out[f"{i}/{field}"] = np.asarray(getattr(tree, field))
    return out


def write(path: Path = GOLDEN) -> None:
    arrays = {}
    for name in cases():
        for key, value in snapshot(fit(name)).items():
            arrays[f"{name}/{key}"] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"{len(cases())} cases, {len(arrays)} arrays -> {path}")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN)
