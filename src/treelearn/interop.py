"""Converters between treelearn and scikit-learn fitted trees and ensembles.

:func:`to_sklearn` lets scikit-learn based tools read a treelearn tree, forest, extra trees,
bagging or AdaBoost: ``plot_tree``, SHAP's ``TreeExplainer`` (trees, forests, extra trees),
``skl2onnx`` (all of them) and treelite (trees, forests, extra trees) read the result, and the
tests check each of them against treelearn's own predictions. :func:`from_sklearn` lets
treelearn's pruning and export read a scikit-learn tree. Both copy the flat arrays; predictions
of the converted estimator are identical to the original's.

Why ensembles are converted member by member into scikit-learn's own classes (rather than into
one tool's format): every tool above reads scikit-learn's fitted estimators, so one converter
serves them all, and scikit-learn's ensemble code (its vote, its SAMME decision function) is
the reference the converted model is checked against. Members are stored as scikit-learn
stores them: a forest's and bagging's trees know the classes by their codes ``0..K-1`` (they
were grown on encoded labels), AdaBoost's by the labels (it compares the trees' predicted
labels with ``classes_``).
"""

from __future__ import annotations

import numpy as np
from sklearn import tree as sktree
from sklearn.base import is_classifier
from sklearn.tree._tree import NODE_DTYPE
from sklearn.tree._tree import Tree as SkTree
from sklearn.utils.validation import check_is_fitted

from ._estimators import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor
from ._tree import Tree

# treelearn criteria that scikit-learn lacks map to the impurity their nodes store.
_TO_SK_CRITERION = {"misclassification": "gini", "gain_ratio": "entropy", "chi2": "entropy",
                    "sdr": "squared_error"}
_FROM_SK_CRITERION = {"friedman_mse": "squared_error"}
_SHARED_PARAMS = ("splitter", "max_depth", "min_samples_split", "min_samples_leaf",
                  "min_weight_fraction_leaf", "max_features", "random_state", "max_leaf_nodes",
                  "min_impurity_decrease", "ccp_alpha")


def _copy_fitted_attributes(src, dst, names) -> None:
    for name in names:
        if hasattr(src, name):
            setattr(dst, name, getattr(src, name))


def to_sklearn(model):
    """Return a fitted scikit-learn estimator holding the same tree or trees as ``model``.

    Parameters
    ----------
    model : fitted treelearn tree or ensemble
        A tree (``DecisionTreeClassifier``, ``C45Classifier``, ...), or a
        ``RandomForestClassifier/Regressor``, ``ExtraTreesClassifier/Regressor``,
        ``BaggingClassifier/Regressor`` or ``AdaBoostClassifier`` of binary trees on numeric
        features.

    Returns
    -------
    estimator : fitted scikit-learn estimator of the same kind
        ``sklearn.tree.DecisionTreeClassifier/Regressor`` or the ``sklearn.ensemble`` class of
        the same name, with the same predictions, probabilities and trees (``tree_`` arrays,
        ``apply``). Criteria scikit-learn does not have are reported as the impurity the
        nodes store ("gini" for misclassification, "entropy" for gain_ratio and chi2,
        "squared_error" for sdr); refitting it is scikit-learn's fit. Out-of-bag results are
        not carried over.

    Raises
    ------
    ValueError
        For what scikit-learn's trees cannot hold, naming it (and, in an ensemble, the tree):
        categorical subset or multiway splits, C4.5's fractional missing-value routing,
        oblique splits, linear leaves, a misclassification cost matrix.
    TypeError
        For anything that is not a fitted treelearn tree or one of the ensembles above.
    """
    if hasattr(model, "estimators_") and not hasattr(model, "tree_"):
        return _ensemble_to_sklearn(model)
    if not isinstance(model, BaseDecisionTree):
        raise TypeError("to_sklearn converts a fitted treelearn tree, random forest, extra "
                        "trees, bagging or AdaBoost; got " f"{type(model).__name__}.")
    return _tree_to_sklearn(model)


