"""matplotlib pictures of a tree, rendered headless (Agg): the artists they must contain."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle
from sklearn.datasets import load_iris
from test_tables import SUNBURN, SUNBURN_Y

import treelearn as tl
from treelearn.export import plot_decision_regions, plot_feature_importances, plot_tree
from treelearn.export.graphviz import PALETTE
from treelearn.export.plot import node_boxes

matplotlib.use("Agg")
IRIS = load_iris()


@pytest.fixture(autouse=True)
def _close():
    yield
    matplotlib.pyplot.close("all")


def noisy_square(n=500, seed=20180904):
    """The tutorial's data (../shared/LITERATURE.md): class 1 where x + y > 1, 10% flipped."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    y = (X.sum(axis=1) > 1).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def leaf_patches(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle) and str(p.get_gid()).startswith(
        "leaf-")]


def test_decision_regions_are_the_leaves_exact_rectangles():
    X, y = noisy_square()
    est = tl.DecisionTreeClassifier(random_state=0, max_depth=6).fit(X, y)
    ax = plot_decision_regions(est, X, y, feature_names=["x", "y"])
    rects = leaf_patches(ax)
    assert len(rects) == est.get_n_leaves()
    # the rectangles tile the picture: their areas add up to it
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    area = sum(r.get_width() * r.get_height() for r in rects)
    assert area == pytest.approx((x1 - x0) * (y1 - y0))
    # every rectangle has the colour of the class the model predicts inside it
    for r in rects:
        if r.get_width() == 0 or r.get_height() == 0:
            continue
        centre = [[r.get_x() + r.get_width() / 2, r.get_y() + r.get_height() / 2]]
        leaf = int(r.get_gid().split("-")[1])
        assert est.apply(centre)[0] == leaf
        cls = est.predict(centre)[0]
        np.testing.assert_allclose(r.get_facecolor()[:3],
                                   matplotlib.colors.to_rgb(PALETTE[cls]))
    # the data on top, one scatter per class, every point drawn
    assert sum(c.get_offsets().shape[0] for c in ax.collections) == len(X)
    assert ax.get_xlabel() == "x" and ax.get_title() == f"Decision regions ({len(rects)} leaves)"


def test_decision_regions_of_a_regressor_and_without_data():
    X, _ = noisy_square(200, 1)
    reg = tl.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0] * 2 + X[:, 1])
    ax = plot_decision_regions(reg, X, X[:, 0])
    assert len(leaf_patches(ax)) == reg.get_n_leaves()
    ax = plot_decision_regions(reg)  # the thresholds set the extent
    assert len(leaf_patches(ax)) == reg.get_n_leaves()


def test_decision_region_errors():
    est = tl.DecisionTreeClassifier().fit(IRIS.data, IRIS.target)
    with pytest.raises(ValueError, match="need a tree of two features; this one has 4"):
        plot_decision_regions(est)
    two = tl.DecisionTreeClassifier().fit(IRIS.data[:, :2], IRIS.target)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, 2\)"):
        plot_decision_regions(two, IRIS.data)
    cat = tl.ID3Classifier().fit(SUNBURN[["Hair", "Lotion"]], SUNBURN_Y)
    with pytest.raises(ValueError, match="binary numeric splits"):
        node_boxes(cat.tree_)


def test_node_boxes_hold_the_points_of_each_node():
    X, y = noisy_square()
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    lo, hi = node_boxes(est.tree_)
    path = est.decision_path(X).toarray().astype(bool)
    X32 = X.astype(np.float32).astype(float)
    inside = np.all((X32[:, None, :] > lo[None]) & (X32[:, None, :] <= hi[None]), axis=2)
    np.testing.assert_array_equal(inside, path)


def test_plot_tree_draws_every_node_and_edge():
    est = tl.ID3Classifier().fit(SUNBURN, SUNBURN_Y)
    ax = plot_tree(est)
    nodes = [t for t in ax.texts if str(t.get_gid()).startswith("node-")]
    assert len(nodes) == est.tree_.node_count
    assert len(ax.lines) == est.tree_.node_count - 1
    labels = {t.get_text() for t in ax.texts} - {t.get_text() for t in nodes}
    # no holes in the table: no "or missing" (the tree learned no route for them)
    assert labels == {"= Blonde", "= Brown", "= Red", "= No", "= Yes"}
    assert nodes[0].get_text() == "Hair\nsamples = 8\nclass = None"
    deep = tl.DecisionTreeClassifier(random_state=0).fit(IRIS.data, IRIS.target)
    ax = plot_tree(deep, max_depth=2, filled=False)
    shown = [t for t in ax.texts if str(t.get_gid()).startswith("node-")]
    assert len(shown) == (deep.tree_.node_depths() <= 2).sum() < deep.tree_.node_count
    reg = tl.DecisionTreeRegressor(max_depth=2).fit(IRIS.data, IRIS.target)
    assert "value = " in plot_tree(reg).texts[-1].get_text()
    with pytest.raises(ValueError, match="max_depth must be"):
        plot_tree(est, max_depth=-2)


