"""The worked examples of the literature, end to end, with the published numbers beside ours.

Each demo returns the text it prints (deterministic: the golden files of the tests compare it
character for character). The sources are those of ``../shared/LITERATURE.md``: the graduate
lecture (sunburn, loan, ads), the classification-trees notebook (iris), the pruning tutorial
(noisy square) and the NLP textbook (bag of characters). Where our data are not theirs (the
tutorial's draw order, the textbook's reviews) the text says so: the numbers are then close to,
not equal to, theirs.

:func:`tour` (``treelearn demo`` without a name) is the README's main job: every example in
short, then the command line's own workflow (fit with cross-validated pruning, save, load,
predict) on the noisy square.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import datasets
from ._text import table as _table


def _stump_entropies(X, y, feature: int):
    """Root entropy, child entropies (in branch order), information gain and the feature's
    levels (in branch order) of a one-level ID3 split on ``feature``."""
    from . import ID3Classifier

    est = ID3Classifier(max_depth=1).fit(X.iloc[:, [feature]], y)
    t = est.tree_
    kids = t.children(0)
    w = t.weighted_n_node_samples
    gain = t.impurity[0] - float(w[kids] @ t.impurity[kids]) / w[0]
    return t.impurity[0], t.impurity[kids], gain, list(est.categories_[0])


def sunburn() -> str:
    """ID3 on the sunburn table: information gain of every attribute, then the tree."""
    from . import ID3Classifier, export_text

    df = datasets.load_sunburn()
    X, y = df.drop(columns=["Name", "Result"]), df["Result"]
    est = ID3Classifier().fit(X, y)
    rows = []
    for j, name in enumerate(X.columns):
        root, _, gain, _ = _stump_entropies(X, y, j)
        rows.append((name, f"{root - gain:.2f}", f"{gain:.3f}"))
    hair = list(est.categories_[0])
    t = est.tree_
    lotion_under_blonde = t.feature[t.children(0)[hair.index("Blonde")]] == 3
    checks = [
        ("attribute at the root", "Hair", X.columns[t.feature[0]]),
        ("tested under Blonde", "Lotion", "Lotion" if lotion_under_blonde else "other"),
        ("Red", "Burn", est.predict(_one(X, Hair="Red"))[0]),
        ("Brown", "None", est.predict(_one(X, Hair="Brown"))[0]),
        ("training accuracy", "1.00", f"{est.score(X, y):.2f}"),
    ]
    return "\n".join([
        "Sunburn table, ID3 (graduate lecture; Name is an identifier, not a feature)",
        "",
        _table(rows, ("attribute", "entropy after split", "information gain")),
        "",
        export_text(est, show_weights=True).rstrip(),
        "",
        _table(checks, ("", "literature", "treelearn")),
    ])


def _one(X, **values):
    """A one-row table like ``X``: the first row with ``values`` replaced."""
    row = X.iloc[[0]].copy()
    for k, v in values.items():
        row[k] = v
    return row


def _gain_demo(title: str, data, target: str, expected: list[tuple]) -> str:
    X, y = data.drop(columns=[target]), data[target]
    rows = []
    for name, lit_children, lit_gain in expected:
        j = list(X.columns).index(name)
        root, kids, gain, levels = _stump_entropies(X, y, j)
        ours = ", ".join(f"{lv} {h:.3f}" for lv, h in zip(levels, kids, strict=True))
        rows.append((name, lit_children, ours, lit_gain, f"{gain:.3f}"))
    from . import ID3Classifier

    est = ID3Classifier(max_depth=1).fit(X, y)
    chosen = X.columns[est.tree_.feature[0]]
    return "\n".join([
        title,
        f"entropy of the whole set: {root:.3f} bits",
        "",
        _table(rows, ("attribute", "children (literature)", "children (treelearn)",
                      "gain (lit.)", "gain (ours)")),
        "",
        f"attribute chosen at the root: {chosen}",
    ])


def loan() -> str:
    """Information gain on the bank-loan cases: credit (0.31) beats income (0.19)."""
    return _gain_demo(
        "Bank loan, 80 cases, 40 Yes / 40 No (graduate lecture; entropy 1 bit)",
        datasets.load_loan(), "loan",
        [("income", "high 0.81, low 0.81", "0.19"),
         ("credit", "excellent 0, poor 0.92", "0.31")],
    ) + "  (literature: credit)"


def ads() -> str:
    """Information gain on the ads-response cases: income 0.151, previous customer 0.048."""
    text = _gain_demo(
        "Ads response, 14 cases, 9+ / 5- (graduate lecture; literature: H = 0.940)",
        datasets.load_ads(), "response",
        [("income", "high 0.985, low 0.592", "0.151"),
         ("previous_customer", "no 1.0, yes 0.811", "0.048")],
    )
    return text + ("  (literature: income)\n"
                   "(the lecture subtracts rounded entropies, 0.940 - (0.985 + 0.592) / 2 = 0.1515;"
                   " unrounded the gain is 0.1518)")


def iris() -> str:
    """Entropy vs gini on iris (max_depth=3, min_samples_split=10): the notebook's numbers."""
    from . import DecisionTreeClassifier, export_text

    df = datasets.load_iris()
    X, y = df.drop(columns=["species"]), df["species"]
    out = ["Iris, max_depth=3, min_samples_split=10 (classification-trees notebook)", ""]
    results = {}
    for criterion in ("entropy", "gini"):
        est = DecisionTreeClassifier(criterion=criterion, max_depth=3, min_samples_split=10,
                                     random_state=0).fit(X, y)
        results[criterion] = est
        out += [f"criterion={criterion!r}", export_text(est).rstrip(), ""]
    ent, gini = results["entropy"], results["gini"]
    counts = [int((ent.predict(X) == c).sum()) for c in ent.classes_]
    t = ent.tree_
    right = t.children_right[0]
    rows = [
        ("root impurity", "entropy 1.585", f"{t.impurity[0]:.3f}",
         f"{gini.tree_.impurity[0]:.3f}"),
        ("entropy of the setosa leaf", "0", f"{t.impurity[t.children_left[0]]:.3f}", ""),
        ("entropy of the other child", "1.0", f"{t.impurity[right]:.3f}", ""),
        ("training accuracy", "0.9733", f"{ent.score(X, y):.4f}", f"{gini.score(X, y):.4f}"),
        ("predicted class counts", "[50, 48, 52]", str(counts),
         str([int((gini.predict(X) == c).sum()) for c in gini.classes_])),
        ("leaves", "", str(t.n_leaves), str(gini.tree_.n_leaves)),
    ]
    out.append(_table(rows, ("", "literature", "entropy", "gini")))
    return "\n".join(out)


