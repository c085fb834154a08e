"""Dask estimators: histogram trees and forests grown level by level from partitioned data.

:class:`_DaskBase` reads the data (row blocks, bin edges, category levels) and runs the level
loop (:mod:`treelearn.dask._loop`) on partition states; a tree's state per partition is its
binned rows of positive weight (:func:`_prepare`), a forest pass's is one copy per tree of the
rows its bootstrap draws (:func:`_prepare_forest`). Copies, not row indices into one shared
bin matrix: the histogram and partition kernels are the single tree's, and a copy of in-bag
rows (about 63 % of them) costs ``bytes per binned row + 12`` per row and tree of the pass,
which ``trees_per_pass`` bounds.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.utils import check_random_state

from .. import _members
from .._estimators import MAX_INT, DecisionTreeClassifier
from ..engine.binning import MAX_LEVEL_BINS, Binner, feature_edges, table_layout
from ..engine.build import MISSING_LEARN, Config, GrowParams, category_search, fit_extras
from ..engine.counter_random import poisson_counts
from ._grow import LevelConfig
from ._loop import _Book, _wait, grow_trees

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
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError("X's row chunks have unknown sizes (after a filter, say); call "
                         "X.compute_chunk_sizes() first.")
    X = X.rechunk({1: -1})
    if hasattr(y, "to_dask_array"):
        with warnings.catch_warnings():
            # string labels become an object array, which is what the fit reads
            warnings.filterwarnings("ignore", message=".*extension dtypes to arrays",
                                    category=UserWarning)
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


def _encode(X, y, w, binner, classes, is_cat, n_levels, lookups):
    """One partition's bins, class codes or targets, and checked weights (None: unit).
    Category columns hold their dtype's codes; ``lookups[f]`` maps them to the levels present
    in the data (the local estimator's codes)."""
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
    bins, _, _, _ = table_layout(X, binner, is_cat, n_levels)
    if classes is not None:
        codes = np.searchsorted(classes, y)
        C, R = np.ascontiguousarray(codes, dtype=np.int32), None
    else:
        C, R = None, np.ascontiguousarray(y, dtype=np.float64)
    return bins, C, R, w


def _state(bins, C, R, w, keep):
    """A tree's state: the rows ``keep`` (all: None) as one node, the root."""
    if keep is not None:
        bins = bins[keep]
        C = None if C is None else C[keep]
        R = None if R is None else R[keep]
        w = None if w is None else np.ascontiguousarray(w[keep])
    return (bins, C, R, w, np.zeros(1, dtype=np.int64),
            np.full(1, bins.shape[0], dtype=np.int64))


def _prepare(X, y, w, binner, classes, is_cat, n_levels, lookups):
    """One partition's state for one tree: its rows of positive weight, the root's."""
    bins, C, R, w = _encode(X, y, w, binner, classes, is_cat, n_levels, lookups)
    return (_state(bins, C, R, w, None if w is None else w > 0),)


def _prepare_forest(X, y, w, binner, classes, is_cat, n_levels, lookups, seeds, offset,
                    lam):
    """One partition's states for the trees seeded ``seeds``: each tree's rows weigh their
    bootstrap count (Poisson(``lam``) keyed on the tree's seed and the row's global id
    ``offset + i``; ``lam`` None: no bootstrap) times their sample weight."""
    bins, C, R, w = _encode(X, y, w, binner, classes, is_cat, n_levels, lookups)
    rows = offset + np.arange(bins.shape[0], dtype=np.int64)
    base = np.ones(bins.shape[0]) if w is None else w
    out = []
    for seed in seeds:
        wt = base if lam is None else base * poisson_counts(seed, 0, rows, lam)
        out.append(_state(bins, C, R, wt, wt > 0))
    return tuple(out)


def level_config(crit: int, settings, classes, binner: Binner, is_cat: np.ndarray,
                 n_levels: np.ndarray, weighted: bool, total_w: float,
                 min_impurity_decrease: float) -> tuple:
    """What every task of the level loop reads: ``cfg_all`` (a
    :data:`~treelearn.dask._grow.LevelConfig`), the columns
    of a histogram, the bytes of a row sent for a small node, and the number of classes
    (1: regression). ``classes`` None: regression."""
    classification = classes is not None
    p = len(is_cat)
    n_stats = len(classes) if classification else 2
    n_values = len(classes) if classification else 1
    prm = GrowParams(
        crit=crit, n_stats=n_stats, n_values=n_values,
        n_classes=len(classes) if classification else 1, max_depth=settings.max_depth,
        min_samples_split=settings.min_samples_split,
        min_samples_leaf=settings.min_samples_leaf,
        min_weight_leaf=settings.min_weight_leaf, max_features=settings.max_features,
        max_leaf_nodes=0, min_impurity_decrease=min_impurity_decrease,
        seed=settings.seed, missing=MISSING_LEARN)
    params = prm.scalars(total_w)
    one, lay, _, _ = table_layout(np.zeros((1, p), dtype=np.float32), binner, is_cat,
                                  n_levels)
    nbins = lay.nbins
    width = int(max(int(nbins.max()), 2)) + 2
    cfg = Config(is_cat=is_cat, n_search=nbins.astype(np.int64),
                 category=category_search(is_cat), extras=fit_extras(prm))
    cfg_all = LevelConfig(lay=lay, edges=binner._table, cfg=cfg, costs=np.ones(p), crit=crit,
                          params=params, classification=classification,
                          weighted=weighted, n_stats=n_stats, n_values=n_values, width=width)
    n_cols = (n_stats if classification else 3) + int(weighted)
    # a row of a small node as sent: bins, its index, class code or target, weight
    row_bytes = one.shape[1] + 4 + (4 if classification else 8) + (8 if weighted else 0)
    return cfg_all, n_cols, row_bytes, prm.n_classes


class _DaskBase:
    """What the Dask trees and forests share: reading the data, the level loop, prediction
    through the local estimator (not for direct use)."""

    _local_class: type = DecisionTreeClassifier

    def _tree_template(self):
        """The local tree with these settings (splitter "hist")."""
        params = dict(
            criterion=self.criterion, splitter="hist", max_depth=self.max_depth,
            min_samples_split=self.min_samples_split, min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            min_impurity_decrease=self.min_impurity_decrease, max_bins=self.max_bins,
            random_state=self.random_state,
            # the statistical selection reads rows; the level-wise search reads histograms
            selection="criterion")
        if hasattr(self, "max_features"):
            params["max_features"] = self.max_features
        return self._local_class(**params)

    @property
    def _classification(self) -> bool:
        return self._local_class is DecisionTreeClassifier

    def _check_params(self, template) -> None:
        _members.check_params(template)
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

    def _read(self, X, y, sample_weight) -> dict:
        """The data as the level loop needs it: the client, the partitions' futures, the bin
        edges, the category levels and what encodes a partition (one round trip each for the
        classes, the edges, the levels and the total weight)."""
        _, default_client = _import_dask()
        client = self.client or default_client()
        X, y, w, xs, ys, ws, names, categories = _blocks(X, y, sample_weight)
        n, p = int(X.shape[0]), int(X.shape[1])
        if n == 0 or p == 0:
            raise ValueError(f"X has shape {X.shape}; a tree needs rows and features.")
        classes = None
        if self._classification:
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
        total_w = float(n if w is None else _wait(client.compute(w.sum())))
        if total_w <= 0:
            raise ValueError("sample weights sum to zero.")
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        return dict(client=client, n=n, p=p, names=names, classes=classes, binner=binner,
                    is_cat=is_cat, n_levels=n_levels, lookups=lookups, levels=levels,
                    parts=list(zip(x_parts, y_parts, w_parts, strict=True)), total_w=total_w,
                    weighted=w is not None, offsets=offsets)

    def _grow(self, d: dict, template, states, seeds: list, weighted: bool,
              total_w: float) -> list:
        """The trees of ``seeds`` grown on the partition ``states`` (the level loop)."""
        settings = _members.settings(template, d["n"], d["p"], np.array([total_w]))
        p = d["p"]
        crit = _members.criteria(type(template))[self.criterion]
        cfg_all, n_cols, row_bytes, n_classes = level_config(
            crit, settings, d["classes"], d["binner"], d["is_cat"], d["n_levels"], weighted,
            total_w, float(self.min_impurity_decrease))
        books = [_Book(p, settings.seed if s is None else s, d["n"]) for s in seeds]
        return grow_trees(d["client"], states, books, cfg_all, n_cols, int(self.split_every),
                          p, n_classes, d["n_levels"], int(self.histogram_budget), row_bytes)

    def _set_data(self, d: dict) -> None:
        self.is_categorical_ = d["is_cat"]
        self.categories_ = d["levels"]
        self.binner_ = d["binner"]
        self.n_features_in_ = d["p"]
        if d["names"] is not None:
            self.feature_names_in_ = np.array(d["names"], dtype=object)
        if self._classification:
            self.classes_ = d["classes"]
            self.n_classes_ = int(len(d["classes"]))
        self._n_outputs = 1

    def _local_tree(self, tree):
        """The fitted local tree holding ``tree`` (a stand-in fit of one row per class gives
        the local estimator's fitted attributes; then this tree, binner and levels)."""
        local = self._tree_template()
        p = self.n_features_in_
        k = len(self.classes_) if self._classification else 2
        stand_X = np.zeros((k, p), dtype=np.float32)
        stand_y = self.classes_ if self._classification else np.arange(k, dtype=float)
        if hasattr(self, "feature_names_in_"):
            import pandas as pd
            stand_X = pd.DataFrame(stand_X, columns=list(self.feature_names_in_))
        local.set_params(binner=self.binner_).fit(stand_X, stand_y)
        local.tree_ = tree
        local.is_categorical_ = self.is_categorical_.copy()
        local.categories_ = list(self.categories_)
        return local

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_features_in_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first.")

    def predict(self, X):
        """Predictions for a dask array or DataFrame (lazy, one task per row block)."""
        return self._map(X, "predict")

    def apply(self, X):
        """Each row's leaf (lazy; a forest: one column per tree)."""
        return self._map(X, "apply")

    def _map(self, X, method: str):
        da, _ = _import_dask()
        local = self.to_local()
        n_trees = len(local.estimators_) if hasattr(local, "estimators_") else None
        if hasattr(X, "map_partitions"):  # a dask DataFrame: the local model reads each frame
            import pandas as pd

            if method == "predict_proba":
                meta = pd.DataFrame({str(c): np.zeros(0) for c in local.classes_})
            elif method == "apply" and n_trees is not None:
                meta = pd.DataFrame({str(t): np.zeros(0, dtype=np.int64)
                                     for t in range(n_trees)})
            else:
                meta = pd.Series(np.zeros(0, dtype=_out_dtype(local, method)))
            return X.map_partitions(_frame_block, local, method, meta=meta)
        if not isinstance(X, da.Array):
            raise TypeError(f"X must be a dask array or dask DataFrame, got {type(X).__name__}.")
        X = X.rechunk({1: -1})
        width = len(local.classes_) if method == "predict_proba" else (
            n_trees if method == "apply" else None)
        if width is not None:
            return X.map_blocks(_block, local, method, (width,),
                                dtype=_out_dtype(local, method),
                                chunks=(X.chunks[0], (width,)))
        return X.map_blocks(_block, local, method, (), dtype=_out_dtype(local, method),
                            drop_axis=1)


_FIT_DOC = """Grow the {what} on a dask array or dask DataFrame ``X`` with targets ``y`` (a
        dask array or Series with X's row chunks), level by level on the cluster{how}.

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
            Numeric features (NaN for missing values) and, in a DataFrame, category columns.
        y : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Class labels or regression targets.
        sample_weight : dask array or Series, optional
            Non-negative weights ({weights}).

        Returns
        -------
        self : object
        """


class _DaskTree(_DaskBase):
    """Shared machinery of the Dask tree estimators (not for direct use)."""

    def fit(self, X, y, sample_weight=None):
        template = self._tree_template()
        self._check_params(template)
        d = self._read(X, y, sample_weight)
        client = d["client"]
        states = [client.submit(_prepare, xp, yp, wp, d["binner"], d["classes"], d["is_cat"],
                                d["n_levels"], d["lookups"], pure=True)
                  for xp, yp, wp in d["parts"]]
        self.tree_ = self._grow(d, template, states, [None], d["weighted"], d["total_w"])[0]
        self._set_data(d)
        return self

    fit.__doc__ = _FIT_DOC.format(what="tree", how="",
                                  weights="rows of weight zero take no part")

    def to_local(self):
        """The fitted local estimator with this tree (every reader, pruning method and model
        file works on it)."""
        self._check_fitted()
        return self._local_tree(self.tree_)


class _DaskForest(_DaskBase):
    """Shared machinery of the Dask forests (not for direct use)."""

    _forest_class: type = None

    def _poisson_mean(self, n: int) -> float | None:
        """The mean bootstrap count of a row (None: no bootstrap)."""
        ms = self.max_samples
        if not self.bootstrap:
            if ms is not None:
                raise ValueError("max_samples needs bootstrap=True: without bootstrap every "
                                 "tree sees every row.")
            return None
        if ms is None:
            return 1.0
        if isinstance(ms, bool) or not isinstance(ms, (numbers.Integral, float)):
            raise TypeError(f"max_samples must be None, an int or a float, got {ms!r}.")
        if isinstance(ms, numbers.Integral):
            if not 1 <= ms <= n:
                raise ValueError(f"max_samples={ms} must be in [1, n_samples={n}].")
            return ms / n
        if not 0.0 < ms <= 1.0:
            raise ValueError(f"max_samples={ms} must be in (0, 1] as a fraction.")
        return float(ms)

    def fit(self, X, y, sample_weight=None):
        template = self._tree_template()
        self._check_params(template)
        for name in ("n_estimators", "trees_per_pass"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}.")
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise TypeError(f"bootstrap must be a bool, got {self.bootstrap!r}.")
        d = self._read(X, y, sample_weight)
        lam = self._poisson_mean(d["n"])
        rng = check_random_state(self.random_state)
        seeds = [int(rng.randint(MAX_INT)) for _ in range(self.n_estimators)]
        client = d["client"]
        # the expected weight of a tree's sample (min_weight_fraction_leaf, importances)
        total_w = d["total_w"] * (1.0 if lam is None else lam)
        trees: list = []
        step = int(self.trees_per_pass)
        for start in range(0, len(seeds), step):
            batch = seeds[start:start + step]
            states = [client.submit(_prepare_forest, xp, yp, wp, d["binner"], d["classes"],
                                    d["is_cat"], d["n_levels"], d["lookups"], batch,
                                    int(d["offsets"][i]), lam, pure=True)
                      for i, (xp, yp, wp) in enumerate(d["parts"])]
            trees += self._grow(d, template, states, batch, True, total_w)
        self.trees_ = trees
        self.seeds_ = np.array(seeds, dtype=np.int64)
        self._set_data(d)
        return self

    fit.__doc__ = _FIT_DOC.format(
        what="forest", how=", ``trees_per_pass`` trees at a time",
        weights="a row weighs its bootstrap count times its weight")

    def to_local(self):
        """The fitted local forest (:class:`treelearn.RandomForestClassifier` or
        ``Regressor`` with ``splitter="hist"``) holding these trees: every reader, model
        file and prediction of the local forest works on it. Out-of-bag estimates do not:
        the trees' samples were Poisson draws on the cluster, which the local forest does
        not redraw."""
        self._check_fitted()
        members = []
        for tree, seed in zip(self.trees_, self.seeds_, strict=True):
            local = self._local_tree(tree)
            local.random_state = int(seed)
            members.append(local)
        forest = self._forest_class(
            n_estimators=len(members), criterion=self.criterion, splitter="hist",
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            min_impurity_decrease=self.min_impurity_decrease, max_bins=self.max_bins,
            max_features=self.max_features, bootstrap=self.bootstrap,
            max_samples=self.max_samples if isinstance(self.max_samples, float) else None,
            random_state=self.random_state)
        return forest._adopt(members)


def _out_dtype(local, method: str):
    """The dtype of ``method``'s result of a local tree or forest."""
    if method == "apply":
        return np.int64
    if method == "predict" and hasattr(local, "classes_"):
        return local.classes_.dtype
    return np.float64


def _frame_block(frame, local, method: str):
    """The local model's ``method`` on one pandas partition, indexed as the partition."""
    import pandas as pd

    n_trees = len(local.estimators_) if hasattr(local, "estimators_") else None
    if method == "predict_proba" or (method == "apply" and n_trees is not None):
        cols = ([str(c) for c in local.classes_] if method == "predict_proba"
                else [str(t) for t in range(n_trees)])
        dtype = _out_dtype(local, method)
        if len(frame) == 0:
            return pd.DataFrame({c: np.zeros(0, dtype=dtype) for c in cols}, index=frame.index)
        return pd.DataFrame(getattr(local, method)(frame), columns=cols, index=frame.index)
    if len(frame) == 0:
        return pd.Series(np.zeros(0, dtype=_out_dtype(local, method)), index=frame.index)
    return pd.Series(getattr(local, method)(frame), index=frame.index)


def _block(b, local, method: str, tail: tuple):
    """The local model's ``method`` on one row block (an empty block gives an empty result)."""
    if b.shape[0] == 0:
        return np.zeros((0,) + tail, dtype=_out_dtype(local, method))
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


__all__ = ["_DaskTree", "_DaskForest"]
