"""Parameter constraints as data, and checks of X, y and sample weights (pure functions).

Each estimator declares ``_parameter_constraints``: for every parameter a list of accepted forms
(:class:`Interval`, :class:`Options`, a type, or ``None``). :func:`validate_params` checks them all
and raises :class:`InvalidParameterError` naming the parameter, what it accepts and what it got.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from .engine.config import X_DTYPE


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has a value it does not accept (both a ValueError and TypeError)."""


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` ("int" or "real") between ``low`` and ``high`` (None: unbounded)."""

    kind: str
    low: float | None
    high: float | None
    closed: str = "both"  # "both", "left", "right", "neither"

    def accepts(self, v: Any) -> bool:
        if isinstance(v, bool | np.bool_):
            return False
        if self.kind == "int":
            if not isinstance(v, numbers.Integral):
                return False
        elif not isinstance(v, numbers.Real) or isinstance(v, numbers.Integral):
            return False
        if isinstance(v, numbers.Real) and math.isnan(v):
            return False
        lo_ok = self.low is None or (
            v >= self.low if self.closed in ("both", "left") else v > self.low
        )
        hi_ok = self.high is None or (
            v <= self.high if self.closed in ("both", "right") else v < self.high
        )
        return lo_ok and hi_ok

    def __str__(self) -> str:
        kind = "an int" if self.kind == "int" else "a float"
        lb = "[" if self.closed in ("both", "left") else "("
        rb = "]" if self.closed in ("both", "right") else ")"
        lo = "-inf" if self.low is None else repr(self.low)
        hi = "inf" if self.high is None else repr(self.high)
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of strings."""

    values: tuple[str, ...]

    def accepts(self, v: Any) -> bool:
        return isinstance(v, str) and v in self.values

    def __str__(self) -> str:
        return "a str among " + ", ".join(repr(x) for x in self.values)


@dataclass(frozen=True)
class InstanceOf:
    """Any instance of ``types``, described as ``name``."""

    types: tuple[type, ...]
    name: str

    def accepts(self, v: Any) -> bool:
        return isinstance(v, self.types)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class HasMethods:
    """Any object with all of ``methods`` (e.g. a cross-validation splitter)."""

    methods: tuple[str, ...]
    name: str

    def accepts(self, v: Any) -> bool:
        return not isinstance(v, str) and all(callable(getattr(v, m, None))
                                              for m in self.methods)

    def __str__(self) -> str:
        return self.name


RANDOM_STATE = InstanceOf((numbers.Integral, np.random.RandomState), "an int, a RandomState")


def _describe(constraint: Any) -> str:
    return "None" if constraint is None else str(constraint)


def keep_params(estimator: Any, params: dict[str, Any]) -> None:
    """Store an estimator's constructor arguments, unchanged, as attributes of the same names
    (scikit-learn's rule: ``__init__`` only stores; checks happen in ``fit``). ``params`` is
    the constructor's ``locals()`` taken first thing, so every parameter is stored once and a
    subclass's explicit signature (which scikit-learn's ``get_params`` reads, and editors
    show) needs no forwarding to its base."""
    for name, value in params.items():
        if name != "self":
            setattr(estimator, name, value)


def validate_params(estimator: Any, constraints: dict[str, list[Any]]) -> None:
    """Raise InvalidParameterError for the first parameter breaking ``constraints``."""
    params = estimator.get_params(deep=False)
    for name, accepted in constraints.items():
        value = params[name]
        ok = any((c is None and value is None) or (c is not None and c.accepts(value))
                 for c in accepted)
        if not ok:
            forms = [_describe(c) for c in accepted]
            desc = forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be {desc}. "
                f"Got {value!r} instead."
            )


def check_X(estimator: Any, X: Any, *, reset: bool, y: Any = "no_validation",
            allow_nan: bool = True):
    """Validate X (and y unless "no_validation"): 2-D, numeric, no infinity (NaN marks a
    missing value unless ``allow_nan`` is False); float32 or sorted CSR.

    A y of None raises scikit-learn's "requires y to be passed" error.
    """
    finite = "allow-nan" if allow_nan else True
    kwargs = dict(accept_sparse=["csr", "csc"], dtype=X_DTYPE, ensure_all_finite=finite,
                  accept_large_sparse=True)
    if isinstance(y, str) and y == "no_validation":
        X = validate_data(estimator, X, reset=reset, **kwargs)
    else:
        X, y = validate_data(estimator, X, y, reset=reset, multi_output=True, dtype=X_DTYPE,
                             accept_sparse=["csr", "csc"], ensure_all_finite=finite,
                             y_numeric=False)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X.sum_duplicates()
        X.sort_indices()
    else:
        X = np.ascontiguousarray(X)
    return X if isinstance(y, str) and y == "no_validation" else (X, y)


def _is_missing(v: Any) -> bool:
    """None, a float NaN, or pandas' NA (without needing pandas installed)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    return type(v).__name__ in ("NAType", "NaTType")


def check_y_missing(y: Any) -> None:
    """Raise a ValueError naming y when it holds NaN, None or pandas' NA (before other checks,
    whose messages would not say which input is at fault)."""
    if y is None:
        return
    try:
        arr = np.asarray(y)
    except (TypeError, ValueError):  # e.g. pandas NA in a list: look at the items as objects
        arr = np.asarray(y, dtype=object)
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError("Input y contains NaN.")
    if arr.dtype.kind == "O" and any(_is_missing(v) for v in arr.ravel()):
        raise ValueError("Input y contains missing values (None, NaN or NA).")


def check_y_1d(y: Any) -> np.ndarray:
    """Return y as a 1-D array, rejecting several target columns and missing labels."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"y must be 1-dimensional (one target); got an array of shape {y.shape}. "
            "treelearn trees predict a single output."
        )
    return y


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray:
    """Return float64 weights of length n_samples (ones when None), validated."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        w = np.full(n_samples, float(sample_weight))
    else:
        try:
            w = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"sample_weight must be numeric: {exc}") from None
    if w.ndim != 1:
        raise ValueError(f"Sample weights must be 1D array or scalar, got shape {w.shape}.")
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight.shape == ({w.shape[0]},), expected ({n_samples},)!"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError("Negative values in data passed to `sample_weight`.")
    if not np.any(w > 0):
        raise ValueError("sample_weight sums to zero: at least one sample needs a positive weight.")
    return w
