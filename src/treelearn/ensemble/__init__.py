"""Ensembles of treelearn trees: bagging, random forests, extra trees, oblique random
forests, AdaBoost, and the OneR and majority-class baselines; forests' proximities
(:mod:`._proximity`).

Many trees grown on one prepared X (:mod:`._forest`, :mod:`._bagging`), predicting through
one packed set of arrays (:mod:`._packed`).
"""

from ._bagging import BaggingClassifier, BaggingRegressor
from ._baselines import MajorityClassifier, OneRClassifier
from ._boosting import AdaBoostClassifier
from ._forest import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from ._oblique import ObliqueRandomForestClassifier, ObliqueRandomForestRegressor
from ._proximity import scaling_coordinates
from ._quantile import ExtraTreesQuantileRegressor, RandomForestQuantileRegressor

__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesQuantileRegressor",
    "ExtraTreesRegressor",
    "MajorityClassifier",
    "ObliqueRandomForestClassifier",
    "ObliqueRandomForestRegressor",
    "OneRClassifier",
    "RandomForestClassifier",
    "RandomForestQuantileRegressor",
    "RandomForestRegressor",
    "scaling_coordinates",
]
