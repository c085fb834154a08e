"""Bad input: a clear ValueError/TypeError naming the problem, never a crash or a silent answer."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from treelearn import DecisionTreeClassifier, DecisionTreeRegressor
from treelearn._validation import InvalidParameterError

X = np.arange(40, dtype=float).reshape(20, 2)
y = np.arange(20) % 2


@pytest.mark.parametrize("param, value, words", [
    ("criterion", "gain", "'criterion' parameter"),
    ("criterion", "squared_error", "'criterion' parameter"),
    ("splitter", "histogram", "'splitter' parameter"),
    ("max_bins", 1, "'max_bins' parameter"),
    ("max_bins", 256, "'max_bins' parameter"),
    ("binner", "quantile", "'binner' parameter"),
    ("max_depth", 0, "'max_depth' parameter"),
    ("max_depth", 2.5, "'max_depth' parameter"),
    ("max_depth", True, "'max_depth' parameter"),
    ("min_samples_split", 1, "'min_samples_split' parameter"),
    ("min_samples_split", 1.5, "'min_samples_split' parameter"),
    ("min_samples_leaf", 0, "'min_samples_leaf' parameter"),
    ("min_samples_leaf", 1.0, "'min_samples_leaf' parameter"),
    ("min_weight_fraction_leaf", 0.6, "'min_weight_fraction_leaf' parameter"),
    ("max_features", "all", "'max_features' parameter"),
    ("max_features", 0, "'max_features' parameter"),
    ("max_features", 1.5, "'max_features' parameter"),
    ("max_leaf_nodes", 1, "'max_leaf_nodes' parameter"),
    ("min_impurity_decrease", -0.1, "'min_impurity_decrease' parameter"),
    ("ccp_alpha", -1.0, "'ccp_alpha' parameter"),
    ("ccp_alpha", float("nan"), "'ccp_alpha' parameter"),
    ("class_weight", "uniform", "'class_weight' parameter"),
    ("random_state", "seed", "'random_state' parameter"),
])
def test_invalid_parameters_name_themselves(param, value, words):
    est = DecisionTreeClassifier(**{param: value})
    with pytest.raises(InvalidParameterError, match=words) as info:
        est.fit(X, y)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert repr(value)[:6] in str(info.value)


def test_regressor_rejects_classification_criteria():
    with pytest.raises(ValueError, match="'criterion' parameter of DecisionTreeRegressor"):
        DecisionTreeRegressor(criterion="gini").fit(X, y)


def test_max_features_larger_than_n_features():
    with pytest.raises(ValueError, match="max_features must be at most n_features=2"):
        DecisionTreeClassifier(max_features=3).fit(X, y)


@pytest.mark.parametrize("Xbad, words", [
    (np.where(X > 10, np.inf, X), "Input X contains infinity"),
    (np.full((20, 2), 1e300), "infinity or a value too large"),
    (X[:, 0], "Expected 2D array, got 1D array"),
    (X.reshape(20, 2, 1), "Found array with dim 3"),
    (np.empty((0, 2)), "0 sample"),
    (np.empty((20, 0)), "0 feature"),
    (np.array([["a", "b"]] * 20), "could not convert string to float"),
])
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_bad_X_at_fit(Xbad, words):
    with pytest.raises(ValueError, match=words):
        DecisionTreeClassifier().fit(Xbad, y)


@pytest.mark.parametrize("ybad, words", [
    (np.where(y > 0, np.nan, 0.0), "Input y contains NaN"),
    (y[:10], "inconsistent numbers of samples"),
    (np.c_[y, y], "y must be 1-dimensional"),
    (None, "requires y to be passed"),
    (np.linspace(0, 1, 20), "Unknown label type"),
])
def test_bad_y_for_classifier(ybad, words):
    with pytest.raises(ValueError, match=words):
        DecisionTreeClassifier().fit(X, ybad)


@pytest.mark.parametrize("missing", [None, float("nan"), "pd.NA"])
def test_object_labels_with_missing_values(missing):
    if missing == "pd.NA":
        import pandas as pd

        missing = pd.NA
    labels = np.array(["a", "b"] * 10, dtype=object)
    labels[3] = missing
    with pytest.raises(ValueError, match="y contains"):
        DecisionTreeClassifier().fit(X, labels)


@pytest.mark.parametrize("ybad, words", [
    (np.array(["a", "b"] * 10), "needs a numeric target|could not convert"),
    (np.where(y > 0, np.inf, 0.0), "Input y contains"),
])
def test_bad_y_for_regressor(ybad, words):
    with pytest.raises(ValueError, match=words):
        DecisionTreeRegressor().fit(X, ybad)


@pytest.mark.parametrize("w, words", [
    (-np.ones(20), "Negative values in data passed to `sample_weight`"),
    (np.zeros(20), "sample_weight sums to zero"),
    (np.ones(19), r"sample_weight.shape == \(19,\), expected \(20,\)"),
    (np.ones((20, 2)), "Sample weights must be 1D"),
    (np.r_[np.ones(19), np.nan], "sample_weight contains NaN"),
    (["a"] * 20, "sample_weight must be numeric"),
])
def test_bad_sample_weight(w, words):
    with pytest.raises(ValueError, match=words):
        DecisionTreeClassifier().fit(X, y, sample_weight=w)


def test_not_fitted():
    est = DecisionTreeClassifier()
    for method in ("predict", "predict_proba", "apply", "decision_path"):
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)
    for method in ("get_depth", "get_n_leaves"):
        with pytest.raises(NotFittedError):
            getattr(est, method)()
    with pytest.raises(NotFittedError):
        _ = est.feature_importances_


def test_wrong_width_and_nan_at_predict():
    est = DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but DecisionTreeClassifier is "
                                         "expecting 2 features"):
        est.predict(np.ones((2, 3)))
    # NaN is a missing value (scikit-learn's rule for trees fitted without any: the child
    # with more samples); infinity is an error.
    assert est.predict(np.array([[np.nan, 1.0]])).shape == (1,)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        est.predict(np.array([[np.inf, 1.0]]))
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(sp.csr_matrix(np.ones((2, 3))))


def test_sparse_with_nan_rejected():
    Xs = sp.csr_matrix(np.where(X > 30, np.nan, X))
    with pytest.raises(ValueError, match="sparse X with missing values"):
        DecisionTreeClassifier().fit(Xs, y)


def test_single_class_and_single_sample_are_fine():
    est = DecisionTreeClassifier().fit(X, np.zeros(20))
    assert est.get_n_leaves() == 1
    np.testing.assert_array_equal(est.predict(X), 0)
    np.testing.assert_array_equal(est.predict_proba(X), 1.0)
    est = DecisionTreeRegressor().fit(X[:1], [3.5])
    assert est.predict(X[:3]).tolist() == [3.5] * 3
