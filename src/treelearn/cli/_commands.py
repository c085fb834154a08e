"""The subcommands of ``treelearn``: each reads its arguments, calls the public API and prints."""

from __future__ import annotations

import argparse
import io as _io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .. import io as model_io
from .._progress import progress, say
from ._data import (
    Columns,
    choose_columns,
    read_table,
    split_names,
    target_column,
    target_values,
    task_of,
)
from ._errors import UserError

# -- shared helpers -------------------------------------------------------------------------------


def _progress(args: argparse.Namespace, total: int, desc: str):
    """A progress bar on standard error, only when it is a terminal and not --quiet."""
    return progress(total, desc, quiet=args.quiet, unit="fit")


def _is_classifier(model) -> bool:
    return hasattr(model, "classes_")


def _model_columns(model) -> Columns:
    """The columns a saved model reads, from the model itself."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        raise UserError("the model has no column names (it was fitted on an array, not a "
                        "table); the command line needs a model fitted on a table")
    names = [str(n) for n in names]
    cats = [n for n, c in zip(names, model.is_categorical_, strict=True) if c]
    return Columns(features=names, categorical=cats, ignored={})


def _features(model, table: pd.DataFrame, source: str) -> pd.DataFrame:
    """The feature frame of ``table`` for ``model``; categorical cells are mapped to the
    model's own levels by their text (a model fitted in Python may have numeric levels)."""
    X = _model_columns(model).frame(table, source)
    for j, levels in enumerate(model.categories_):
        if levels is None:
            continue
        by_text = {str(v): v for v in levels.tolist()}
        col = X.columns[j]
        X[col] = X[col].map(lambda v, m=by_text: m.get(v, v) if v is not None else None)
    return X


