"""Model files: a fitted estimator as a zip of JSON and ``.npy`` arrays, no pickle.

A model file (suffix ``.tlm`` by convention) can be read without treelearn, with nothing but
``zipfile``, ``json`` and ``numpy.load(..., allow_pickle=False)``, and loading one never runs
code from it: the loader builds only the classes listed below, from plain values it checks.

Format (version 1)
------------------
``model.json``
    ``{"format": "treelearn-model", "format_version": 1, "treelearn_version": ...,
    "estimator": class name, "params": {...}, "fitted": {...}, "summary": {...}, "info": {...}}``.
    ``params`` are the constructor parameters and ``fitted`` the fitted attributes
    (``tree_``, ``classes_``, ``categories_``, ...), both as *values*: JSON numbers, strings,
    booleans and null stand for themselves; anything else is an object with a ``"$type"``:
    ``array`` (``"file"``: a member under ``arrays/``; ``"object": true`` when the array was an
    object array of strings), ``float`` (``"value"``: ``"inf"``, ``"-inf"`` or ``"nan"``),
    ``list``, ``tuple`` (``"items"``), ``dict`` (``"items"``: key/value pairs), ``tree``
    (``"n_features"``, ``"n_classes"`` and one array per node array of :class:`~treelearn.Tree`),
    ``binner`` (parameters and the edges of a fitted :class:`~treelearn.Binner`), ``record``
    (the cross-validated pruning result and its cost-complexity path: ``"class"``, ``"fields"``),
    ``splitter`` (a scikit-learn cross-validation splitter: ``"class"``, ``"params"``).
    ``trees`` (many trees end to end: ``"counts"``, each tree's number of nodes, and
    one concatenated array per node array, integers in the narrowest safe dtype),
    ``estimator`` (an unfitted tree given as a parameter: ``"class"``, ``"params"``).
    Ensembles (forests, bagging, AdaBoost) keep their trees in one ``trees`` value and, per
    member, only what differs between members (``"members"``: its ``random_state``, its
    columns, its own fitted attributes); the attributes all members share (levels, classes,
    feature names, the binner) are stored once, on the ensemble.
    ``summary`` repeats for readers what the arrays say (nodes, leaves, depth, features,
    classes); ``info`` is free JSON given to :func:`save` (the command line stores the training
    data's description there).
``arrays/<n>.npy``
    NumPy's ``.npy`` format; booleans, integers, floats and unicode strings only.

Loading checks the format and its version, the members' unpacked sizes against the memory
available (:mod:`treelearn._memory`), every ``$type`` and class name against a fixed
list, the dtype and size of every array (against the bytes present, before allocating), the
tree's invariants (:meth:`Tree.check`: child indices in range and after their parent, so no
cycle; branch tables; finite values), and that the parts agree with each other (feature counts,
classes, categorical levels, the binner). Anything else raises :class:`ModelFileError`, a
``ValueError``.

Saving writes a temporary file beside the target and renames it into place
(:func:`treelearn._files.atomic_path`): an interrupted save leaves the old file or none, never
half of one. Pickle and joblib keep working on estimators as for any scikit-learn estimator.
"""

from __future__ import annotations

import dataclasses
import functools
import io as _io
import json
import math
import os
import warnings
import zipfile
import zlib
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np

from . import _estimators, ensemble
from ._estimators import BaseDecisionTree, DecisionTreeClassifier
from ._files import atomic_path
from ._memory import available as available_memory
from ._memory import format_size
from ._tree import Tree
from ._version import __version__
from .engine.binning import Binner
from .oblique import ObliqueTreeClassifier, ObliqueTreeRegressor
from .optimal import OptimalTreeClassifier
from .pruning.cost_complexity import CostComplexityPath
from .pruning.cv import CVPruning

FORMAT = "treelearn-model"
FORMAT_VERSION = 1
#: Largest ``model.json`` and largest array member read (bytes): far above any real tree,
#: low enough that a hostile file cannot make the loader allocate without bound.
MAX_JSON_BYTES = 64 << 20
MAX_ARRAY_BYTES = 4 << 30
MAX_MEMBERS = 10_000
#: Most trees an ensemble in a model file may hold.
MAX_TREES = 100_000
_MAX_DEPTH = 24

#: The tree estimators a model file may hold: the public ones.
ESTIMATORS: dict[str, type[BaseDecisionTree]] = {
    name: getattr(_estimators, name) for name in _estimators.__all__} | {
    "OptimalTreeClassifier": OptimalTreeClassifier,
    "ObliqueTreeClassifier": ObliqueTreeClassifier, "ObliqueTreeRegressor": ObliqueTreeRegressor}
#: Ensembles and baselines a model file may hold: all of :mod:`treelearn.ensemble`.
ENSEMBLES: dict[str, type] = {name: getattr(ensemble, name) for name in ensemble.__all__}
_RECORDS = {"CVPruning": CVPruning, "CostComplexityPath": CostComplexityPath}
#: scikit-learn splitters a ``prune_cv`` parameter may hold (all are plain parameter holders).
_SPLITTERS = ("KFold", "StratifiedKFold", "ShuffleSplit", "StratifiedShuffleSplit",
              "RepeatedKFold", "RepeatedStratifiedKFold", "GroupKFold", "LeaveOneOut")
_TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "impurity",
                "n_node_samples", "weighted_n_node_samples", "value", "branch_ptr",
                "branch_child", "cat_ptr", "cat_branch", "missing_branch", "missing_seen")
_TREE_KINDS = {"threshold": "f", "impurity": "f", "weighted_n_node_samples": "f", "value": "f",
               "missing_seen": "b", "lin_coef": "f", "lin_fill": "f", "lin_intercept": "f",
               "lin_set_one": "b", "obl_weight": "f"}
