"""Reading a tree: text, rules, Python and SQL (exactness against the model), Graphviz."""

import math
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier as SkTree
from test_tables import SUNBURN, SUNBURN_Y

import treelearn as tl
from treelearn._tree import Tree
from treelearn.export import (
    export_graphviz,
    export_python,
    export_rules,
    export_sql,
    export_text,
    leaf_rules,
    raw_threshold,
    render_graphviz,
)
from treelearn.export.code import MAX_NESTING, SQL_NESTING, pairwise_sum
from treelearn.export.rules import merge_conditions

GOLDEN = Path(__file__).with_name("golden")
IRIS = load_iris()


def golden(name: str, text: str) -> None:
    """Compare with tests/golden/<name>; TREELEARN_UPDATE_GOLDEN=1 rewrites the file."""
    import os

    path = GOLDEN / name
    if os.environ.get("TREELEARN_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert text == path.read_text()


def iris_tree(**kw):
    names = [n.replace(" (cm)", "") for n in IRIS.feature_names]
    X = pd.DataFrame(IRIS.data, columns=names)
    y = IRIS.target_names[IRIS.target]
    return tl.DecisionTreeClassifier(random_state=0, **kw).fit(X, y), X, y


# -- golden outputs on small fixed trees -------------------------------------------------------

def test_golden_sunburn_text_and_rules():
    """../shared/LITERATURE.md, sunburn table: ID3's tree read as text and as rules."""
    est = tl.ID3Classifier().fit(SUNBURN, SUNBURN_Y)
    golden("sunburn_text.txt", export_text(est, show_weights=True))
    golden("sunburn_rules.txt", export_rules(est))


def test_golden_iris_text_and_rules():
    est, _, _ = iris_tree(max_depth=2)
    golden("iris_text.txt", export_text(est, show_proportions=True, show_samples=True,
                                        show_impurity=True))
    golden("iris_rules.txt", export_rules(est, show_missing=False))


def test_text_options_and_depth_limit():
    est, _, _ = iris_tree(max_depth=4)
    text = export_text(est, max_depth=1)
    assert "truncated branch of depth" in text
    assert export_text(est).count("class:") == est.get_n_leaves()
    prop = export_text(est, show_proportions=True, decimals=3)
    assert "proportions: [1.000, 0.000, 0.000] class: setosa" in prop
    reg = tl.DecisionTreeRegressor(max_depth=2, random_state=0).fit(IRIS.data, IRIS.data[:, 0])
    assert "value: [" in export_text(reg) and "class" not in export_text(reg)
    with pytest.raises(ValueError, match="feature_names has 2 names but the tree has 4"):
        export_text(est, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="class_names has 1 names but the tree has 3"):
        export_text(est, class_names=["a"])
    with pytest.raises(TypeError, match="export_text needs a fitted treelearn estimator"):
        export_text("not a tree")


def test_text_reads_scikit_learn_trees():
    sk = SkTree(max_depth=2, random_state=0).fit(IRIS.data, IRIS.target)
    from sklearn.tree import export_text as sk_text

    assert export_text(sk) == sk_text(sk)


def test_text_uses_the_cost_matrix_prediction():
    X = np.r_[np.zeros(10), np.ones(10)][:, None]
    y = np.r_[[0] * 6 + [1] * 4, [1] * 10]
    est = tl.DecisionTreeClassifier(max_depth=1, misclassification_cost=[[0, 1], [5, 0]]).fit(X, y)
    # the left leaf holds 6 of class 0 and 4 of class 1; predicting 0 costs 4 x 5 > 6 x 1
    assert est.predict([[0.0]])[0] == 1
    assert export_text(est).splitlines()[1].endswith("class: 1")


# -- rules ---------------------------------------------------------------------------------------

def test_rules_one_per_leaf_sorted_by_support_and_exact():
    est, X, y = iris_tree(max_depth=4)
    rules = leaf_rules(est)
    assert len(rules) == est.get_n_leaves()
    assert [r.support for r in rules] == sorted((r.support for r in rules), reverse=True)
    assert sum(r.support for r in rules) == pytest.approx(len(y))
    Xe = est._validate_X_predict(X)
    leaves = est.apply(X)
    for r in rules:
        covered = np.ones(len(X), dtype=bool)
        for c in r.conditions:
            covered &= c.satisfied(Xe)
        np.testing.assert_array_equal(covered, leaves == r.leaf)
        assert r.confidence == pytest.approx(np.mean(y[leaves == r.leaf] == r.prediction))
        # merged: at most one "<=" and one ">" per feature
        keys = [(c.feature, c.op) for c in r.conditions]
        assert len(keys) == len(set(keys))
    text = export_rules(est)
    assert text.count("\n") == len(rules) and text.startswith("if petal width <= 0.8 then "
                                                            "class: setosa (support 50, "
                                                            "confidence 1.00)")


def test_rules_of_a_regressor_and_a_single_leaf():
    reg = tl.DecisionTreeRegressor(max_depth=1).fit(IRIS.data, IRIS.data[:, 0])
    lines = export_rules(reg, decimals=1).splitlines()
    assert len(lines) == 2 and all("then value: " in ln for ln in lines)
    stump = tl.DecisionTreeClassifier().fit(np.zeros((4, 1)), [0, 0, 0, 0])
    assert export_rules(stump) == "if always then class: 0 (support 4, confidence 1.00)\n"
    with pytest.raises(ValueError, match="decimals must be a non-negative int"):
        export_rules(reg, decimals=-1)


@given(st.lists(st.tuples(st.sampled_from(["<=", ">"]), st.floats(-5, 5), st.booleans()),
                min_size=1, max_size=6),
       st.lists(st.floats(-6, 6) | st.just(float("nan")), min_size=1, max_size=20))
def test_merged_conditions_accept_the_same_values(tests, values):
    from treelearn._paths import Condition

    conds = [Condition(0, op, threshold=t, missing=m) for op, t, m in tests]
    X = np.asarray(values, dtype=np.float32)[:, None]
    both = np.ones(len(values), dtype=bool)
    for c in conds:
        both &= c.satisfied(X)
    merged = np.ones(len(values), dtype=bool)
    for c in merge_conditions(conds):
        merged &= c.satisfied(X)
    np.testing.assert_array_equal(both, merged)


# -- Python and SQL predict exactly like the model ------------------------------------------------

@given(st.floats(allow_nan=False, allow_infinity=False, width=64),
       st.floats(allow_nan=False, width=64))
def test_raw_threshold_moves_the_float32_test_to_raw_values(t, x):
    T = raw_threshold(t)

    def model(v):  # the kernels compare float32 X with a float64 threshold in float64
        with np.errstate(over="ignore"):
            return float(np.float32(v)) <= t

    for v in (x, T, np.nextafter(T, np.inf), np.nextafter(T, -np.inf)):
        assert model(v) == bool(v <= T)


def test_raw_threshold_at_float32_midpoints_and_extremes():
    big = float(np.finfo(np.float32).max)
    for t in (0.5 * (1.0 + float(np.nextafter(np.float32(1), np.float32(2)))), 2.45, -0.0, big,
              -big, 1e-45, 3.5e38, -3.5e38, math.inf):
        T = raw_threshold(t)
        with np.errstate(over="ignore"):
            assert float(np.float32(T)) <= t or math.isinf(t)
            nxt = np.nextafter(T, np.inf)
            assert not float(np.float32(nxt)) <= t or math.isinf(t)


def test_pairwise_sum_is_numpys():
    rng = np.random.default_rng(1)
    for K in (1, 2, 7, 8, 9, 16, 17, 127, 128, 129, 300):
        P = rng.random((50, K)) ** 3
        ref = P.sum(axis=1, keepdims=True)[:, 0]
        got = [pairwise_sum(list(row), lambda a, b: a + b) for row in P]
        np.testing.assert_array_equal(got, ref)


def random_rows(est, X, n, rng, missing=0.1, unseen=0.05):
    """n rows like X (a DataFrame), values drawn around the tree's thresholds (exactly at the
    raw thresholds and their float neighbours), missing values and unseen levels mixed in."""
    tree = est.tree_
    cols = {}
    for j, name in enumerate(X.columns):
        lv = est.categories_[j] if hasattr(est, "categories_") else None
        if lv is not None:
            pool = list(lv) + ["never seen"]
            col = pd.Series([pool[k] for k in rng.integers(0, len(pool), n)], dtype=object)
            col[rng.random(n) < unseen] = "other unseen"
        else:
            thr = tree.threshold[(tree.feature == j) & (tree.children_left >= 0)
                                 & (np.diff(tree.cat_ptr) == 0)]
            thr = thr[np.isfinite(thr)]  # +inf: "every known value left" (missing="learn")
            raw = np.array([raw_threshold(t) for t in thr] or [0.0])
            near = np.concatenate([raw, np.nextafter(raw, np.inf), np.nextafter(raw, -np.inf),
                                   thr])
            vals = np.asarray(X.iloc[:, j], dtype=float)
            vals = vals[~np.isnan(vals)]
            base = rng.normal(vals.mean(), vals.std() * 1.5 + 1e-3, n)
            pick = rng.random(n) < 0.4
            base[pick] = near[rng.integers(0, near.size, pick.sum())]
            col = pd.Series(base)
        col[rng.random(n) < missing] = None if col.dtype == object else np.nan
        cols[name] = col
    return pd.DataFrame(cols)


def check_code_exports(est, rows: pd.DataFrame, proba: bool = True, sql_rows: int | None = None):
    """Python source and SQL give the model's predictions (and probabilities) exactly; SQL on
    the first ``sql_rows`` rows only, if given (SQLite evaluates C4.5's fractional sums, one
    nested expression per class, at ~20-40 ms a row)."""
    ns: dict = {}
    exec(export_python(est), ns)
    records = rows.to_numpy(dtype=object).tolist()
    pred = est.predict(rows)
    got = np.array([ns["predict"](r) for r in records], dtype=pred.dtype)
    np.testing.assert_array_equal(got, pred)
    is_clf = hasattr(est, "classes_")
    if is_clf and proba:
        got_p = np.array([ns["predict_proba"](r) for r in records])
        np.testing.assert_array_equal(got_p, est.predict_proba(rows))
    if sql_rows is not None:
        rows, pred = rows.iloc[:sql_rows], pred[:sql_rows]
    con = sqlite3.connect(":memory:")
    data = rows.copy()
    data.insert(0, "row_id", np.arange(len(rows)))
    data.to_sql("data", con, index=False)
    sql = export_sql(est, table="data", proba=is_clf and proba, columns=["row_id"])
    out = con.execute(sql).fetchall()
    assert [r[0] for r in out] == list(range(len(rows)))
    np.testing.assert_array_equal(np.array([r[1] for r in out], dtype=pred.dtype), pred)
    if is_clf and proba:
        np.testing.assert_array_equal(np.array([r[2:] for r in out], dtype=float),
                                      est.predict_proba(rows))
    return sql


def noisy_table(n, rng, n_levels=4, missing=0.15):
    df = pd.DataFrame({
        "a": rng.normal(size=n),
        "colour": rng.choice([f"c{i}" for i in range(n_levels)], n),
        "b": rng.normal(size=n),
        "size": rng.choice([1, 2, 3], n),
    })
    y = ((df.a > 0) ^ (df.colour == "c0")).to_numpy().astype(int) + (df.b > 1).to_numpy()
    flip = rng.random(n) < 0.2
    y[flip] = rng.integers(0, 3, flip.sum())
    df.loc[rng.random(n) < missing, "a"] = np.nan
    df.loc[rng.random(n) < missing, "colour"] = None
    return df, np.array(["low", "mid", "high"])[y]


def test_python_and_sql_exact_on_numeric_trees():
    rng = np.random.default_rng(0)
    est, X, _ = iris_tree()
    check_code_exports(est, random_rows(est, X, 10_000, rng))
    reg = tl.DecisionTreeRegressor(random_state=0, max_leaf_nodes=60).fit(X, IRIS.data[:, 0])
    check_code_exports(reg, random_rows(reg, X, 10_000, rng))
    hist = tl.DecisionTreeClassifier(splitter="hist", max_bins=16, random_state=0).fit(
        X, IRIS.target)
    check_code_exports(hist, random_rows(hist, X, 10_000, rng))


@pytest.mark.parametrize("missing", ["learn", "c45", "impute"])
@pytest.mark.parametrize("split", ["binary", "multiway"])
def test_python_and_sql_exact_on_tables(missing, split):
    rng = np.random.default_rng(3)
    df, y = noisy_table(600, rng)
    est = tl.DecisionTreeClassifier(categorical_features=["colour", "size"], missing=missing,
                                    categorical_split=split, min_samples_leaf=3,
                                    random_state=0).fit(df, y)
    sql_rows = None
    if missing == "c45":
        assert (est.tree_.missing_branch == -1).any()
        sql_rows = 2000  # fractional sums in SQLite: see check_code_exports
    check_code_exports(est, random_rows(est, df, 10_000, rng), sql_rows=sql_rows)
    reg = tl.DecisionTreeRegressor(categorical_features=["colour", "size"], missing=missing,
                                   categorical_split=split, min_samples_leaf=5,
                                   random_state=0).fit(df, rng.normal(size=len(df)) + df.b)
    check_code_exports(reg, random_rows(reg, df, 10_000, rng))


@pytest.mark.jit_only  # 10,000 rows through C4.5 routing as Python: minutes of the coverage pass
def test_python_and_sql_exact_with_costs_and_many_classes():
    rng = np.random.default_rng(5)
    df, _ = noisy_table(800, rng)
    y = rng.integers(0, 11, len(df))  # 11 classes: NumPy's pairwise sum groups the fractions
    y[df.b.to_numpy() > 0.5] = 3
    cost = rng.integers(1, 5, (11, 11)).astype(float)
    np.fill_diagonal(cost, 0.0)
    for c in (None, cost):
        # depth 8: SQLite's parser nests about 20 fractional nodes (export_sql's docstring)
        est = tl.C45Classifier(prune=None, misclassification_cost=c, max_depth=8,
                               categorical_features=["colour", "size"]).fit(df, y)
        assert (est.tree_.missing_branch == -1).sum() >= 5
        check_code_exports(est, random_rows(est, df, 10_000, rng), sql_rows=300)


def test_code_exports_of_scikit_learn_trees_and_sql_expression():
    sk = SkTree(random_state=0, max_depth=4).fit(IRIS.data, IRIS.target)
    src = export_python(sk, feature_names=["a", "b", "c", "d"])
    ns: dict = {}
    exec(src, ns)
    assert [ns["predict"](r) for r in IRIS.data] == sk.predict(IRIS.data).tolist()
    expr = export_sql(sk, feature_names=["a", "b", "c", "d"], class_names=["x", "y", "z"])
    con = sqlite3.connect(":memory:")
    pd.DataFrame(IRIS.data, columns=list("abcd")).to_sql("t", con, index=False)
    got = [r[0] for r in con.execute(f"SELECT {expr} FROM t")]
    assert got == np.array(["x", "y", "z"])[sk.predict(IRIS.data)].tolist()


def test_code_export_errors():
    rng = np.random.default_rng(0)
    df, y = noisy_table(300, rng)
    c45 = tl.C45Classifier(prune=None).fit(df, y)
    with pytest.raises(ValueError, match="pass table= to get a SELECT"):
        export_sql(c45)
    est, _, _ = iris_tree(max_depth=2)
    with pytest.raises(ValueError, match="proba and columns need table="):
        export_sql(est, proba=True)
    with pytest.raises(ValueError, match="table must be a non-empty table name"):
        export_sql(est, table="")
    with pytest.raises(TypeError, match="export_python needs a fitted"):
        export_python(object())
    odd = tl.DecisionTreeClassifier(categorical_features=[0]).fit(
        np.array([[b"x"], [b"y"]], dtype=object), [0, 1])
    with pytest.raises(TypeError, match="cannot be written as source"):
        export_python(odd)
    with pytest.raises(TypeError, match="cannot be written as a SQL literal"):
        export_sql(odd)


def chain_tree(depth: int) -> Tree:
    """A tree whose right branch is a chain of ``depth`` splits on feature 0 at 0, 1, 2, ..."""
    n = 2 * depth + 1
    left = np.full(n, -1)
    right = np.full(n, -1)
    feat = np.full(n, -2)
    thr = np.full(n, -2.0)
    for d in range(depth):
        i = 2 * d
        left[i], right[i], feat[i], thr[i] = i + 1, i + 2, 0, float(d)
    count = np.ones(n, dtype=np.intp)
    for i in range(n - 1, -1, -1):
        if left[i] >= 0:
            count[i] = count[left[i]] + count[right[i]]
    value = (np.arange(n, dtype=float) % 7)[:, None]
    return Tree(1, [1], left, right, feat, thr, np.zeros(n), count, count.astype(float), value)


def test_deep_trees_export_to_python_and_flat_sql():
    tree = chain_tree(300)
    ns: dict = {}
    exec(export_python(tree), ns)
    assert export_python(tree).count("def _n") == 300 // MAX_NESTING  # one per 30 levels
    x = np.arange(-1, 302, 0.5)
    expected = tree.predict(x[:, None])[:, 0, 0]
    np.testing.assert_array_equal([ns["predict"]([v]) for v in x], expected)
    # nested CASEs for the first SQL_NESTING levels, then one flat CASE: no deeper nesting
    # however deep the tree, a WHEN per leaf (but the last of each CASE)
    sql = export_sql(tree)
    assert sql.count("CASE") == SQL_NESTING + 1
    assert sql.count("WHEN") == tree.n_leaves - 1
    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE d ("feature_0" REAL)')
    con.executemany("INSERT INTO d VALUES (?)", [(float(v),) for v in x])
    got = [r[0] for r in con.execute(f"SELECT {sql} FROM d ORDER BY rowid")]
    np.testing.assert_array_equal(got, expected)


# -- Graphviz ------------------------------------------------------------------------------------

def test_golden_sunburn_dot():
    """../shared/LITERATURE.md, sunburn table: one branch per hair colour, edges name levels."""
    est = tl.ID3Classifier().fit(SUNBURN, SUNBURN_Y)
    golden("sunburn.dot", export_graphviz(est))


def test_dot_colours_names_and_depth_limit():
    est, _, _ = iris_tree(max_depth=3)
    dot = export_graphviz(est)
    n = est.tree_.node_count
    assert dot.count("label=") == n + (n - 1)  # every node and every edge
    assert dot.count("fillcolor=") == n
    assert '"petal width\\nimpurity = 0.67\\nsamples = 150\\nvalue = [50, 50, 50]' in dot
    # a pure setosa leaf in the first class colour, the 3-way tie of the root white
    assert 'class = setosa", fillcolor="#1f77b4"' in dot
    assert 'class = setosa", fillcolor="#ffffff"' in dot
    cut = export_graphviz(est, max_depth=1, filled=False, show_value=False)
    assert cut.count('"(...)"') == 1 and "fillcolor" not in cut and "value =" not in cut
    reg = tl.DecisionTreeRegressor(max_depth=2).fit(IRIS.data, IRIS.data[:, 0])
    rdot = export_graphviz(reg, rankdir="LR")
    assert "rankdir=LR" in rdot and "samples = 150\\nvalue = 5.84" in rdot
    with pytest.raises(ValueError, match="rankdir must be"):
        export_graphviz(est, rankdir="XY")
    with pytest.raises(ValueError, match="max_depth must be"):
        export_graphviz(est, max_depth=-1)


def test_render_graphviz_svg_png_and_errors(tmp_path, monkeypatch):
    import shutil

    assert shutil.which("dot"), ".ci/run installs Graphviz (Debian package graphviz)"
    est, _, _ = iris_tree(max_depth=3)
    svg = render_graphviz(est, tmp_path / "tree.svg").read_text()
    assert svg.count('class="node"') == est.tree_.node_count
    assert svg.count('class="edge"') == est.tree_.node_count - 1
    png = render_graphviz(export_graphviz(est), tmp_path / "tree.out", format="png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="format must be one of"):
        render_graphviz(est, tmp_path / "tree.gif")
    (tmp_path / "keep.svg").write_text("old")
    with pytest.raises(RuntimeError, match="dot failed"):
        render_graphviz("digraph { this is not dot", tmp_path / "keep.svg")
    assert (tmp_path / "keep.svg").read_text() == "old"  # never half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.svg", "tree.out", "tree.svg"]
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="needs Graphviz's `dot` program"):
        render_graphviz(est, tmp_path / "x.svg")


def test_generated_python_is_lint_clean(tmp_path):
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    df, y = noisy_table(300, rng)
    cost = np.ones((3, 3)) - np.eye(3)
    models = [tl.C45Classifier(max_depth=4, misclassification_cost=cost).fit(df, y),
              iris_tree(max_depth=3)[0],
              tl.DecisionTreeRegressor(max_depth=3).fit(IRIS.data, IRIS.target)]
    for k, est in enumerate(models):
        (tmp_path / f"gen{k}.py").write_text(export_python(est))
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated",
                          "--select", "E,F,W,B", "--line-length", "200", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


@pytest.mark.parametrize("make", [
    lambda: tl.DecisionTreeClassifier(random_state=0, max_depth=6),
    lambda: tl.DecisionTreeRegressor(random_state=0, max_depth=6),
    lambda: tl.ID3Classifier(max_depth=5),
    lambda: tl.C45Classifier(max_depth=6),
    lambda: tl.CARTClassifier(random_state=0),
    lambda: tl.CARTRegressor(random_state=0),
    lambda: tl.DecisionTreeClassifier(splitter="hist", max_bins=32, random_state=0,
                                      max_depth=6),
    lambda: tl.DecisionTreeClassifier(prune="mdl", categorical_split="multiway",
                                      missing="impute", random_state=0),
], ids=["clf", "reg", "id3", "c45", "cart", "cart-reg", "hist", "mdl-multiway-impute"])
def test_every_estimator_reads_out_in_every_form(make, tmp_path):
    """Exporters read only the flat tree: each estimator and preset, on a table with
    categorical features and missing values, goes through every reader."""
    from treelearn.export.explorer import explorer_data

    rng = np.random.default_rng(11)
    df, y = noisy_table(400, rng)
    est = make()
    target = y if hasattr(est, "predict_proba") else rng.normal(size=len(df)) + df.b.to_numpy()
    est.fit(df, target)
    n = est.tree_.node_count
    assert export_text(est).count("\n") >= est.get_n_leaves()
    assert export_rules(est).count("\n") == est.get_n_leaves()
    assert export_graphviz(est).count("->") == n - 1
    check_code_exports(est, random_rows(est, df, 2000, rng))
    data = explorer_data(est, df, target)
    assert len(data["children"]) == n
    if not (est.tree_.missing_branch == -1).any():  # fractional cases: expected scores
        assert data["train_score"][0] == pytest.approx(est.score(df, target), abs=6e-7)


def test_reader_argument_errors():
    from treelearn.export.code import _sql_literal

    est, _, _ = iris_tree(max_depth=2)
    with pytest.raises(ValueError, match="max_depth must be a non-negative int, got -1"):
        export_text(est, max_depth=-1)
    with pytest.raises(ValueError, match="decimals must be a non-negative int, got 1.5"):
        export_text(est, decimals=1.5)
    with pytest.raises(ValueError, match="decimals must be a non-negative int"):
        export_graphviz(est, decimals=-3)
    with pytest.raises(TypeError, match="NaN cannot be written as a SQL literal"):
        _sql_literal(float("nan"))
    assert _sql_literal(np.float64(np.inf)) == "1e999" and _sql_literal(True) == "1"
    assert _sql_literal("it's") == "'it''s'"


def test_expected_costs_is_the_matrix_product_in_a_fixed_order():
    from treelearn._tree import expected_costs

    rng = np.random.default_rng(4)
    P = rng.random((200, 6))
    C = rng.random((6, 6))
    ref = np.array([[sum(p[i] * C[i, j] for i in range(6)) for j in range(6)] for p in P])
    np.testing.assert_array_equal(expected_costs(P, C), ref)  # sequential over true classes
    np.testing.assert_allclose(expected_costs(P, C), P @ C, rtol=1e-12)
