"""scikit-learn's estimator contract (clone, pickling, input validation, sparse input, ...)."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelearn import (
    C45Classifier,
    CARTClassifier,
    CARTRegressor,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    M5Regressor,
    ObliqueTreeClassifier,
    ObliqueTreeRegressor,
)


def _expected_failures(estimator):
    # min_samples_leaf=2 (C4.5's minimum) counts rows, so weight 2 is not two repeated rows;
    # scikit-learn's own DecisionTreeClassifier(min_samples_leaf=2) fails these checks too.
    if getattr(estimator, "linear_leaves", False):
        # M5's n (in (n + v) / (n - v) and in smoothing) counts cases, so that rescaled
        # weights change nothing: a case of weight 2 is one case, not two
        reason = "M5's error estimates and smoothing count rows, as min_samples_split does"
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    if isinstance(estimator, C45Classifier):
        reason = "min_samples_leaf=2 counts rows, as scikit-learn's does"
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    # Pruning on held-out rows: a row of weight 2 is one row in one fold (or in the validation
    # part), two repeated rows can land on both sides (as for any cross-validated estimator).
    if estimator.prune in ("cv", "reduced_error"):
        reason = "held-out rows: a weight of 2 is not two rows that folds can separate"
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}
    return {}


@parametrize_with_checks([DecisionTreeClassifier(random_state=0),
                          DecisionTreeRegressor(random_state=0),
                          DecisionTreeClassifier(criterion="gain_ratio", random_state=0),
                          DecisionTreeRegressor(criterion="absolute_error", random_state=0),
                          DecisionTreeClassifier(splitter="hist", random_state=0),
                          DecisionTreeRegressor(splitter="hist", random_state=0),
                          ID3Classifier(random_state=0),
                          C45Classifier(random_state=0),
                          DecisionTreeClassifier(prune="mdl", random_state=0),
                          M5Regressor(random_state=0),
                          DecisionTreeRegressor(linear_leaves=True, linear_features="path",
                                                random_state=0),
                          ObliqueTreeClassifier(random_state=0),
                          ObliqueTreeRegressor(random_state=0)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


# Estimators that cross-validate or hold out rows inside fit: ten or more fits per check, too
# slow with the kernels as Python (the coverage pass); they run in the compiled pass.
@pytest.mark.jit_only
@parametrize_with_checks([CARTClassifier(random_state=0),
                          CARTRegressor(random_state=0),
                          DecisionTreeRegressor(prune="reduced_error", random_state=0)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_contract_held_out_pruning(estimator, check):
    check(estimator)
