"""``to_sklearn`` of forests, extra trees, bagging and AdaBoost, read by the tools around
scikit-learn: SHAP's ``TreeExplainer``, ``skl2onnx`` + onnxruntime, and treelite.

Each tool's predictions are compared with treelearn's own. The data lie on a grid of quarters
so that every threshold (a midpoint) is exact in float32: ONNX and treelite compare float32
values with float32 thresholds, treelearn float32 values with float64 thresholds.
The tools come with the test extra (pyproject).
"""

import numpy as np
import onnxruntime as rt
import pandas as pd
import pytest
import shap
import skl2onnx
import treelite.sklearn as treelite_sklearn
from treelite import gtil

import treelearn as tl
from treelearn import ensemble as E


def _data(seed=0, n=300, p=5):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 40, (n, p)) / 4.0
    y = (X[:, 0] + X[:, 1] > 10).astype(int) + (X[:, 2] > 5)
    yr = 2.0 * X[:, 0] + X[:, 3] * X[:, 4] + rng.rand(n)
    return X, y, yr


_KINDS = {
    "forest-clf": (lambda: E.RandomForestClassifier(n_estimators=8, random_state=0), True),
    "forest-reg": (lambda: E.RandomForestRegressor(n_estimators=8, random_state=0), False),
    "extra-clf": (lambda: E.ExtraTreesClassifier(n_estimators=8, random_state=1), True),
    "extra-reg": (lambda: E.ExtraTreesRegressor(n_estimators=8, max_depth=6, random_state=1),
                  False),
    "forest-hist-clf": (lambda: E.RandomForestClassifier(n_estimators=6, splitter="hist",
                                                         class_weight="balanced",
                                                         random_state=2), True),
    "bagging-clf": (lambda: E.BaggingClassifier(n_estimators=6, max_features=0.6,
                                                random_state=0), True),
    "bagging-reg": (lambda: E.BaggingRegressor(tl.DecisionTreeRegressor(max_depth=5),
                                               n_estimators=6, max_features=3,
                                               bootstrap_features=True, random_state=0), False),
    "adaboost": (lambda: E.AdaBoostClassifier(tl.DecisionTreeClassifier(max_depth=2),
                                              n_estimators=8, random_state=0), True),
    "tree-clf": (lambda: tl.DecisionTreeClassifier(random_state=0), True),
}
_SHAP_READS = ("forest-clf", "forest-reg", "extra-clf", "extra-reg", "forest-hist-clf",
               "tree-clf")
_TREELITE_READS = ("forest-clf", "forest-reg", "extra-clf", "extra-reg", "forest-hist-clf")


@pytest.fixture(scope="module")
def fitted():
    X, y, yr = _data()
    out = {}
    for name, (make, clf) in _KINDS.items():
        model = make().fit(X, y if clf else yr)
        out[name] = (model, tl.to_sklearn(model), clf)
    return X, out


def _ours(model, clf, X):
    return model.predict_proba(X) if clf else model.predict(X)


@pytest.mark.parametrize("name", list(_KINDS))
def test_converted_ensemble_is_sklearns_class_and_predicts_the_same(fitted, name):
    X, models = fitted
    model, sk, clf = models[name]
    assert type(sk).__module__.startswith("sklearn.")
    assert type(sk).__name__ == type(model).__name__
    np.testing.assert_array_equal(sk.predict(X), model.predict(X))
    if clf:
        np.testing.assert_array_equal(sk.predict_proba(X), model.predict_proba(X))
    if hasattr(sk, "estimators_") and name != "adaboost":
        assert len(sk.estimators_) == len(model.estimators_)
        # the members are scikit-learn trees holding the same nodes
        for ours, theirs in zip(model.estimators_, sk.estimators_, strict=True):
            np.testing.assert_array_equal(theirs.tree_.threshold, ours.tree_.threshold)
        if hasattr(sk, "apply"):
            np.testing.assert_array_equal(sk.apply(X), model.apply(X))