def _write_text(text: str, output: str | None) -> None:
    """Print, or write to ``output`` atomically."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from .._files import atomic_path

    path = Path(output)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def _scores_text(model, X, y, title: str) -> list[str]:
    """Accuracy and confusion matrix, or R2 / MAE / RMSE, of ``model`` on (X, y)."""
    pred = model.predict(X)
    title = f"{title} " if title else ""
    if _is_classifier(model):
        from sklearn.metrics import confusion_matrix

        labels = model.classes_
        known = np.isin(y, labels)
        acc = float(np.mean(pred == y))
        lines = [f"{title}accuracy: {acc:.4f} ({int(np.sum(pred == y))} of {len(y)} rows)"]
        if not known.all():
            lines.append(f"  ({int((~known).sum())} rows have labels the model never saw)")
        cm = confusion_matrix(y[known], pred[known], labels=labels)
        names = [str(c) for c in labels]
        w = max(8, *(len(n) for n in names)) + 2
        lines.append(f"confusion matrix ({title.strip() or 'all rows'}; rows: true class, "
                     "columns: predicted):")
        lines.append(" " * w + "".join(n.rjust(w) for n in names))
        for name, row in zip(names, cm, strict=True):
            lines.append(name.ljust(w) + "".join(str(v).rjust(w) for v in row))
        return lines
    err = pred - y
    ss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(err ** 2)) / ss if ss > 0 else float("nan")
    return [f"{title}R2: {r2:.4f}, MAE: {np.mean(np.abs(err)):.4g}, "
            f"RMSE: {np.sqrt(np.mean(err ** 2)):.4g} ({len(y)} rows; target mean "
            f"{y.mean():.4g}, std {y.std():.4g})"]


def _labelled(model, meta: dict, table: pd.DataFrame, target: str | None, source: str):
    """(X, y) of a labelled table for ``model`` (``meta``: its file's metadata); rows
    without a label are dropped."""
    target = target or meta["info"].get("target")
    if not target:
        raise UserError("give --target: the model file does not name its target column")
    col = target_column(table, target, source)
    keep = col.notna().to_numpy()
    if not keep.any():
        raise UserError(f"column {target!r} of {source} has no values")
    table, col = table[keep], col[keep]
    task = "classification" if _is_classifier(model) else "regression"
    y = target_values(col, task)
    if task == "classification":
        y = _as_model_labels(y, model.classes_)
    return _features(model, table, source), y, int((~keep).sum())


def _as_model_labels(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Labels read from a table (text or numbers) as the model's class labels, matched by
    their text, so "1" in a file is the class 1 of a model fitted in Python."""
    by_text = {str(c): c for c in classes.tolist()}
    out = np.empty(len(y), dtype=object)
    out[:] = [by_text.get(str(v), v) for v in y.tolist()]
    if classes.dtype != object:
        try:
            return out.astype(classes.dtype)
        except (TypeError, ValueError):
            return out
    return out


# -- fit ------------------------------------------------------------------------------------------

ALGORITHMS = {"cart": ("CARTClassifier", "CARTRegressor"),
               "c45": ("C45Classifier", None),
               "id3": ("ID3Classifier", None),
               "tree": ("DecisionTreeClassifier", "DecisionTreeRegressor"),
               "forest": ("RandomForestClassifier", "RandomForestRegressor"),
               "extra": ("ExtraTreesClassifier", "ExtraTreesRegressor"),
               "adaboost": ("AdaBoostClassifier", None),
               "oner": ("OneRClassifier", None),
               "m5": (None, "M5Regressor"),
               "optimal": ("OptimalTreeClassifier", None),
               "oblique": ("ObliqueTreeClassifier", "ObliqueTreeRegressor"),
               "oblique-forest": ("ObliqueRandomForestClassifier",
                                  "ObliqueRandomForestRegressor"),
               "quantile-forest": (None, "RandomForestQuantileRegressor")}
_TREE_OPTIONS = ("criterion", "max_depth", "min_samples_leaf", "min_samples_split",
                 "max_leaf_nodes", "splitter")
_ENSEMBLES = ("forest", "extra", "adaboost", "oner", "oblique-forest", "quantile-forest")
_FORESTS = ("forest", "extra", "adaboost", "oblique-forest", "quantile-forest")


_MONOTONIC_ALGORITHMS = ("cart", "c45", "id3", "tree", "forest", "extra", "adaboost")


def _monotonic(args: argparse.Namespace, task: str, cols: Columns) -> dict | None:
    """``--monotonic price=+1,age=-1`` as ``monotonic_cst``, checked against the columns."""
    text = getattr(args, "monotonic", None)
    if not text:
        return None
    if args.algorithm not in _MONOTONIC_ALGORITHMS:
        raise UserError(f"--monotonic is for {', '.join(_MONOTONIC_ALGORITHMS)}; "
                        f"--algorithm {args.algorithm} does not take it")
    out = {}
    for item in split_names(text):
        name, sep, sign = item.partition("=")
        name, sign = name.strip(), sign.strip()
        if not sep or sign not in ("+1", "1", "-1", "0", "+", "-"):
            raise UserError(f"--monotonic takes COLUMN=+1 (increasing) or COLUMN=-1 "
                            f"(decreasing), separated by commas; got {item!r}")
        if name not in cols.features:
            raise UserError(f"--monotonic names {name!r}, which is not a feature column")
        if name in cols.categorical:
            raise UserError(f"--monotonic names {name!r}, a category column: its levels have "
                            "no order")
        out[name] = -1 if sign.startswith("-") else (0 if sign == "0" else 1)
    return out


def _estimator(args: argparse.Namespace, task: str, cols: Columns):
    mono = _monotonic(args, task, cols)
    est = _make_estimator(args, task, cols)
    if mono is not None:
        if args.algorithm == "adaboost":
            est.estimator.set_params(monotonic_cst=mono)
        else:
            est.set_params(monotonic_cst=mono)
            if args.algorithm == "c45":
                est.set_params(subtree_raising=False)  # a raised subtree leaves its bounds
    return est


def _make_estimator(args: argparse.Namespace, task: str, cols: Columns):
    import treelearn

    clf, reg = ALGORITHMS[args.algorithm]
    name = clf if task == "classification" else reg
    if name is None and task == "classification":
        raise UserError(f"--algorithm {args.algorithm} is for regression; the target is "
                        "classes (use cart, c45, id3, tree, oblique, forest, oblique-forest, "
                        "extra, adaboost or oner, or --task regression)")
    if name is None:
        raise UserError(f"--algorithm {args.algorithm} is for classification; the target is "
                        "numeric (use cart, tree, m5, oblique, forest, oblique-forest, "
                        "quantile-forest or extra, or --task classification)")
    algo = args.algorithm
    if algo in _ENSEMBLES and args.prune is not None:
        raise UserError(f"--prune is for single trees; --algorithm {algo} does not prune")
    if args.n_estimators is not None and algo not in _FORESTS:
        raise UserError("--n-estimators is for forest, extra, oblique-forest, quantile-forest "
                        "and adaboost")
    if args.n_estimators is not None and args.n_estimators < 1:
        raise UserError(f"--n-estimators must be at least 1; got {args.n_estimators}")
    cats = cols.categorical or None
    given = {opt: getattr(args, opt) for opt in _TREE_OPTIONS if getattr(args, opt) is not None}
    if args.time_limit is not None and algo != "optimal":
        raise UserError("--time-limit is for --algorithm optimal")
    if algo == "optimal":
        if args.prune is not None:
            raise UserError("--prune is for greedy trees; an optimal tree is not pruned")
        other = [opt for opt in given if opt not in ("max_depth", "min_samples_leaf")]
        if other:
            raise UserError(f"optimal takes --max-depth and --min-samples-leaf (got "
                            f"--{other[0]})".replace("_", "-"))
        return treelearn.OptimalTreeClassifier(**{"max_depth": 3, **given},
                                               time_limit=args.time_limit,
                                               verbose=not args.quiet,
                                               categorical_features=cats)
    if algo in ("oblique", "oblique-forest"):
        if "splitter" in given:
            raise UserError(f"{algo} has its own split search; leave out --splitter")
        if cats:
            raise UserError("oblique splits are weighted sums of numeric columns; the table "
                            f"has category columns ({', '.join(cols.categorical)}): encode "
                            "them as numbers, or use another algorithm")
        params = {"random_state": args.seed, "n_jobs": -1, **given}
        if algo == "oblique-forest":
            params["n_estimators"] = args.n_estimators or 100
        elif args.prune is not None:
            params["prune"] = None if args.prune == "none" else args.prune
        return getattr(treelearn, name)(**params)
    if algo == "oner":
        if given:
            raise UserError(f"oner has no tree options (got --{next(iter(given))})".replace(
                "_", "-"))
        return treelearn.OneRClassifier(categorical_features=cats)
    if algo == "adaboost":
        base = treelearn.DecisionTreeClassifier(**{"max_depth": 1, **given},
                                                categorical_features=cats)
        return treelearn.AdaBoostClassifier(base, n_estimators=args.n_estimators or 50,
                                            random_state=args.seed)
    # n_jobs: the folds of CV pruning (or a forest's trees) fit on threads (the kernels
    # release the GIL)
    params = {"random_state": args.seed, "n_jobs": -1, "categorical_features": cats, **given}
    if algo in ("forest", "extra", "quantile-forest"):
        params["n_estimators"] = args.n_estimators or 100
        if algo == "extra":
            if "splitter" in given:
                raise UserError("extra trees always split at random; leave out --splitter")
            if cats:
                raise UserError("extra trees need numeric columns; use forest for tables "
                                f"with categories ({', '.join(cols.categorical)})")
            params.pop("categorical_features")
    if args.prune is not None:
        params["prune"] = None if args.prune == "none" else args.prune
    return getattr(treelearn, name)(**params)


def _is_ensemble(model) -> bool:
    return not hasattr(model, "tree_")


def _model_text(model, depth: int, target: str = "y") -> str:
    """The printed model: the tree, OneR's rule, or an ensemble's first tree (``target``
    names the left side of a model tree's formulas)."""
    import treelearn

    if hasattr(model, "rules_"):
        return model.export_text()
    if hasattr(model, "estimators_"):
        first = model.estimators_[0]
        return (f"tree 0 of {len(model.estimators_)}:\n"
                + treelearn.export_text(first, max_depth=depth))
    if not hasattr(model, "tree_"):
        return f"every row: {model.classes_[int(np.argmax(model.class_prior_))]}"
    return treelearn.export_text(model, max_depth=depth, target_name=target)


def _size_line(model, depth: int) -> str:
    members = getattr(model, "estimators_", None)
    if members is not None:
        nodes = sum(m.tree_.node_count for m in members)
        leaves = [m.tree_.n_leaves for m in members]
        depths = [m.tree_.max_depth for m in members]
        return (f"{len(members)} trees: {nodes} nodes, {np.mean(leaves):.1f} leaves and depth "
                f"{np.mean(depths):.1f} on average (deepest {max(depths)})")
    if not hasattr(model, "tree_"):
        return f"rule on {getattr(model, 'feature_name_', 'no feature')}"
    t = model.tree_
    size = f"tree: {t.n_leaves} leaves, depth {t.max_depth}"
    if getattr(model, "unpruned_tree_", None) is not None:
        size += f" (pruned from {model.unpruned_tree_.n_leaves} leaves"
        size += (f", alpha {model.ccp_alpha_:.4g})" if hasattr(model, "ccp_alpha_") else ")")
    if t.max_depth > depth:
        size += f"; printed to depth {depth} (treelearn export for all of it)"
    return size


def _split(args, X, y, task):
    from sklearn.model_selection import train_test_split

    if not 0.0 <= args.test_size < 1.0:
        raise UserError(f"--test-size must be in [0, 1); got {args.test_size}")
    n_test = int(round(args.test_size * len(y)))
    if n_test == 0:
        return X, y, None, None
    if n_test >= len(y):
        raise UserError(f"--test-size {args.test_size} leaves no training rows")
    strat = None
    if task == "classification":
        _, counts = np.unique(y.astype(str), return_counts=True)
        if counts.min() >= 2 and min(n_test, len(y) - n_test) >= counts.size:
            strat = y.astype(str)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=n_test, random_state=args.seed,
                                              stratify=strat)
    return X_tr, y_tr, X_te, y_te