def test_feature_importances_impurity_and_permutation():
    X = pd.DataFrame(IRIS.data, columns=["sl", "sw", "pl", "pw"])
    est = tl.DecisionTreeClassifier(random_state=0, max_depth=3).fit(X, IRIS.target)
    ax = plot_feature_importances(est)
    bars = ax.patches
    assert len(bars) == 4
    widths = sorted((b.get_width() for b in bars), reverse=True)
    np.testing.assert_allclose(widths, np.sort(est.feature_importances_)[::-1])
    top = [t.get_text() for t in ax.get_yticklabels()][0]
    assert top == X.columns[np.argmax(est.feature_importances_)]
    ax = plot_feature_importances(est, X, IRIS.target, kind="both", top=2)
    assert len(ax.patches) == 4 and len(ax.get_yticklabels()) == 2
    assert ax.get_legend() is not None
    from sklearn.inspection import permutation_importance

    ref = permutation_importance(est, X, IRIS.target, n_repeats=10, random_state=0)
    ax = plot_feature_importances(est, X, IRIS.target, kind="permutation")
    np.testing.assert_allclose(sorted(b.get_width() for b in ax.patches),
                               np.sort(ref.importances_mean))
    with pytest.raises(ValueError, match="permutation importances need X and y"):
        plot_feature_importances(est, kind="permutation")
    with pytest.raises(ValueError, match="kind must be"):
        plot_feature_importances(est, kind="gain")
    with pytest.raises(TypeError, match="need a fitted estimator, not a Tree"):
        plot_feature_importances(est.tree_, X, IRIS.target, kind="permutation")


def test_feature_importances_corrected_beside_the_others():
    X = pd.DataFrame(IRIS.data, columns=["sl", "sw", "pl", "pw"])
    rf = tl.ensemble.RandomForestClassifier(n_estimators=20, random_state=0).fit(X, IRIS.target)
    ax = plot_feature_importances(rf, X, IRIS.target, kind="corrected")
    imp = rf.oob_impurity_importances(X, IRIS.target)
    np.testing.assert_allclose(sorted(b.get_width() for b in ax.patches),
                               np.sort(imp / np.abs(imp).sum()))
    ax = plot_feature_importances(rf, X, IRIS.target, kind="all", n_repeats=2)
    assert len(ax.patches) == 12
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "impurity", "permutation", "corrected (out-of-bag)"]
    with pytest.raises(TypeError, match="forest or bagging"):
        plot_feature_importances(tl.DecisionTreeClassifier().fit(X, IRIS.target), X,
                                 IRIS.target, kind="corrected")
    with pytest.raises(ValueError, match="training data"):
        plot_feature_importances(rf, kind="corrected")
    matplotlib.pyplot.close("all")


def test_decision_regions_with_points_but_no_labels():
    X, y = noisy_square(100)
    est = tl.DecisionTreeClassifier(max_depth=2).fit(X, y)
    ax = plot_decision_regions(est, X)
    assert ax.collections[0].get_offsets().shape[0] == 100 and ax.get_legend() is None


def test_regions_of_the_unpruned_and_pruned_tree_side_by_side():
    """The tutorial's picture (../shared/LITERATURE.md): regions of the unpruned tree and of
    the tree pruned to the minimum cost-complexity, each drawn as its own leaves."""
    from treelearn.pruning import Pruner

    X, y = noisy_square()
    est = tl.DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    pruner = Pruner(est)
    small = pruner.prune_to_minimum(weight=2.7, complexity="nodes")
    fig, (a, b) = matplotlib.pyplot.subplots(1, 2)
    plot_decision_regions(est, X, y, ax=a)
    plot_decision_regions(small, X, y, ax=b, feature_names=["x", "y"])
    assert len(leaf_patches(a)) == est.get_n_leaves() > len(leaf_patches(b)) == small.n_leaves
    # a bare Tree names its classes 0..K-1, like the estimator's own labels here
    assert [t.get_text() for t in b.get_legend().get_texts()] == ["0", "1"]


def test_proximity_picture_places_rows_by_scaling_coordinates():
    from treelearn.ensemble import scaling_coordinates
    from treelearn.export import plot_proximities

    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    f = tl.ensemble.RandomForestClassifier(n_estimators=30, random_state=0).fit(X, names)
    ax = plot_proximities(f, X, names)
    pts = ax.collections[0].get_offsets()
    np.testing.assert_allclose(pts, scaling_coordinates(f.proximities(X, top_k=None), 2))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(np.unique(names))
    assert "proximit" in ax.get_title()
    # setosa, which no split confuses with the others, lies apart on the first coordinate
    c1 = pts[:, 0]
    assert (c1[y == 0].max() < c1[y > 0].min()) or (c1[y == 0].min() > c1[y > 0].max())
    reg = tl.ensemble.RandomForestRegressor(n_estimators=10, random_state=0).fit(X[:, 1:], X[:, 0])
    ax2 = plot_proximities(reg, X[:, 1:], X[:, 0], labels=[str(i) for i in range(150)])
    assert len(ax2.figure.axes) == 2 and len(ax2.texts) == 150  # a colour bar; row names
    with pytest.raises(ValueError, match="two coordinates"):
        plot_proximities(f, X, n_components=3)
    with pytest.raises(ValueError, match="one value per row"):
        plot_proximities(f, X, names[:5])
    matplotlib.pyplot.close("all")