#: Arrays of a model tree's linear leaves (single trees only; all or none).
_LINEAR_ARRAYS = ("lin_ptr", "lin_feature", "lin_coef", "lin_fill", "lin_intercept",
                  "lin_set_ptr", "lin_set_code", "lin_set_one")
#: Arrays of oblique splits (all or none; a tree or an ensemble's trees without any oblique
#: split leaves them out, so files of trees on one feature per node are as before).
_OBLIQUE_ARRAYS = ("obl_ptr", "obl_feature", "obl_weight")
#: Tree arrays a model file of an earlier version may lack (the Tree's default applies), and
#: the linear leaves and oblique splits a tree may have none of.
_TREE_OPTIONAL = ("missing_seen", *_LINEAR_ARRAYS, *_OBLIQUE_ARRAYS)
#: Fitted attributes a model file may set (anything else in ``fitted`` is refused).
_FITTED = ("tree_", "unpruned_tree_", "selection_", "n_features_in_", "feature_names_in_",
           "is_categorical_", "categories_", "classes_", "n_classes_", "cost_matrix_",
           "binner_", "pruning_", "ccp_alpha_", "n_outputs_", "max_features_", "objective_",
           "optimal_", "lower_bound_", "greedy_objective_", "n_thresholds_evaluated_")


#: Fitted attributes of an ensemble besides its members (the data attributes above that
#: members share, and the ensemble's own).
_ENSEMBLE_FITTED = ("n_features_in_", "feature_names_in_", "is_categorical_", "categories_",
                    "classes_", "n_classes_", "binner_", "selection_", "n_outputs_",
                    "estimators_features_", "estimator_weights_", "estimator_errors_",
                    "oob_score_", "oob_decision_function_", "oob_prediction_", "_sampling",
                    "rules_", "feature_", "feature_name_", "majority_", "n_weight_",
                    "class_prior_", "_leaf_store")
#: Fitted attributes of a tree that differ between the members of an ensemble.
_MEMBER_OWN = ("tree_", "unpruned_tree_", "pruning_", "ccp_alpha_", "max_features_",
               "cost_matrix_", "selection_")
_NARROW_INTS = (np.int8, np.int16, np.int32, np.int64)


#: What reading a damaged archive raises (bad headers, CRC, truncated deflate streams, a
#: compression method zipfile lacks; RuntimeError: a member flagged as encrypted;
#: UnicodeDecodeError: a local header's name flagged UTF-8 that is not).
_DAMAGED = (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError,
            RuntimeError, UnicodeDecodeError)


class _Members(list):
    """The members of an ensemble as read: ``(random_state, own fitted attributes)``."""


class ModelFileError(ValueError):
    """A file that is not a valid treelearn model file (or not one this version reads)."""


# -- writing ------------------------------------------------------------------------------------

class _Writer:
    """Turns values into JSON-able objects, collecting arrays as ``.npy`` members."""

    def __init__(self) -> None:
        self.arrays: dict[str, bytes] = {}

    def array(self, a: np.ndarray) -> dict:
        a = np.asarray(a)
        obj = {"$type": "array"}
        if a.dtype == object:
            if not all(isinstance(v, str) for v in a.ravel().tolist()):
                raise TypeError("an object array of other values than strings cannot be "
                                "stored in a model file")
            a = a.astype(str) if a.size else np.zeros(a.shape, dtype="<U1")
            obj["object"] = True
        if a.dtype.kind not in "biufU":
            raise TypeError(f"arrays of dtype {a.dtype} cannot be stored in a model file")
        name = f"arrays/{len(self.arrays)}.npy"
        buf = _io.BytesIO()
        np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
        self.arrays[name] = buf.getvalue()
        obj["file"] = name
        return obj

    def value(self, v: Any, where: str) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, Integral):
            return int(v)
        if isinstance(v, Real):
            v = float(v)
            return v if math.isfinite(v) else {"$type": "float", "value": repr(v)}
        if isinstance(v, np.str_):
            return str(v)
        if isinstance(v, np.ndarray):
            if v.dtype == object and not all(isinstance(x, str) for x in v.ravel().tolist()):
                # categorical levels: any mix of strings, numbers and booleans
                return {"$type": "list", "items": [self.value(x, where) for x in v.tolist()],
                        "as_array": True}
            return self.array(v)
        if isinstance(v, (list, tuple)):
            return {"$type": "list" if isinstance(v, list) else "tuple",
                    "items": [self.value(x, where) for x in v]}
        if isinstance(v, dict):
            return {"$type": "dict",
                    "items": [[self.value(k, where), self.value(x, where)] for k, x in v.items()]}
        if isinstance(v, BaseDecisionTree) and type(v) in ESTIMATORS.values():
            return {"$type": "estimator", "class": type(v).__name__,
                    "params": _params(v, self)}
        if isinstance(v, Tree):
            out = {"$type": "tree", "n_features": v.n_features, "n_classes": int(v.n_classes[0])}
            for name in _TREE_ARRAYS:
                out[name] = self.array(getattr(v, name))
            if v.has_linear_leaves:
                for name in _LINEAR_ARRAYS:
                    out[name] = self.array(getattr(v, name))
            if v.is_oblique:
                for name in _OBLIQUE_ARRAYS:
                    out[name] = self.array(getattr(v, name))
            return out
        if isinstance(v, Binner):
            out = {"$type": "binner", "max_bins": v.max_bins, "subsample": v.subsample,
                   "random_state": self.value(v.random_state, where)}
            if v.is_fitted:
                out["edges"] = [self.array(e) for e in v.bin_edges_]
                out["exact"] = self.array(v.exact_)
            return out
        if type(v) in _RECORDS.values():
            return {"$type": "record", "class": type(v).__name__,
                    "fields": {f.name: self.value(getattr(v, f.name), where)
                               for f in dataclasses.fields(v)}}
        if type(v).__name__ in _SPLITTERS and type(v).__module__.startswith("sklearn."):
            return {"$type": "splitter", "class": type(v).__name__,
                    "params": {k: self.value(x, where) for k, x in v.get_params().items()}
                    if hasattr(v, "get_params") else _splitter_params(v, where, self)}
        raise TypeError(f"{where}: a value of type {type(v).__name__} cannot be stored in a "
                        "model file (plain numbers, strings, booleans and arrays only).")


    def trees(self, trees: list[Tree]) -> dict:
        """Many trees end to end: one array per node array (integers narrowed)."""
        out = {"$type": "trees", "n_classes": int(trees[0].n_classes[0]),
               "counts": self.array(np.array([t.node_count for t in trees], dtype=np.int64)),
               "n_features": self.array(np.array([t.n_features for t in trees],
                                                 dtype=np.int64))}
        names = _TREE_ARRAYS
        if any(t.is_oblique for t in trees):
            names += _OBLIQUE_ARRAYS
        for name in names:
            if name == "obl_ptr":
                a = np.concatenate([t.obl_ptr if t.obl_ptr is not None
                                    else np.zeros(t.node_count + 1, dtype=np.intp)
                                    for t in trees])
            elif name in _OBLIQUE_ARRAYS:
                a = np.concatenate([getattr(t, name) for t in trees if t.obl_ptr is not None])
            else:
                a = np.concatenate([getattr(t, name) for t in trees])
            if a.dtype.kind == "i":
                lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
                a = a.astype(next(d for d in _NARROW_INTS
                                  if np.iinfo(d).min <= lo and hi <= np.iinfo(d).max))
            out[name] = self.array(a)
        return out


