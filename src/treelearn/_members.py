"""How ensembles, boosting and the Dask trees fit their member trees: one internal interface.

Why (the engine-rooms issue): forests, bagging, AdaBoost, the baselines, the oblique forests
and the Dask trees reached into the estimators' private methods (``_fit_encoded``,
``_encode_target``, ``_validate_table``, ``_constraints``, ``_criteria``), 16 calls from six
modules, each knowing what the tuple a target encoding returns holds. Those steps are named
here, once, with what they take and give; the estimators keep the private methods as their
implementation, and only this module calls them from outside ``_estimators``.

An ensemble's fit, step by step:

1. :func:`check_params` on the template tree (a ``ValueError``/``TypeError`` naming the bad
   parameter, before any data is read);
2. :func:`prepare`: X validated and encoded once for every member (category levels, float32,
   NaN for missing values), and :func:`encode_target`: y as the engine reads it
   (:class:`Target`); :func:`learned` then holds what the template learned;
3. per member, :func:`new_member` (a shallow copy of the template with its own
   ``random_state`` and what validation learned) and :func:`fit_member` with the member's
   row weights (a bootstrap's counts, boosting's weights), from data prepared once when the
   caller has it (``shared``: :class:`treelearn.engine.build.Shared`);
4. at prediction, :func:`validate_rows` encodes X as the trees were fitted on it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._estimators import BaseDecisionTree, level_counts
from ._validation import validate_params


class Target(NamedTuple):
    """y as the engine reads it (:meth:`BaseDecisionTree._encode_target`): class codes
    ``ycls`` (empty for regression), targets ``yreg`` (empty for classification), the row
    weights ``w`` (the given ones times the class weights), the number of statistics the
    search keeps per node, of values per node, and of classes (0 for regression)."""

    ycls: np.ndarray
    yreg: np.ndarray
    w: np.ndarray
    n_stats: int
    n_values: int
    n_classes: int

    def weighted(self, w: np.ndarray) -> Target:
        """The same target with the row weights ``w`` (a member's)."""
        return self._replace(w=w)


class Prepared(NamedTuple):
    """What :func:`prepare` gives: the encoded ``X``, the data as the caller passed it
    (``X_raw``, for the refits of pruning), ``y`` as validated (1-d), and the given row
    weights validated (None when none were given)."""

    X: Any
    X_raw: Any
    y: np.ndarray
    sw: np.ndarray | None


def check_params(tree: BaseDecisionTree) -> None:
    """Validate ``tree``'s parameters (scikit-learn's constraints plus treelearn's)."""
    validate_params(tree, tree._constraints())


def constraints(tree: BaseDecisionTree) -> dict:
    """The parameter constraints of ``tree`` (for an ensemble's own, built from its trees')."""
    return tree._constraints()


def criterion_code(tree: BaseDecisionTree) -> int | None:
    """The engine's code of ``tree``'s criterion (:mod:`treelearn.engine.criteria`), None when
    its kind has no such criterion."""
    return tree._criteria.get(tree.criterion)


def criteria(cls: type) -> dict[str, int]:
    """The criteria a tree class accepts, by name, with the engine's codes."""
    return cls._criteria


def learned(tree: BaseDecisionTree) -> dict:
    """The fitted data attributes of ``tree`` (public names ending in ``_``)."""
    return {k: v for k, v in vars(tree).items() if k.endswith("_") and not k.startswith("_")}


def encode_target(tree: BaseDecisionTree, y: np.ndarray, w: np.ndarray) -> Target:
    """``y`` (validated, 1-d) encoded for ``tree`` with the row weights ``w``; the template
    learns the classes."""
    return Target(*tree._encode_target(y, w))


def prepare(template: BaseDecisionTree, X, y, sample_weight=None) -> Prepared:
    """X and y validated and encoded once for the members of ``template``'s kind (the
    template learns the levels), with the given weights checked against the rows."""
    from ._validation import check_sample_weight, check_y_1d

    X_raw = X
    X, y = template._validate_table(X, y, fitting=True)
    y = check_y_1d(y)
    sw = None if sample_weight is None else check_sample_weight(sample_weight, X.shape[0])
    return Prepared(X, X_raw, y, sw)


def validate_rows(est: Any, X, y=None, fitting: bool = False):
    """X (and y when ``fitting``) validated as treelearn's trees validate them, for an
    estimator holding a tree's validation parameters and fitted attributes (an ensemble)."""
    return BaseDecisionTree._validate_table(est, X, y, fitting=fitting)


def fit_member(tree: BaseDecisionTree, X, X_raw, y, target: Target,
               shared: Any = None) -> BaseDecisionTree:
    """Fit ``tree`` (from :func:`new_member`) on the encoded ``X`` with ``target`` (its row
    weights the member's), from ``shared`` prepared data when given; returns it."""
    tree._fit_encoded(X, X_raw, y, target.w, tuple(target), shared)
    return tree


def new_member(template: BaseDecisionTree, seed: int, fitted: dict) -> BaseDecisionTree:
    """A member tree: a shallow copy of ``template`` with ``random_state=seed`` and the
    ``fitted`` data attributes (:func:`learned`). Not ``clone()``: the template is made for
    this fit, its parameters validated and never changed in place (a tree's fit rebinds what
    it narrows), and ``clone()`` took 1 ms a tree, under the GIL."""
    import copy

    tree = copy.copy(template)
    tree.random_state = seed
    tree.__dict__.update(fitted)
    return tree


def share(template: BaseDecisionTree, X: np.ndarray, w: np.ndarray, seed: int,
          parallel: bool) -> Any:
    """The engine's view of the dense encoded ``X`` prepared once for every member of
    ``template``'s settings (presorted or ranked columns, or bins fitted on the weights ``w``
    with ``seed``), and each thread's scratch: pass it to :func:`fit_member`. ``parallel``:
    each tree's nodes searched on all threads (False when trees grow side by side)."""
    from .engine.build import Shared

    binner = template._fit_binner(X, w, seed) if template.splitter == "hist" else None
    return Shared.prepare(X, binner, template.is_categorical_, level_counts(template),
                          parallel)


def settings(template: BaseDecisionTree, n: int, p: int, w: np.ndarray) -> Any:
    """The stopping rules and draws of ``template`` resolved for ``n`` rows of ``p``
    features weighing ``w`` (``max_features`` as a count, ``min_samples_leaf`` as rows, the
    engine's seed): what a grower outside the estimators (the Dask level loop) reads."""
    from ._estimators import _resolve

    return _resolve(template, n, p, w)
