"""scikit-learn's estimator contract (clone, pickling, input validation, sparse input, ...)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn import DecisionTreeClassifier, DecisionTreeRegressor


@parametrize_with_checks([DecisionTreeClassifier(random_state=0),
                          DecisionTreeRegressor(random_state=0),
                          DecisionTreeClassifier(criterion="gain_ratio", random_state=0),
                          DecisionTreeRegressor(criterion="absolute_error", random_state=0),
                          DecisionTreeClassifier(splitter="hist", random_state=0),
                          DecisionTreeRegressor(splitter="hist", random_state=0)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)