def _cv_splits(args, X, y, task) -> list | None:
    """The ``args.cv`` folds of the training rows for the cross-validated score (None: no
    score: ``--cv 0`` or fewer rows than folds)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    k = args.cv
    if k == 0:
        return None
    if k < 2:
        raise UserError(f"--cv must be 0 or at least 2; got {k}")
    if len(y) < k:
        return None
    labels = y.astype(str)
    if task == "classification" and np.unique(labels, return_counts=True)[1].min() >= k:
        return list(StratifiedKFold(k, shuffle=True, random_state=args.seed).split(X, labels))
    return list(KFold(k, shuffle=True, random_state=args.seed).split(X))


def _fit_and_score(est, X, y, splits, bar) -> np.ndarray | None:
    """Fit ``est`` on all of (X, y) and a clone per fold of ``splits`` (scored on the fold's
    held-out rows: accuracy or R2), all at once on a thread pool.

    The jobs are independent, and each spends most of its time in compiled kernels that
    release the GIL; run one after the other, the serial parts of each (the whole tree
    before its CV-pruning folds) left a core idle (measured: 54k-row table, CART preset,
    2 cores, 14.9 s one after the other).
    """
    import os

    from joblib import Parallel, delayed
    from sklearn.base import clone

    def whole():
        est.fit(X, y)
        bar.update()

    def fold(train, test):
        m = clone(est).fit(X.iloc[train], y[train])
        bar.update()
        return m.score(X.iloc[test], y[test])

    jobs = [delayed(whole)()] + [delayed(fold)(tr, te) for tr, te in (splits or ())]
    workers = max(1, min(os.cpu_count() or 1, len(jobs)))
    # joblib's threads, not concurrent.futures': on Ctrl-C the command exits without waiting
    # for the fits under way (daemon threads; the interpreter joins an executor's threads).
    out = Parallel(n_jobs=workers, prefer="threads")(jobs)
    return np.asarray(out[1:]) if splits is not None else None


def fit(args: argparse.Namespace) -> None:

    data = Path(args.data)
    table = read_table(data, args.sep)
    col = target_column(table, args.target, data.name)
    keep = col.notna().to_numpy()
    if not keep.any():
        raise UserError(f"the target column {args.target!r} has no values")
    dropped = int((~keep).sum())
    table, col = table[keep].reset_index(drop=True), col[keep].reset_index(drop=True)
    cols = choose_columns(table, args.target, args.categorical, split_names(args.ignore),
                          split_names(args.features))
    task = task_of(col, args.task)
    X = cols.frame(table, data.name)
    y = target_values(col, task)
    if task == "classification":
        labels, counts = np.unique(y.astype(str), return_counts=True)
        if labels.size < 2:
            raise UserError(f"the target {args.target!r} has a single class; nothing to learn")
    est = _estimator(args, task, cols)
    X_tr, y_tr, X_te, y_te = _split(args, X, y, task)
    splits = _cv_splits(args, X_tr, y_tr, task)
    with _progress(args, 1 + len(splits or ()), f"fitting {type(est).__name__}") as bar:
        cv = _fit_and_score(est, X_tr, y_tr, splits, bar)
    out = Path(args.output) if args.output else Path(data.stem + ".tlm")

    kind = (f"classification, {labels.size} classes" if task == "classification"
            else "regression")
    lines = [f"data: {data.name}, {len(table)} rows x {table.shape[1]} columns; target "
             f"{args.target!r} ({kind})"]
    if dropped:
        lines.append(f"dropped {dropped} rows whose target is missing")
    numeric = len(cols.features) - len(cols.categorical)
    lines.append(f"features: {numeric} numeric, {len(cols.categorical)} categorical"
                 + (f" ({', '.join(cols.categorical)})" if cols.categorical else ""))
    for c, why in cols.ignored.items():
        lines.append(f"ignored {c!r}: {why}")
    n_missing = int(X.isna().to_numpy().sum())
    if n_missing:
        lines.append(f"missing values: {n_missing} cells (the tree learns where they go)")
    lines.append(f"model: {_describe(est)}; trained on {len(y_tr)} rows"
                 + (f", {len(y_te)} held out" if y_te is not None else ""))
    lines += ["", _model_text(est, args.show_depth, str(args.target)).rstrip(), ""]
    lines.append(_size_line(est, args.show_depth))
    if getattr(est, "oob_score_", None) is not None:
        lines.append(f"out-of-bag score: {est.oob_score_:.4f}")
    info = {"data": data.name, "target": args.target, "task": task, "n_rows": len(table),
            "n_train": len(y_tr), "columns": _column_info(table, cols),
            "ignored": cols.ignored, "dropped_missing_target": dropped}
    if task == "classification":
        info["class_counts"] = dict(zip(labels.tolist(), counts.tolist(), strict=True))
    else:
        info["target_summary"] = {"mean": float(np.mean(y)), "std": float(np.std(y)),
                                  "min": float(np.min(y)), "max": float(np.max(y))}
    metric = "accuracy" if task == "classification" else "R2"
    if y_te is not None:
        lines += _scores_text(est, X_te, y_te, "held-out")
        info["held_out"] = {"rows": len(y_te), metric: float(est.score(X_te, y_te))}
    if cv is not None:
        lines.append(f"cross-validated {metric} ({args.cv}-fold on the training rows): "
                     f"{cv.mean():.4f} +/- {cv.std():.4f}")
        info["cross_validated"] = {"folds": args.cv, metric: float(cv.mean()),
                                   "std": float(cv.std())}
    model_io.save(est, out, info=info)
    lines.append(f"saved: {out}")
    print("\n".join(lines))


def _describe(est) -> str:
    if _is_ensemble(est):
        n = getattr(est, "n_estimators", None)
        base = getattr(est, "estimator", None)
        crit = getattr(est, "criterion", None) or getattr(base, "criterion", None)
        parts = [f"n_estimators={n}"] if n is not None else []
        if crit is not None:
            parts.append(f"criterion={crit!r}")
        if isinstance(base, object) and getattr(base, "max_depth", None) is not None:
            parts.append(f"max_depth={base.max_depth}")
        return f"{type(est).__name__}({', '.join(parts)})"
    if not hasattr(est, "prune"):  # the optimal tree: no criterion, no pruning
        return f"{type(est).__name__}(max_depth={est.max_depth}), optimal, not pruned"
    prune = getattr(est, "prune", None)
    how = {"cv": f"{est.prune_cv}-fold CV pruning, "
        f"{'1-SE' if est.prune_rule == '1se' else 'minimum'} rule" if isinstance(
        est.prune_cv, int) else "CV pruning", "pessimistic": "pessimistic pruning",
        "reduced_error": "reduced-error pruning", "mdl": "MDL pruning",
        "m5": "M5 pruning, linear models at the leaves", None: "unpruned"}[prune]
    return f"{type(est).__name__}(criterion={est.criterion!r}), {how}"


def _column_info(table: pd.DataFrame, cols: Columns) -> list[dict]:
    out = []
    cats = set(cols.categorical)
    for c in cols.features:
        entry = {"name": c, "kind": "categorical" if c in cats else "numeric",
                 "missing": int(table[c].isna().sum())}
        if c in cats:
            entry["levels"] = int(table[c].nunique())
        out.append(entry)
    return out


# -- predict, evaluate ----------------------------------------------------------------------------


def _model_rows_and_ids(args: argparse.Namespace):
    """The saved model, its feature frame of DATA, and the ``--id`` columns to copy beside
    (``predict`` and ``explain``)."""
    model = model_io.load(args.model)
    data = Path(args.data)
    table = read_table(data, args.sep)
    X = _features(model, table, data.name)
    out = {}
    for c in split_names(args.id):
        if c not in table.columns:
            raise UserError(f"no column {c!r} in {data.name}")
        out[c] = table[c]
    return model, X, out


def predict(args: argparse.Namespace) -> None:
    model, X, out = _model_rows_and_ids(args)
    quantiles = _quantile_list(args.quantiles, model) if args.quantiles else None
    pred = model.predict(X)
    if pred.ndim == 2:  # a quantile forest whose default_quantiles is a list
        for q, col in zip(np.atleast_1d(model.default_quantiles), pred.T, strict=True):
            out[f"q{q:g}"] = col
    else:
        out["prediction"] = pred
    if quantiles is not None:
        values = model.predict(X, quantiles=quantiles).reshape(len(X), -1)
        for q, col in zip(quantiles, values.T, strict=True):
            out[f"q{q:g}"] = col
    if args.proba:
        if not _is_classifier(model):
            raise UserError("--proba is for classification models; this one is a regressor")
        proba = model.predict_proba(X)
        for j, c in enumerate(model.classes_):
            out[f"proba_{c}"] = proba[:, j]
    buf = _io.StringIO()
    pd.DataFrame(out).to_csv(buf, index=False)
    _write_text(buf.getvalue(), args.output)


def _explained_classes(model, label: str | None) -> list[int]:
    """The class columns ``explain`` writes: ``--class``, else the second of two classes,
    else all of them."""
    classes = [str(c) for c in model.classes_]
    if label is not None:
        if label not in classes:
            raise UserError(f"--class {label!r} is not a class of the model; its classes "
                            f"are {', '.join(classes)}")
        return [classes.index(label)]
    return [1] if len(classes) == 2 else list(range(len(classes)))


def _explained_outputs(model, X, phi, label: str | None):
    """``explain``'s outputs: (values n x p x outputs, the prediction's columns n x outputs,
    each output's column name, the picked outputs). Trees and averaging ensembles explain a
    classifier's probabilities; AdaBoost its decision function (one column for two
    classes)."""
    from ..ensemble import AdaBoostClassifier

    if not _is_classifier(model):
        return phi[:, :, None], model.predict(X)[:, None], ["prediction"], [0]
    classes = [str(c) for c in model.classes_]
    if isinstance(model, AdaBoostClassifier):
        score = model.decision_function(X).reshape(len(X), -1)
        if len(classes) == 2:
            if label is not None:
                raise UserError(f"--class: an AdaBoost model of two classes is explained "
                                f"through its one decision function (positive for "
                                f"{classes[1]!r})")
            return phi[:, :, None], score, ["decision_function"], [0]
        names = [f"decision_function_{c}" for c in classes]
        return phi, score, names, _explained_classes(model, label)
    names = [f"proba_{c}" for c in classes]
    return phi, model.predict_proba(X), names, _explained_classes(model, label)


def explain(args: argparse.Namespace) -> None:
    model, X, out = _model_rows_and_ids(args)
    if not hasattr(model, "shap_values"):
        raise UserError(f"explain works on trees and tree ensembles; this model is a "
                        f"{type(model).__name__}")
    if args.class_ is not None and not _is_classifier(model):
        raise UserError("--class is for classification models; this one is a regressor")
    try:
        phi = model.shap_values(X)
        ev = np.atleast_1d(model.expected_value_)
    except (TypeError, ValueError) as exc:  # the estimators say why they cannot explain
        raise UserError(f"cannot explain this model: {exc}") from None
    names = [str(n) for n in model.feature_names_in_]
    values, pred, pred_names, picked = _explained_outputs(model, X, phi, args.class_)
    for k in picked:
        suffix = f"_{model.classes_[k]}" if len(picked) > 1 else ""
        out[f"expected_value{suffix}"] = np.full(len(X), ev[k])
        for j, name in enumerate(names):
            out[f"shap_{name}{suffix}"] = values[:, j, k]
        out[pred_names[k]] = pred[:, k]
    buf = _io.StringIO()
    pd.DataFrame(out).to_csv(buf, index=False)
    _write_text(buf.getvalue(), args.output)
    if not args.quiet:
        mean = np.abs(values[:, :, picked]).mean(axis=(0, 2)) if len(X) else np.zeros(len(names))
        order = np.argsort(-mean, kind="stable")
        width = max(len(n) for n in names)
        lines = [f"mean |SHAP| over {len(X):,} rows:"]
        lines += [f"  {names[j]:<{width}}  {mean[j]:.6g}" for j in order]
        print("\n".join(lines), file=sys.stderr)


def _quantile_list(text: str, model) -> list[float]:
    """The quantiles of ``--quantiles 0.1,0.5,0.9``, checked, for a quantile forest."""
    if not hasattr(model, "default_quantiles"):
        raise UserError(f"--quantiles needs a quantile forest (treelearn fit --algorithm "
                        f"quantile-forest); this model is a {type(model).__name__}")
    try:
        qs = [float(v) for v in split_names(text)]
    except ValueError:
        raise UserError(f"--quantiles takes numbers in [0, 1] separated by commas; got "
                        f"{text!r}") from None
    if not qs or any(not 0.0 <= q <= 1.0 for q in qs):
        raise UserError(f"--quantiles must lie in [0, 1]; got {text!r}")
    return qs


def evaluate(args: argparse.Namespace) -> None:
    model, meta = model_io.load_with_metadata(args.model)
    data = Path(args.data)
    X, y, dropped = _labelled(model, meta, read_table(data, args.sep), args.target, data.name)
    lines = [f"{Path(args.model).name} on {data.name}: {len(y)} rows"
             + (f" ({dropped} without a label dropped)" if dropped else "")]
    lines += _scores_text(model, X, y, "")
    print("\n".join(lines))


# -- prune ----------------------------------------------------------------------------------------


def prune(args: argparse.Namespace) -> None:
    import copy

    from ..pruning import Pruner

    model, meta = model_io.load_with_metadata(args.model)
    if _is_ensemble(model):
        raise UserError(f"prune works on single trees; {args.model} holds a "
                        f"{type(model).__name__}")
    base = model
    unpruned = getattr(model, "unpruned_tree_", None)
    if unpruned is not None:
        base = copy.copy(model)
        base.tree_ = unpruned
    p = Pruner(base)
    path = p.path
    current = _current_step(p, model.tree_)
    if args.step is not None:
        target = args.step
    elif args.leaves is not None:
        if args.leaves < 1:
            raise UserError(f"--leaves must be at least 1; got {args.leaves}")
        target = int(np.flatnonzero(path.n_leaves <= args.leaves)[0])
    elif args.alpha is not None:
        target = path.steps_for_alpha(args.alpha) if args.alpha >= 0 else None
        if target is None:
            raise UserError(f"--alpha must be non-negative; got {args.alpha}")
    elif args.weight is not None:
        target = p.best_step(args.weight)
    else:
        target = None
    if target is not None:
        p.prune(target)
    rows = []
    for k in range(path.n_steps + 1):
        mark = ("<- chosen" if target is not None and k == p.step
                else "<- this model" if k == current else "")
        rows.append((k, f"{path.ccp_alphas[k]:.6g}", int(path.n_leaves[k]),
                     int(path.n_nodes[k]), f"{path.impurities[k]:.6g}", mark))
    from .._text import table as _table

    print(f"cost-complexity path of {'the unpruned tree' if unpruned is not None else 'the tree'}"
          f" ({path.n_steps + 1} steps; risk: {path.risk}):")
    print(_table(rows, ("step", "alpha", "leaves", "nodes", "risk", "")))
    if target is None:
        print("select a step with --step, --leaves, --alpha or --weight to save it")
        return
    pruned = p.to_estimator()
    if unpruned is not None:
        pruned.unpruned_tree_ = unpruned
    pruned.ccp_alpha_ = float(path.ccp_alphas[p.step])
    src = Path(args.model)
    out = Path(args.output) if args.output else src.with_name(src.stem + ".pruned.tlm")
    info = dict(meta.get("info", {}))
    info["pruned"] = {"step": p.step, "alpha": float(path.ccp_alphas[p.step]),
                      "from": src.name}
    model_io.save(pruned, out, info=info)
    print(f"saved step {p.step} ({pruned.tree_.n_leaves} leaves): {out}")


def _current_step(p, tree) -> int | None:
    """The step of ``p``'s path whose tree is ``tree`` (None if it is not on the path)."""
    for k in np.flatnonzero(p.path.n_nodes == tree.node_count).tolist():
        if p.prune(k) == tree:
            p.prune(0)
            return k
    p.prune(0)
    return None


