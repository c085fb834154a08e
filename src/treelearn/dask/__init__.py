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

How a fit runs (:mod:`treelearn.dask._grow` the tasks, :mod:`treelearn.dask._loop` the
client's level loop): the bin edges come from mergeable summaries of
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

Forests (:class:`DaskRandomForestClassifier`, :class:`DaskRandomForestRegressor`) grow
``trees_per_pass`` trees at a time, their levels sharing each level's tasks and round trip.
A tree's sample weighs each row by a Poisson count keyed on the tree's seed and the row's
global position (:mod:`treelearn.engine.counter_random`), and each node's feature draw is
keyed on the tree's seed and the node: a forest does not depend on the partitioning, on the
trees grown together or on the node groups. With all features per split, each tree equals
the local hist tree fitted with those counts as weights.

This version: numeric features and the category columns of a dask DataFrame (known
categories; the levels present in the data are the local estimator's codes; binary splits into
subsets of levels), NaN for missing values (routed as ``missing="learn"``), classification and
regression, depth limits (``max_depth``, ``min_samples_*``, ``min_impurity_decrease``).
Features are chosen by the criterion (``selection="criterion"``: the local estimator's
statistical selection, its default beyond 20 levels, reads rows). A level's nodes are
processed in groups whose histograms fit ``histogram_budget``. Not yet: ``max_leaf_nodes``
(best-first growth), out-of-bag estimates of the forests, and a reduction by feature blocks
(``benchmarks/DISTRIBUTED.md``).
"""

from __future__ import annotations

from .._estimators import DecisionTreeClassifier, DecisionTreeRegressor
from .._validation import keep_params
from ..ensemble import RandomForestClassifier, RandomForestRegressor
from ..ensemble._forest import _forest_init
from ._estimators import _DaskForest, _DaskTree


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
        keep_params(self, locals())

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
        keep_params(self, locals())


_FOREST_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
        Trees in the forest, as in :class:`{forest}`.
    criterion : str, default={criterion!r}
        Each tree's criterion, as in :class:`{local}`.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
min_impurity_decrease, max_bins
        As :class:`{local}` with ``splitter="hist"``, for every tree
        (``min_weight_fraction_leaf`` is a fraction of a tree's expected sample weight).
    max_features : int, float, {{"sqrt", "log2"}} or None, default={max_features!r}
        Features drawn at each split; the draw is keyed on the tree's seed and the node, so
        it does not depend on the partitioning or the order of the work.
    bootstrap : bool, default=True
        Weigh each row of a tree by a Poisson(1) count keyed on the tree's seed and the row's
        global position (see :mod:`treelearn.engine.counter_random`): the same sample
        whatever the partitioning. Without bootstrap every tree sees every row.
    max_samples : int, float or None, default=None
        With ``bootstrap``: the mean count is ``max_samples / n_samples`` (an int) or
        ``max_samples`` (a fraction in (0, 1]).
    binner, random_state, split_every, histogram_budget, client
        As :class:`DaskDecisionTreeClassifier`; ``random_state`` seeds the trees as the
        local forest seeds them.
    trees_per_pass : int, default=10
        Trees grown together: their levels share each level's tasks and round trip. Each
        partition holds one copy of its rows' bins per tree of a pass (in-bag rows only,
        about 63 % with the default bootstrap), so memory grows with this number.

    Attributes
    ----------
    trees_ : list of Tree
        The fitted trees.
    seeds_ : ndarray
        Each tree's seed (its bootstrap and feature draws).
    classes_, binner_, n_features_in_
        As :class:`DaskDecisionTreeClassifier`.
"""


#: The Dask forests' parameters and defaults (criterion and max_features: per kind).
_FOREST_DEFAULTS = {
    "n_estimators": 100, "criterion": None, "max_depth": None, "min_samples_split": 2,
    "min_samples_leaf": 1, "min_weight_fraction_leaf": 0.0, "min_impurity_decrease": 0.0,
    "max_features": None, "bootstrap": True, "max_samples": None, "max_bins": 255,
    "binner": None, "random_state": None, "trees_per_pass": 10, "split_every": 8,
    "histogram_budget": 256 * 2**20, "client": None}


class DaskRandomForestClassifier(_DaskForest):
    __doc__ = ("""A random forest classifier grown on a Dask cluster (see :mod:`treelearn.dask`):
    ``trees_per_pass`` trees at a time, level by level; ``to_local()`` gives the local
    :class:`treelearn.RandomForestClassifier` with these trees.
    """ + _FOREST_DOC.format(criterion="gini", local="treelearn.DecisionTreeClassifier",
                             forest="treelearn.RandomForestClassifier", max_features="sqrt"))

    _local_class = DecisionTreeClassifier
    _forest_class = RandomForestClassifier

    __init__ = _forest_init({**_FOREST_DEFAULTS, "criterion": "gini",
                             "max_features": "sqrt"})

    def predict_proba(self, X):
        """Mean class probabilities of the trees for a dask array or DataFrame (lazy)."""
        return self._map(X, "predict_proba")


class DaskRandomForestRegressor(_DaskForest):
    __doc__ = ("""A random forest regressor grown on a Dask cluster (see :mod:`treelearn.dask`);
    ``to_local()`` gives the local :class:`treelearn.RandomForestRegressor` with these trees.
    """ + _FOREST_DOC.format(criterion="squared_error",
                             local="treelearn.DecisionTreeRegressor",
                             forest="treelearn.RandomForestRegressor", max_features=1.0))

    _local_class = DecisionTreeRegressor
    _forest_class = RandomForestRegressor

    __init__ = _forest_init({**_FOREST_DEFAULTS, "criterion": "squared_error",
                             "max_features": 1.0})


__all__ = ["DaskDecisionTreeClassifier", "DaskDecisionTreeRegressor",
           "DaskRandomForestClassifier", "DaskRandomForestRegressor"]
