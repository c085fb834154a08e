"""Data-parallel trees on Dask: the histogram tree grown level by level as pure Dask tasks.

Teams whose tables outgrow one machine fit the same histogram trees from a Dask cluster::

    from distributed import Client, LocalCluster
    import dask.array as da
    from treelearn.dask import DaskDecisionTreeClassifier

    client = Client(LocalCluster(n_workers=2))
    X = da.from_array(X_numpy, chunks=(100_000, -1))
    y = da.from_array(y_numpy, chunks=(100_000,))
    model = DaskDecisionTreeClassifier(max_depth=10).fit(X, y)
    local = model.to_local()  # a DecisionTreeClassifier: readers, pruning, model files

How a fit runs (:mod:`treelearn.dask._grow`): the bin edges come from mergeable summaries of
the partitions (each feature's distinct values while few, else a sample), reduced by a tree of
tasks; each partition is binned where it lives and keeps its rows grouped by node. Each level
then costs one round trip of the client: histograms of the level's nodes per partition (the
smaller child of a split only; its sibling is the parent's histogram minus it), summed by a tree
of ``split_every`` inputs per task; the splits chosen on a worker with the local grower's own
search; the rows moved to their children by a pure task per partition. Only the split records
reach the client. Every task is a function of its inputs with a key derived from them (no
worker pins, no actors, no sockets outside Dask), so the scheduler can recompute a lost
partition's state from its lineage.

Given the same bin edges (``binner=``), the tree equals the local ``splitter="hist"`` fit's
node by node on data without tied scores (class counts exactly; sums of weights and targets up
to rounding, the partitions adding them in another order); ``max_features`` below the number
of features draws in another node order than the local depth-first grower.

This version: numeric features and the category columns of a dask DataFrame (known
categories; the levels present in the data are the local estimator's codes; binary splits into
subsets of levels), NaN for missing values (routed as ``missing="learn"``), classification and
regression, depth limits (``max_depth``, ``min_samples_*``, ``min_impurity_decrease``).
Features are chosen by the criterion (``selection="criterion"``: the local estimator's
statistical selection, its default beyond 20 levels, reads rows). A level's nodes are
processed in groups whose histograms fit ``histogram_budget``. Not yet: forests,
``max_leaf_nodes``.
"""

from __future__ import annotations

from .._estimators import DecisionTreeClassifier, DecisionTreeRegressor
from ._estimators import _DaskTree


class DaskDecisionTreeClassifier(_DaskTree):
    """A classification tree grown on a Dask cluster (see :mod:`treelearn.dask`).

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "misclassification"}, default="gini"
        As :class:`treelearn.DecisionTreeClassifier`.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
min_impurity_decrease, max_bins, random_state
        As :class:`treelearn.DecisionTreeClassifier` with ``splitter="hist"``.
    binner : Binner, optional
        Fitted bin edges to use (the same edges give the local fit's tree). Default: edges
        from the partitions' summaries.
    split_every : int, default=8
        Inputs per task of the tree reductions.
    histogram_budget : int, default=256 MiB
        Bytes of histograms a task of a level may hold: the level's open nodes are processed
        in groups of at most ``histogram_budget / (one node's histogram)`` nodes (siblings
        together, one node at least), each group with its own histogram, reduction and split
        tasks; the client still waits once per level.
    client : distributed.Client, optional
        Default: the current client.

    Attributes
    ----------
    tree_ : Tree
    classes_ : ndarray
    binner_ : Binner
    n_features_in_ : int
    """

    _local_class = DecisionTreeClassifier

    def __init__(self, *, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0,
                 max_bins=255, binner=None, random_state=None, split_every=8,
                 histogram_budget=256 * 2**20, client=None):
        super().__init__(criterion=criterion, max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf,
                         min_impurity_decrease=min_impurity_decrease, max_bins=max_bins,
                         binner=binner, random_state=random_state, split_every=split_every,
                         histogram_budget=histogram_budget, client=client)

    def predict_proba(self, X):
        """Class probabilities for a dask array or DataFrame (lazy)."""
        return self._map(X, "predict_proba")


class DaskDecisionTreeRegressor(_DaskTree):
    """A regression tree grown on a Dask cluster (see :mod:`treelearn.dask`).

    Parameters
    ----------
    criterion : {"squared_error", "sdr"}, default="squared_error"
        As :class:`treelearn.DecisionTreeRegressor` (absolute error needs the rows' medians,
        which histograms do not hold).
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
min_impurity_decrease, max_bins, random_state, binner, split_every, histogram_budget, \
client
        As :class:`DaskDecisionTreeClassifier`.
    """

    _local_class = DecisionTreeRegressor

    def __init__(self, *, criterion="squared_error", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0,
                 max_bins=255, binner=None, random_state=None, split_every=8,
                 histogram_budget=256 * 2**20, client=None):
        super().__init__(criterion=criterion, max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf,
                         min_impurity_decrease=min_impurity_decrease, max_bins=max_bins,
                         binner=binner, random_state=random_state, split_every=split_every,
                         histogram_budget=histogram_budget, client=client)


__all__ = ["DaskDecisionTreeClassifier", "DaskDecisionTreeRegressor"]
