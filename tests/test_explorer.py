"""The interactive explorer, tested in a real browser: Debian's Chromium driven by Playwright.

.ci/run installs chromium (Debian packages chromium, chromium-driver) when it is missing; these
tests never skip. Screenshots go to each test's tmp dir.
"""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier as SkTree
from test_export import noisy_table, random_rows
from test_plots import noisy_square

import treelearn as tl
from treelearn.export.code import raw_threshold
from treelearn.export.explorer import explorer_data
from treelearn.pruning import Pruner

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert shutil.which("chromium") or shutil.which(CHROMIUM), \
        ".ci/run installs Chromium (apt-get install chromium chromium-driver)"
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def open_page(browser, path):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_function("window.treelearnExplorer !== undefined")
    return page, errors


def shown_int(page, sel):
    return int(page.text_content(sel))


def test_slider_prunes_live_and_matches_the_model(browser, tmp_path):
    X, y = noisy_square()
    est = tl.DecisionTreeClassifier(random_state=0).fit(X[:400], y[:400])
    path = tl.explore(est, X[:400], y[:400], tmp_path / "square.html", X_valid=X[400:],
                      y_valid=y[400:])
    page, errors = open_page(browser, path)
    pruner = Pruner(est)
    assert shown_int(page, "#leaf-count") == est.get_n_leaves()
    assert shown_int(page, "#step-max") == pruner.n_steps
    page.screenshot(path=tmp_path / "step0.png")
    seen = set()
    for k in (1, 5, pruner.n_steps // 2, pruner.n_steps - 2, pruner.n_steps, 0):
        page.locator("#step").fill(str(k))
        pruned = pruner.prune(k)
        leaves = shown_int(page, "#leaf-count")
        assert leaves == pruned.n_leaves == pruner.path.n_leaves[k]
        seen.add(leaves)
        assert shown_int(page, "#depth") == pruned.max_depth
        # what is drawn: one region per leaf of the pruned tree, cut nodes marked
        drawn = page.evaluate("""() => Array.from(document.querySelectorAll('#regions rect'))
            .filter(r => r.style.display !== 'none').length""")
        assert drawn == leaves
        assert page.locator("li.cut").count() == int(
            (pruner.kept_mask() & np.isin(np.arange(est.tree_.node_count),
                                           pruner.sequence[:k])).sum())
        small = pruner.to_estimator()
        assert float(page.text_content("#train-score")) == pytest.approx(
            small.score(X[:400], y[:400]), abs=5e-5)
        assert float(page.text_content("#valid-score")) == pytest.approx(
            small.score(X[400:], y[400:]), abs=5e-5)
        page.screenshot(path=tmp_path / f"step{k}.png")
    assert len(seen) >= 5  # the displayed count changed with the slider
    assert errors == []


def test_click_fold_details_and_sample_path(browser, tmp_path):
    X, y = noisy_square()
    est = tl.DecisionTreeClassifier(random_state=0, max_depth=6).fit(X, y)
    page, errors = open_page(browser, tl.explore(est, X, y, tmp_path / "t.html"))
    first = int(est.tree_.children_left[0])
    node = page.locator(f"li[data-node='{first}']")
    child = node.locator(":scope > ul")
    assert child.is_visible()
    node.locator(":scope > .row .tog").click()
    assert not child.is_visible()
    node.locator(":scope > .row .tog").click()
    assert child.is_visible()
    node.locator(":scope > .row .edge").click()
    assert page.text_content("#details-rule").startswith("feature_")
    assert f"#{first}" in page.text_content("#details-body")
    rng = np.random.default_rng(7)
    for sample in rng.random((6, 2)):
        page.fill("#x-0", repr(float(sample[0])))
        page.fill("#x-1", repr(float(sample[1])))
        page.click("#route")
        leaf = int(est.apply(sample[None])[0])
        assert shown_int(page, "#routed-leaf") == leaf
        hit = page.locator(".row.hit")
        assert hit.count() == 1 and int(hit.get_attribute("data-node")) == leaf
        assert page.locator(".row.onpath").count() == est.tree_.node_depths()[leaf] + 1
    page.screenshot(path=tmp_path / "routed.png")
    # after pruning, the sample stops at the collapsed node: the pruned model's prediction
    pruner = Pruner(est)
    k = pruner.n_steps - 3
    page.locator("#step").fill(str(k))
    pruner.prune(k)
    small = pruner.to_estimator()
    text = page.text_content("#routed-prediction")
    assert text.startswith("\u2192 " + str(small.predict(sample[None])[0]))
    assert errors == []


def test_page_routing_equals_apply_at_thresholds_and_missing_values(browser, tmp_path):
    """The page's router against Tree.apply on rows at the thresholds and their float
    neighbours (float32 comparison), with missing values and unseen levels."""
    rng = np.random.default_rng(2)
    df, y = noisy_table(500, rng)
    for missing in ("c45", "learn"):
        est = tl.DecisionTreeClassifier(categorical_features=["colour", "size"], missing=missing,
                                        min_samples_leaf=3, random_state=0).fit(df, y)
        path = tl.explore(est, df, y, tmp_path / f"{missing}.html")
        page, errors = open_page(browser, path)
        rows = random_rows(est, df, 2000, rng)
        values = [[None if (v is None or (isinstance(v, float) and np.isnan(v))) else
                   (str(v) if est.is_categorical_[j] else float(v))
                   for j, v in enumerate(r)] for r in rows.to_numpy(dtype=object).tolist()]
        # JSON has no NaN: the page reads null as missing
        got = page.evaluate("rows => rows.map(r => window.treelearnExplorer.route(r).leaf)",
                            json.loads(json.dumps(values)))
        np.testing.assert_array_equal(got, est.apply(rows))
        assert errors == []
    # the form: a missing category and a blank number, as a user enters them
    page.select_option("#x-1", "")
    page.fill("#x-0", "")
    page.fill("#x-2", "0.25")
    page.select_option("#x-3", "2")
    page.click("#route")
    row = pd.DataFrame({"a": [np.nan], "colour": [None], "b": [0.25], "size": [2]})
    assert shown_int(page, "#routed-leaf") == est.apply(row)[0]
    page.screenshot(path=tmp_path / "table.png")


@pytest.mark.jit_only  # the page's speed is the point; a fit as Python only slows coverage
def test_five_thousand_nodes_stay_responsive(browser, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((8000, 2))
    y = (X.sum(axis=1) > 1).astype(int)
    flip = rng.random(len(y)) < 0.35
    y[flip] = 1 - y[flip]
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    assert est.tree_.node_count >= 5000
    page, errors = open_page(browser, tl.explore(est, X, y, tmp_path / "big.html"))
    times = page.evaluate("n => window.treelearnExplorer.timeSteps(n)", 60)
    print(f"\n5,000-node explorer: {len(times)} steps, median {np.median(times):.1f} ms, "
          f"max {max(times):.1f} ms")
    assert max(times) < 250  # responsive: well under a quarter second on a slow CI machine
    pruner = Pruner(est)
    page.locator("#step").fill(str(pruner.n_steps // 2))
    assert shown_int(page, "#leaf-count") == pruner.path.n_leaves[pruner.n_steps // 2]
    page.screenshot(path=tmp_path / "big.png")
    assert errors == []


def test_regressor_sklearn_tree_and_awkward_names(browser, tmp_path):
    iris = load_iris()
    reg = tl.DecisionTreeRegressor(max_depth=4, random_state=0).fit(iris.data[:, :2],
                                                                    iris.data[:, 2])
    page, errors = open_page(browser, tl.explore(reg, iris.data[:, :2], iris.data[:, 2],
                                                 tmp_path / "reg.html"))
    assert page.text_content("#train-box").startswith("train R²")
    assert float(page.text_content("#train-score")) == pytest.approx(
        reg.score(iris.data[:, :2], iris.data[:, 2]), abs=5e-5)
    sk = SkTree(max_depth=3, random_state=0).fit(iris.data, iris.target)
    names = ["</script><b>x", "a & b", "c", "d"]
    path = tl.explore(sk, path=tmp_path / "sk.html", feature_names=names,
                      title="<i>iris</i>")
    page, errors2 = open_page(browser, path)
    assert page.title() == "<i>iris</i>"
    assert page.locator("label[for='x-0']").text_content() == names[0]
    assert not page.locator("#regions-box").is_visible()  # four features: no regions
    assert page.text_content("#train-box") == "" or not page.locator("#train-box").is_visible()
    assert errors == [] and errors2 == []


def test_a_model_tree_has_no_slider_and_its_own_score(browser, tmp_path):
    # M5 prunes while fitting its models: the page offers no cost-complexity steps (a cut
    # subtree would need a model the tree does not keep), says why, and scores the model
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y = np.where(X[:, 0] < 0.5, 3 * X[:, 1], 2 - X[:, 1]) + rng.normal(0, 0.05, 400)
    m5 = tl.M5Regressor(random_state=0).fit(X[:300], y[:300])
    assert m5.tree_.n_leaves > 1
    data = tl.export.explorer.explorer_data(m5, X[:300], y[:300], X_valid=X[300:],
                                            y_valid=y[300:])
    assert data["alphas"] == [0.0] and set(data["collapse"]) == {-1}
    path = tl.explore(m5, X[:300], y[:300], tmp_path / "m5.html", X_valid=X[300:],
                      y_valid=y[300:])
    page, errors = open_page(browser, path)
    assert page.locator("#step").is_disabled()
    assert "model tree" in page.text_content("#note")
    assert shown_int(page, "#leaf-count") == m5.tree_.n_leaves
    assert float(page.text_content("#train-score")) == pytest.approx(
        m5.score(X[:300], y[:300]), abs=5e-5)
    assert float(page.text_content("#valid-score")) == pytest.approx(
        m5.score(X[300:], y[300:]), abs=5e-5)
    leaf = int(np.flatnonzero(m5.tree_.children_left == -1)[0])
    page.locator(f"li[data-node='{leaf}'] .row").first.hover()
    assert "LM" in page.text_content("#details-body")
    assert errors == []


def test_explore_errors_and_atomic_write(tmp_path):
    X, y = noisy_square(100)
    est = tl.DecisionTreeClassifier(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="give X with y"):
        tl.explore(est, X, path=tmp_path / "a.html")
    with pytest.raises(ValueError, match="is a directory"):
        tl.explore(est, path=tmp_path)
    with pytest.raises(ValueError, match="max_points must be"):
        tl.explore(est, path=tmp_path / "a.html", max_points=-1)
    with pytest.raises(TypeError, match="explore needs a fitted"):
        tl.explore("nope", path=tmp_path / "a.html")
    out = tl.explore(est, X, y, tmp_path / "a.html", max_points=10)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.html"]
    html = out.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html and "<script src" not in html and "<link" not in html
    data = explorer_data(est, X, y, max_points=10)
    assert len(data["regions"]["points"]) == 10
    assert data["threshold"][0] == est.tree_.threshold[0]
    assert raw_threshold(data["threshold"][0]) >= data["threshold"][0]


def test_scores_with_a_cost_matrix_and_failed_writes(tmp_path, monkeypatch):
    import os

    X, y = noisy_square(200)
    cost = [[0, 1], [4, 0]]
    est = tl.DecisionTreeClassifier(misclassification_cost=cost, max_depth=4).fit(X, y)
    data = explorer_data(est, X, y)
    assert data["score_name"] == "\u2212mean cost"
    pred = est.predict(X)
    assert data["train_score"][0] == pytest.approx(
        -np.mean(np.asarray(cost)[y, pred]), abs=1e-6)

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    (tmp_path / "t.html").write_text("old")
    with pytest.raises(OSError, match="disk full"):
        tl.explore(est, X, y, tmp_path / "t.html")
    assert [p.name for p in tmp_path.iterdir()] == ["t.html"]  # no temporary file left
    assert (tmp_path / "t.html").read_text() == "old"


def test_a_number_box_holding_no_number_is_flagged_not_routed(browser, tmp_path):
    X, y = noisy_square(200)
    est = tl.DecisionTreeClassifier(max_depth=3).fit(X, y)
    page, errors = open_page(browser, tl.explore(est, X, y, tmp_path / "t.html"))
    page.fill("#x-0", "0.2")
    page.fill("#x-1", "abc")
    page.click("#route")
    assert page.text_content("#routed-leaf") == "\u2013"  # nothing routed
    assert "Enter numbers" in page.text_content("#sample-error")
    assert "invalid" in page.get_attribute("#x-1", "class")
    page.fill("#x-1", "")  # empty: a missing value, routed as the model routes NaN
    page.click("#route")
    assert page.text_content("#sample-error") == ""
    assert shown_int(page, "#routed-leaf") == est.apply([[0.2, np.nan]])[0]
    assert errors == []


def test_oblique_tree_routes_and_draws_slanted_regions(browser, tmp_path):
    """An oblique tree: the page sums the weighted terms as the kernels do (Math.fround per
    value, left to right in double), and its regions are polygons."""
    rng = np.random.default_rng(5)
    X = rng.random((400, 2))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (X[:, 0] - X[:, 1] > 0.5)
    est = tl.ObliqueTreeClassifier(random_state=0, max_depth=4).fit(X, y)
    assert est.tree_.is_oblique
    path = tl.explore(est, X, y, tmp_path / "oblique.html")
    page, errors = open_page(browser, path)
    rows = rng.random((1500, 2)) * 1.2 - 0.1
    rows[::9, 0] = np.nan
    values = [[None if np.isnan(v) else float(v) for v in r] for r in rows.tolist()]
    got = page.evaluate("rows => rows.map(r => window.treelearnExplorer.route(r).leaf)", values)
    np.testing.assert_array_equal(got, est.tree_.apply(rows))
    assert page.locator("#regions polygon").count() == est.tree_.node_count
    assert "0." in page.text_content("#tree") and "*feature_0" in page.text_content("#tree")
    assert errors == []


def test_contributions_beside_the_path_are_the_models_shap_values(browser, tmp_path):
    """The page's SHAP values of a routed sample (the algorithm of treelearn._shap, written
    in the page) equal shap_values of the tree and, after pruning, of the pruned tree; with
    categories, holes and C4.5's fractional cases."""
    rng = np.random.default_rng(4)
    df, y = noisy_table(500, rng)
    est = tl.DecisionTreeClassifier(categorical_features=["colour", "size"], missing="c45",
                                    min_samples_leaf=3, random_state=0).fit(df, y)
    page, errors = open_page(browser, tl.explore(est, df, y, tmp_path / "c45.html"))
    rows = random_rows(est, df, 40, rng)
    values = json.loads(json.dumps(
        [[None if (v is None or (isinstance(v, float) and np.isnan(v))) else
          (str(v) if est.is_categorical_[j] else float(v)) for j, v in enumerate(r)]
         for r in rows.to_numpy(dtype=object).tolist()]))
    pruner = Pruner(est)
    for k in (0, pruner.n_steps // 2):
        page.locator("#step").fill(str(k))
        pruner.prune(k)
        small = pruner.to_estimator()
        got = page.evaluate("rows => rows.map(r => window.treelearnExplorer.shap(r))", values)
        phi = small.shap_values(rows)
        np.testing.assert_allclose([g["phi"] for g in got], phi, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose([g["expected"] for g in got],
                                   np.tile(small.expected_value_, (len(rows), 1)), atol=1e-12)
        np.testing.assert_allclose([g["prediction"] for g in got], small.predict_proba(rows),
                                   atol=1e-12)
    # the form: the table lists the nonzero columns by |contribution|, for the predicted class
    page.locator("#step").fill("0")
    page.fill("#x-0", "")
    page.fill("#x-2", "0.25")
    page.select_option("#x-3", "2")
    page.click("#route")
    row = pd.DataFrame({"a": [np.nan], "colour": [df["colour"].dropna().iloc[0]],
                        "b": [0.25], "size": [2]})
    page.select_option("#x-1", str(row["colour"][0]))
    page.click("#route")
    phi = est.shap_values(row)[0]
    k = int(np.argmax(est.predict_proba(row)[0]))
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('#contrib-table tr'))
        .map(tr => Number(tr.dataset.feature))""")
    want = [int(f) for f in np.argsort(-np.abs(phi[:, k]), kind="stable") if phi[f, k] != 0]
    assert shown == want
    assert page.text_content("#contrib-sum").startswith(f"P({est.classes_[k]}): expected ")
    page.screenshot(path=tmp_path / "contributions.png")
    # another class chosen: its probability's contributions
    other = (k + 1) % len(est.classes_)
    page.select_option("#contrib-class", str(other))
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('#contrib-table tr'))
        .map(tr => Number(tr.dataset.feature))""")
    assert shown == [int(f) for f in np.argsort(-np.abs(phi[:, other]), kind="stable")
                     if phi[f, other] != 0]
    assert page.text_content("#contrib-sum").startswith(f"P({est.classes_[other]}): expected ")
    total = float(page.text_content("#contrib-sum").rsplit("= ", 1)[1])
    assert total == pytest.approx(est.predict_proba(row)[0, other], abs=5e-4)
    # an oblique tree: a split is known when all its columns are (the subsets' algorithm)
    X3 = rng.random((400, 3))
    y3 = ((X3[:, 0] + X3[:, 1] > 1) ^ (X3[:, 2] - X3[:, 0] > 0.3)).astype(int)
    ob = tl.ObliqueTreeClassifier(random_state=0, max_depth=4).fit(X3, y3)
    assert ob.tree_.is_oblique
    page2, errors2 = open_page(browser, tl.explore(ob, X3, y3, tmp_path / "ob.html"))
    rows = rng.random((30, 3))
    got = page2.evaluate("rows => rows.map(r => window.treelearnExplorer.shap(r))",
                         rows.tolist())
    np.testing.assert_allclose([g["phi"] for g in got], ob.shap_values(rows), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose([g["prediction"] for g in got], ob.predict_proba(rows),
                               atol=1e-12)
    # a model tree has none: no table
    m5 = tl.M5Regressor().fit(X3, X3[:, 0] * 2 + X3[:, 1])
    page3, errors3 = open_page(browser, tl.explore(m5, path=tmp_path / "m5.html"))
    for f in range(3):
        page3.fill(f"#x-{f}", "0.3")
    page3.click("#route")
    assert not page3.locator("#contrib").is_visible()
    assert errors == [] and errors2 == [] and errors3 == []
