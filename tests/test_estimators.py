"""Estimator behaviour the issue lists: inputs, labels, attributes, scikit-learn tooling."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from treelearn import DecisionTreeClassifier, DecisionTreeRegressor, export_text


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


def test_dataframe_input_records_feature_names(iris):
    X, y = iris
    df = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    est = DecisionTreeClassifier(max_depth=2, random_state=0).fit(df, y)
    assert list(est.feature_names_in_) == ["sl", "sw", "pl", "pw"]
    assert est.n_features_in_ == 4
    assert "pw <= 0.80" in export_text(est)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        from_array = est.predict(X)
    np.testing.assert_array_equal(est.predict(df), from_array)


def test_lists_float32_and_float64_give_the_same_tree(iris):
    X, y = iris
    a = DecisionTreeClassifier(random_state=0).fit(X.tolist(), y.tolist())
    b = DecisionTreeClassifier(random_state=0).fit(X.astype(np.float32), y)
    c = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert a.tree_ == b.tree_ == c.tree_


@pytest.mark.parametrize("labels", [
    np.array(["setosa", "versicolor", "virginica"]),
    np.array([True, False, True]),
    np.array([-1, 5, 7]),
])
def test_label_types(iris, labels):
    X, y = iris
    yl = labels[y]
    est = DecisionTreeClassifier(random_state=0).fit(X, yl)
    assert set(est.classes_) == set(labels)
    assert est.predict(X).dtype == yl.dtype
    assert est.score(X, yl) == 1.0


def test_predict_log_proba_and_proba_agree(iris):
    X, y = iris
    est = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(est.predict_log_proba(X), np.log(proba))
    assert np.isneginf(est.predict_log_proba(X)).any()


def test_grid_search_pipeline_and_clone(iris):
    X, y = iris
    pipe = make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0))
    grid = GridSearchCV(pipe, {"decisiontreeclassifier__max_depth": [1, 2, 3],
                               "decisiontreeclassifier__criterion": ["gini", "entropy"]}, cv=3)
    grid.fit(X, y)
    assert grid.best_params_["decisiontreeclassifier__max_depth"] >= 2
    assert cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=5).mean() > 0.9
    est = DecisionTreeClassifier(max_depth=4, criterion="chi2")
    assert clone(est).get_params() == est.get_params()


def test_deterministic_for_a_random_state(iris):
    X, y = iris
    for params in ({"splitter": "random"}, {"max_features": 2}, {}):
        a = DecisionTreeClassifier(random_state=3, **params).fit(X, y)
        b = DecisionTreeClassifier(random_state=3, **params).fit(X, y)
        assert a.tree_ == b.tree_
        rs = np.random.RandomState(3)
        c = DecisionTreeClassifier(random_state=rs, **params).fit(X, y)
        assert c.tree_ == a.tree_


@pytest.mark.parametrize("crit", ["misclassification", "gain_ratio", "chi2"])
def test_textbook_criteria_learn(iris, crit):
    X, y = iris
    est = DecisionTreeClassifier(criterion=crit, random_state=0).fit(X, y)
    assert est.score(X, y) > 0.99
    assert est.feature_importances_.sum() == pytest.approx(1.0)


def test_class_weight_balanced_equals_explicit_weights(iris):
    X, y = iris
    keep = np.r_[0:50, 50:70, 100:150]
    Xk, yk = X[keep], y[keep]
    a = DecisionTreeClassifier(class_weight="balanced", random_state=0).fit(Xk, yk)
    counts = np.bincount(yk)
    w = (len(yk) / (3 * counts))[yk]
    b = DecisionTreeClassifier(random_state=0).fit(Xk, yk, sample_weight=w)
    assert a.tree_ == b.tree_
    c = DecisionTreeClassifier(class_weight={0: 1.0, 1: 2.5, 2: 1.0}, random_state=0).fit(Xk, yk)
    d = DecisionTreeClassifier(random_state=0).fit(Xk, yk, sample_weight=np.where(yk == 1, 2.5,
                                                                                   1.0))
    assert c.tree_ == d.tree_


def test_absolute_error_predicts_leaf_medians():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] > 0, 10.0, -10.0) + rng.standard_t(1, 200)  # heavy tails
    est = DecisionTreeRegressor(criterion="absolute_error", max_depth=1, random_state=0)
    est.fit(X, y)
    leaves = est.apply(X)
    for leaf in np.unique(leaves):
        assert est.tree_.value[leaf, 0, 0] == pytest.approx(np.median(y[leaves == leaf]))


@pytest.mark.parametrize("y", [np.arange(-5, 7).repeat(3)[::-1], np.array([3, 10**12, 3]),
                               np.array([2, 2, 0], dtype=np.uint8), np.array(["b", "a", "b"]),
                               np.array([True, False, True]), np.array([1.5, -1.0, 1.5])])
def test_class_codes_equal_numpy_unique(y):
    """Integer labels are coded by counting; the result is np.unique's, dtype included."""
    from treelearn._estimators import _class_codes

    classes, codes = _class_codes(y)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == ref_classes.dtype
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(codes, ref_codes)


def _public_estimators() -> list[type]:
    import inspect

    from sklearn.base import BaseEstimator

    import treelearn as tl
    import treelearn.ensemble as te

    found = {cls for mod in (tl, te) for _, cls in inspect.getmembers(mod, inspect.isclass)
             if issubclass(cls, BaseEstimator) and not cls.__name__.startswith("_")}
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__name__}")


@pytest.mark.parametrize("cls", _public_estimators(),
                         ids=lambda c: f"{c.__module__.split('.')[1]}.{c.__name__}")
def test_every_method_that_takes_rows_documents_them(cls):
    """The numpydoc sections shared through treelearn._docs reach every public estimator:
    each method taking rows documents X in Parameters and what it returns."""
    import inspect

    methods = ("fit", "predict", "predict_proba", "predict_log_proba", "decision_function",
               "apply", "decision_path", "shap_values", "shap_interaction_values")
    checked = 0
    for name in methods:
        fn = getattr(cls, name, None)
        if fn is None:
            continue
        doc = inspect.getdoc(fn) or ""
        params = doc.partition("Parameters\n----------\n")[2].partition("\n\n")[0]
        returns = doc.partition("Returns\n-------\n")[2]
        assert params.startswith("X : "), (cls.__name__, name, doc)
        if name == "fit":
            assert "\ny : " in params, (cls.__name__, name, doc)
        assert returns.strip(), (cls.__name__, name, doc)
        checked += 1
    assert checked >= 2
