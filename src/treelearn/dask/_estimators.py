"""Dask estimators: a histogram tree grown level by level from partitioned data."""

from __future__ import annotations

import numbers

import numpy as np

from .._estimators import DecisionTreeClassifier, _resolve
from .._tree import Tree
from .._validation import validate_params
from ..engine.binning import MAX_LEVEL_BINS, Binner, feature_edges, table_layout
from ..engine.fit import GrowParams, assemble
from ..engine.grow_hist import _may_split
from ..engine.levels import KIND_NUMERIC, MISSING_LEARN
from ..engine.levelwise import (
    L_COUNT,
    L_FEATURE,
    L_FOUND,
    L_IMPURITY,
    L_KIND,
    L_LO_BIN,
    L_MB,
    L_NB,
    L_NCONST,
    L_SEEN,
    L_THR,
    L_WEIGHT,
)
from ..engine.nodes import (
    G_NODES,
    N_BRANCH,
    N_CATLEN,
    N_CATOFF,
    N_FEATURE,
    N_GSTATE,
    N_ICOLS,
    N_KIND,
    N_MB,
    N_NB,
    N_NSAMP,
    N_PARENT,
    N_SEEN,
    T_IMPURITY,
    T_THRESHOLD,
    T_WEIGHT,
    TREE_UNDEFINED,
)
from ._grow import _first, _part_hist, _part_split, _second, _split_level, _tree_sum, leaf_values

#: Called as ``hook(level, client)`` before each level is submitted (tests kill a worker
#: there); None in use.
LEVEL_HOOK = None
#: Values of a feature kept per partition for the bin edges when it has more distinct values
#: than bins (a sample, then quantiles of the merged samples).
SAMPLE_PER_PARTITION = 20_000


def _import_dask():
    try:
        import dask.array as da
        from distributed import default_client
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError('treelearn.dask needs dask and distributed: pip install '
                          '"treelearn[dask]"') from exc
    return da, default_client


def _frame_codes(frame, cat_cols: list):
    """A pandas partition as a float32 frame: category columns as their dtype's codes (NaN
    for a missing value), the others as values."""
    out = np.empty(frame.shape, dtype=np.float32)
    for j, c in enumerate(frame.columns):
        col = frame[c]
        if c in cat_cols:
            codes = col.cat.codes.to_numpy().astype(np.float32)
            codes[codes < 0] = np.nan
            out[:, j] = codes
        else:
            out[:, j] = col.to_numpy(dtype=np.float32, na_value=np.nan)
    return type(frame)(out, columns=frame.columns, index=frame.index)


def _wait(future):
    """The future's result; data the cluster lost and cannot recompute (it has no lineage:
    scattered, or computed by a graph that is gone) is a clear error, not Dask's message
    about a cancelled internal key."""
    from distributed.client import CancelledError

    try:
        return future.result()
    except CancelledError as exc:
        raise _lost_data(exc) from exc


def _lost_data(exc: BaseException) -> RuntimeError:
    """The error for data the cluster lost and cannot recompute."""
    return RuntimeError(
        "the Dask cluster lost data this fit needs and cannot recompute it (data scattered "
        "to the workers, or persisted, has no graph to rebuild it when a worker dies); load "
        "the data with Dask (from files or arrays) so it can be recomputed, and fit again. "
        f"Dask said: {exc}")