def _tree_to_sklearn(model: BaseDecisionTree, classes: np.ndarray | None = None):
    """:func:`to_sklearn` of one tree; ``classes``: the ``classes_`` the converted tree
    gets (its own by default; the class codes in a forest or bagging)."""
    check_is_fitted(model, "tree_")
    t = model.tree_
    if t.has_linear_leaves:
        raise ValueError("to_sklearn cannot convert a model tree: scikit-learn's trees have no "
                         "linear models at their leaves.")
    if t.is_oblique:
        raise ValueError("to_sklearn cannot convert an oblique tree: scikit-learn's trees split "
                         "on one feature per node, not on weighted sums of features.")
    if not t.is_binary:
        raise ValueError("to_sklearn needs a binary tree on numeric features; this tree has "
                         "categorical or multiway splits or C4.5 fractional missing-value "
                         "routing, which scikit-learn's trees cannot hold.")
    if getattr(model, "cost_matrix_", None) is not None:
        raise ValueError("to_sklearn cannot convert a tree with a misclassification cost "
                         "matrix: it predicts the class of least expected cost, scikit-learn's "
                         "trees the most probable class.")
    # an estimator without a parameter (OptimalTreeClassifier has no splitter, criterion
    # or class weights) gets scikit-learn's default for it
    params = {p: getattr(model, p) for p in _SHARED_PARAMS if hasattr(model, p)}
    criterion = getattr(model, "criterion", "gini")
    criterion = _TO_SK_CRITERION.get(criterion, criterion)
    if is_classifier(model):
        est = sktree.DecisionTreeClassifier(criterion=criterion,
                                            class_weight=getattr(model, "class_weight", None),
                                            **params)
    else:
        est = sktree.DecisionTreeRegressor(criterion=criterion, **params)
    nodes = np.zeros(t.node_count, dtype=NODE_DTYPE)
    nodes["left_child"] = t.children_left
    nodes["right_child"] = t.children_right
    nodes["feature"] = t.feature
    nodes["threshold"] = t.threshold
    nodes["impurity"] = t.impurity
    nodes["n_node_samples"] = t.n_node_samples
    nodes["weighted_n_node_samples"] = t.weighted_n_node_samples
    nodes["missing_go_to_left"] = t.missing_branch == 0
    sk = SkTree(t.n_features, np.asarray(t.n_classes, dtype=np.intp), 1)
    sk.__setstate__({"max_depth": t.max_depth, "node_count": t.node_count, "nodes": nodes,
                     "values": np.ascontiguousarray(t.value)})
    est.tree_ = sk
    _copy_fitted_attributes(model, est, ("classes_", "n_classes_", "n_features_in_",
                                         "feature_names_in_", "n_outputs_", "max_features_"))
    if classes is not None:
        est.classes_ = classes
    return est


def _sk_params(sk_class, model, **fixed) -> dict:
    """The parameters of ``model`` that ``sk_class`` takes too, plus ``fixed``."""
    names = set(sk_class().get_params(deep=False))
    out = {k: v for k, v in model.get_params(deep=False).items() if k in names}
    out.update(fixed)
    return {k: v for k, v in out.items() if k in names}


def _ensemble_to_sklearn(model):
    """:func:`to_sklearn` of a forest, extra trees, bagging or AdaBoost (module notes)."""
    from sklearn import ensemble as skens

    from . import ensemble as tlens

    kinds = {tlens.RandomForestClassifier: skens.RandomForestClassifier,
             tlens.RandomForestRegressor: skens.RandomForestRegressor,
             tlens.ExtraTreesClassifier: skens.ExtraTreesClassifier,
             tlens.ExtraTreesRegressor: skens.ExtraTreesRegressor,
             tlens.BaggingClassifier: skens.BaggingClassifier,
             tlens.BaggingRegressor: skens.BaggingRegressor,
             tlens.AdaBoostClassifier: skens.AdaBoostClassifier}
    sk_class = next((v for k, v in kinds.items() if type(model) is k), None)
    if sk_class is None:
        oblique = type(model).__name__.startswith("Oblique")
        raise TypeError(
            f"to_sklearn cannot convert {type(model).__name__}: "
            + ("scikit-learn's trees split on one feature per node, not on weighted sums."
               if oblique else "it converts trees, RandomForest*, ExtraTrees*, Bagging* and "
               "AdaBoostClassifier."))
    check_is_fitted(model, "estimators_")
    boosting = sk_class is skens.AdaBoostClassifier
    codes = None
    if is_classifier(model) and not boosting:
        codes = np.arange(len(model.classes_), dtype=np.float64)
    trees = []
    for k, tree in enumerate(model.estimators_):
        try:
            trees.append(_tree_to_sklearn(tree, codes))
        except ValueError as exc:
            raise ValueError(f"{type(model).__name__}'s tree {k}: {exc}") from None
    for t in trees:  # scikit-learn's ensembles hand their members arrays, without names
        t.__dict__.pop("feature_names_in_", None)
    template = trees[0]
    unfitted = type(template)(**template.get_params(deep=False))
    # AdaBoost keeps one weight per planned round (zeros after an early stop)
    fixed = {"n_estimators": model.n_estimators if boosting else len(trees),
             "oob_score": False, "warm_start": False}
    if "estimator" in sk_class().get_params(deep=False) and sk_class not in (
            skens.RandomForestClassifier, skens.RandomForestRegressor,
            skens.ExtraTreesClassifier, skens.ExtraTreesRegressor):
        fixed["estimator"] = unfitted
    est = sk_class(**_sk_params(sk_class, model, **fixed))
    if sk_class in (skens.ExtraTreesClassifier, skens.ExtraTreesRegressor):
        for t in trees:
            t.set_params(splitter="random")
        unfitted.set_params(splitter="random")
    est.estimators_ = trees
    est.estimator_ = unfitted
    _copy_fitted_attributes(model, est, ("classes_", "n_classes_", "n_features_in_",
                                         "feature_names_in_", "n_outputs_"))
    if is_classifier(model) and not boosting:
        # scikit-learn's forests keep n_classes_ as an int and classes_ as labels
        est.n_classes_ = int(len(model.classes_))
    if boosting:
        est.estimator_weights_ = np.asarray(model.estimator_weights_, dtype=np.float64)
        est.estimator_errors_ = np.asarray(model.estimator_errors_, dtype=np.float64)
    if sk_class in (skens.BaggingClassifier, skens.BaggingRegressor):
        p = model.n_features_in_
        feats = getattr(model, "estimators_features_", None)
        if feats is None:
            feats = [None] * len(trees)
        # scikit-learn's bagging predicts through these (its private sample bookkeeping, for
        # estimators_samples_ and out-of-bag scores, is not set: it draws differently)
        est.estimators_features_ = [np.arange(p) if f is None else np.asarray(f)
                                    for f in feats]
    return est