# -- export, info ---------------------------------------------------------------------------------


def export(args: argparse.Namespace) -> None:
    import treelearn

    from ..export import render_graphviz

    model, meta = model_io.load_with_metadata(args.model)
    fmt = args.format
    members = getattr(model, "estimators_", None)
    if members is not None and args.tree is None:
        raise UserError(f"{args.model} holds {len(members)} trees "
                        f"({type(model).__name__}); choose one with --tree K")
    if args.tree is not None:
        if members is None:
            raise UserError("--tree is for ensembles; this model is a single tree")
        if not 0 <= args.tree < len(members):
            raise UserError(f"--tree must be in 0..{len(members) - 1}; got {args.tree}")
        model = members[args.tree]
        if getattr(model, "feature_names_in_", None) is None and args.data:
            raise UserError("--data needs a tree fitted on a table")
    if members is None and _is_ensemble(model):
        if fmt != "text":
            raise UserError(f"{type(model).__name__} is exported as text only")
        return _write_text(_model_text(model, 0), args.output)
    if fmt in ("svg", "png", "pdf", "html") and not args.output:
        raise UserError(f"--format {fmt} writes a file: give -o FILE")
    if fmt == "text":
        kw = {"max_depth": args.max_depth} if args.max_depth is not None else {}
        return _write_text(treelearn.export_text(model, **kw), args.output)
    if fmt == "rules":
        return _write_text(treelearn.export_rules(model), args.output)
    if fmt == "python":
        return _write_text(treelearn.export_python(model), args.output)
    if fmt == "sql":
        return _write_text(treelearn.export_sql(model, table=args.table), args.output)
    if fmt == "dot":
        return _write_text(treelearn.export_graphviz(model, max_depth=args.max_depth),
                           args.output)
    if fmt in ("svg", "png", "pdf"):
        try:
            path = render_graphviz(model, args.output, format=fmt, max_depth=args.max_depth)
        except RuntimeError as exc:  # dot missing or failing
            raise UserError(str(exc)) from None
        print(f"wrote {path}", file=sys.stderr)
        return None
    X = y = None
    if args.data:
        data = Path(args.data)
        X, y, _ = _labelled(model, meta, read_table(data, args.sep), args.target, data.name)
    path = treelearn.explore(model, X, y, args.output)
    print(f"wrote {path}", file=sys.stderr)
    return None