# -- SHAP pictures -------------------------------------------------------------------------------


def _shap_table(rng, n=300):
    df = pd.DataFrame({"size": rng.normal(size=n), "noise": rng.normal(size=n),
                       "colour": pd.Categorical(rng.choice(list("rgb"), n)),
                       "few": rng.integers(0, 3, n).astype(float)})
    df.loc[rng.random(n) < 0.1, "size"] = np.nan
    y = np.where((df["size"].fillna(0) > 0) | (df["colour"] == "r"), "yes", "no")
    return df, y


def test_shap_summary_draws_every_row_of_each_column_by_mean_abs_value(rng):
    from treelearn.export import plot_shap_summary

    df, y = _shap_table(rng)
    est = tl.DecisionTreeClassifier(max_depth=4, random_state=0).fit(df, y)
    phi = est.shap_values(df)
    ax = plot_shap_summary(est, df, top=3)
    order = np.argsort(-np.abs(phi[:, :, 1]).mean(axis=0), kind="stable")[:3]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(df.columns[order][::-1])
    points = ax.collections
    assert len(points) == 3 and all(len(c.get_offsets()) == 300 for c in points)
    # the top row of the picture is the largest column, its points at the rows' values
    np.testing.assert_allclose(points[-1].get_offsets()[:, 0], phi[:, order[0], 1])
    assert np.all(np.abs(points[-1].get_offsets()[:, 1] - 2) <= 0.4 + 1e-12)
    assert "probability of yes" in ax.get_xlabel()
    # the values may be passed in; another class; the missing sizes drawn grey
    ax = plot_shap_summary(est, df, shap_values=phi, class_index=0, top=None)
    size = [c for c, t in zip(ax.collections, [t.get_text() for t in ax.get_yticklabels()],
                              strict=True) if t == "size"][0]
    grey = np.all(np.isclose(size.get_facecolors()[:, :3],
                             matplotlib.colors.to_rgb("#999999")), axis=1)
    assert grey.sum() == df["size"].isna().sum()
    with pytest.raises(ValueError, match="class_index must be in 0..1"):
        plot_shap_summary(est, df, shap_values=phi, class_index=2)
    with pytest.raises(ValueError, match="shap_values has shape"):
        plot_shap_summary(est, df, shap_values=phi[:10])
    with pytest.raises(ValueError, match="top must be at least 1"):
        plot_shap_summary(est, df, shap_values=phi, top=0)


def test_shap_waterfall_runs_from_the_expected_value_to_the_prediction(rng):
    from treelearn.export import plot_shap_waterfall

    df, _ = _shap_table(rng)
    y = df["size"].fillna(0).to_numpy() * 2 + (df["colour"] == "g") + df["few"]
    est = tl.RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0).fit(df, y)
    ax = plot_shap_waterfall(est, df, row=7, top=2)
    bars = ax.patches
    assert len(bars) == 3  # the two largest columns, then the other two in one bar
    assert bars[0].get_x() == pytest.approx(est.expected_value_)
    end = bars[-1].get_x() + bars[-1].get_width()
    assert end == pytest.approx(est.predict(df.iloc[[7]])[0], abs=1e-12)
    phi = est.shap_values(df.iloc[[7]])[0]
    top = np.argsort(-np.abs(phi), kind="stable")[:2]
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert labels[0].startswith(f"{df.columns[top[0]]} = ")
    assert labels[2] == "2 other columns"
    np.testing.assert_allclose([b.get_width() for b in bars[:2]], phi[top])
    with pytest.raises(ValueError, match="row must be in 0..299"):
        plot_shap_waterfall(est, df, row=300)
    with pytest.raises(ValueError, match="class_index is for a classifier"):
        plot_shap_waterfall(est, df, class_index=1)


def test_shap_importances_beside_the_impurity_importances(rng):
    df, y = _shap_table(rng)
    est = tl.DecisionTreeClassifier(max_depth=4, random_state=0).fit(df, y)
    ax = plot_feature_importances(est, df, kind=["impurity", "shap"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["impurity", "mean |SHAP|"]
    shap_bars = ax.patches[len(ax.patches) // 2:]
    imp = np.abs(est.shap_values(df)).mean(axis=(0, 2))
    order = np.argsort(-est.feature_importances_, kind="stable")
    np.testing.assert_allclose([b.get_width() for b in shap_bars], (imp / imp.sum())[order])
    with pytest.raises(ValueError, match="SHAP importances need the rows X"):
        plot_feature_importances(est, kind="shap")
    with pytest.raises(ValueError, match="or a list of them"):
        plot_feature_importances(est, df, kind=["impurity", "nope"])