def from_sklearn(estimator) -> BaseDecisionTree:
    """Return a fitted treelearn estimator holding the same tree as a scikit-learn one.

    Parameters
    ----------
    estimator : sklearn.tree.DecisionTreeClassifier or DecisionTreeRegressor
        Fitted, with one output.

    Returns
    -------
    model : treelearn.DecisionTreeClassifier or DecisionTreeRegressor
        Same predictions; classifier values are stored as class fractions.
    """
    is_clf = isinstance(estimator, sktree.DecisionTreeClassifier)
    if not is_clf and not isinstance(estimator, sktree.DecisionTreeRegressor):
        raise TypeError("from_sklearn expects a fitted sklearn.tree.DecisionTreeClassifier or "
                        f"DecisionTreeRegressor, got {type(estimator).__name__}.")
    check_is_fitted(estimator, "tree_")
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise ValueError("from_sklearn supports single-output trees only; "
                         f"this one has n_outputs_={estimator.n_outputs_}.")
    criterion = _FROM_SK_CRITERION.get(estimator.criterion, estimator.criterion)
    cls = DecisionTreeClassifier if is_clf else DecisionTreeRegressor
    if criterion not in cls._criteria:
        raise ValueError(f"criterion {estimator.criterion!r} has no treelearn equivalent.")
    params = {p: getattr(estimator, p) for p in _SHARED_PARAMS}
    if is_clf:
        params["class_weight"] = estimator.class_weight
    model = cls(criterion=criterion, **params)
    sk = estimator.tree_
    value = np.array(sk.value[:, :1, :], dtype=np.float64)
    if is_clf:
        sums = value.sum(axis=2, keepdims=True)
        sums[sums == 0.0] = 1.0
        value = value / sums
    model.tree_ = Tree(sk.n_features, sk.n_classes[:1], sk.children_left, sk.children_right,
                       sk.feature, sk.threshold, sk.impurity, sk.n_node_samples,
                       sk.weighted_n_node_samples, value,
                       missing_branch=np.where(sk.children_left == -1, -2,
                                               np.where(sk.missing_go_to_left, 0, 1)))
    _copy_fitted_attributes(estimator, model, ("classes_", "n_classes_", "n_features_in_",
                                               "feature_names_in_", "max_features_"))
    model.n_outputs_ = 1
    # scikit-learn's trees read numeric features only
    model.is_categorical_ = np.zeros(model.n_features_in_, dtype=bool)
    model.categories_ = [None] * model.n_features_in_
    return model


def estimator_and_tree(model, caller: str):
    """``(estimator or None, Tree)`` of a fitted treelearn estimator, a fitted scikit-learn
    decision tree (converted with :func:`from_sklearn`) or a bare :class:`Tree`.

    The one place where pruning and export accept "any tree"; ``caller`` names the function in
    the TypeError raised for anything else.
    """
    if isinstance(model, Tree):
        return None, model
    members = getattr(model, "estimators_", None)
    if members is not None and not hasattr(model, "tree_") and \
            type(model).__module__.startswith("treelearn."):
        raise TypeError(f"{caller} reads one tree; {type(model).__name__} holds "
                        f"{len(members)}: pass one of them, e.g. model.estimators_[0] "
                        "(or model[0]).")
    tree = getattr(model, "tree_", None)
    if isinstance(tree, Tree):
        return model, tree
    if tree is not None and type(model).__module__.startswith("sklearn."):
        est = from_sklearn(model)
        return est, est.tree_
    raise TypeError(f"{caller} needs a fitted treelearn estimator, a fitted scikit-learn "
                    "DecisionTreeClassifier/Regressor or a treelearn Tree; got "
                    f"{type(model).__name__}.")