def info(args: argparse.Namespace) -> None:
    model, meta = model_io.load_with_metadata(args.model)
    lines = [f"{args.model}: {meta['estimator']}, model file format {meta['format_version']}, "
             f"written by treelearn {meta['treelearn_version']}"]
    changed = _changed_params(model)
    lines.append("parameters: " + (", ".join(f"{k}={v!r}" for k, v in changed.items())
                                   or "the defaults"))
    if _is_ensemble(model):
        lines.append(_size_line(model, 0))
        if getattr(model, "oob_score_", None) is not None:
            lines.append(f"out-of-bag score: {model.oob_score_:.4f}")
    else:
        t = model.tree_
        lines.append(f"tree: {t.node_count} nodes, {t.n_leaves} leaves, depth {t.max_depth}")
    if getattr(model, "unpruned_tree_", None) is not None:
        u = model.unpruned_tree_
        lines.append(f"unpruned tree kept: {u.n_leaves} leaves, depth {u.max_depth}"
                     + (f"; chosen alpha {model.ccp_alpha_:.6g}" if hasattr(model, "ccp_alpha_")
                        else ""))
    if _is_classifier(model):
        lines.append(f"classes: {', '.join(map(str, model.classes_))}")
    imp = getattr(model, "feature_importances_", None)
    if imp is None:  # OneR, the majority class: no importances
        imp = np.zeros(model.n_features_in_)
        if hasattr(model, "feature_"):
            imp[model.feature_] = 1.0
    names = getattr(model, "feature_names_in_", None)
    names = [str(n) for n in names] if names is not None else [
        f"x{j}" for j in range(model.n_features_in_)]
    from .._text import table as _table

    rows = []
    for j in np.argsort(-imp, kind="stable"):
        levels = model.categories_[j]
        rows.append((names[j], "categorical" if levels is not None else "numeric",
                     len(levels) if levels is not None else "", f"{imp[j]:.4f}"))
    lines += ["", _table(rows, ("feature", "kind", "levels", "importance")), ""]
    inf = meta.get("info", {})
    if inf.get("data"):
        lines.append(f"trained on {inf['data']}: {inf.get('n_rows')} rows, target "
                     f"{inf.get('target')!r} ({inf.get('task')}), {inf.get('n_train')} "
                     "rows used for fitting")
        if "class_counts" in inf:
            lines.append("class counts: " + ", ".join(f"{k} {v}" for k, v in
                                                      inf["class_counts"].items()))
        if "target_summary" in inf:
            s = inf["target_summary"]
            lines.append(f"target: mean {s['mean']:.4g}, std {s['std']:.4g}, range "
                         f"[{s['min']:.4g}, {s['max']:.4g}]")
        for key in ("held_out", "cross_validated"):
            if key in inf:
                lines.append(f"{key.replace('_', '-')}: " + ", ".join(
                    f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                    for k, v in inf[key].items()))
        for c, why in inf.get("ignored", {}).items():
            lines.append(f"ignored column {c!r}: {why}")
    if "pruned" in inf:
        lines.append(f"pruned by 'treelearn prune' from {inf['pruned']['from']} to step "
                     f"{inf['pruned']['step']}")
    print("\n".join(lines))


