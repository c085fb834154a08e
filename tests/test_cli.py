"""The treelearn command, run as a user runs it (a subprocess), on the shipped tables and on
generated CSVs with categorical and missing columns."""

import contextlib
import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treelearn as tl
from treelearn import datasets

GOLDEN = Path(__file__).with_name("golden")
UPDATE = os.environ.get("TREELEARN_UPDATE_GOLDEN") == "1"


# CI's coverage pass (kernels as Python) runs the commands in its own process: a subprocess
# would pay an interpreter start and every import again, under coverage, per command. The
# compiled pass runs them as subprocesses, as a user does.
IN_PROCESS = os.environ.get("NUMBA_DISABLE_JIT", "0") == "1"


def run(*args, cwd=None, check_ok=True, own_process=False):
    if IN_PROCESS and not own_process:
        out = call(*args, cwd=cwd)
    else:
        out = subprocess.run([sys.executable, "-m", "treelearn.cli", *map(str, args)],
                             capture_output=True, text=True, timeout=900, cwd=cwd)
    if check_ok:
        assert out.returncode == 0, out.stderr
    return out


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from the golden file"


def call(*args, cwd=None) -> subprocess.CompletedProcess:
    """Run the command in this process (``main`` with captured output and working directory):
    the same code as ``python -m treelearn.cli`` without paying an interpreter start per case.
    Every subcommand also runs as a subprocess in the tests above."""
    from treelearn.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse: usage errors and --help
                code = exc.code
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def ok(*args, cwd=None) -> subprocess.CompletedProcess:
    """:func:`call` a command that must succeed."""
    out = call(*args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out


def error(*args, cwd=None, subprocess_=False) -> str:
    """Run a command that must fail as a user error: exit 2, one line, no traceback."""
    out = run(*args, cwd=cwd, check_ok=False) if subprocess_ else call(*args, cwd=cwd)
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("treelearn: error: "), out.stderr
    return lines[0]


@pytest.fixture(scope="module")
def table_csv(tmp_path_factory):
    """A generated table: text categories, numeric columns, holes in both, an id column."""
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    n = 400
    colour = rng.choice(["red", "green", "blue"], n).astype(object)
    size = rng.normal(10, 3, n)
    weight = rng.random(n)
    label = np.where((colour == "red") | (size > 12), "buy", "skip")
    flip = rng.random(n) < 0.05
    label[flip] = np.where(label[flip] == "buy", "skip", "buy")
    price = 3 * size + 5 * (colour == "blue") + rng.normal(0, 1, n)
    colour[rng.random(n) < 0.1] = None
    size[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame({"id": [f"c{i:04d}" for i in range(n)], "colour": colour,
                       "size": size.round(3), "weight": weight.round(4), "label": label,
                       "price": price.round(2)})
    df.to_csv(d / "shop.csv", index=False)
    df.to_csv(d / "shop.tsv", index=False, sep="\t")
    df.to_parquet(d / "shop.parquet")
    return d


# -- fit, info, predict, evaluate on a generated table -------------------------------------------

def test_fit_on_a_table_with_categories_and_holes(table_csv):
    d = table_csv
    out = run("fit", "shop.csv", "--target", "label", "--ignore", "price", cwd=d)
    text = out.stdout
    assert "data: shop.csv, 400 rows x 6 columns; target 'label' (classification, 2 classes)" \
        in text
    assert "features: 2 numeric, 1 categorical (colour)" in text
    assert "ignored 'id': every value is distinct (an identifier)" in text
    assert "ignored 'price': --ignore" in text
    assert "missing values:" in text
    assert "model: CARTClassifier(criterion='gini'), 10-fold CV pruning, 1-SE rule; trained " \
           "on 300 rows, 100 held out" in text
    assert "held-out accuracy:" in text and "confusion matrix (held-out" in text
    assert "cross-validated accuracy (5-fold on the training rows):" in text
    assert "saved: shop.tlm" in text
    assert out.stderr == ""  # no progress bar when not on a terminal
    model = tl.io.load(d / "shop.tlm")
    assert isinstance(model, tl.CARTClassifier) and list(model.feature_names_in_) == [
        "colour", "size", "weight"]
    # the printed scores are the saved model's
    df = pd.read_csv(d / "shop.csv")
    acc = float(text.split("held-out accuracy: ")[1].split()[0])
    assert 0.8 < acc <= 1.0
    info = tl.io.read_metadata(d / "shop.tlm")["info"]
    assert info["target"] == "label" and info["n_rows"] == 400 and info["n_train"] == 300
    assert info["held_out"]["accuracy"] == pytest.approx(acc, abs=5e-5)
    assert {c["name"]: c["kind"] for c in info["columns"]} == {
        "colour": "categorical", "size": "numeric", "weight": "numeric"}

    pred = run("predict", "shop.tlm", "shop.csv", "--proba", "--id", "id", cwd=d).stdout
    got = pd.read_csv(pd.io.common.StringIO(pred), keep_default_na=False)
    assert list(got.columns) == ["id", "prediction", "proba_buy", "proba_skip"]
    X = df[["colour", "size", "weight"]].astype({"colour": object})
    X["colour"] = X["colour"].where(X["colour"].notna(), None)
    np.testing.assert_array_equal(got["prediction"], model.predict(X))
    np.testing.assert_array_equal(got[["proba_buy", "proba_skip"]].to_numpy(),
                                  model.predict_proba(X))  # repr floats read back exactly
    run("predict", "shop.tlm", "shop.csv", "-o", "pred.csv", cwd=d)
    assert (d / "pred.csv").read_text() == run("predict", "shop.tlm", "shop.csv", cwd=d).stdout

    ev = run("evaluate", "shop.tlm", "shop.csv", cwd=d).stdout
    assert ev.startswith("shop.tlm on shop.csv: 400 rows\naccuracy: ")
    assert float(ev.split("accuracy: ")[1].split()[0]) == pytest.approx(
        np.mean(model.predict(X) == df["label"]), abs=5e-5)

    info_text = run("info", "shop.tlm", cwd=d).stdout
    assert "CARTClassifier, model file format 1" in info_text
    assert "unpruned tree kept:" in info_text and "classes: buy, skip" in info_text
    assert "colour   categorical       3" in info_text
    assert "trained on shop.csv: 400 rows, target 'label' (classification)" in info_text
    assert "ignored column 'id': every value is distinct" in info_text


def _shop_features(d):
    df = pd.read_csv(d / "shop.csv")
    X = df[["colour", "size", "weight"]].astype({"colour": object})
    X["colour"] = X["colour"].where(X["colour"].notna(), None)
    return df, X


def test_explain_writes_each_columns_contribution(table_csv):
    """The CSV holds the model's own SHAP values, expected value and prediction, which add
    up; a classifier of two classes is explained through the second class's probability."""
    d = table_csv
    ok("fit", "shop.csv", "--target", "label", "--ignore", "price", "-o", "ex.tlm", cwd=d)
    model = tl.io.load(d / "ex.tlm")
    df, X = _shop_features(d)
    out = run("explain", "ex.tlm", "shop.csv", "--id", "id", cwd=d)
    got = pd.read_csv(io.StringIO(out.stdout), keep_default_na=False)
    assert list(got.columns) == ["id", "expected_value", "shap_colour", "shap_size",
                                 "shap_weight", "proba_skip"]
    phi = model.shap_values(X)
    np.testing.assert_array_equal(got[["shap_colour", "shap_size", "shap_weight"]],
                                  phi[:, :, 1])
    np.testing.assert_allclose(got["expected_value"] + got.filter(like="shap_").sum(axis=1),
                               got["proba_skip"], atol=1e-12)
    np.testing.assert_array_equal(got["proba_skip"], model.predict_proba(X)[:, 1])
    assert (got["id"] == df["id"]).all()
    mean = np.abs(phi[:, :, 1]).mean(axis=0)
    first = ["colour", "size", "weight"][int(np.argmax(mean))]
    assert out.stderr.startswith("mean |SHAP| over 400 rows:\n  " + first)
    ok("explain", "ex.tlm", "shop.csv", "--id", "id", "-o", "contrib.csv", cwd=d)
    assert (d / "contrib.csv").read_text() == out.stdout
    buy = pd.read_csv(io.StringIO(ok("explain", "ex.tlm", "shop.csv", "--class", "buy",
                                     cwd=d).stdout))
    np.testing.assert_array_equal(buy["shap_size"], phi[:, 1, 0])
    assert "proba_buy" in buy.columns


def test_explain_forests_regressors_and_refusals(table_csv):
    d = table_csv
    ok("fit", "shop.csv", "--target", "colour", "--ignore", "id,price", "--algorithm",
       "forest", "--n-estimators", "4", "-o", "colour.tlm", cwd=d)
    forest = tl.io.load(d / "colour.tlm")
    got = pd.read_csv(io.StringIO(ok("explain", "colour.tlm", "shop.csv", cwd=d).stdout))
    classes = [str(c) for c in forest.classes_]
    assert len(classes) == 3 and f"shap_size_{classes[2]}" in got.columns
    for c in classes:
        total = got[f"expected_value_{c}"] + got.filter(regex=f"^shap_.*_{c}$").sum(axis=1)
        np.testing.assert_allclose(total, got[f"proba_{c}"], atol=1e-12)
    ok("fit", "shop.csv", "--target", "price", "--ignore", "id,label", "--cv", "0", "-o",
       "reg.tlm", cwd=d)
    reg = tl.io.load(d / "reg.tlm")
    _, X = _shop_features(d)
    got = pd.read_csv(io.StringIO(ok("explain", "reg.tlm", "shop.csv", cwd=d).stdout))
    assert list(got.columns) == ["expected_value", "shap_colour", "shap_size", "shap_weight",
                                 "prediction"]
    np.testing.assert_array_equal(got["prediction"], reg.predict(X))
    assert "--class is for classification" in error("explain", "reg.tlm", "shop.csv",
                                                     "--class", "x", cwd=d)
    assert "--class 'nope' is not a class of the model; its classes are buy, skip" in error(
        "explain", "ex.tlm", "shop.csv", "--class", "nope", cwd=d)
    ok("fit", "shop.csv", "--target", "price", "--ignore", "id,label", "--algorithm", "m5",
       "--cv", "0", "-o", "m5x.tlm", cwd=d)
    assert "cannot explain this model: SHAP values of model trees" in error(
        "explain", "m5x.tlm", "shop.csv", cwd=d)
    ok("fit", "shop.csv", "--target", "label", "--ignore", "id,price", "--algorithm", "oner",
       "-o", "onex.tlm", cwd=d)
    assert "explain works on trees and tree ensembles; this model is a OneRClassifier" \
        in error("explain", "onex.tlm", "shop.csv", cwd=d)
    # AdaBoost: its decision function, one column for two classes
    ok("fit", "shop.csv", "--target", "label", "--ignore", "id,price", "--algorithm",
       "adaboost", "--n-estimators", "5", "-o", "adax.tlm", cwd=d)
    ada = tl.io.load(d / "adax.tlm")
    got = pd.read_csv(io.StringIO(ok("explain", "adax.tlm", "shop.csv", cwd=d).stdout))
    assert list(got.columns) == ["expected_value", "shap_colour", "shap_size", "shap_weight",
                                 "decision_function"]
    np.testing.assert_allclose(got["decision_function"], ada.decision_function(X))
    np.testing.assert_allclose(got["expected_value"] + got.filter(like="shap_").sum(axis=1),
                               got["decision_function"], atol=1e-12)
    assert "explained through its one decision function" in error(
        "explain", "adax.tlm", "shop.csv", "--class", "buy", cwd=d)


def test_fit_regression_tsv_parquet_and_options(table_csv):
    d = table_csv
    out = run("fit", "shop.tsv", "--target", "price", "--ignore", "label", "--max-depth", "4",
              "--cv", "0", "-o", "price.tlm", cwd=d).stdout
    assert "target 'price' (regression)" in out and "CARTRegressor" in out
    assert "held-out R2:" in out and "MAE" in out and "cross-validated" not in out
    model = tl.io.load(d / "price.tlm")
    assert model.tree_.max_depth <= 4
    ev = run("evaluate", "price.tlm", "shop.parquet", cwd=d).stdout
    assert "R2: " in ev
    out = run("fit", "shop.parquet", "--target", "label", "--algorithm", "c45",
              "--features", "colour,size", "--test-size", "0", "-o", "c45.tlm", cwd=d).stdout
    assert "C45Classifier(criterion='gain_ratio'), pessimistic pruning; trained on 400 rows" \
        in out and "held out" not in out
    assert list(tl.io.load(d / "c45.tlm").feature_names_in_) == ["colour", "size"]
    out = run("fit", "shop.csv", "--target", "label", "--algorithm", "id3", "--prune", "none",
              "--ignore", "price", "--categorical", "colour", "--criterion", "entropy",
              "--min-samples-leaf", "5", "-o", "id3.tlm", cwd=d).stdout
    assert "ID3Classifier(criterion='entropy'), unpruned" in out
    assert tl.io.load(d / "id3.tlm").min_samples_leaf == 5
    out = run("fit", "shop.csv", "--target", "label", "--algorithm", "tree", "--splitter",
              "hist", "--ignore", "price,id", "--max-leaf-nodes", "6", "-o", "hist.tlm",
              cwd=d).stdout
    assert "tree: 6 leaves" in out


def test_fit_a_model_tree(table_csv):
    d = table_csv
    out = run("fit", "shop.csv", "--target", "price", "--algorithm", "m5", "--ignore",
              "label,id", "--cv", "0", "-o", "m5.tlm", cwd=d).stdout
    assert "M5Regressor(criterion='sdr'), M5 pruning, linear models at the leaves" in out
    assert "LM1: price = " in out and "Linear models (" in out
    model = tl.io.load(d / "m5.tlm")
    assert model.tree_.has_linear_leaves
    pred = run("predict", "m5.tlm", "shop.csv", cwd=d).stdout.split()
    assert pred[0] == "prediction" and len(pred) == 401
    assert "is for regression" in error("fit", "shop.csv", "--target", "label", "--algorithm",
                                        "m5", cwd=d)


def test_prune_walks_the_path_and_saves(table_csv):
    d = table_csv
    ok("fit", "shop.csv", "--target", "label", "--ignore", "price", "-o", "p.tlm", cwd=d)
    model = tl.io.load(d / "p.tlm")
    out = run("prune", "p.tlm", cwd=d).stdout
    assert out.startswith("cost-complexity path of the unpruned tree")
    assert "<- this model" in out and "select a step" in out
    out = ok("prune", "p.tlm", "--leaves", "2", cwd=d).stdout
    assert "saved step" in out and "(2 leaves): p.pruned.tlm" in out
    small = tl.io.load(d / "p.pruned.tlm")
    assert small.tree_.n_leaves == 2
    assert small.unpruned_tree_ == model.unpruned_tree_
    full = Path(d / "full.tlm")
    ok("prune", "p.tlm", "--step", "0", "-o", full, cwd=d)
    assert tl.io.load(full).tree_ == model.unpruned_tree_  # unpruned again
    p = tl.Pruner(model.unpruned_tree_)
    ok("prune", "p.tlm", "--alpha", "0.02", "-o", "a.tlm", cwd=d)
    assert tl.io.load(d / "a.tlm").tree_ == p.prune_to_alpha(0.02)
    ok("prune", "p.tlm", "--weight", "3", "-o", "w.tlm", cwd=d)
    assert tl.io.load(d / "w.tlm").tree_ == p.prune_to_minimum(3.0)
    assert "pruned by 'treelearn prune' from p.tlm" in ok("info", "a.tlm", cwd=d).stdout
    assert "between" in error("prune", "p.tlm", "--step", "9999", cwd=d)


def test_export_every_format(table_csv, tmp_path):
    d = table_csv
    ok("fit", "shop.csv", "--target", "label", "--ignore", "price", "-o", "e.tlm", cwd=d)
    model = tl.io.load(d / "e.tlm")
    assert run("export", "e.tlm", cwd=d).stdout == tl.export_text(model)
    assert ok("export", "e.tlm", "--format", "rules", cwd=d).stdout == tl.export_rules(model)
    src = ok("export", "e.tlm", "--format", "python", cwd=d).stdout
    assert src.rstrip("\n") == tl.export_python(model).rstrip("\n")
    ns = {}
    exec(compile(src, "tree.py", "exec"), ns)
    row = {"colour": "red", "size": 11.0, "weight": 0.5}
    assert ns["predict"](list(row.values())) == model.predict(pd.DataFrame([row]).astype(
        {"colour": object}))[0]
    sql = ok("export", "e.tlm", "--format", "sql", "--table", "shop", cwd=d).stdout
    assert sql.rstrip("\n") == tl.export_sql(model, table="shop").rstrip("\n")
    dot = ok("export", "e.tlm", "--format", "dot", "--max-depth", "2", cwd=d).stdout
    assert dot.rstrip("\n") == tl.export_graphviz(model, max_depth=2).rstrip("\n")
    ok("export", "e.tlm", "--format", "svg", "-o", tmp_path / "t.svg", cwd=d)
    assert (tmp_path / "t.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    ok("export", "e.tlm", "--format", "png", "-o", tmp_path / "t.png", cwd=d)
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ok("export", "e.tlm", "--format", "html", "-o", tmp_path / "t.html", "--data", "shop.csv",
        cwd=d)
    page = (tmp_path / "t.html").read_text()
    assert "treelearnExplorer" in page and '"features":["colour","size","weight"]' in page
    ok("export", "e.tlm", "--format", "rules", "-o", tmp_path / "r.txt", cwd=d)
    assert (tmp_path / "r.txt").read_text() == tl.export_rules(model)
    assert "give -o FILE" in error("export", "e.tlm", "--format", "html", cwd=d)


# -- shipped data, demos, datasets --------------------------------------------------------------

def test_datasets_list_and_export(tmp_path):
    out = run("datasets").stdout
    for name in datasets.DATASETS:
        assert name in out
    run("datasets", "export", "sunburn", "-o", tmp_path / "sun.csv")
    assert (tmp_path / "sun.csv").read_text().splitlines()[1] == \
        "Sarah,Blonde,Average,Light,No,Burn"
    sq = pd.read_csv(pd.io.common.StringIO(run("datasets", "export", "square").stdout))
    X, y = datasets.make_noisy_square()
    np.testing.assert_array_equal(sq[["x1", "x2"]].to_numpy(), X)  # exact through CSV
    np.testing.assert_array_equal(sq["label"], y)
    assert "unknown dataset 'nope'" in error("datasets", "export", "nope")
    assert "needs a name" in error("datasets", "export")


def test_fit_on_the_sunburn_table_is_id3s_tree(tmp_path):
    run("datasets", "export", "sunburn", "-o", tmp_path / "sunburn.csv")
    out = run("fit", "sunburn.csv", "--target", "Result", "--algorithm", "id3",
              "--test-size", "0", "--cv", "0", cwd=tmp_path).stdout
    assert "ignored 'Name': every value is distinct (an identifier)" in out
    assert "|--- Hair = Brown" in out and "|   |--- Lotion = No" in out
    assert "or missing" not in out  # the table has no holes: no route for them was learned
    pred = run("predict", "sunburn.tlm", "sunburn.csv", cwd=tmp_path).stdout.split()
    assert pred == ["prediction", "Burn", "None", "None", "Burn", "Burn", "None", "None",
                    "None"]  # "None" is a class here, not a missing value


@pytest.mark.parametrize("name", ["sunburn", "loan", "ads", "iris", "text", "workflow"])
def test_demo_golden(name):
    golden(f"demo_{name}.txt", run("demo", name).stdout)


def test_demo_square_writes_pictures_and_explorer(tmp_path):
    out = run("demo", "square", "--out", tmp_path / "pics").stdout
    golden("demo_square.txt", out.replace(str(tmp_path / "pics"), "<out>"))
    names = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert names == ["square_cost_complexity.png", "square_cv_accuracy.png",
                     "square_explorer.html", "square_pruned_tree.png", "square_regions.png",
                     "square_tree_size.png"]
    for n in names:
        if n.endswith(".png"):
            assert (tmp_path / "pics" / n).read_bytes()[:4] == b"\x89PNG"
    for line in ("unpruned 5-fold CV accuracy           0.782 +/- 0.039",
                 "pruned: best mean accuracy                       0.83"):
        assert line in out


def test_demo_without_name_is_the_main_job(tmp_path):
    out = run("demo", cwd=tmp_path).stdout
    golden("demo_tour.txt", out)
    assert list(tmp_path.iterdir()) == []  # writes nothing
    assert "same predictions and probabilities: yes" in out
    iris_row = next(line for line in out.splitlines() if line.startswith("training accuracy")
                    and "0.9733" in line)
    assert iris_row.split()[-3:] == ["0.9733", "0.9733", "0.9733"]


# -- user errors: one line, exit 2; --debug shows the traceback ---------------------------------

def test_user_errors_exit_2_with_one_line(tmp_path):
    d = tmp_path
    (d / "ok.csv").write_text("a,b,y\n1,x,p\n2,y,q\n3,x,p\n4,y,q\n")
    assert "file not found: nope.csv" in error("fit", "nope.csv", "--target", "y", cwd=d,
                                               subprocess_=True)  # the process's exit status
    msg = error("fit", "ok.csv", "--target", "z", cwd=d)
    assert "no column 'z' in ok.csv; the columns are: a, b, y" in msg
    (d / "empty.csv").write_text("a,b,y\n")
    assert "has no rows" in error("fit", "empty.csv", "--target", "y", cwd=d)
    (d / "blank.csv").write_text("")
    assert "is empty" in error("fit", "blank.csv", "--target", "y", cwd=d)
    (d / "ragged.csv").write_text("a,b,y\n1,2,p\n3,q\n")
    assert "line 3 has 2 fields, the header has 3 (ragged rows)" in error(
        "fit", "ragged.csv", "--target", "y", cwd=d)
    (d / "long.csv").write_text("a,b,y\n1,2,p\n3,4,q,5\n")
    assert "ragged rows" in error("fit", "long.csv", "--target", "y", cwd=d)
    assert "a regression target must be numeric; column 'y' holds 'p'" in error(
        "fit", "ok.csv", "--target", "y", "--task", "regression", cwd=d)
    (d / "bad.tlm").write_bytes(b"PK\x03\x04 not really a zip")
    assert "not a treelearn model file" in error("info", "bad.tlm", cwd=d)
    assert call("fit", "ok.csv", "--target", "y", "--test-size", "0", "--cv", "0",
                cwd=d).returncode == 0
    raw = (d / "ok.tlm").read_bytes()
    (d / "cut.tlm").write_bytes(raw[: len(raw) // 2])
    assert "model file" in error("predict", "cut.tlm", "ok.csv", cwd=d)
    assert "has no rows" in error("predict", "ok.tlm", "empty.csv", cwd=d)
    (d / "other.csv").write_text("b,c\nx,1\n")
    assert "other.csv lacks the model's column(s): a" in error("predict", "ok.tlm", "other.csv",
                                                              cwd=d)
    (d / "text.csv").write_text("a,b\nseven,x\n")
    assert "column 'a' of text.csv must be numeric; row 1 holds 'seven'" in error(
        "predict", "ok.tlm", "text.csv", cwd=d)
    assert "max_depth" in error("fit", "ok.csv", "--target", "y", "--max-depth", "0", cwd=d)
    (d / "one.csv").write_text("a,y\n1,p\n2,p\n")
    assert "single class" in error("fit", "one.csv", "--target", "y", cwd=d)
    assert "c45 is for classification" in error("fit", "ok.csv", "--target", "a",
                                                "--algorithm", "c45", "--task", "regression",
                                                cwd=d)
    (d / "data.xlsx").write_text("x")
    assert "cannot tell the format" in error("fit", "data.xlsx", "--target", "y", cwd=d)
    assert "--proba is for classification" in error(
        "predict", _regressor(d), "ok.csv", "--proba", cwd=d)
    out = run("--debug", "fit", "nope.csv", "--target", "y", cwd=d, check_ok=False,
              own_process=True)  # --debug lets the exception end the process
    assert out.returncode != 0 and "Traceback" in out.stderr and "UserError" in out.stderr


def test_tables_the_reader_refuses_or_understands(tmp_path):
    """What a demanding user throws at ``fit``: odd separators, names, encodings, types."""
    d = tmp_path
    fit = ("--target", "y", "--cv", "0", "--test-size", "0")
    assert "is a directory, not a table" in error("fit", ".", "--target", "y", cwd=d)
    (d / "dup.csv").write_text("a,a,y\n1,2,p\n3,4,q\n")
    assert "column names must be present and distinct (repeated: a)" in error(
        "fit", "dup.csv", *fit, cwd=d)
    (d / "unnamed.csv").write_text("a,,y\n1,2,p\n3,4,q\n")
    assert "column names must be present and distinct" in error("fit", "unnamed.csv", *fit,
                                                                cwd=d)
    (d / "latin.csv").write_bytes("a,b,y\n1,caf\xe9,p\n".encode("latin-1"))
    assert "latin.csv is not UTF-8 text" in error("fit", "latin.csv", *fit, cwd=d)
    (d / "broken.parquet").write_bytes(b"PAR1 not really parquet")
    assert "cannot read broken.parquet as Parquet" in error("fit", "broken.parquet", *fit,
                                                            cwd=d)
    # .txt: the separator is sniffed; --sep overrides any suffix
    rows = "".join(f"{i};{'xy'[i % 2]};{'pq'[i % 3 == 0]}\n" for i in range(30))
    (d / "semi.txt").write_text("a;b;y\n" + rows)
    assert "30 rows x 3 columns" in ok("fit", "semi.txt", *fit, cwd=d).stdout
    (d / "semi.dat").write_text("a;b;y\n" + rows)
    assert "30 rows x 3 columns" in ok("fit", "semi.dat", "--sep", ";", *fit, cwd=d).stdout
    (d / "one.txt").write_text("justonecolumn\n")
    assert "cannot tell the column separator of one.txt; give --sep" in error(
        "fit", "one.txt", *fit, cwd=d)
    # columns: all missing, booleans, explicit categorical lists
    (d / "t.csv").write_text("a,b,flag,y\n" + "".join(
        f"{i},,{'true' if i % 2 else 'false'},{'pq'[i % 2]}\n" for i in range(20)))
    out = ok("fit", "t.csv", *fit, cwd=d).stdout
    assert "1 categorical (flag)" in out
    assert "--categorical names 'zz', which is not a feature column" in error(
        "fit", "t.csv", *fit, "--categorical", "zz", cwd=d)
    assert "column 'flag' holds text; list it in --categorical too" in error(
        "fit", "t.csv", *fit, "--categorical", "a", cwd=d)
    assert "--categorical none, but column 'flag' holds text" in error(
        "fit", "t.csv", *fit, "--categorical", "none", cwd=d)
    assert "no feature columns left to learn from" in error(
        "fit", "t.csv", *fit, "--ignore", "a,b,flag", cwd=d)
    assert "the target 'y' cannot also be a feature" in error(
        "fit", "t.csv", *fit, "--features", "a,y", cwd=d)
    assert "no column 'q'" in error("fit", "t.csv", *fit, "--ignore", "q", cwd=d)
    (d / "nolabels.csv").write_text("a,y\n1,\n2,\n")
    assert "the target column 'y' has no values" in error("fit", "nolabels.csv", *fit, cwd=d)


def _regressor(d):
    (d / "num.csv").write_text("a,y\n" + "".join(f"{i},{i * 0.37:.2f}\n" for i in range(40)))
    assert call("fit", "num.csv", "--target", "y", "--cv", "0", cwd=d).returncode == 0
    return "num.tlm"


def test_help_lists_commands_with_examples():
    out = run("--help").stdout
    for cmd in ("fit", "predict", "explain", "evaluate", "prune", "export", "info", "demo",
                "datasets"):
        assert cmd in out
        sub = call(cmd, "--help")
        assert sub.returncode == 0
        assert "examples:" in sub.stdout and f"treelearn {cmd}" in sub.stdout
    assert call().returncode == 0 and "COMMAND" in call().stdout
    assert run("--version").stdout.strip() == f"treelearn {tl.__version__}"
    top = subprocess.run([sys.executable, "-m", "treelearn", "--version"], capture_output=True,
                         text=True, timeout=300)
    assert top.returncode == 0 and top.stdout.strip() == f"treelearn {tl.__version__}"
    out = call("demo", "nope")
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_cross_validated_score_is_the_mean_over_folds_of_refits(table_csv):
    """The fits of the printed CV score run on a thread pool next to the whole fit: the score
    is still the plain mean of the folds' refits (and the saved model the whole fit)."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    d = table_csv
    out = call("fit", "shop.csv", "--target", "label", "--ignore", "price,id", "--test-size",
               "0", "--seed", "3", cwd=d)
    assert out.returncode == 0, out.stderr
    model = tl.io.load(d / "shop.tlm")
    df = pd.read_csv(d / "shop.csv")
    X = df[["colour", "size", "weight"]].astype({"colour": "category"})
    y = df["label"].to_numpy()
    folds = StratifiedKFold(5, shuffle=True, random_state=3).split(X, y.astype(str))
    scores = [clone(model).fit(X.iloc[tr], y[tr]).score(X.iloc[te], y[te]) for tr, te in folds]
    info = tl.io.read_metadata(d / "shop.tlm")["info"]["cross_validated"]
    assert info["accuracy"] == pytest.approx(np.mean(scores), abs=1e-12)
    whole = clone(model).fit(X, y)
    assert whole.tree_ == model.tree_


def test_progress_bar_only_on_a_terminal(table_csv, tmp_path):
    """On a pseudo-terminal the fit shows a bar on stderr; piped (other tests) and --quiet,
    none."""
    def on_tty(*args):
        master, slave = pty.openpty()
        # A fresh pty is 0x0, which tqdm draws as nothing; give it a real terminal's size.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        proc = subprocess.Popen([sys.executable, "-m", "treelearn.cli", *args],
                                stdout=subprocess.DEVNULL, stderr=slave, cwd=table_csv)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=600) == 0
        os.close(master)
        return b"".join(chunks).decode(errors="replace")

    args = ("fit", "shop.csv", "--target", "label", "--ignore", "price", "-o",
            str(tmp_path / "m.tlm"))
    shown = on_tty(*args)
    # the bar starts at 0/6 (one fit, five CV folds); tqdm may skip updates within 0.1 s
    assert "fitting CARTClassifier:   0%" in shown and "0/6" in shown
    assert "fitting" not in on_tty("--quiet", *args)


def test_compile_prepares_the_chosen_algorithms_and_names_the_cache():
    out = run("compile", "--algorithm", "oner", "tree", "--splitter", "hist", "--task",
              "classification")
    lines = out.stdout.splitlines()
    if IN_PROCESS:  # NUMBA_DISABLE_JIT: the kernels are Python, nothing compiles
        assert "  OneRClassifier: nothing to compile (NUMBA_DISABLE_JIT)" in out.stdout
    else:
        assert "  OneRClassifier: numbers:" in out.stdout
        assert "  DecisionTreeClassifier: table, many rows:" in out.stdout
    assert "DecisionTreeRegressor" not in out.stdout  # --task classification
    assert lines[-1].startswith("compiled or loaded the kernels of 2 estimators in ")
    assert "Numba's cache: " in lines[-1]
    assert "nothing to compile: m5 has no classification estimator" in error(
        "compile", "--algorithm", "m5", "--task", "classification")
    bad = call("compile", "--algorithm", "gbm")
    assert bad.returncode == 2 and "invalid choice: 'gbm'" in bad.stderr


def test_main_in_process(capsys, tmp_path):
    from treelearn.cli import main

    assert main(["demo", "ads"]) == 0
    assert "previous_customer" in capsys.readouterr().out
    assert main(["datasets", "export", "nope"]) == 2
    assert "unknown dataset" in capsys.readouterr().err


def test_model_fitted_in_python_with_numeric_levels_is_read_by_its_text(tmp_path):
    """A model fitted in Python on integer categories reads "1", "2" from a CSV as those
    levels (not as unseen levels routed like missing values)."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"k": rng.integers(1, 4, 200).astype(object), "v": rng.random(200)})
    y = np.where(df["k"] == 2, "a", "b")
    est = tl.DecisionTreeClassifier(categorical_features=["k"], random_state=0).fit(df, y)
    tl.io.save(est, tmp_path / "m.tlm")
    df.to_csv(tmp_path / "d.csv", index=False)
    out = run("predict", "m.tlm", "d.csv", cwd=tmp_path).stdout.split()[1:]
    np.testing.assert_array_equal(out, est.predict(df))
    meta = json.loads(zipfile.ZipFile(tmp_path / "m.tlm").read("model.json"))
    assert meta["info"] == {}
    assert "--target" in error("evaluate", "m.tlm", "d.csv", cwd=tmp_path)


def test_progress_helpers_stay_quiet_off_a_terminal(capsys):
    """The benchmarks' and commands' bar is off when standard error is not a terminal (here:
    captured); lines printed through say() still arrive, on standard output."""
    from treelearn._progress import progress, say

    with progress(3, "work") as bar:
        assert bar.disable
        bar.update()
        say("a result line")
    got = capsys.readouterr()
    assert got.out == "a result line\n" and got.err == ""


def test_fit_ensembles_and_baselines(table_csv):
    d = table_csv
    out = ok("fit", "shop.csv", "--target", "label", "--algorithm", "forest", "--n-estimators",
             "15", "--ignore", "price", "-o", "forest.tlm", cwd=d).stdout
    assert "model: RandomForestClassifier(n_estimators=15, criterion='gini'); trained on 300 " \
           "rows" in out
    assert "tree 0 of 15:" in out and "15 trees:" in out
    forest = tl.io.load(d / "forest.tlm")
    assert isinstance(forest, tl.RandomForestClassifier) and len(forest.estimators_) == 15
    df = pd.read_csv(d / "shop.csv")
    acc = float(out.split("held-out accuracy: ")[1].split()[0])
    assert 0.8 < acc <= 1.0
    pred = ok("predict", "forest.tlm", "shop.csv", "--proba", cwd=d).stdout
    got = pd.read_csv(io.StringIO(pred), keep_default_na=False)
    X = df[["colour", "size", "weight"]].astype({"colour": object})
    X["colour"] = X["colour"].where(X["colour"].notna(), None)
    np.testing.assert_array_equal(got[["proba_buy", "proba_skip"]].to_numpy(),
                                  forest.predict_proba(X))
    info = ok("info", "forest.tlm", cwd=d).stdout
    assert "RandomForestClassifier, model file format 1" in info and "15 trees:" in info
    assert error("export", "forest.tlm", cwd=d).endswith("choose one with --tree K")
    text = ok("export", "forest.tlm", "--tree", "2", cwd=d).stdout
    assert text == tl.export_text(forest.estimators_[2])
    assert "--tree must be in 0..14" in error("export", "forest.tlm", "--tree", "15", cwd=d)
    assert "prune works on single trees" in error("prune", "forest.tlm", cwd=d)

    out = ok("fit", "shop.csv", "--target", "label", "--algorithm", "adaboost",
             "--max-depth", "2", "--n-estimators", "10", "-o", "ada.tlm", cwd=d).stdout
    ada = tl.io.load(d / "ada.tlm")
    assert isinstance(ada, tl.AdaBoostClassifier) and ada.estimator.max_depth == 2
    assert "model: AdaBoostClassifier(n_estimators=10, criterion='gini', max_depth=2)" in out

    out = ok("fit", "shop.csv", "--target", "label", "--algorithm", "oner", "-o", "oner.tlm",
             cwd=d).stdout
    one_r = tl.io.load(d / "oner.tlm")
    assert one_r.export_text() in out
    assert ok("export", "oner.tlm", cwd=d).stdout == one_r.export_text()
    assert "rule on" in ok("info", "oner.tlm", cwd=d).stdout

    out = ok("fit", "shop.csv", "--target", "price", "--algorithm", "forest", "--ignore",
             "colour,label", "--n-estimators", "5", "--splitter", "hist", "-o", "rf.tlm",
             cwd=d).stdout
    assert isinstance(tl.io.load(d / "rf.tlm"), tl.RandomForestRegressor)
    assert "held-out R2:" in out
    ok("fit", "shop.csv", "--target", "price", "--algorithm", "extra", "--features",
       "weight", "--n-estimators", "5", "-o", "et.tlm", cwd=d)
    assert "extra trees need numeric columns" in error(
        "fit", "shop.csv", "--target", "label", "--algorithm", "extra", cwd=d)
    assert "--prune is for single trees" in error(
        "fit", "shop.csv", "--target", "label", "--algorithm", "forest", "--prune", "cv", cwd=d)
    assert "--n-estimators is for" in error(
        "fit", "shop.csv", "--target", "label", "--n-estimators", "5", cwd=d)
    assert "adaboost is for classification" in error(
        "fit", "shop.csv", "--target", "price", "--algorithm", "adaboost", cwd=d)


def test_fit_an_oblique_tree(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    table = pd.DataFrame(X, columns=["a", "b", "c"])
    table["y"] = np.where(X[:, 0] + X[:, 1] > 1, "yes", "no")
    table.to_csv(tmp_path / "diag.csv", index=False)
    out = ok("fit", "diag.csv", "--target", "y", "--algorithm", "oblique", "--cv", "0",
             "-o", "obl.tlm", cwd=tmp_path).stdout
    assert "ObliqueTreeClassifier(criterion='gini'), unpruned" in out
    assert "*a + 0." in out and "*b <= " in out and "tree: 2 leaves" in out
    model = tl.io.load(tmp_path / "obl.tlm")
    assert isinstance(model, tl.ObliqueTreeClassifier) and model.tree_.is_oblique
    table["y2"] = X[:, 0] - 2 * X[:, 2]
    table.to_csv(tmp_path / "diag.csv", index=False)
    out = ok("fit", "diag.csv", "--target", "y2", "--ignore", "y", "--algorithm", "oblique",
             "--max-depth", "3", "--prune", "cv", "--cv", "0", "-o", "reg.tlm",
             cwd=tmp_path).stdout
    assert "ObliqueTreeRegressor(criterion='squared_error'), 10-fold CV pruning" in out
    assert "leave out --splitter" in error("fit", "diag.csv", "--target", "y", "--algorithm",
                                           "oblique", "--splitter", "hist", cwd=tmp_path)
    out = ok("fit", "diag.csv", "--target", "y", "--ignore", "y2", "--algorithm",
             "oblique-forest", "--n-estimators", "5", "--cv", "0", "-o", "forest.tlm",
             cwd=tmp_path).stdout
    assert "ObliqueRandomForestClassifier(n_estimators=5, criterion='gini')" in out
    assert isinstance(tl.io.load(tmp_path / "forest.tlm"), tl.ObliqueRandomForestClassifier)
    assert "does not prune" in error("fit", "diag.csv", "--target", "y", "--algorithm",
                                     "oblique-forest", "--prune", "cv", cwd=tmp_path)
    table["colour"] = rng.choice(["red", "blue"], 400)
    table.loc[3, "a"] = np.nan
    table.to_csv(tmp_path / "table.csv", index=False)
    assert "category columns (colour)" in error("fit", "table.csv", "--target", "y",
                                                "--algorithm", "oblique", cwd=tmp_path)
    assert "impute the missing values" in error("fit", "table.csv", "--target", "y",
                                                "--ignore", "colour", "--algorithm", "oblique",
                                                cwd=tmp_path)


def test_fit_the_optimal_tree(tmp_path):
    d = np.loadtxt(Path(__file__).parent / "data" / "contree" / "bank.txt")
    table = pd.DataFrame(d[:, 1:], columns=["a", "b", "c", "e"])
    table["y"] = d[:, 0].astype(int)
    table.to_csv(tmp_path / "bank.csv", index=False)
    out = ok("fit", "bank.csv", "--target", "y", "--algorithm", "optimal", "--max-depth", "2",
             "--cv", "0", "--time-limit", "60", "-o", "opt.tlm", cwd=tmp_path).stdout
    assert "OptimalTreeClassifier(max_depth=2), optimal, not pruned" in out
    model = tl.io.load(tmp_path / "opt.tlm")
    assert isinstance(model, tl.OptimalTreeClassifier) and model.get_depth() <= 2
    assert "is for --algorithm optimal" in error("fit", "bank.csv", "--target", "y",
                                                 "--time-limit", "3", cwd=tmp_path)
    assert "not pruned" in error("fit", "bank.csv", "--target", "y", "--algorithm", "optimal",
                                 "--prune", "cv", cwd=tmp_path)
    assert "takes --max-depth" in error("fit", "bank.csv", "--target", "y", "--algorithm",
                                        "optimal", "--criterion", "gini", cwd=tmp_path)
    # a text column is searched level by level, its empty cells a level of their own; a hole
    # in a numeric column is refused by name
    table["colour"] = np.where(table.y == 1, "blue", "green")
    table.loc[::7, "colour"] = ""
    table.to_csv(tmp_path / "shop.csv", index=False)
    out = ok("fit", "shop.csv", "--target", "y", "--algorithm", "optimal", "--max-depth", "1",
             "--cv", "0", "-o", "shop.tlm", cwd=tmp_path).stdout
    assert "1 categorical (colour)" in out and "colour = " in out
    table.loc[3, "a"] = np.nan
    table.to_csv(tmp_path / "holes.csv", index=False)
    assert "NaN in numeric column 'a'" in error("fit", "holes.csv", "--target", "y",
                                                "--algorithm", "optimal", cwd=tmp_path)


def test_quantile_forest_and_predict_quantiles(table_csv):
    d = table_csv
    out = run("fit", "shop.csv", "--target", "price", "--ignore", "label,id", "--algorithm",
              "quantile-forest", "--n-estimators", "20", "--min-samples-leaf", "5", "--cv", "0",
              "-o", "qrf.tlm", cwd=d).stdout
    assert "RandomForestQuantileRegressor(n_estimators=20" in out and "held-out R2:" in out
    model = tl.io.load(d / "qrf.tlm")
    assert isinstance(model, tl.RandomForestQuantileRegressor)
    got = pd.read_csv(io.StringIO(run("predict", "qrf.tlm", "shop.csv", "--id", "id",
                                      "--quantiles", "0.05, 0.5,0.95", cwd=d).stdout))
    assert list(got.columns) == ["id", "prediction", "q0.05", "q0.5", "q0.95"]
    X = pd.read_csv(d / "shop.csv")[["colour", "size", "weight"]]
    np.testing.assert_allclose(got[["q0.05", "q0.5", "q0.95"]].to_numpy(),
                               model.predict(X, quantiles=[0.05, 0.5, 0.95]), rtol=1e-12)
    np.testing.assert_allclose(got["prediction"], got["q0.5"], rtol=1e-12)  # the median
    assert (got["q0.05"] <= got["q0.95"]).all()
    assert "in [0, 1]" in error("predict", "qrf.tlm", "shop.csv", "--quantiles", "0.5,1.2",
                                cwd=d)
    assert "separated by commas" in error("predict", "qrf.tlm", "shop.csv", "--quantiles",
                                          "low", cwd=d)
    assert "is for regression" in error("fit", "shop.csv", "--target", "label", "--algorithm",
                                        "quantile-forest", cwd=d)
    ok("fit", "shop.csv", "--target", "label", "--ignore", "price", "--algorithm", "forest",
       "--n-estimators", "3", "--cv", "0", "-o", "rf.tlm", cwd=d)
    assert "needs a quantile forest" in error("predict", "rf.tlm", "shop.csv", "--quantiles",
                                              "0.5", cwd=d)


def test_fit_with_monotonic_constraints(table_csv):
    d = table_csv
    out = run("fit", "shop.csv", "--target", "price", "--ignore", "label,id", "--algorithm",
              "tree", "--monotonic", "size=+1, weight=-1", "--max-depth", "5", "--cv", "0",
              "-o", "mono.tlm", cwd=d).stdout
    assert "(monotonic: size increasing, weight decreasing)" in out
    model = tl.io.load(d / "mono.tlm")
    assert model.monotonic_cst == {"size": 1, "weight": -1}
    X = pd.read_csv(d / "shop.csv")[["colour", "size", "weight"]].iloc[:20]
    for i in range(len(X)):
        Z = pd.concat([X.iloc[[i]]] * 30, ignore_index=True)
        Z["size"] = np.linspace(0, 20, 30)
        assert np.all(np.diff(model.predict(Z)) >= 0)
    # C4.5 splits rows with holes fractionally: refused where the table has them ...
    assert "use missing='learn'" in error("fit", "shop.csv", "--target", "label", "--ignore",
                                          "price", "--algorithm", "c45", "--monotonic",
                                          "size=+1", cwd=d)
    # ... and on a column without holes its subtree raising is turned off
    ok("fit", "shop.csv", "--target", "label", "--features", "weight", "--algorithm", "c45",
       "--monotonic", "weight=-1", "--cv", "0", "-o", "c45m.tlm", cwd=d)
    c45 = tl.io.load(d / "c45m.tlm")
    assert c45.subtree_raising is False and c45.monotonic_cst == {"weight": -1}
    ok("fit", "shop.csv", "--target", "price", "--ignore", "label", "--algorithm", "forest",
       "--n-estimators", "3", "--monotonic", "size=1", "--cv", "0", "-o", "rfm.tlm", cwd=d)
    assert tl.io.load(d / "rfm.tlm").monotonic_cst == {"size": 1}
    assert "not a feature column" in error("fit", "shop.csv", "--target", "price",
                                           "--monotonic", "height=+1", cwd=d)
    assert "a category column" in error("fit", "shop.csv", "--target", "price",
                                        "--monotonic", "colour=+1", cwd=d)
    assert "COLUMN=+1" in error("fit", "shop.csv", "--target", "price", "--monotonic",
                                "size=up", cwd=d)
    assert "does not take it" in error("fit", "shop.csv", "--target", "price", "--algorithm",
                                       "m5", "--monotonic", "size=+1", cwd=d)