def _blocks(X, y, w):
    """The row blocks of X (one column chunk; category columns as codes), y and w as lists
    of delayed objects, aligned; the feature names, and the categories of category columns
    (None for the others)."""
    da, _ = _import_dask()
    names = None
    categories: list = []
    if hasattr(X, "to_dask_array"):  # a dask DataFrame
        import pandas as pd

        names = [str(c) for c in X.columns]
        cat_cols = []
        for c, t in X.dtypes.items():
            if isinstance(t, pd.CategoricalDtype):
                if not X[c].cat.known:
                    raise ValueError(f"column {c!r} has unknown categories; call "
                                     "df.categorize() (or set them) first.")
                cat_cols.append(c)
                categories.append(np.asarray(t.categories, dtype=object))
            elif np.issubdtype(t, np.number) or np.issubdtype(t, np.bool_):
                categories.append(None)
            else:
                raise TypeError(f"column {c!r} has dtype {t}; treelearn.dask takes numeric "
                                "and category columns (astype('category') and "
                                "df.categorize() make a category column).")
        meta = pd.DataFrame({c: np.zeros(0, dtype=np.float32) for c in X.columns})
        X = X.map_partitions(_frame_codes, cat_cols, meta=meta).to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array or dask DataFrame, got {type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions.")
    if not categories:
        categories = [None] * X.shape[1]
    X = X.rechunk({1: -1})
    if hasattr(y, "to_dask_array"):
        y = y.to_dask_array(lengths=True)
    y = da.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with one value per row of X; got shape {y.shape} for "
                         f"X of shape {X.shape}.")
    y = y.rechunk((X.chunks[0],))
    if w is not None:
        if hasattr(w, "to_dask_array"):
            w = w.to_dask_array(lengths=True)
        w = da.asarray(w).astype(np.float64).rechunk((X.chunks[0],))
    xs = X.to_delayed().ravel().tolist()
    ys = y.to_delayed().ravel().tolist()
    ws = w.to_delayed().ravel().tolist() if w is not None else [None] * len(xs)
    return X, y, w, xs, ys, ws, names, categories


def _present_codes(X, cat_idx: list):
    """The codes present in each category column of a partition."""
    X = np.asarray(X)
    return [np.unique(X[~np.isnan(X[:, f]), f]).astype(np.int64) for f in cat_idx]


def _union_codes(*parts):
    return [np.unique(np.concatenate(cols)) for cols in zip(*parts, strict=True)]


def _summary(X, max_bins: int, sample: int, seed: int):
    """Per feature, the partition's distinct values when at most ``max_bins``, else a sample
    of its values (mergeable: distinct sets unite, samples concatenate)."""
    X = np.asarray(X, dtype=np.float32)
    rng = np.random.default_rng(seed)
    out = []
    for f in range(X.shape[1]):
        col = X[:, f]
        col = col[~np.isnan(col)]
        u = np.unique(col)
        if u.size <= max_bins:
            out.append(("exact", u))
        else:
            pick = col if col.size <= sample else rng.choice(col, sample, replace=False)
            out.append(("sample", np.sort(pick)))
    return out


def _merge(max_bins: int, *summaries):
    """Bin edges from the partitions' summaries: one bin per value when the distinct values
    of every partition together are at most ``max_bins`` (exactly the local binner's edges),
    else quantile edges of the merged samples."""
    p = len(summaries[0])
    edges, exact = [], []
    for f in range(p):
        parts = [s[f] for s in summaries]
        if all(kind == "exact" for kind, _ in parts):
            u = np.unique(np.concatenate([v for _, v in parts]))
            if u.size <= max_bins:
                e, ex = feature_edges(u, max_bins)
                edges.append(e)
                exact.append(ex)
                continue
        values = np.sort(np.concatenate([v for _, v in parts]))
        e, _ = feature_edges(values, max_bins)
        edges.append(e)
        exact.append(False)
    return Binner(max_bins=max_bins).set_edges(edges, np.array(exact))


def _prepare(X, y, w, binner, classes, is_cat, n_levels, lookups):
    """One partition's state: its bins, class codes or targets, weights, and one node (the
    root) holding every row of positive weight. Category columns hold their dtype's codes;
    ``lookups[f]`` maps them to the levels present in the data (the local estimator's
    codes)."""
    X = np.array(X, dtype=np.float32)
    for f, lut in lookups.items():
        col = X[:, f]
        known = ~np.isnan(col)
        col[known] = lut[col[known].astype(np.int64)]
    y = np.asarray(y)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"a partition of X has {X.shape[0]} rows and its part of y "
                         f"{y.shape[0]}: give y with X's partitions.")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError("Input y contains NaN.")
    if w is not None:
        w = np.asarray(w, dtype=np.float64)
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("sample_weight must be finite and non-negative.")
        keep = w > 0
        X, y, w = X[keep], y[keep], np.ascontiguousarray(w[keep])
    bins, lay, _, _ = table_layout(X, binner, is_cat, n_levels)
    if classes is not None:
        codes = np.searchsorted(classes, y)
        C, R = np.ascontiguousarray(codes, dtype=np.int32), None
    else:
        C, R = None, np.ascontiguousarray(y, dtype=np.float64)
    return (bins, C, R, w, np.zeros(1, dtype=np.int64),
            np.full(1, X.shape[0], dtype=np.int64))