def _changed_params(model) -> dict:
    """Parameters that differ from the class's defaults."""
    defaults = type(model)().get_params(deep=False)
    out = {}
    for k, v in model.get_params(deep=False).items():
        d = defaults.get(k)
        if hasattr(v, "get_params"):  # an ensemble's tree: its own changed parameters
            changed = _changed_params(v)
            out[k] = f"{type(v).__name__}({', '.join(f'{a}={b!r}' for a, b in changed.items())})"
            continue
        same = v is d or (type(v) is type(d) and not isinstance(v, np.ndarray) and v == d)
        if not same:
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
    return out


# -- compile --------------------------------------------------------------------------------------


def compile_kernels(args: argparse.Namespace) -> None:
    import time

    import treelearn
    from treelearn.engine.compiling import cache_location

    algos = list(ALGORITHMS) if "all" in args.algorithm else list(dict.fromkeys(args.algorithm))
    models = []
    for algo in algos:
        for task, name in zip(("classification", "regression"), ALGORITHMS[algo], strict=True):
            if name is None or args.task not in ("both", task):
                continue
            cls = getattr(treelearn, name)
            params = cls().get_params()
            # as 'treelearn fit' builds them: n_jobs=-1 (threads), AdaBoost over stumps; not
            # through _estimator, which names a table's category columns: the warm-up's
            # tables need categorical_features="auto"
            kw = {"n_jobs": -1} if "n_jobs" in params else {}
            if algo == "adaboost":
                models += [cls(treelearn.DecisionTreeClassifier(max_depth=1, splitter=s))
                           for s in args.splitter]
            elif "splitter" in params and algo != "extra":
                models += [cls(splitter=s, **kw) for s in args.splitter]
            else:
                models.append(cls(**kw))
    if not models:
        raise UserError(f"nothing to compile: {', '.join(algos)} has no {args.task} "
                        "estimator")
    t = time.perf_counter()
    def done(_: int, lines: list[str]) -> None:
        for line in lines:
            say(f"  {line}")
        bar.update(1)

    with _progress(args, len(models), "compiling") as bar:
        treelearn.compile_kernels(models, done=done)
    print(f"compiled or loaded the kernels of {len(models)} estimators in "
          f"{time.perf_counter() - t:.0f} s; Numba's cache: {cache_location()}")


# -- demo, datasets -------------------------------------------------------------------------------


def demo(args: argparse.Namespace) -> None:
    from .. import demos

    if args.name is None:
        print(demos.tour())
    elif args.name == "square":
        print(demos.square(args.out or "treelearn-demo"))
    else:
        if args.out:
            raise UserError("--out is for the square demo")
        print(demos.DEMOS[args.name][1]())


def datasets(args: argparse.Namespace) -> None:
    from .. import datasets as ds
    from .._text import table as _table

    if args.action == "list":
        if args.name:
            raise UserError("datasets list takes no name; use: treelearn datasets export NAME")
        rows = [(d.name, d.target, d.description) for d in ds.DATASETS.values()]
        print(_table(rows, ("name", "target", "description"), left=(0, 1, 2)))
        print("\nexport one with: treelearn datasets export NAME [-o FILE]")
        return
    if not args.name:
        raise UserError(f"datasets export needs a name: {', '.join(ds.DATASETS)}")
    try:
        frame = ds.load(args.name)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    buf = _io.StringIO()
    frame.to_csv(buf, index=False)  # floats as repr: shortest text that reads back exactly
    _write_text(buf.getvalue(), args.output)
