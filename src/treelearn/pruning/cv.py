"""Choosing the cost-complexity parameter by cross-validation (Breiman et al. 1984, ch. 3.4;
rpart's ``xerror``/``xstd`` and the 1-SE rule).

1. Grow the whole tree on all data; its weakest-link path gives the distinct optimal subtrees
   ``T_0 > T_1 > ... > T_m`` (root) and their alphas ``a_0 = 0 < a_1 < ... < a_m``; ``T_j`` is
   optimal for alphas in ``[a_j, a_{j+1})``.
2. For each split of the data (K-fold, stratified for classifiers, or any scikit-learn
   splitter such as ``ShuffleSplit`` for the tutorial's repeated random splits), grow a tree on
   the training part and prune it at the representative alpha of each interval, the geometric
   mean ``sqrt(a_j a_{j+1})`` (rpart's choice; ``T_m`` is represented by the root alone), and
   measure the held-out loss: misclassified weight (or cost) for classifiers, squared error for
   regressors. One routing of the held-out rows gives every pruned tree's loss
   (:mod:`treelearn.pruning._loss`), so a fold costs one fit.
3. Score = accuracy (classifiers; ``-mean cost`` with a misclassification cost matrix) or
   ``-MSE`` (regressors), averaged over the splits. Rule "min" takes the best mean score;
   "1se" the smallest tree whose mean score is within one standard error
   (``std / sqrt(n_splits)``) of the best.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone, is_classifier
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.class_weight import compute_sample_weight

from .._interrupt import interruptible_function
from .._tree import Tree
from ._loss import node_losses
from .cost_complexity import (
    RISKS,
    CostComplexityPath,
    cost_complexity_path,
    sequence_errors,
)

RULES = ("1se", "min")


@dataclass
class CVPruning:
    """Cross-validated choice of the cost-complexity parameter.

    Attributes
    ----------
    alphas : ndarray of shape (n_candidates,)
        Alpha of each distinct subtree of the whole tree, increasing (0 first, root last).
    eval_alphas : ndarray
        Representative alpha of each interval used to prune the trees of the splits.
    n_leaves, n_nodes : ndarray
        Size of the whole tree pruned at each alpha.
    scores : ndarray of shape (n_splits, n_candidates)
        Held-out score of every split and candidate.
    mean_score, std_score, se_score : ndarray
        Mean, standard deviation and standard error (``std / sqrt(n_splits)``) over splits.
    best_index, chosen_index : int
        Candidate of the best mean score (ties: the smaller tree) and the one the rule chose.
    rule : str
    xerror, xstd : ndarray
        rpart's columns: mean held-out loss and its standard error, relative to the root's
        resubstitution loss.
    path : CostComplexityPath
        The whole tree's path (gives rpart's CP table with :meth:`cp_table`).
    """

    alphas: np.ndarray
    eval_alphas: np.ndarray
    n_leaves: np.ndarray
    n_nodes: np.ndarray
    scores: np.ndarray
    mean_score: np.ndarray
    std_score: np.ndarray
    se_score: np.ndarray
    best_index: int
    chosen_index: int
    rule: str
    xerror: np.ndarray
    xstd: np.ndarray
    path: CostComplexityPath = field(repr=False)

    @property
    def best_alpha(self) -> float:
        """Alpha of the best mean score."""
        return float(self.alphas[self.best_index])

    @property
    def chosen_alpha(self) -> float:
        """Alpha chosen by the rule (pass it as ``ccp_alpha``)."""
        return float(self.alphas[self.chosen_index])

    @property
    def n_splits(self) -> int:
        return int(self.scores.shape[0])

    def table(self) -> dict:
        """The whole table as columns: alpha, mean and std score, standard error, leaves,
        nodes."""
        return {"alpha": self.alphas, "mean_score": self.mean_score,
                "std_score": self.std_score, "se_score": self.se_score,
                "n_leaves": self.n_leaves, "n_nodes": self.n_nodes}

    def cp_table(self) -> dict:
        """rpart's CP table with ``xerror`` and ``xstd`` (root first)."""
        return self.path.cp_table(self.xerror, self.xstd)


def make_splitter(cv, classifier: bool, y, random_state):
    """The splitter for ``cv``: an int is K-fold (stratified for classifiers, shuffled with
    ``random_state``), with K lowered to the smallest class's size when a class is smaller
    (plain K-fold if a class has a single case); anything else goes to scikit-learn's
    ``check_cv`` (e.g. ``ShuffleSplit`` for repeated random splits)."""
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        n = len(y)
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds; got {cv}.")
        if n < 2:
            raise ValueError("cross-validated pruning needs at least 2 samples.")
        k = min(int(cv), n)
        if classifier:
            smallest = np.unique(np.asarray(y), return_counts=True)[1].min()
            if smallest >= 2:
                return StratifiedKFold(min(k, int(smallest)), shuffle=True,
                                       random_state=random_state)
        return KFold(k, shuffle=True, random_state=random_state)
    return check_cv(cv, y, classifier=classifier)


def _fold_scores(base, X, y, w_fit, w_test, train, test, eval_alphas, risk):
    """Held-out loss rate of one split's tree pruned at each of ``eval_alphas``."""
    est = clone(base)
    fit_w = None if w_fit is None else w_fit[train]
    est.fit(_safe_indexing(X, train), _safe_indexing(y, train), sample_weight=fit_w)
    loss = node_losses(est, _safe_indexing(X, test), _safe_indexing(y, test), w_test[test])
    tree: Tree = est.tree_
    fpath = cost_complexity_path(tree, risk, getattr(est, "cost_matrix_", None))
    errs = sequence_errors(tree.branch_ptr, tree.branch_child, fpath.pruned_nodes, loss)
    steps = np.searchsorted(fpath.ccp_alphas[1:], eval_alphas, side="right")
    total = float(w_test[test].sum())
    return errs[steps] / (total if total > 0 else 1.0)