def _splitter_params(v, where: str, writer: _Writer) -> dict:
    """Constructor parameters of a scikit-learn splitter (they have no get_params)."""
    import inspect

    names = inspect.signature(type(v).__init__).parameters
    out = {}
    for k in names:
        if k == "self":
            continue
        if k == "n_splits" and hasattr(v, "n_repeats"):
            x = v.cvargs["n_splits"]
        else:
            x = getattr(v, k, v.cvargs.get(k) if hasattr(v, "cvargs") else None)
        out[k] = writer.value(x, f"{where}.{k}")
    return out


def _params(model: BaseDecisionTree, writer: _Writer) -> dict:
    out = {}
    for name, v in model.get_params(deep=False).items():
        if name == "random_state" and isinstance(v, np.random.RandomState):
            warnings.warn("random_state is a RandomState instance, which a model file does not "
                          "store; the loaded model has random_state=None (its fitted tree is "
                          "the same).", UserWarning, stacklevel=3)
            v = None
        out[name] = writer.value(v, f"parameter {name}")
    return out


def _summary(model) -> dict:
    members = getattr(model, "estimators_", None)
    tree = getattr(model, "tree_", None)
    if tree is not None:
        out = {"n_nodes": tree.node_count, "n_leaves": tree.n_leaves,
               "max_depth": tree.max_depth}
    elif members is not None:
        out = {"n_trees": len(members),
               "n_nodes": int(sum(m.tree_.node_count for m in members)),
               "n_leaves": int(sum(m.tree_.n_leaves for m in members)),
               "max_depth": int(max(m.tree_.max_depth for m in members))}
    else:
        out = {}
    out["n_features"] = int(model.n_features_in_)
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        out["feature_names"] = [str(n) for n in names]
    if hasattr(model, "classes_"):
        out["classes"] = [str(c) for c in model.classes_]
    return out


def save(model, path, *, info: dict | None = None) -> Path:
    """Write a fitted estimator to a model file (see the module docstring for the format).

    Parameters
    ----------
    model : treelearn estimator or fitted scikit-learn decision tree
        A fitted :class:`DecisionTreeClassifier`, :class:`DecisionTreeRegressor` or preset,
        a fitted ensemble of :mod:`treelearn.ensemble` (forest, extra trees, bagging,
        AdaBoost) or baseline (OneR, majority class); a scikit-learn tree is stored as the
        equivalent treelearn estimator (:func:`~treelearn.from_sklearn`).
    path : str or path-like
        The file to write (``.tlm`` by convention). Written atomically: a temporary file
        beside it is renamed into place once complete.
    info : dict, optional
        Extra JSON-serialisable description kept in the file (e.g. the training data's
        summary); read back with :func:`read_metadata`.

    Returns
    -------
    path : pathlib.Path
        The path written.
    """
    from .interop import estimator_and_tree

    if type(model) in ENSEMBLES.values():
        return _save(model, path, _ensemble_fitted(model), info)
    est, _ = estimator_and_tree(model, "save")
    if est is None:
        raise TypeError("save needs a fitted estimator, not a bare Tree.")
    if type(est) not in ESTIMATORS.values():
        raise TypeError(f"save supports treelearn's estimators ({', '.join(ESTIMATORS)}, "
                        f"{', '.join(ENSEMBLES)}); got {type(est).__name__}.")
    def fitted(writer):
        return {name: writer.value(getattr(est, name), name) for name in _FITTED
                if hasattr(est, name)}

    return _save(est, path, fitted, info)


