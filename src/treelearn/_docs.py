"""The numpydoc sections every estimator method repeats, written once.

A method keeps its own summary (what it computes) in its docstring; :func:`takes_rows` and
:func:`fits` append the Parameters and Returns sections shared by all estimators (the input
``X`` as scikit-learn describes it, ``y`` and ``sample_weight``), so that the wording of the
inputs is the same on every estimator and is changed in one place.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

#: The input rows as every method of the estimators takes them.
X_ROWS = "X : {array-like, sparse matrix} of shape (n_samples, n_features)"


def _entry(head: str, text: str) -> str:
    """A numpydoc entry: its head line and, indented below, its description if any."""
    if not text:
        return head
    return head + "\n" + textwrap.indent(textwrap.fill(text, 88), "    ")


def _with_sections(fn: F, parameters: list[str], returns: str) -> F:
    summary = inspect.cleandoc(fn.__doc__ or "")
    fn.__doc__ = (f"{summary}\n\nParameters\n----------\n" + "\n".join(parameters)
                  + f"\n\nReturns\n-------\n{returns}\n")
    return fn


def takes_rows(returns: str, returns_text: str = "") -> Callable[[F], F]:
    """Decorator: append the Parameters section (``X``) and the Returns section ``returns``
    (``"name : type"``, described by ``returns_text``) to a method's docstring summary.

    Put it below decorators that copy the docstring (``interruptible``)."""

    def wrap(fn: F) -> F:
        return _with_sections(fn, [X_ROWS], _entry(returns, returns_text))

    return wrap


#: The Attributes entries of every fitted estimator's input columns (numpydoc, indented for a
#: class docstring) and of every classifier's classes.
FEATURE_ATTRIBUTES = """    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, when X was a DataFrame with string column names."""
CLASS_ATTRIBUTES = """    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_classes_ : int
        Number of classes.
"""

#: The Returns sections of ``shap_values`` and ``shap_interaction_values`` (trees and
#: ensembles).
SHAP_RETURNS = ("shap_values : ndarray of shape (n_samples, n_features) or (n_samples, "
                "n_features, n_classes)",
                "Each column's contribution to each sample's prediction (a regressor's value, "
                "a classifier's class probabilities): ``expected_value_`` plus the sum over "
                "the columns is the prediction.")
SHAP_INTERACTION_RETURNS = (
    "shap_interaction_values : ndarray of shape (n_samples, n_features, n_features) or "
    "(n_samples, n_features, n_features, n_classes)",
    "Entry ``[i, j, k]`` (``j != k``): half the interaction of columns ``j`` and ``k`` in "
    "sample ``i``'s prediction (SHAP's definition, so the matrix is symmetric and the pair's "
    "whole interaction is ``[i, j, k] + [i, k, j]``); ``[i, j, j]``: column ``j``'s value "
    "without its interactions. Row ``j`` adds up to ``shap_values(X)[i, j]``.")

WEIGHTS = "Non-negative weights, not all zero. None gives every sample weight one."


def fits(X: str = "", y: str = "", sample_weight: str = WEIGHTS,
         returns: str = "The fitted estimator.") -> Callable[[F], F]:
    """Decorator for ``fit(X, y, sample_weight=None)``: append the Parameters section
    (``X``, ``y`` and ``sample_weight``, each with the given description; the weights'
    and the return's have the common one as default) and the Returns section (``self``,
    described by ``returns``) to the method's docstring summary.

    Put it below decorators that copy the docstring (``interruptible``)."""

    def wrap(fn: F) -> F:
        params = [_entry(X_ROWS, X), _entry("y : array-like of shape (n_samples,)", y),
                  _entry("sample_weight : array-like of shape (n_samples,), default=None",
                         sample_weight)]
        return _with_sections(fn, params, _entry("self : object", returns))

    return wrap