@pytest.mark.parametrize("name", _SHAP_READS)
def test_shap_tree_explainer_reads_converted_models(fitted, name):
    X, models = fitted
    model, sk, clf = models[name]
    explainer = shap.TreeExplainer(sk)
    values = np.asarray(explainer.shap_values(X[:60]))
    # additivity: SHAP's base value plus the contributions is our prediction
    total = np.asarray(explainer.expected_value) + values.sum(axis=1)
    np.testing.assert_allclose(total, _ours(model, clf, X[:60]), rtol=1e-9, atol=1e-9)
    # column 3 and 4 never decide a class (classifiers): SHAP gives them nothing
    if clf and name == "tree-clf":
        used = np.zeros(X.shape[1], bool)
        used[model.tree_.feature[model.tree_.feature >= 0]] = True
        assert np.all(values[:, ~used] == 0.0)


@pytest.mark.parametrize("name", list(_KINDS))
def test_onnx_runtime_predicts_as_the_model(fitted, name):
    X, models = fitted
    model, sk, clf = models[name]
    options = {"zipmap": False} if clf else None
    onx = skl2onnx.to_onnx(sk, X[:1].astype(np.float32), options=options)
    sess = rt.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"])
    out = sess.run(None, {sess.get_inputs()[0].name: X.astype(np.float32)})
    if clf:
        np.testing.assert_array_equal(out[0], model.predict(X))
        np.testing.assert_allclose(out[1], model.predict_proba(X), rtol=1e-6, atol=1e-6)
    else:  # ONNX sums in float32
        np.testing.assert_allclose(out[0].ravel(), model.predict(X), rtol=2e-6)


@pytest.mark.parametrize("name", _TREELITE_READS)
def test_treelite_reads_converted_forests(fitted, name):
    X, models = fitted
    model, sk, clf = models[name]
    pred = gtil.predict(treelite_sklearn.import_model(sk), X.astype(np.float32))
    ours = _ours(model, clf, X)
    np.testing.assert_allclose(pred.reshape(ours.shape), ours, rtol=1e-12, atol=1e-12)


def test_converted_classifier_with_string_labels_and_feature_names():
    X, y, _ = _data(3)
    labels = np.array(["low", "mid", "high"])[y]
    df = pd.DataFrame(X, columns=list("abcde"))
    for model in (E.RandomForestClassifier(n_estimators=5, random_state=0),
                  E.BaggingClassifier(n_estimators=5, random_state=0),
                  E.AdaBoostClassifier(n_estimators=5, random_state=0)):
        model.fit(df, labels)
        sk = tl.to_sklearn(model)
        assert list(sk.feature_names_in_) == list("abcde")
        np.testing.assert_array_equal(sk.classes_, model.classes_)
        np.testing.assert_array_equal(sk.predict(df), model.predict(df))


def test_adaboost_stopped_early_keeps_its_weights():
    X, y, _ = _data(4)
    y = (X[:, 0] > 5).astype(int)  # one stump separates it: boosting ends at round one
    model = E.AdaBoostClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert len(model.estimators_) < 10
    sk = tl.to_sklearn(model)
    np.testing.assert_array_equal(sk.estimator_weights_, model.estimator_weights_)
    np.testing.assert_array_equal(sk.predict_proba(X), model.predict_proba(X))


def test_what_cannot_convert_says_why():
    rng = np.random.RandomState(0)
    X, y, _ = _data(5)
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(list("pqrstu"), len(y))),
                       "x": X[:, 0]})
    y2 = ((df["c"].isin(["p", "q", "r"])) ^ (df["x"] > 5)).to_numpy().astype(int)
    forest = E.RandomForestClassifier(n_estimators=4, max_features=None,
                                      random_state=0).fit(df, y2)
    with pytest.raises(ValueError, match=r"tree \d+: .*categorical or multiway"):
        tl.to_sklearn(forest)
    c45 = E.BaggingClassifier(tl.C45Classifier(), n_estimators=3, random_state=0).fit(df, y2)
    with pytest.raises(ValueError, match="categorical or multiway"):
        tl.to_sklearn(c45)
    costly = tl.DecisionTreeClassifier(misclassification_cost=[[0, 1], [5, 0]]).fit(X, y > 0)
    with pytest.raises(ValueError, match="cost matrix"):
        tl.to_sklearn(costly)
    oblique = E.ObliqueRandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="weighted sums"):
        tl.to_sklearn(oblique)
    with pytest.raises(TypeError, match="converts a fitted treelearn"):
        tl.to_sklearn(object())
    with pytest.raises(TypeError, match="OneRClassifier"):
        tl.to_sklearn(E.OneRClassifier().fit(X, y))
