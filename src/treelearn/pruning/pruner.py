"""The Pruner: a fitted tree's weakest-link sequence, walked forward and back without refitting.

The tutorial's object (see ``LITERATURE.md``): the order in which splits are removed (the one
whose removal raises the cost least goes first; a node only after everything below it), a
``prune(k)`` that moves to any step of that order (negative ``k`` counts from the end:
``prune(-1)`` leaves the root alone, ``prune(0)`` restores the original), cost-complexity
curves ``cost + weight * size`` with their minima, and the pruned tree handed out as a new
fitted estimator. Every step is a :meth:`Tree.subtree` of the original tree, which the Pruner
keeps untouched, so moving back is as cheap as moving forward.
"""

from __future__ import annotations

import copy

import numpy as np

from .._tree import Tree
from .cost_complexity import RISKS, CostComplexityPath, cost_complexity_path, prune_steps


class Pruner:
    """Weakest-link (minimal cost-complexity) pruning of one fitted tree.

    Parameters
    ----------
    model : fitted treelearn estimator, fitted scikit-learn decision tree, or Tree
        The tree to prune; never modified. A scikit-learn tree is converted with
        :func:`treelearn.from_sklearn`.
    risk : {"impurity", "misclassification"}, default="impurity"
        Cost of a leaf: its weighted impurity (scikit-learn's and the tutorial's cost) or the
        weight of the training cases it misclassifies (rpart's risk for classification).

    Attributes
    ----------
    path : CostComplexityPath
        Alphas, risks, sizes and collapsed nodes of every step.
    step : int
        The current step (0 = the original tree); set by :meth:`prune`.
    tree : Tree
        The tree at the current step.

    Notes
    -----
    Costs in :meth:`cost_complexity` count training weight (cases, without sample weights):
    ``cost = sum over leaves of N_leaf * risk_leaf``. The ``alpha`` of :meth:`prune_to_alpha`
    and of the path is scikit-learn's ``ccp_alpha``, the same quantity divided by the root's
    weight.
    """

    def __init__(self, model, risk: str = "impurity"):
        if risk not in RISKS:
            raise ValueError(f"risk must be one of {RISKS}; got {risk!r}.")
        from ..interop import estimator_and_tree

        self.estimator, self.original = estimator_and_tree(model, "Pruner")
        cost = getattr(self.estimator, "cost_matrix_", None)
        self.risk = risk
        self.path: CostComplexityPath = cost_complexity_path(self.original, risk, cost)
        self.step = 0
        self.tree = self.original

    @property
    def n_steps(self) -> int:
        """Number of collapses in the sequence; ``prune(n_steps)`` leaves the root alone."""
        return self.path.n_steps

    @property
    def sequence(self) -> np.ndarray:
        """Nodes (indices in the original tree) in the order they are collapsed."""
        return self.path.pruned_nodes

    @property
    def pruning_alpha(self) -> np.ndarray:
        """Per node of the original tree: the alpha (in cases, like :meth:`cost_complexity`'s
        weight) at which it is collapsed; NaN for leaves. The pictures label nodes with it."""
        out = np.full(self.original.node_count, np.nan)
        out[self.path.pruned_nodes] = self.path.ccp_alphas[1:] * self.path.root_weight
        return out

    def _step_of(self, k) -> int:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"k must be an integer step; got {type(k).__name__}.")
        n = self.n_steps
        if not -(n + 1) <= k <= n:
            raise ValueError(f"k must be between {-(n + 1)} and {n} for this tree "
                             f"({n} steps); got {k}.")
        return int(k) if k >= 0 else n + 1 + int(k)

    def prune(self, k: int) -> Tree:
        """Move to step ``k`` (forward or back) and return the tree there.

        ``k = 0``: the original tree; ``k > 0``: after the first ``k`` collapses; ``k < 0``
        counts from the end (``-1``: the root alone, ``-2``: the last split kept, ...).
        """
        self.step = self._step_of(k)
        self.tree = prune_steps(self.original, self.path, self.step)
        return self.tree

    def sizes(self, complexity: str = "leaves") -> np.ndarray:
        """Size of the tree at every step: leaves (Breiman) or nodes (the tutorial)."""
        if complexity == "leaves":
            return self.path.n_leaves
        if complexity == "nodes":
            return self.path.n_nodes
        raise ValueError(f'complexity must be "leaves" or "nodes"; got {complexity!r}.')

    def costs(self) -> np.ndarray:
        """Total leaf cost (in cases) at every step."""
        return self.path.impurities * self.path.root_weight

    def cost_complexity(self, weight: float, complexity: str = "leaves") -> np.ndarray:
        """``cost + weight * size`` at every step (cost in cases)."""
        if not np.isfinite(weight) or weight < 0:
            raise ValueError(f"weight must be finite and non-negative; got {weight}.")
        return self.costs() + float(weight) * self.sizes(complexity)

    def best_step(self, weight: float, complexity: str = "leaves") -> int:
        """Step minimising :meth:`cost_complexity` (ties: the smaller tree)."""
        cc = self.cost_complexity(weight, complexity)
        # Relative slack: the curve's minimum is often a tie in exact arithmetic.
        tol = 1e-12 * max(1.0, float(np.abs(cc).max()))
        return int(np.flatnonzero(cc <= cc.min() + tol)[-1])

    def prune_to_minimum(self, weight: float, complexity: str = "leaves") -> Tree:
        """Move to the step of least cost-complexity for ``weight``."""
        return self.prune(self.best_step(weight, complexity))

    def prune_to_alpha(self, ccp_alpha: float) -> Tree:
        """Move to the subtree scikit-learn keeps with ``ccp_alpha``."""
        if not np.isfinite(ccp_alpha) or ccp_alpha < 0:
            raise ValueError(f"ccp_alpha must be finite and non-negative; got {ccp_alpha}.")
        return self.prune(self.path.steps_for_alpha(ccp_alpha))

    def kept_mask(self) -> np.ndarray:
        """Per node of the original tree: still in the tree at the current step."""
        keep = np.zeros(self.original.node_count, dtype=bool)
        collapsed = np.zeros(self.original.node_count, dtype=bool)
        collapsed[self.path.pruned_nodes[:self.step]] = True
        ptr, kids = self.original.branch_ptr, self.original.branch_child
        stack = [0]
        while stack:
            i = stack.pop()
            keep[i] = True
            if not collapsed[i]:
                stack.extend(kids[ptr[i]:ptr[i + 1]].tolist())
        return keep

    def to_estimator(self):
        """A new fitted estimator holding the current tree (the original is not touched)."""
        if self.estimator is None:
            raise ValueError("this Pruner was built from a Tree; build it from a fitted "
                             "estimator to get an estimator back.")
        est = copy.deepcopy(self.estimator)
        est.tree_ = self.tree
        return est

    def __repr__(self) -> str:
        return (f"Pruner(step={self.step} of {self.n_steps}, leaves="
                f"{self.path.n_leaves[self.step]}, risk={self.risk!r})")