def _weight_sum(w):
    return float(np.asarray(w, dtype=np.float64).sum())


class _DaskTree:
    """Shared machinery of the Dask tree estimators (not for direct use)."""

    _local_class: type = DecisionTreeClassifier

    def __init__(self, *, criterion, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0, max_bins=255,
                 binner=None, random_state=None, split_every=8,
                 histogram_budget=256 * 2**20, client=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_bins = max_bins
        self.binner = binner
        self.random_state = random_state
        self.split_every = split_every
        self.histogram_budget = histogram_budget
        self.client = client

    def _local(self):
        """The local estimator with these settings (splitter "hist")."""
        return self._local_class(
            criterion=self.criterion, splitter="hist", max_depth=self.max_depth,
            min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            min_impurity_decrease=self.min_impurity_decrease, max_bins=self.max_bins,
            binner=self.binner, random_state=self.random_state,
            # the statistical selection reads rows; the level-wise search reads histograms
            selection="criterion")

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on a dask array or dask DataFrame ``X`` with targets ``y`` (a dask
        array or Series with X's row chunks), level by level on the cluster.

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
            Numeric features (NaN for missing values).
        y : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Class labels or regression targets.
        sample_weight : dask array or Series, optional
            Non-negative weights (rows of weight zero take no part).

        Returns
        -------
        self : object
        """
        local = self._local()
        validate_params(local, local._constraints())
        if self.criterion == "absolute_error":
            raise ValueError('criterion="absolute_error" needs the rows of each node (medians); '
                             'the Dask trees offer "squared_error" and "sdr".')
        if not isinstance(self.histogram_budget, numbers.Integral) \
                or self.histogram_budget < 1:
            raise ValueError(f"histogram_budget must be a positive int (bytes), got "
                             f"{self.histogram_budget!r}.")
        if not isinstance(self.split_every, numbers.Integral) or self.split_every < 2:
            raise ValueError(f"split_every must be an int of at least 2, got "
                             f"{self.split_every!r}.")
        _, default_client = _import_dask()
        client = self.client or default_client()
        X, y, w, xs, ys, ws, names, categories = _blocks(X, y, sample_weight)
        n, p = int(X.shape[0]), int(X.shape[1])
        if n == 0 or p == 0:
            raise ValueError(f"X has shape {X.shape}; a tree needs rows and features.")
        classification = self._local_class is DecisionTreeClassifier
        classes = None
        if classification:
            classes = np.unique(_wait(client.compute(y)))
            if classes.dtype.kind == "f" and np.isnan(classes).any():
                raise ValueError("Input y contains NaN.")
        seed = int(np.random.default_rng(0).integers(2**31))
        x_parts = client.compute(xs)
        y_parts = client.compute(ys)
        w_parts = client.compute(ws) if w is not None else [None] * len(xs)
        binner = self.binner
        if binner is None:
            summaries = [client.submit(_summary, x, int(self.max_bins), SAMPLE_PER_PARTITION,
                                       seed + i, pure=True) for i, x in enumerate(x_parts)]
            binner = _tree_reduce_merge(client, summaries, int(self.max_bins),
                                        int(self.split_every))
        elif not isinstance(binner, Binner) or not binner.is_fitted \
                or binner.n_features_in_ != p:
            raise ValueError("binner must be a fitted Binner of X's features.")
        is_cat = np.array([c is not None for c in categories], dtype=bool)
        n_levels = np.zeros(p, dtype=np.int64)
        lookups, levels = {}, [None] * p
        if is_cat.any():
            cat_idx = np.flatnonzero(is_cat).tolist()
            present = [client.submit(_present_codes, x, cat_idx, pure=True) for x in x_parts]
            union = _wait(client.submit(_union_codes, *present, pure=True))
            for f, codes in zip(cat_idx, union, strict=True):
                if codes.size > MAX_LEVEL_BINS - 1:
                    raise ValueError(f"category column {f} has {codes.size} levels; "
                                     f"treelearn.dask takes at most {MAX_LEVEL_BINS - 1}.")
                lut = np.full(len(categories[f]), -1, dtype=np.int64)
                lut[codes] = np.arange(codes.size)
                lookups[f] = lut.astype(np.float32)
                levels[f] = categories[f][codes]
                n_levels[f] = codes.size
        states = [client.submit(_prepare, xp, yp, wp, binner, classes, is_cat, n_levels,
                                lookups, pure=True)
                  for xp, yp, wp in zip(x_parts, y_parts, w_parts, strict=True)]
        total_w = float(n if w is None else _wait(client.compute(w.sum())))
        if total_w <= 0:
            raise ValueError("sample weights sum to zero.")
        settings = _resolve(local, n, p, np.array([total_w]))
        crit = local._criteria[self.criterion]
        n_stats = len(classes) if classification else 2
        n_values = len(classes) if classification else 1
        prm = GrowParams(
            crit=crit, n_stats=n_stats, n_values=n_values,
            n_classes=len(classes) if classification else 1, max_depth=settings.max_depth,
            min_samples_split=settings.min_samples_split,
            min_samples_leaf=settings.min_samples_leaf,
            min_weight_leaf=settings.min_weight_leaf, max_features=settings.max_features,
            max_leaf_nodes=0, min_impurity_decrease=float(self.min_impurity_decrease),
            seed=settings.seed, missing=MISSING_LEARN)
        ip, fp = prm.arrays(total_w)
        _, lay, _, _ = table_layout(np.zeros((1, p), dtype=np.float32), binner, is_cat,
                                    n_levels)
        nbins = lay[1]
        width = int(max(int(nbins.max()), 2)) + 2
        weighted = sample_weight is not None
        cfg = (is_cat, nbins.astype(np.int64),
               np.where(is_cat, np.maximum(n_levels, 1), 1).astype(np.int64))
        cfg_all = (lay, binner._table, cfg, np.ones(p), crit, ip, fp, classification, weighted,
                   n_stats, n_values, width)
        n_cols = (n_stats if classification else 3) + int(weighted)
        tree = _grow(client, states, cfg_all, n_cols, int(self.split_every), settings.seed,
                     p, prm.n_classes, n_levels, int(self.histogram_budget))
        self.tree_ = tree
        self.is_categorical_ = is_cat
        self.categories_ = levels
        self.binner_ = binner
        self.n_features_in_ = p
        if names is not None:
            self.feature_names_in_ = np.array(names, dtype=object)
        if classification:
            self.classes_ = classes
            self.n_classes_ = int(len(classes))
        self._n_outputs = 1
        return self

    def to_local(self):
        """The fitted local estimator with this tree (every reader, pruning method and model
        file works on it)."""
        if not hasattr(self, "tree_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first.")
        local = self._local()
        p = self.n_features_in_
        # the fitted attributes of the local estimator from a stand-in of one row per class,
        # then this tree and binner in place of the stand-in's
        k = len(self.classes_) if hasattr(self, "classes_") else 2
        stand_X = np.zeros((k, p), dtype=np.float32)
        stand_y = self.classes_ if hasattr(self, "classes_") else np.arange(k, dtype=float)
        if hasattr(self, "feature_names_in_"):
            import pandas as pd
            stand_X = pd.DataFrame(stand_X, columns=list(self.feature_names_in_))
        local.set_params(binner=self.binner_).fit(stand_X, stand_y)
        local.tree_ = self.tree_
        local.is_categorical_ = self.is_categorical_.copy()
        local.categories_ = list(self.categories_)
        return local

    def predict(self, X):
        """Predictions for a dask array or DataFrame (lazy, one task per row block)."""
        return self._map(X, "predict")

    def _map(self, X, method: str):
        da, _ = _import_dask()
        local = self.to_local()
        if hasattr(X, "map_partitions"):  # a dask DataFrame: the local model reads each frame
            import pandas as pd

            if method == "predict_proba":
                meta = pd.DataFrame({str(c): np.zeros(0) for c in local.classes_})
            else:
                dtype = np.int64 if method == "apply" else (
                    local.classes_.dtype if hasattr(local, "classes_") else np.float64)
                meta = pd.Series(np.zeros(0, dtype=dtype))
            return X.map_partitions(_frame_block, local, method, meta=meta)
        if not isinstance(X, da.Array):
            raise TypeError(f"X must be a dask array or dask DataFrame, got {type(X).__name__}.")
        X = X.rechunk({1: -1})
        if method == "predict_proba":
            k = len(local.classes_)
            return X.map_blocks(_block, local, method, (k,), dtype=np.float64,
                                chunks=(X.chunks[0], (k,)))
        dtype = np.int64 if method == "apply" else (
            local.classes_.dtype if hasattr(local, "classes_") else np.float64)
        return X.map_blocks(_block, local, method, (), dtype=dtype, drop_axis=1)

    def apply(self, X):
        """Each row's leaf (lazy)."""
        return self._map(X, "apply")


def _frame_block(frame, local, method: str):
    """The local model's ``method`` on one pandas partition, indexed as the partition."""
    import pandas as pd

    if method == "predict_proba":
        cols = [str(c) for c in local.classes_]
        if len(frame) == 0:
            return pd.DataFrame({c: np.zeros(0) for c in cols}, index=frame.index)
        return pd.DataFrame(local.predict_proba(frame), columns=cols, index=frame.index)
    if len(frame) == 0:
        dtype = np.int64 if method == "apply" else (
            local.classes_.dtype if hasattr(local, "classes_") else np.float64)
        return pd.Series(np.zeros(0, dtype=dtype), index=frame.index)
    return pd.Series(getattr(local, method)(frame), index=frame.index)


def _block(b, local, method: str, tail: tuple):
    """The local model's ``method`` on one row block (an empty block gives an empty result)."""
    if b.shape[0] == 0:
        dtype = np.int64 if method == "apply" else (
            local.classes_.dtype if method == "predict" and hasattr(local, "classes_")
            else np.float64)
        return np.zeros((0,) + tail, dtype=dtype)
    names = getattr(local, "feature_names_in_", None)
    if names is not None:  # fitted on a DataFrame: a frame with its columns, as predict asks
        import pandas as pd

        b = pd.DataFrame(b, columns=list(names))
    return getattr(local, method)(b)


def _merge_summaries(*summaries):
    """Partition summaries merged (distinct sets united while small, samples joined)."""
    p = len(summaries[0])
    out = []
    for f in range(p):
        parts = [s[f] for s in summaries]
        vals = np.concatenate([v for _, v in parts])
        if all(kind == "exact" for kind, _ in parts):
            out.append(("exact", np.unique(vals)))
        else:
            out.append(("sample", np.sort(vals)))
    return out


def _tree_reduce_merge(client, summaries, max_bins: int, split_every: int) -> Binner:
    """The binner from the partitions' summaries, merged by a tree of tasks (only the edges
    reach the client)."""
    level = list(summaries)
    while len(level) > split_every:
        level = [client.submit(_merge_summaries, *level[i:i + split_every], pure=True)
                 for i in range(0, len(level), split_every)]
    return _wait(client.submit(_merge, max_bins, *level, pure=True))


def _node_groups(open_pos: list, parents: list, per_group: int) -> list:
    """The level's open nodes (positions, in order) in groups of at most ``per_group``
    nodes, children of one parent never apart (a sibling's histogram is subtracted within
    its group); a family larger than ``per_group`` is a group of its own."""
    groups: list = []
    cur: list = []
    i = 0
    while i < len(open_pos):
        j = i
        while j < len(open_pos) and parents[open_pos[j]] == parents[open_pos[i]] \
                and parents[open_pos[i]] >= 0:
            j += 1
        family = open_pos[i:max(j, i + 1)]
        if cur and len(cur) + len(family) > per_group:
            groups.append(cur)
            cur = []
        cur = cur + family
        i = max(j, i + 1)
    if cur:
        groups.append(cur)
    return groups


def _wait_all(client, futures):
    """:func:`_wait` for many futures at once (one wait)."""
    from distributed.client import CancelledError

    try:
        return client.gather(futures)
    except CancelledError as exc:
        raise _lost_data(exc) from exc


def _grow(client, states, cfg_all, n_cols, split_every, seed, p, n_classes, n_levels,
          budget) -> Tree:
    """The level loop (see :mod:`treelearn.dask._grow`); returns the flat tree. A level's
    open nodes are processed in groups whose histograms take at most ``budget`` bytes (one
    node at least)."""
    (lay, edges, cfg, costs, crit, iparams, fparams, classification, weighted, n_stats,
     n_values, width) = cfg_all
    # node table, grown in Python (levels are few; nodes are appended as children appear)
    parent, branch, depth = [-1], [0], [0]
    res_rows: list = [None]
    values: list = [None]
    fmap_rows: list = [None]
    # the current level: node ids, whether open, its histogram plan
    level = [0]
    is_open = [True]
    plan_build = [0]  # the root is built
    plan_parent = [-1]
    plan_sibs: list = [()]
    nconst_of = {0: 0}
    perm_of = {0: np.arange(p)}  # the feature order each node's search starts from
    prev_fulls: list = []  # the previous level's full histograms, one future per group
    prev_where: dict = {}  # its open nodes' (group, index)
    node_bytes = int(lay[0][-1]) * n_cols * 8  # one node's histogram
    built_count = 1
    depth_now = 0
    while True:
        open_pos = [q for q in range(len(level)) if is_open[q]]
        if not open_pos:
            break
        if LEVEL_HOOK is not None:  # tests: stop a worker at a chosen level
            LEVEL_HOOK(depth_now, client)
        depth_now += 1
        groups = _node_groups(open_pos, plan_parent, max(1, budget // node_bytes))
        outs, where = [], {}
        for g, group in enumerate(groups):
            bpos = [q for q in group if plan_build[q] >= 0]
            local = {plan_build[q]: i for i, q in enumerate(bpos)}
            hist_futs = [client.submit(_part_hist, s, np.array(bpos, dtype=np.int64), n_cols,
                                       lay, pure=True) for s in states] if bpos else []
            built = _tree_sum(client, hist_futs, split_every) if hist_futs \
                else np.zeros((0, 1, 1))
            # the parents' groups of the previous level this group reads
            pgroups = sorted({prev_where[plan_parent[q]][0] for q in group
                              if plan_parent[q] >= 0})
            slot = {pg: i for i, pg in enumerate(pgroups)}
            plan = [(local.get(plan_build[q], -1),
                     (slot[prev_where[plan_parent[q]][0]], prev_where[plan_parent[q]][1])
                     if plan_parent[q] >= 0 else None,
                     tuple(local[sb] for sb in plan_sibs[q])) for q in group]
            depths = [depth[level[q]] for q in group]
            nconsts = [nconst_of[level[q]] for q in group]
            perms = np.stack([perm_of[level[q]] for q in group])
            outs.append(client.submit(_split_level, built, plan, depths, nconsts, perms,
                                      cfg_all, seed, *[prev_fulls[pg] for pg in pgroups],
                                      pure=True))
            for i, q in enumerate(group):
                where[q] = (g, i)
        # one wait per level: every group's split records at once
        parts_ = _wait_all(client, [client.submit(_first, o, pure=True) for o in outs])
        fulls = [client.submit(_second, o, pure=True) for o in outs]
        res, vals, fmaps, cstats, cw, cn, after = (
            np.concatenate([r[i] for r in parts_]) for i in range(7))
        # the level's splits, for the partitions (every position of the level)
        splits = np.zeros((len(level), 5), dtype=np.int64)
        level_fmaps = np.full((len(level), width), -1, dtype=np.int64)
        nxt, nxt_open, nxt_build, nxt_parent, nxt_sibs = [], [], [], [], []
        level_where = {j: where[q] for j, q in enumerate(open_pos)}
        for j, q in enumerate(open_pos):
            node = level[q]
            res_rows[node] = res[j]
            values[node] = vals[j]
            nconst_of[node] = int(res[j, L_NCONST])
            if res[j, L_FOUND] == 0.0:
                continue
            k = int(res[j, L_NB])
            fmap_rows[node] = fmaps[j].copy()
            splits[q] = (k, int(res[j, L_FEATURE]), int(res[j, L_KIND]),
                         int(res[j, L_LO_BIN]), int(res[j, L_MB]))
            level_fmaps[q] = fmaps[j]
            kids = []
            for b in range(k):
                kid = len(parent)
                parent.append(node)
                branch.append(b)
                depth.append(depth[node] + 1)
                res_rows.append(None)
                fmap_rows.append(None)
                nconst_of[kid] = int(res[j, L_NCONST])
                perm_of[kid] = after[j]
                lv, limp = leaf_values(cstats[j, b], cw[j, b], crit, classification)
                values.append((lv, limp, int(round(cn[j, b])), float(cw[j, b])))
                kids.append((kid, int(round(cn[j, b])), cw[j, b]))
            opens = [_may_split(c, depth[node] + 1, iparams) and c > 0 for _, c, _ in kids]
            builds = [-1] * k
            sibs = [()] * k
            if k == 2 and all(opens):
                small = 0 if kids[0][1] <= kids[1][1] else 1
                builds[small] = built_count
                built_count += 1
                sibs[1 - small] = (builds[small],)
            else:
                for b in range(k):
                    if opens[b]:
                        builds[b] = built_count
                        built_count += 1
            for b, (kid, _, _) in enumerate(kids):
                nxt.append(kid)
                nxt_open.append(opens[b])
                nxt_build.append(builds[b])
                nxt_parent.append(j)
                nxt_sibs.append(sibs[b])
        if not nxt:
            break
        states = [client.submit(_part_split, s, splits, level_fmaps, lay, pure=True)
                  for s in states]
        prev_fulls, prev_where = fulls, level_where
        # build indices of the next level count from 0 in level order
        order = sorted({b for b in nxt_build if b >= 0})
        renum = {b: i for i, b in enumerate(order)}
        plan_build = [renum[b] if b >= 0 else -1 for b in nxt_build]
        plan_sibs = [tuple(renum[s] for s in sb) for sb in nxt_sibs]
        plan_parent = nxt_parent
        level, is_open = nxt, nxt_open
        built_count = len(order)
    return _assemble(parent, branch, res_rows, values, fmap_rows, p, n_classes, n_values,
                     n_levels)


def _assemble(parent, branch, res_rows, values, fmap_rows, p, n_classes, n_values,
              n_levels) -> Tree:
    count = len(parent)
    ti = np.zeros((count, N_ICOLS), dtype=np.int64)
    tf = np.zeros((count, 4))
    tv = np.zeros((count, n_values))
    ti[:, N_PARENT] = parent
    ti[:, N_BRANCH] = branch
    ti[:, N_FEATURE] = TREE_UNDEFINED
    ti[:, N_MB] = TREE_UNDEFINED
    ti[:, N_CATOFF] = -1
    tf[:, T_THRESHOLD] = TREE_UNDEFINED
    kid_count = np.bincount(np.asarray(parent[1:], dtype=np.int64), minlength=count)
    cats: list = []
    n_cats = 0
    for node in range(count):
        r = res_rows[node]
        v = values[node]
        if r is None:  # a leaf made from its parent's split statistics
            tv[node] = v[0]
            tf[node, T_IMPURITY] = v[1]
            ti[node, N_NSAMP] = v[2]
            tf[node, T_WEIGHT] = v[3]
            continue
        tv[node] = v
        tf[node, T_IMPURITY] = r[L_IMPURITY]
        tf[node, T_WEIGHT] = r[L_WEIGHT]
        ti[node, N_NSAMP] = int(r[L_COUNT])
        if r[L_FOUND] and kid_count[node] > 0:
            ti[node, N_FEATURE] = int(r[L_FEATURE])
            ti[node, N_NB] = int(r[L_NB])
            ti[node, N_MB] = int(r[L_MB])
            ti[node, N_KIND] = int(r[L_KIND])
            ti[node, N_SEEN] = int(r[L_SEEN])
            tf[node, T_THRESHOLD] = r[L_THR]
            if r[L_KIND] != KIND_NUMERIC:  # the level -> branch map of a categorical split
                L = int(n_levels[int(r[L_FEATURE])])
                cats.append(fmap_rows[node][:L])
                ti[node, N_CATOFF] = n_cats
                ti[node, N_CATLEN] = L
                n_cats += L
    gs = np.zeros(N_GSTATE, dtype=np.int64)
    gs[G_NODES] = count
    store = np.concatenate(cats).astype(np.int64) if cats else np.zeros(0, dtype=np.int64)
    return assemble(ti, tf, tv, store, gs, p, n_classes)


__all__ = ["_DaskTree"]