def _square_experiment():
    """The tutorial's experiment: unpruned 5-fold CV accuracy, then the pruning weight chosen
    by 20 random 80/20 splits (weight in cases: alpha x 500)."""
    from sklearn.model_selection import ShuffleSplit, cross_val_score

    from . import DecisionTreeClassifier

    X, y = datasets.make_noisy_square()
    full = DecisionTreeClassifier(criterion="entropy", random_state=0)
    pruned = DecisionTreeClassifier(criterion="entropy", random_state=0, prune="cv",
                                    prune_rule="min",
                                    prune_cv=ShuffleSplit(20, test_size=0.2, random_state=0))
    a = cross_val_score(full, X, y, cv=5)
    full.fit(X, y)
    pruned.fit(X, y)
    return X, y, full, pruned, a


def square(out: str | Path | None = None) -> str:
    """The pruning tutorial on the noisy unit square; with ``out`` also its pictures (PNG, if
    matplotlib is installed) and an explorer page, written into that directory."""
    X, y, full, pruned, a = _square_experiment()
    res = pruned.pruning_
    best = res.best_index
    weight = pruned.ccp_alpha_ * X.shape[0]
    rows = [
        ("unpruned 5-fold CV accuracy", "0.782 +/- 0.039", f"{a.mean():.3f} +/- {a.std():.3f}"),
        ("pruned: best mean accuracy", "0.83", f"{res.mean_score[best]:.3f}"),
        ("pruned: weight (entropy cost, cases)", "~2.7", f"{weight:.2f}"),
        ("nodes: unpruned -> pruned", "", f"{full.tree_.node_count} -> "
                                          f"{pruned.tree_.node_count}"),
    ]
    text = [
        "Noisy unit square, 500 points, 10% of labels flipped (pruning tutorial, seed "
        "20180904;",
        "its draw order is not known, so our numbers are close to, not equal to, its)",
        "",
        _table(rows, ("", "literature", "treelearn")),
        "",
        "pruned tree (weight chosen by 20 random 80/20 splits):",
    ]
    from . import export_text

    text.append(export_text(pruned, feature_names=["x1", "x2"]).rstrip())
    if out is not None:
        text += ["", *_square_files(Path(out), X, y, full, pruned)]
    return "\n".join(text)