def cv_pruning(base, X, y, *, tree: Tree, w_fit=None, w_test=None, cv=10, rule="1se",
               risk="impurity", n_jobs=None, random_state=None, root_loss=None) -> CVPruning:
    """Cross-validate the path of ``tree`` (the whole tree ``base`` grows on all of X, y).

    ``base`` is an unfitted estimator that grows without pruning; ``w_fit`` are the sample
    weights given to the fits, ``w_test`` the weights of held-out losses (defaults: ones).
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}.")
    if risk not in RISKS:
        raise ValueError(f"risk must be one of {RISKS}; got {risk!r}.")
    classifier = is_classifier(base)
    y_arr = np.asarray(y)
    n = y_arr.shape[0]
    w_test = np.ones(n) if w_test is None else np.asarray(w_test, dtype=np.float64)
    cost = getattr(base, "misclassification_cost", None)
    path = cost_complexity_path(tree, risk, None if cost is None else np.asarray(cost, float))
    steps = path.distinct_steps()
    alphas = path.ccp_alphas[steps]
    eval_alphas = np.append(np.sqrt(alphas[:-1] * alphas[1:]), np.inf)
    splitter = make_splitter(cv, classifier, y_arr, random_state)
    splits = list(splitter.split(np.zeros((n, 1)), y_arr))
    # Threads: the growers' kernels release the GIL, and worker processes would pay for
    # start-up and for loading the compiled kernels again.
    rates = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_fold_scores)(base, X, y, w_fit, w_test, tr, te, eval_alphas, risk)
        for tr, te in splits
    )
    rates = np.vstack(rates)
    scores = (1.0 - rates) if classifier and cost is None else -rates
    k = scores.shape[0]
    mean = scores.mean(axis=0)
    std = scores.std(axis=0)
    se = std / np.sqrt(k)
    # Ties go to the smaller tree (the later candidate); exact ties are common on small data.
    tol = 1e-12
    best = int(np.flatnonzero(mean >= mean.max() - tol)[-1])
    if rule == "min":
        chosen = best
    else:
        chosen = int(np.flatnonzero(mean >= mean[best] - se[best] - tol)[-1])
    root = root_loss if root_loss is not None and root_loss > 0 else 1.0
    return CVPruning(
        alphas=alphas, eval_alphas=eval_alphas, n_leaves=path.n_leaves[steps],
        n_nodes=path.n_nodes[steps], scores=scores, mean_score=mean, std_score=std,
        se_score=se, best_index=best, chosen_index=chosen, rule=rule,
        xerror=rates.mean(axis=0) / root, xstd=rates.std(axis=0) / np.sqrt(k) / root,
        path=path,
    )


@interruptible_function
def choose_alpha(estimator, X, y, sample_weight=None, *, cv=10, rule: str = "1se",
                 risk: str = "impurity", n_jobs=None, random_state=None) -> CVPruning:
    """Choose ``ccp_alpha`` for ``estimator`` by cross-validation.

    Parameters
    ----------
    estimator : treelearn DecisionTreeClassifier or DecisionTreeRegressor (or a preset)
        Its parameters grow the trees (its own pruning is switched off for them).
    X, y, sample_weight
        Training data, as for ``fit``.
    cv : int or cross-validation splitter, default=10
        Folds (stratified and shuffled for classifiers) or a splitter, e.g.
        ``ShuffleSplit(n_splits=20, test_size=0.2)`` for repeated random splits.
    rule : {"1se", "min"}, default="1se"
        "min": the best mean score; "1se": the smallest tree within one standard error of it.
    risk : {"impurity", "misclassification"}, default="impurity"
        The path's risk (see :func:`treelearn.pruning.cost_complexity_path`).
    n_jobs : int, default=None
        Splits fitted in parallel (joblib).
    random_state : int, RandomState or None
        Shuffles the folds when ``cv`` is an int.

    Returns
    -------
    CVPruning
        The table and the chosen alpha; ``estimator.set_params(ccp_alpha=result.chosen_alpha,
        ccp_risk=risk)`` grows the chosen tree.
    """
    base = _unpruned(estimator)
    full = clone(base).fit(X, y, sample_weight=sample_weight)
    y = np.asarray(y)
    w = np.ones(y.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    if is_classifier(base) and getattr(base, "class_weight", None) is not None:
        # Held-out losses weigh cases as the fit does.
        w = w * compute_sample_weight(base.class_weight, y)
    return cv_pruning(base, X, y, tree=full.tree_, w_fit=sample_weight, w_test=w, cv=cv,
                      rule=rule, risk=risk, n_jobs=n_jobs, random_state=random_state,
                      root_loss=_root_loss(full, X, y, w))


def _unpruned(estimator):
    params = estimator.get_params(deep=False)
    if "prune" not in params:
        raise TypeError("choose_alpha needs a treelearn tree estimator; got "
                        f"{type(estimator).__name__}.")
    return clone(estimator).set_params(prune=None, ccp_alpha=0.0)


def _root_loss(est, X, y, w) -> float:
    """Resubstitution loss rate of the root alone (rpart's scale for xerror)."""
    loss = node_losses(est, X, y, w)
    return float(loss[0] / w.sum())