def _ensemble_fitted(model):
    """The ``fitted`` part of an ensemble's file: its own attributes, its members' trees in
    one ``trees`` value, per member what it does not share."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)

    def fitted(writer):
        out = {name: writer.value(getattr(model, name), name) for name in _ENSEMBLE_FITTED
               if name in vars(model)}
        members = getattr(model, "estimators_", None)
        if members is not None:
            each = []
            for k, m in enumerate(members):
                own = {n: writer.value(getattr(m, n), f"estimators_[{k}].{n}")
                       for n in _MEMBER_OWN if n != "tree_" and n in vars(m)}
                rs = m.random_state
                each.append({"random_state": int(rs) if isinstance(rs, Integral) else None,
                             "fitted": own})
            out["estimators_"] = {"$type": "members",
                                  "trees": writer.trees([m.tree_ for m in members]),
                                  "each": each}
        return out

    return fitted


def _save(est, path, fitted, info) -> Path:
    writer = _Writer()
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
            "treelearn_version": __version__, "estimator": type(est).__name__,
            "params": _params(est, writer), "fitted": fitted(writer), "summary": _summary(est),
            "info": info if info is not None else {}}
    try:
        text = json.dumps(meta, indent=1, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"info must be plain JSON (no NaN or infinity): {exc}") from None
    path = Path(os.fspath(path))
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; give a file name such as model.tlm")
    with atomic_path(path) as tmp:
        # Level 3, not zlib's default 6: 3x faster on node arrays for 5% larger files
        # (measured on an 80k-node tree: 0.12 s against 0.31 s).
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED,
                             compresslevel=3) as zf:
            zf.writestr("model.json", text)
            for name, data in writer.arrays.items():
                zf.writestr(name, data)
    return path


# -- reading ------------------------------------------------------------------------------------

def _fail(msg: str) -> ModelFileError:
    return ModelFileError(f"invalid model file: {msg}")


class _Reader:
    """Builds values from the JSON objects of a model file, checking each one."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.used: set[str] = set()

    def member(self, name: Any) -> bytes:
        if not isinstance(name, str) or not name.startswith("arrays/"):
            raise _fail(f"array member {name!r} is not under arrays/")
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise _fail(f"array member {name!r} is missing") from None
        if info.file_size > MAX_ARRAY_BYTES:
            raise _fail(f"array member {name!r} is too large")
        self.used.add(name)
        return self.zf.read(name)

    def array(self, obj: dict) -> np.ndarray:
        data = self.member(obj.get("file"))
        buf = _io.BytesIO(data)
        try:
            version = np.lib.format.read_magic(buf)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(buf)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(buf)
            else:
                raise ValueError(f"npy version {version}")
        except Exception as exc:  # noqa: BLE001 - NumPy's header parser on untrusted text
            # raises what its tokenizer and literal_eval raise (TokenError, SyntaxError,
            # ValueError, MemoryError, RecursionError, ...): all mean "not an .npy header"
            raise _fail(f"{obj.get('file')}: not an .npy array ({type(exc).__name__}: "
                        f"{str(exc)[:200]})") from None
        if not isinstance(fortran, bool) or not isinstance(shape, tuple) or any(
                type(d) is not int or d < 0 for d in shape):
            raise _fail(f"{obj.get('file')}: shape {shape!r} or order {fortran!r}")
        if dtype.kind not in "biufU" or dtype.hasobject or dtype.itemsize == 0 \
                or len(shape) > 3:
            raise _fail(f"{obj.get('file')}: arrays of dtype {dtype} and {len(shape)} "
                        "dimensions are not allowed")
        count = math.prod(shape)
        if count < 0 or count * dtype.itemsize != len(data) - buf.tell():
            raise _fail(f"{obj.get('file')}: the data does not match its shape {shape}")
        if dtype.kind == "U" and count:
            # NumPy stores any 32-bit value; Python's str holds code points up to 0x10FFFF
            order = dtype.byteorder if dtype.byteorder in "<>" else "="
            units = np.frombuffer(data, dtype=np.dtype(np.uint32).newbyteorder(order),
                                  count=count * dtype.itemsize // 4, offset=buf.tell())
            if units.max() > 0x10FFFF:
                raise _fail(f"{obj.get('file')}: strings with invalid characters")
        a = np.frombuffer(data, dtype=dtype, count=count, offset=buf.tell())
        a = a.reshape(shape, order="F" if fortran else "C").copy()
        if obj.get("object"):
            if a.dtype.kind != "U":
                raise _fail(f"{obj.get('file')}: an object array must be stored as strings")
            a = a.astype(object)
        return a

    def value(self, v: Any, depth: int = 0) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if depth > _MAX_DEPTH:
            raise _fail("values nested too deeply")
        if isinstance(v, list) or not isinstance(v, dict):
            raise _fail(f"a bare {type(v).__name__} where a value was expected")
        kind = v.get("$type")
        if kind == "array":
            return self.array(v)
        if kind == "float":
            if v.get("value") not in ("inf", "-inf", "nan"):
                raise _fail(f"float value {v.get('value')!r}")
            return float(v["value"])
        if kind in ("list", "tuple"):
            items = v.get("items")
            if not isinstance(items, list):
                raise _fail(f"{kind} without items")
            out = [self.value(x, depth + 1) for x in items]
            if v.get("as_array"):
                if any(not isinstance(x, (str, int, float, bool)) for x in out):
                    raise _fail("levels must be strings, numbers or booleans")
                arr = np.empty(len(out), dtype=object)
                arr[:] = out
                return arr
            return out if kind == "list" else tuple(out)
        if kind == "dict":
            items = v.get("items")
            if not isinstance(items, list) or any(
                    not isinstance(p, list) or len(p) != 2 for p in items):
                raise _fail("dict without key/value pairs")
            out = {}
            for k, x in items:
                k = self.value(k, depth + 1)
                if not isinstance(k, (str, int, float, bool, type(None))):
                    raise _fail("a dict key is not a plain value")
                out[k] = self.value(x, depth + 1)
            return out
        if kind == "tree":
            return self.tree(v)
        if kind == "trees":
            return self.trees(v)
        if kind == "members":
            each = v.get("each")
            if not isinstance(each, list) or not isinstance(v.get("trees"), dict) or any(
                    not isinstance(e, dict) or not isinstance(e.get("fitted"), dict)
                    for e in each):
                raise _fail("ensemble members")
            trees = self.trees(v["trees"])
            if len(trees) != len(each):
                raise _fail(f"{len(each)} members but {len(trees)} trees")
            out = []
            for e, t in zip(each, trees, strict=True):
                rs = e.get("random_state")
                if rs is not None and not _is_int(rs, 0, 2**32 - 1):
                    raise _fail(f"member random_state {rs!r}")
                unknown = set(e["fitted"]) - set(_MEMBER_OWN)
                if unknown:
                    raise _fail(f"unknown member attributes {sorted(unknown)}")
                own = {k: self.value(x, depth + 1) for k, x in e["fitted"].items()}
                own["tree_"] = t
                out.append((rs, own))
            return _Members(out)
        if kind == "estimator":
            name, params = v.get("class"), v.get("params")
            cls = ESTIMATORS.get(name) if isinstance(name, str) else None
            if cls is None or not isinstance(params, dict):
                raise _fail(f"estimator {name!r} is not a treelearn tree")
            try:
                est = cls(**{k: self.value(x, depth + 1) for k, x in params.items()})
                from ._validation import validate_params

                validate_params(est, est._constraints())
            except (TypeError, ValueError) as exc:
                raise _fail(f"estimator {name}: {exc}") from None
            return est
        if kind == "binner":
            return self.binner(v, depth)
        if kind == "record":
            name = v.get("class")
            cls = _RECORDS.get(name) if isinstance(name, str) else None
            fields = v.get("fields")
            if cls is None or not isinstance(fields, dict) or \
                    set(fields) != {f.name for f in dataclasses.fields(cls)}:
                raise _fail(f"record {v.get('class')!r} is not one treelearn writes")
            return cls(**{k: self.value(x, depth + 1) for k, x in fields.items()})
        if kind == "splitter":
            name, params = v.get("class"), v.get("params")
            if name not in _SPLITTERS or not isinstance(params, dict):
                raise _fail(f"splitter {name!r} is not one a model file may hold")
            import sklearn.model_selection as ms

            try:
                return getattr(ms, name)(**{k: self.value(x, depth + 1)
                                            for k, x in params.items()})
            except (TypeError, ValueError) as exc:
                raise _fail(f"splitter {name}: {exc}") from None
        raise _fail(f"unknown value type {kind!r}")

    def _tree_array(self, v: dict, name: str, what: str) -> np.ndarray | None:
        """The array ``name`` of a ``tree`` or ``trees`` value (``what``), None when it is an
        optional one left out."""
        obj = v.get(name)
        if obj is None and name in _TREE_OPTIONAL:
            return None
        if not isinstance(obj, dict) or obj.get("$type") != "array":
            raise _fail(f"{what} array {name} is missing")
        return self.array(obj)

    def tree(self, v: dict) -> Tree:
        arrays = {}
        for name in _TREE_ARRAYS + _LINEAR_ARRAYS + _OBLIQUE_ARRAYS:
            a = self._tree_array(v, name, "tree")
            if a is None:
                continue
            want = _TREE_KINDS.get(name, "i")
            if a.dtype.kind != want:
                kinds = {"f": "floats", "b": "booleans", "i": "integers"}
                raise _fail(f"tree array {name} has dtype {a.dtype}, expected {kinds[want]}")
            if name != "value" and a.ndim != 1:
                raise _fail(f"tree array {name} is not one-dimensional")
            if want == "i" and a.size and (a.min() < np.iinfo(np.intp).min
                                           or a.max() > np.iinfo(np.intp).max):
                raise _fail(f"tree array {name} has out-of-range indices")
            arrays[name] = a
        n_features, n_classes = v.get("n_features"), v.get("n_classes")
        for label, x in (("n_features", n_features), ("n_classes", n_classes)):
            if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= 10**7:
                raise _fail(f"tree {label} {x!r}")
        if arrays["value"].ndim != 3:
            raise _fail("tree value must have three dimensions")
        try:
            return Tree(n_features, [n_classes], *(arrays[n] for n in _TREE_ARRAYS[:8]),
                        **{n: arrays[n] for n in _TREE_ARRAYS[8:] + _LINEAR_ARRAYS
                           + _OBLIQUE_ARRAYS if n in arrays})
        except ValueError as exc:
            raise _fail(f"tree: {exc}") from None

    def trees(self, v: dict) -> list[Tree]:
        """The trees of a ``trees`` value, cut apart and each checked as a Tree."""
        arrays = {}
        names = (*_TREE_ARRAYS, *_OBLIQUE_ARRAYS)
        for name in ("counts", "n_features", *names):
            a = self._tree_array(v, name, "trees")
            if a is None:
                continue
            want = _TREE_KINDS.get(name, "i")
            if a.dtype.kind != want or (name != "value" and a.ndim != 1):
                raise _fail(f"trees array {name} has dtype {a.dtype} or shape {a.shape}")
            arrays[name] = a.astype(np.intp) if want == "i" else a
        counts, n_feat = arrays["counts"], arrays["n_features"]
        n_classes = v.get("n_classes")
        if not 1 <= counts.size <= MAX_TREES or counts.shape != n_feat.shape \
                or counts.min() < 1 or counts.max() > 10**9 or n_feat.min() < 1 \
                or n_feat.max() > 10**7 \
                or not _is_int(n_classes, 1, 10**7):
            raise _fail("trees: counts, n_features or n_classes out of range")
        if arrays["value"].ndim != 3:
            raise _fail("trees value must have three dimensions")
        total = int(counts.sum())
        oblique = [n for n in _OBLIQUE_ARRAYS if n in arrays]
        if oblique and len(oblique) != len(_OBLIQUE_ARRAYS):
            raise _fail("trees: the oblique-split arrays must be given together")
        for name in names:
            if name not in arrays:
                continue
            n = arrays[name].shape[0]
            want = {"branch_ptr": total + counts.size, "cat_ptr": total + counts.size,
                    "obl_ptr": total + counts.size, "branch_child": None, "cat_branch": None,
                    "obl_feature": None, "obl_weight": None}.get(name, total)
            if want is not None and n != want:
                raise _fail(f"trees array {name} has {n} rows, expected {want}")
        out = []
        node = ptr = child = cat = term = 0
        bp, cp = arrays["branch_ptr"], arrays["cat_ptr"]
        op = arrays.get("obl_ptr")
        n_terms = arrays["obl_feature"].shape[0] if oblique else 0
        for k, m in enumerate(counts.tolist()):
            nb = int(bp[ptr + m])
            nc = int(cp[ptr + m])
            nt = int(op[ptr + m]) if oblique else 0
            if nb < 0 or nc < 0 or nt < 0 or child + nb > arrays["branch_child"].shape[0] \
                    or cat + nc > arrays["cat_branch"].shape[0] or term + nt > n_terms:
                raise _fail(f"tree {k}: branch tables out of range")
            parts = {}
            for name in names:
                if name not in arrays:
                    continue
                a = arrays[name]
                if name in ("branch_ptr", "cat_ptr", "obl_ptr"):
                    parts[name] = a[ptr:ptr + m + 1]
                elif name == "branch_child":
                    parts[name] = a[child:child + nb]
                elif name == "cat_branch":
                    parts[name] = a[cat:cat + nc]
                elif name in ("obl_feature", "obl_weight"):
                    parts[name] = a[term:term + nt]
                else:
                    parts[name] = a[node:node + m]
            try:
                out.append(Tree(int(n_feat[k]), [n_classes],
                                *(parts[n] for n in _TREE_ARRAYS[:8]),
                                **{n: parts[n] for n in names[8:] if n in parts}))
            except ValueError as exc:
                raise _fail(f"tree {k}: {exc}") from None
            node += m
            ptr += m + 1
            child += nb
            cat += nc
            term += nt
        if child != arrays["branch_child"].shape[0] or cat != arrays["cat_branch"].shape[0] \
                or term != n_terms:
            raise _fail("trees: branch tables longer than the trees")
        return out

    def binner(self, v: dict, depth: int) -> Binner:
        try:
            b = Binner(max_bins=v.get("max_bins"), subsample=v.get("subsample"),
                       random_state=self.value(v.get("random_state"), depth + 1))
        except (TypeError, ValueError) as exc:
            raise _fail(f"binner: {exc}") from None
        if "edges" in v:
            edges = v["edges"]
            if not isinstance(edges, list) or not isinstance(v.get("exact"), dict):
                raise _fail("binner edges")
            try:
                b.set_edges([self.array(e) if isinstance(e, dict) else None for e in edges],
                            self.array(v["exact"]))
            except (TypeError, ValueError) as exc:
                raise _fail(f"binner: {exc}") from None
        return b


def _open(path) -> zipfile.ZipFile:
    path = Path(os.fspath(path))
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a model file")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ModelFileError(f"{path} is not a treelearn model file (not a zip archive)") \
            from None
    except (*_DAMAGED, ValueError) as exc:
        raise _fail(f"damaged archive ({exc})") from None
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        zf.close()
        raise _fail("too many members")
    # zipfile never unpacks more than a member's declared size, so the declared sizes bound
    # what loading allocates: refuse a file (a zip bomb, a lying header) that would not fit
    total = sum(i.file_size for i in infos)
    limit, source = available_memory()
    if limit is not None and total > limit:
        zf.close()
        raise _fail(f"its members unpack to {format_size(total)}, more than {source}")
    return zf


def _metadata(zf: zipfile.ZipFile) -> dict:
    try:
        info = zf.getinfo("model.json")
    except KeyError:
        raise ModelFileError("not a treelearn model file: model.json is missing") from None
    if info.file_size > MAX_JSON_BYTES:
        raise _fail("model.json is too large")
    try:
        meta = json.loads(zf.read("model.json").decode("utf-8"),
                          parse_constant=lambda c: _reject_constant(c))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise _fail(f"model.json is not JSON ({str(exc)[:200] or type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError("not a treelearn model file (model.json does not say "
                             f'"format": "{FORMAT}")')
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(f"format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"the model file has format version {version}, written by a newer "
                             f"treelearn ({meta.get('treelearn_version')}); this treelearn "
                             f"({__version__}) reads up to version {FORMAT_VERSION}")
    for key, kind in (("params", dict), ("fitted", dict), ("summary", dict), ("info", dict),
                      ("estimator", str)):
        if not isinstance(meta.get(key), kind):
            raise _fail(f"{key} is missing or not a {kind.__name__}")
    return meta


def _reject_constant(c: str):
    raise json.JSONDecodeError(f"constant {c} is not JSON", c, 0)


def _only_model_file_errors(fn):
    """Let ``fn`` raise ModelFileError (and FileNotFoundError/IsADirectoryError for the path
    itself) and nothing else: an exception the checks did not foresee becomes a
    ModelFileError whose ``__cause__`` is kept (``tools/fuzz_model_files.py`` counts those
    separately: each one is a check to write)."""

    @functools.wraps(fn)
    def wrapper(path, *args, **kwargs):
        try:
            return fn(path, *args, **kwargs)
        except (ModelFileError, FileNotFoundError, IsADirectoryError):
            raise
        except RecursionError:
            raise _fail("values nested too deeply") from None
        except Exception as exc:  # noqa: BLE001 - the loader's promise, see above
            raise _fail(f"unreadable ({type(exc).__name__}: {str(exc)[:200]})") from exc

    return wrapper


@_only_model_file_errors
def read_metadata(path) -> dict:
    """The JSON part of a model file (format, versions, estimator, parameters, summary, info),
    checked for format and version, without building the model.

    Raises
    ------
    ModelFileError
        (a ValueError) as :func:`load`, for any content of the file.
    FileNotFoundError
        When ``path`` does not exist.
    """
    with _open(path) as zf:
        try:
            return _metadata(zf)
        except _DAMAGED as exc:
            raise _fail(f"damaged archive ({exc})") from None


def load(path) -> BaseDecisionTree:
    """Read a model file written by :func:`save` and return the fitted estimator.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    model : treelearn estimator
        Fitted, predicting exactly as the saved one.

    Raises
    ------
    ModelFileError
        (a ValueError) when the file is not a treelearn model file, is damaged, was written by
        a newer format version, or holds values that break a check (see the module docstring):
        for any content of the file, this is the only exception (fuzzed with a million
        damaged and hostile files, ``tools/fuzz_model_files.py``).
    FileNotFoundError
        When ``path`` does not exist.
    """
    return load_with_metadata(path)[0]


@_only_model_file_errors
def load_with_metadata(path) -> tuple[BaseDecisionTree, dict]:
    """:func:`load` and :func:`read_metadata` in one reading of the file.

    Parameters
    ----------
    path : str or path-like
        As for :func:`load`.

    Returns
    -------
    model : treelearn estimator
        What :func:`load` returns.
    metadata : dict
        As :func:`read_metadata` returns it.

    Raises
    ------
    ModelFileError, FileNotFoundError
        As :func:`load`.
    """
    with _open(path) as zf:
        try:
            meta = _metadata(zf)
            reader = _Reader(zf)
            cls = ESTIMATORS.get(meta["estimator"]) or ENSEMBLES.get(meta["estimator"])
            if cls is None:
                raise _fail(f"estimator {meta['estimator']!r} is not one of "
                            f"{', '.join(ESTIMATORS)}, {', '.join(ENSEMBLES)}")
            params = {k: reader.value(v) for k, v in meta["params"].items()}
            allowed = _FITTED if cls in ESTIMATORS.values() else (*_ENSEMBLE_FITTED,
                                                                  "estimators_")
            unknown = set(meta["fitted"]) - set(allowed)
            if unknown:
                raise _fail(f"unknown fitted attributes {sorted(unknown)}")
            fitted = {k: reader.value(v) for k, v in meta["fitted"].items()}
        except _DAMAGED as exc:
            raise _fail(f"damaged archive ({exc})") from None
        except RecursionError:
            raise _fail("values nested too deeply") from None
    try:
        model = cls(**params)
        from ._validation import validate_params

        constraints = (model._constraints() if hasattr(model, "_constraints")
                       else model._parameter_constraints)
        validate_params(model, constraints)
        if hasattr(model, "_template"):
            template = model._template()  # an ensemble's member (checks its estimator)
            validate_params(template, template._constraints())
    except (TypeError, ValueError) as exc:
        raise _fail(f"parameters: {exc}") from None
    members = fitted.pop("estimators_", None)
    if members is not None and not isinstance(members, _Members):
        raise _fail("estimators_ must be the ensemble's members")
    for k, v in fitted.items():
        setattr(model, k, v)
    if cls in ESTIMATORS.values():
        _check_model(model)
    else:
        from ._io_ensembles import check_ensemble

        check_ensemble(model, members, _fail, _check_model, _check_data)
    return model, meta


def _is_int(x, lo: int, hi: int) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _check_model(model: BaseDecisionTree) -> None:
    """The fitted attributes agree with each other (each reader relies on it)."""
    for name in ("tree_", "n_features_in_", "is_categorical_", "categories_", "n_outputs_",
                 "max_features_"):
        if not hasattr(model, name):
            raise _fail(f"fitted attribute {name} is missing")
    tree = model.tree_
    if not isinstance(tree, Tree):
        raise _fail("tree_ is not a tree")
    n = model.n_features_in_
    if not _is_int(n, 1, 10**7) or tree.n_features != n:
        raise _fail(f"n_features_in_ {n!r} does not match the tree's {tree.n_features}")
    if not _is_int(model.n_outputs_, 1, 1) or not _is_int(model.max_features_, 1, n):
        raise _fail("n_outputs_ or max_features_ out of range")
    mask, cats = _check_data(model)
    _check_tree_parts(model, tree, mask, cats)


def _check_data(model) -> tuple[np.ndarray, list]:
    """Width, names, categorical mask and levels of the data a model was fitted on."""
    for name in ("n_features_in_", "is_categorical_", "categories_"):
        if not hasattr(model, name):
            raise _fail(f"fitted attribute {name} is missing")
    n = model.n_features_in_
    if not _is_int(n, 1, 10**7):
        raise _fail(f"n_features_in_ {n!r}")
    names = getattr(model, "feature_names_in_", None)
    if names is not None and (not isinstance(names, np.ndarray) or names.shape != (n,)
                              or not all(isinstance(s, str) for s in names.tolist())):
        raise _fail(f"feature_names_in_ must hold {n} strings")
    mask = model.is_categorical_
    if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.shape != (n,):
        raise _fail(f"is_categorical_ must be {n} booleans")
    cats = model.categories_
    if not isinstance(cats, list) or len(cats) != n:
        raise _fail(f"categories_ must list {n} entries")
    for j, levels in enumerate(cats):
        if mask[j] != (levels is not None):
            raise _fail(f"categories_[{j}] does not match is_categorical_")
        if levels is not None and (not isinstance(levels, np.ndarray) or levels.ndim != 1
                                   or levels.dtype != object
                                   or len(set(levels.tolist())) != levels.shape[0]):
            raise _fail(f"categories_[{j}] must be distinct levels")
    return mask, cats


def _check_tree_parts(model, tree: Tree, mask: np.ndarray, cats: list) -> None:
    n = model.n_features_in_
    trees = [tree]
    unpruned = getattr(model, "unpruned_tree_", None)
    if unpruned is not None:
        if not isinstance(unpruned, Tree):
            raise _fail("unpruned_tree_ is not a tree")
        trees.append(unpruned)
    classifier = isinstance(model, (DecisionTreeClassifier, OptimalTreeClassifier,
                                    ObliqueTreeClassifier))
    for t in trees:
        if t.n_features != n:
            raise _fail("the trees do not have the same number of features")
        _check_levels(t, mask, cats)
    if classifier:
        classes = getattr(model, "classes_", None)
        if not isinstance(classes, np.ndarray) or classes.ndim != 1 or classes.size < 1 \
                or np.unique(classes).size != classes.size:
            raise _fail("classes_ must be distinct class labels")
        k = classes.shape[0]
        if not _is_int(getattr(model, "n_classes_", None), k, k) or \
                any(t.n_classes[0] != k for t in trees):
            raise _fail(f"the trees and classes_ disagree on the number of classes ({k})")
        cost = getattr(model, "cost_matrix_", None)
        if cost is not None and (not isinstance(cost, np.ndarray) or cost.shape != (k, k)
                                 or cost.dtype.kind != "f" or not np.all(np.isfinite(cost))):
            raise _fail(f"cost_matrix_ must be a finite {k} x {k} matrix")
    elif any(t.n_classes[0] != 1 for t in trees):
        raise _fail("a regression tree must have one value per node")
    binner = getattr(model, "binner_", None)
    if binner is not None and (not isinstance(binner, Binner) or not binner.is_fitted
                               or binner.n_features_in_ != n):
        raise _fail(f"binner_ must be a fitted binner of {n} features")
    pruning = getattr(model, "pruning_", None)
    if pruning is not None:
        _check_pruning(pruning, (unpruned or tree).node_count)
    alpha = getattr(model, "ccp_alpha_", 0.0)
    if not isinstance(alpha, float) or not alpha >= 0.0:
        raise _fail("ccp_alpha_ must be a non-negative number")


def _check_levels(tree: Tree, mask: np.ndarray, cats: list) -> None:
    """Categorical nodes split categorical features, with one branch entry per level."""
    inner = np.flatnonzero(tree.children_left != -1)
    n_levels = np.diff(tree.cat_ptr)[inner]
    feats = tree.feature[inner]
    if np.any((n_levels > 0) != mask[feats]):
        raise _fail("a categorical split is on a numeric feature or the reverse")
    for node, f, m in zip(inner.tolist(), feats.tolist(), n_levels.tolist(), strict=True):
        if m and m != len(cats[f]):
            raise _fail(f"node {node} routes {m} levels but feature {f} has {len(cats[f])}")


def _vectors(record, names: tuple[str, ...], kind: str) -> int:
    """Length shared by the 1-d numeric arrays ``names`` of ``record``."""
    lengths = set()
    for name in names:
        a = getattr(record, name)
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in kind:
            raise _fail(f"{type(record).__name__}.{name} must be a 1-d numeric array")
        lengths.add(a.shape[0])
    if len(lengths) != 1 or 0 in lengths:
        raise _fail(f"the arrays of {type(record).__name__} differ in length")
    return lengths.pop()


def _check_pruning(result, n_nodes: int) -> None:
    """A cross-validated pruning result whose tables are consistent (``info`` prints them)."""
    if not isinstance(result, CVPruning) or not isinstance(result.path, CostComplexityPath):
        raise _fail("pruning_ is not a cross-validated pruning result")
    m = _vectors(result, ("alphas", "eval_alphas", "n_leaves", "n_nodes", "mean_score",
                          "std_score", "se_score", "xerror", "xstd"), "iuf")
    s = result.scores
    if not isinstance(s, np.ndarray) or s.ndim != 2 or s.shape[1] != m or s.dtype.kind != "f":
        raise _fail("pruning_.scores must be a (splits x candidates) array")
    if not (_is_int(result.best_index, 0, m - 1) and _is_int(result.chosen_index, 0, m - 1)):
        raise _fail("pruning_ indices out of range")
    if not isinstance(result.rule, str) or result.rule not in ("1se", "min"):
        raise _fail(f"pruning_.rule {result.rule!r}")
    path = result.path
    steps = _vectors(path, ("ccp_alphas", "impurities", "n_leaves", "n_nodes"), "iuf")
    nodes = path.pruned_nodes
    if not isinstance(nodes, np.ndarray) or nodes.dtype.kind != "i" \
            or nodes.shape != (steps - 1,) or np.any(nodes < 0) or np.any(nodes >= n_nodes):
        raise _fail("pruning_.path.pruned_nodes out of range")
    if not isinstance(path.root_weight, float) or not path.root_weight > 0.0 \
            or not isinstance(path.risk, str) or path.risk not in ("impurity",
                                                                   "misclassification"):
        raise _fail("pruning_.path root_weight or risk")