def _square_files(out: Path, X, y, full, pruned) -> list[str]:
    """Write the tutorial's pictures and the explorer page; return one line per file."""
    from . import Pruner, explore

    out.mkdir(parents=True, exist_ok=True)
    written = []
    page = explore(full, X, y, out / "square_explorer.html", feature_names=["x1", "x2"],
                   title="Noisy unit square: the unpruned tree")
    written.append(f"wrote {page.name}: the unpruned tree with a pruning slider")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return written + ["pictures skipped: matplotlib is not installed "
                          "(pip install 'treelearn[plot]')"]
    from .export import (
        plot_cost_complexity,
        plot_cv_pruning,
        plot_decision_regions,
        plot_pruned_tree,
        plot_tree_size,
    )
    from .export.plot_pruning import pruned_tree_figsize

    p = Pruner(full)
    p.prune(p.path.steps_for_alpha(pruned.ccp_alpha_))
    pictures: list[tuple[str, str, Callable]] = [
        ("square_regions.png", "decision regions, unpruned and pruned",
         lambda fig: [plot_decision_regions(m, X, y, feature_names=["x1", "x2"], ax=ax)
                      for m, ax in zip((full, pruned), fig.subplots(1, 2), strict=True)]),
        ("square_pruned_tree.png", "the tree, pruned nodes red, kept nodes green",
         lambda fig: plot_pruned_tree(p, ax=fig.subplots())),
        ("square_cost_complexity.png", "cost-complexity curves for several weights",
         lambda fig: plot_cost_complexity(p, [0.0, 1.0, 2.7, 5.0, 10.0], ax=fig.subplots())),
        ("square_cv_accuracy.png", "CV accuracy vs weight, mean +/- std",
         lambda fig: plot_cv_pruning(pruned.pruning_, ax=fig.subplots())),
        ("square_tree_size.png", "tree size vs weight",
         lambda fig: plot_tree_size(pruned.pruning_.path, ax=fig.subplots())),
    ]
    for name, what, draw in pictures:
        size = {"square_regions.png": (11, 5),
                "square_pruned_tree.png": pruned_tree_figsize(p.original)}
        fig = plt.figure(figsize=size.get(name, (8, 5)))
        draw(fig)
        fig.savefig(out / name, dpi=80)
        plt.close(fig)
        written.append(f"wrote {name}: {what}")
    return written


