"""Converters between treelearn and scikit-learn fitted trees.

:func:`to_sklearn` lets scikit-learn based tools (``plot_tree``, SHAP, ...) read a treelearn tree;
:func:`from_sklearn` lets treelearn's pruning and export read a scikit-learn tree. Both copy the
flat arrays; predictions of the converted estimator are identical to the original's.
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


def to_sklearn(model: BaseDecisionTree):
    """Return a fitted scikit-learn estimator holding the same tree as ``model``.

    Parameters
    ----------
    model : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted treelearn tree.

    Returns
    -------
    estimator : sklearn.tree.DecisionTreeClassifier or DecisionTreeRegressor
        Same predictions, probabilities, ``apply`` and ``tree_`` arrays. Criteria scikit-learn
        does not have are reported as the impurity the nodes store ("gini" for
        misclassification, "entropy" for gain_ratio and chi2, "squared_error" for sdr);
        refitting it is scikit-learn's fit.
    """
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
