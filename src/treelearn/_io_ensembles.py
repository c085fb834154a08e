"""The checks a model file's ensemble (or baseline) passes before :func:`treelearn.load`
returns it: every member rebuilt as a tree estimator and checked as a single tree's file is,
the ensemble's own arrays against its members and data, then its packed forest built.

Kept apart from :mod:`treelearn.io` (which calls it) because it knows the ensembles' insides:
which parameters make a member, which columns a bagged member reads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.base import clone, is_classifier

from .ensemble import AdaBoostClassifier, MajorityClassifier, OneRClassifier
from .ensemble._bagging import _Bagging
from .ensemble._forest import _BaseEnsemble
from .ensemble._quantile import _check_quantiles, _QuantileForest

#: What members share with their ensemble (set on each member before its own attributes).
SHARED = ("n_features_in_", "feature_names_in_", "is_categorical_", "categories_", "classes_",
          "n_classes_", "binner_")


def _is_int(x, lo: int, hi: int) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool) and lo <= x <= hi


def _float_vector(a, n: int) -> bool:
    return (isinstance(a, np.ndarray) and a.shape == (n,) and a.dtype.kind == "f"
            and bool(np.all(np.isfinite(a))))


def check_ensemble(model, members, fail: Callable[[str], Exception], check_model, check_data):
    """Raise ``fail(message)`` unless ``model`` (its attributes set from the file) and its
    ``members`` (``[(random_state, own attributes)]`` or None) are consistent; then finish
    the model (members set, packed forest built)."""
    check_data(model)
    n = model.n_features_in_
    if is_classifier(model):
        classes = getattr(model, "classes_", None)
        if not isinstance(classes, np.ndarray) or classes.ndim != 1 or classes.size < 1 \
                or np.unique(classes).size != classes.size:
            raise fail("classes_ must be distinct class labels")
        if not _is_int(getattr(model, "n_classes_", None), classes.size, classes.size):
            raise fail("n_classes_ does not match classes_")
    if isinstance(model, OneRClassifier):
        _check_one_r(model, fail)
        return
    if isinstance(model, MajorityClassifier):
        if not _float_vector(getattr(model, "class_prior_", None), model.n_classes_):
            raise fail("class_prior_ must hold one frequency per class")
        return
    if not members:
        raise fail("an ensemble needs at least one member")
    if isinstance(model, AdaBoostClassifier):
        template = model._template()
        m = model.n_estimators
        for name in ("estimator_weights_", "estimator_errors_"):
            if not _float_vector(getattr(model, name, None), m):
                raise fail(f"{name} must hold {m} finite numbers")
        if len(members) > m:
            raise fail(f"{len(members)} learners but n_estimators={m}")
    else:
        template = model._template()
    cols = getattr(model, "estimators_features_", None)
    if isinstance(model, _Bagging):
        if not isinstance(cols, list) or len(cols) != len(members):
            raise fail("estimators_features_ must list each member's columns")
        for c in cols:
            if not isinstance(c, np.ndarray) or c.ndim != 1 or c.dtype.kind != "i" \
                    or c.size < 1 or np.any(c < 0) or np.any(c >= n) \
                    or np.any(np.diff(c) <= 0):  # bounds first: diff of int64 can wrap
                raise fail("estimators_features_ must be increasing column indices")
    elif cols is not None:
        raise fail("estimators_features_ belongs to bagging")
    shared = {k: getattr(model, k) for k in SHARED if k in vars(model)}
    built = []
    for k, (seed, own) in enumerate(members):
        est = clone(template)
        est.set_params(random_state=seed)
        est.__dict__.update(shared)
        if not is_classifier(est):
            for name in ("classes_", "n_classes_"):
                est.__dict__.pop(name, None)
        if cols is not None:
            c = cols[k]
            est.is_categorical_ = est.is_categorical_[c]
            est.categories_ = [est.categories_[j] for j in c]
            est.n_features_in_ = int(c.size)
            if getattr(est, "feature_names_in_", None) is not None:
                est.feature_names_in_ = est.feature_names_in_[c]
            if getattr(est, "binner_", None) is not None:
                est.__dict__.pop("binner_")  # a subspace tree bins its own columns
        est.__dict__.update(own)
        est.n_outputs_ = 1
        if "max_features_" not in own:
            raise fail(f"member {k}: max_features_ is missing")
        try:
            check_model(est)
        except Exception as exc:  # noqa: BLE001 - re-raised naming the member
            raise fail(f"member {k}: {exc}") from None
        built.append(est)
    model.estimators_ = built
    if isinstance(model, _BaseEnsemble):
        _check_sampling(model, fail)
    store = getattr(model, "_leaf_store", None)
    if isinstance(model, _QuantileForest):
        _check_leaf_store(model, store, fail)
    elif store is not None:
        raise fail("_leaf_store belongs to quantile forests")
    try:
        model._pack()
    except ValueError as exc:
        raise fail(f"the members cannot be packed: {exc}") from None


def _check_sampling(model, fail) -> None:
    smp = getattr(model, "_sampling", None)
    if smp is None:
        return
    if not isinstance(smp, dict) or set(smp) != {"n_draws", "n_train", "n_features", "base_w"}:
        raise fail("_sampling must describe the bootstrap")
    n = smp["n_train"]
    n_features = model.n_features_in_
    if not _is_int(n, 1, 10**12) or not _is_int(smp["n_features"], n_features, n_features):
        raise fail("_sampling: training rows or features")
    if smp["n_draws"] is not None and not _is_int(smp["n_draws"], 1, 10**12):
        raise fail("_sampling: n_draws")
    w = smp["base_w"]
    if w is not None and (not _float_vector(w, n) or np.any(w < 0) or not w.sum() > 0):
        raise fail("_sampling: base_w must be n_train non-negative weights")
    for name in ("oob_decision_function_", "oob_prediction_"):
        a = getattr(model, name, None)
        if a is not None and (not isinstance(a, np.ndarray) or a.shape[0] != n):
            raise fail(f"{name} must have one row per training case")


def _array(a, kind: str, shape: tuple) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == kind and a.shape == shape


def _check_leaf_store(model, store, fail) -> None:
    """A quantile forest's leaf rows (:mod:`treelearn.ensemble._quantile`): every list at a
    leaf of its tree, positions among the training targets, positive weights, targets
    sorted."""
    try:
        _check_quantiles(model.default_quantiles, "default_quantiles")
    except ValueError as exc:
        raise fail(f"parameters: {exc}") from None
    keys = {"offsets", "sizes", "ptr", "rank", "weight", "y_sorted"}
    if not isinstance(store, dict) or set(store) != keys:
        raise fail("_leaf_store must hold the quantile forest's leaf rows")
    smp = getattr(model, "_sampling", None)
    if smp is None:
        raise fail("a quantile forest needs _sampling (its training rows)")
    n = smp["n_train"]
    trees = [e.tree_ for e in model.estimators_]
    T = len(trees)
    sizes, offsets, ptr = store["sizes"], store["offsets"], store["ptr"]
    if not (_array(sizes, "i", (T,)) and _array(offsets, "i", (T,))):
        raise fail("_leaf_store: sizes and offsets need one int per tree")
    if np.any(sizes < 1) or np.any(sizes > [t.node_count for t in trees]) \
            or offsets[0] != 0 or np.any(np.diff(offsets) != sizes[:-1]):
        raise fail("_leaf_store: sizes must fit the trees and offsets add them up")
    total = int(sizes.sum())
    if not _array(ptr, "i", (total + 1,)) or ptr[0] != 0 or np.any(np.diff(ptr) < 0):
        raise fail("_leaf_store: ptr must be a non-decreasing pointer per leaf")
    m = int(ptr[-1])
    rank, weight, y = store["rank"], store["weight"], store["y_sorted"]
    if not (_array(rank, "i", (m,)) and _array(weight, "f", (m,))
            and _array(y, "f", (n,))):
        raise fail("_leaf_store: rank, weight and y_sorted have the wrong shape or type")
    if m and (rank.min() < 0 or rank.max() >= n):
        raise fail("_leaf_store: ranks must be positions among the training targets")
    if not np.all(np.isfinite(weight)) or np.any(weight <= 0):
        raise fail("_leaf_store: weights must be positive")
    if not np.all(np.isfinite(y)) or np.any(np.diff(y) < 0):
        raise fail("_leaf_store: y_sorted must be finite and sorted")
    for t, tree in enumerate(trees):
        counts = np.diff(ptr[offsets[t]:offsets[t] + sizes[t] + 1])
        if np.any(tree.children_left[:sizes[t]][counts > 0] != -1):
            raise fail(f"_leaf_store: tree {t} keeps rows at a split node")


def _check_one_r(model, fail) -> None:
    rules = getattr(model, "rules_", None)
    n, K = model.n_features_in_, model.n_classes_
    if not isinstance(rules, list) or len(rules) != n:
        raise fail(f"rules_ must hold one rule per feature ({n})")
    for f, r in enumerate(rules):
        if not isinstance(r, dict):
            raise fail(f"rules_[{f}] is not a rule")
        counts = r.get("counts")
        if not isinstance(counts, np.ndarray) or counts.ndim != 2 or counts.shape[0] < 1 \
                or counts.shape[1] != K or counts.dtype.kind != "f" \
                or not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise fail(f"rules_[{f}] counts")
        if not _float_vector(r.get("missing"), K) or not isinstance(r.get("correct"), float):
            raise fail(f"rules_[{f}] missing counts or correct")
        if model.is_categorical_[f]:
            if set(r) != {"counts", "missing", "correct"} or \
                    counts.shape[0] != len(model.categories_[f]):
                raise fail(f"rules_[{f}] must have one row per level")
        else:
            b = r.get("breaks")
            if set(r) != {"breaks", "counts", "missing", "correct"} or \
                    not _float_vector(b, counts.shape[0] - 1) or np.any(np.diff(b) <= 0):
                raise fail(f"rules_[{f}] breaks must be increasing, one fewer than counts")
    if not _is_int(getattr(model, "feature_", None), 0, n - 1) or \
            not _is_int(getattr(model, "majority_", None), 0, K - 1) or \
            not isinstance(getattr(model, "feature_name_", None), str) or \
            not isinstance(getattr(model, "n_weight_", None), float):
        raise fail("feature_, feature_name_, majority_ or n_weight_")