def text() -> str:
    """The NLP textbook's bag-of-characters pipeline on synthetic reviews."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.tree import DecisionTreeClassifier as SkTree

    from . import DecisionTreeClassifier

    texts, labels = datasets.make_reviews()
    texts = np.asarray(texts, dtype=object)

    def chars(**kw):
        return make_pipeline(CountVectorizer(analyzer="char"), DecisionTreeClassifier(**kw))

    length = FunctionTransformer(lambda t: np.array([[len(s)] for s in t], dtype=float))
    models = [
        ("majority baseline", "0.501", None),
        ("OneR on length (one split)", "0.503",
         make_pipeline(length, DecisionTreeClassifier(criterion="misclassification",
                                                      max_depth=1, random_state=0))),
        ("OneR on characters (one split)", "0.581",
         chars(criterion="misclassification", max_depth=1, random_state=0)),
        ("scikit-learn's tree (gini)", "0.553",
         make_pipeline(CountVectorizer(analyzer="char"), SkTree(random_state=0))),
        ("treelearn, gini", "= scikit-learn", chars(random_state=0)),
        ("accuracy as loss, two splits", "0.585",
         chars(criterion="misclassification", max_leaf_nodes=3, random_state=0)),
    ]
    rows = []
    for name, lit, model in models:
        if model is None:
            ours = max(np.mean(labels == "pos"), np.mean(labels == "neg"))
        else:
            ours = cross_val_score(model, texts, labels, cv=5).mean()
        rows.append((name, lit, f"{ours:.3f}"))
    return "\n".join([
        "Reviews as bags of characters: CountVectorizer(analyzer='char') -> tree in a Pipeline",
        "(NLP textbook; its review data are not available: 600 synthetic reviews stand in,",
        "so only the order of the numbers is comparable; 5-fold CV accuracy)",
        "",
        _table(rows, ("model", "literature", "treelearn")),
    ])


def workflow() -> str:
    """The command line's job in Python: fit with cross-validated pruning, save, load, predict."""
    from sklearn.model_selection import train_test_split

    from . import CARTClassifier, io

    X, y = datasets.make_noisy_square()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    est = CARTClassifier(random_state=0).fit(X_tr, y_tr)
    with tempfile.TemporaryDirectory() as tmp:
        path = io.save(est, Path(tmp) / "square.tlm")
        again = io.load(path)
    same = bool(np.array_equal(again.predict(X_te), est.predict(X_te))
                and np.array_equal(again.predict_proba(X_te), est.predict_proba(X_te)))
    return "\n".join([
        "The whole job on the noisy square: CART, 10-fold cross-validated pruning (1-SE rule)",
        f"grown {est.unpruned_tree_.n_leaves} leaves -> pruned {est.tree_.n_leaves} leaves "
        f"(alpha {est.ccp_alpha_:.4f})",
        f"held-out accuracy on 125 points: {est.score(X_te, y_te):.3f} (10% of labels are noise: "
        "0.9 is the ceiling)",
        "saved as a model file (a zip of JSON and arrays, no pickle) and loaded back: "
        f"same predictions and probabilities: {'yes' if same else 'NO'}",
        "",
        "At a terminal:",
        "  treelearn datasets export square -o square.csv",
        "  treelearn fit square.csv --target label -o square.tlm",
        "  treelearn predict square.tlm square.csv -o predictions.csv",
        "  treelearn export square.tlm --format html -o square.html --data square.csv",
    ])


def _numeric_parts() -> None:
    """The tour's fits on numbers, run beside it on a first run (see :func:`tour`)."""
    iris()
    _square_experiment()
    workflow()


def tour() -> str:
    """Every worked example in short, then the command line's workflow (``treelearn demo``).

    Its tables come first (ID3 on categories), then numbers: two specialisations of the
    exact grower, which a first run (empty kernel cache) compiles in parallel, the numeric
    one in a background process (:func:`treelearn.engine.compiling.compiled_beside`)."""
    from .engine.compiling import compiled_beside

    with compiled_beside("treelearn.demos:_numeric_parts"):
        parts = [sunburn(), loan(), ads(), iris(), square(), workflow()]
    rule = "\n\n" + "=" * 88 + "\n\n"
    return rule.join(parts).lstrip() + "\n\nMore: treelearn demo NAME for " + \
        ", ".join(DEMOS) + " (square --out DIR writes its pictures and an explorer page)."


#: name -> (one-line description, function). ``square`` takes the output directory.
DEMOS: dict[str, tuple[str, Callable[..., str]]] = {
    "sunburn": ("ID3 on the sunburn table", sunburn),
    "loan": ("information gain on the bank-loan cases", loan),
    "ads": ("information gain on the ads-response cases", ads),
    "iris": ("entropy vs gini on iris", iris),
    "square": ("cost-complexity pruning of the noisy unit square (pictures with --out)", square),
    "text": ("a bag-of-characters text pipeline", text),
    "workflow": ("fit, prune by cross-validation, save, load, predict", workflow),
}
