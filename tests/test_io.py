"""Model files (treelearn.io): round trips for every estimator and option, the format readable
without treelearn, validation of everything, atomic writes, and a fuzzed loader."""

import dataclasses
import io
import json
import os
import re
import stat
import zipfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.model_selection import RepeatedStratifiedKFold, ShuffleSplit
from sklearn.tree import DecisionTreeClassifier as SkTree

import treelearn as tl
from treelearn import io as tio
from treelearn.io import ModelFileError


def _table(n=240, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z", None], n),
                       "b": rng.normal(size=n),
                       "c": rng.choice([1, 2, 3.5], n).astype(object),
                       "d": rng.random(n)})
    df.loc[rng.random(n) < 0.1, "b"] = np.nan
    y = np.where(df.b.fillna(0) + (df.a == "x") + rng.normal(0, 0.3, n) > 0.3, "yes", "no")
    yr = df.d * 3 + (df.a == "y") + rng.normal(0, 0.1, n)
    return df, y, yr.to_numpy()


CASES = {
    "tree": lambda: tl.DecisionTreeClassifier(random_state=0),
    "cart": lambda: tl.CARTClassifier(random_state=0),
    "c45": lambda: tl.C45Classifier(),
    "c45-raising": lambda: tl.C45Classifier(subtree_raising=True),
    "id3": lambda: tl.ID3Classifier(),
    "hist": lambda: tl.DecisionTreeClassifier(splitter="hist", max_bins=32, random_state=0),
    "cart-reg": lambda: tl.CARTRegressor(random_state=0),
    "reg-abs-reduced": lambda: tl.DecisionTreeRegressor(criterion="absolute_error",
                                                        prune="reduced_error", random_state=0),
    "mdl-multiway-impute": lambda: tl.DecisionTreeClassifier(
        prune="mdl", missing="impute", categorical_split="multiway", random_state=0),
    "costs": lambda: tl.DecisionTreeClassifier(
        misclassification_cost=[[0, 1], [5, 0]], class_weight={"yes": 2.0},
        feature_costs={"a": 1, "b": 2, "c": 1, "d": 3}, cost_function="nunez", random_state=0),
    "cv-shuffle": lambda: tl.DecisionTreeClassifier(
        prune="cv", prune_rule="min", ccp_risk="misclassification",
        prune_cv=ShuffleSplit(5, test_size=0.3, random_state=1), random_state=0),
    "cv-repeated": lambda: tl.DecisionTreeClassifier(
        prune="cv", prune_cv=RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=1),
        random_state=0),
    "fitted-binner": lambda: tl.DecisionTreeClassifier(
        splitter="hist", binner=tl.Binner(max_bins=16).fit(np.random.default_rng(0).random(
            (50, 4))), random_state=0),
    "gain-ratio-limits": lambda: tl.DecisionTreeClassifier(
        criterion="gain_ratio", max_depth=4, min_samples_leaf=3, max_features=0.8,
        min_impurity_decrease=1e-3, ccp_alpha=0.001, categorical_features=["a", "c"],
        random_state=3),
    "best-first": lambda: tl.DecisionTreeClassifier(max_leaf_nodes=7, random_state=0),
}
REGRESSORS = {"cart-reg", "reg-abs-reduced"}


def same(a, b, where="model"):
    """Equal values of equal types, recursively (arrays: dtype and values, NaN = NaN)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == object:
            assert a.tolist() == b.tolist(), where
            assert [type(x) for x in a.tolist()] == [type(x) for x in b.tolist()], where
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, tl.Tree):
        assert a == b, where
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, tl.Binner):
        same(vars(a), vars(b), where)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            same(x, z, f"{where}[{i}]")
    elif hasattr(a, "split") and hasattr(a, "get_n_splits"):
        assert type(a) is type(b) and repr(a) == repr(b), where
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip_every_estimator_and_option(case, tmp_path):
    df, y, yr = _table()
    est = CASES[case]().fit(df, yr if case in REGRESSORS else y)
    path = tio.save(est, tmp_path / "m.tlm", info={"note": "ok", "n": [1, 2.5]})
    again = tio.load(path)
    assert type(again) is type(est)
    same(vars(est), vars(again))
    probe, _, _ = _table(500, seed=1)
    np.testing.assert_array_equal(again.predict(probe), est.predict(probe))
    if case not in REGRESSORS:
        np.testing.assert_array_equal(again.predict_proba(probe), est.predict_proba(probe))
    assert tl.export_text(again) == tl.export_text(est)
    assert tio.read_metadata(path)["info"] == {"note": "ok", "n": [1, 2.5]}


def test_round_trip_arrays_labels_and_sklearn(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    for labels in (np.array([3, 7, 9]), np.array([1.0, 2.0, 3.0]), np.array(["a", "b", "c"]),
                   np.array(["a", "b", "c"], dtype=object)):
        y = labels[rng.integers(0, 3, 200)]
        est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
        again = tio.load(tio.save(est, tmp_path / "m.tlm"))
        same(vars(est), vars(again))
    y = rng.random(200) > 0.5
    est = tl.DecisionTreeClassifier(random_state=0).fit(X, y)
    same(vars(est), vars(tio.load(tio.save(est, tmp_path / "m.tlm"))))
    sk = SkTree(random_state=0, max_depth=4).fit(X, y)
    again = tio.load(tio.save(sk, tmp_path / "sk.tlm"))
    assert isinstance(again, tl.DecisionTreeClassifier)
    np.testing.assert_array_equal(again.predict(X), sk.predict(X))
    np.testing.assert_array_equal(again.predict_proba(X), sk.predict_proba(X))


def test_levels_of_mixed_types_round_trip(tmp_path):
    X = pd.DataFrame({"k": pd.Series([1, "1", 2.5, True, "b", 1, "b", 2.5], dtype=object)})
    y = [0, 1, 0, 1, 1, 0, 1, 0]
    est = tl.ID3Classifier(categorical_features=[0]).fit(X, y)
    again = tio.load(tio.save(est, tmp_path / "m.tlm"))
    same(est.categories_, again.categories_)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_file_is_readable_without_treelearn(tmp_path):
    """The documented layout: model.json plus .npy members, read with zipfile/json/numpy."""
    df, y, _ = _table()
    est = tl.C45Classifier().fit(df, y)
    path = tio.save(est, tmp_path / "m.tlm")
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("model.json"))
        assert meta["format"] == "treelearn-model" and meta["format_version"] == 1
        assert meta["estimator"] == "C45Classifier"
        assert meta["summary"]["n_leaves"] == est.tree_.n_leaves
        tree = meta["fitted"]["tree_"]
        left = np.load(io.BytesIO(zf.read(tree["children_left"]["file"])), allow_pickle=False)
        np.testing.assert_array_equal(left, est.tree_.children_left)
        for name in zf.namelist():
            assert name == "model.json" or name.startswith("arrays/")
            if name.endswith(".npy"):
                np.load(io.BytesIO(zf.read(name)), allow_pickle=False)  # never needs pickle
        levels = meta["fitted"]["categories_"]["items"][0]
        assert levels["object"] and np.load(io.BytesIO(zf.read(levels["file"]))).tolist() == [
            "x", "y", "z"]
    assert meta["params"]["criterion"] == "gain_ratio"


# -- validation ------------------------------------------------------------------------------------

def _fitted(tmp_path):
    df, y, _ = _table()
    est = tl.DecisionTreeClassifier(max_depth=4, random_state=0).fit(df, y)
    return est, tio.save(est, tmp_path / "good.tlm")


def _rewrite(src, dst, meta=None, members=None):
    """Copy a model file, replacing model.json and/or members."""
    with zipfile.ZipFile(src) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    if meta is not None:
        parts["model.json"] = json.dumps(meta).encode()
    parts.update(members or {})
    with zipfile.ZipFile(dst, "w") as zf:
        for n, data in parts.items():
            if data is not None:
                zf.writestr(n, data)
    return dst


def _meta(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("model.json"))


def _npy(a, allow_pickle=False):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


def test_rejects_what_is_not_a_model(tmp_path):
    _, good = _fitted(tmp_path)
    bad = tmp_path / "bad.tlm"
    bad.write_text("name,value\n1,2\n")
    with pytest.raises(ModelFileError, match="not a zip"):
        tio.load(bad)
    with pytest.raises(FileNotFoundError, match="not found"):
        tio.load(tmp_path / "nope.tlm")
    with pytest.raises(ModelFileError, match="model.json is missing"):
        tio.load(_rewrite(good, tmp_path / "b1.tlm", members={"model.json": None}))
    with pytest.raises(ModelFileError, match="not JSON"):
        tio.load(_rewrite(good, tmp_path / "b2.tlm", members={"model.json": b"{nope"}))
    meta = _meta(good)
    with pytest.raises(ModelFileError, match="newer treelearn"):
        tio.load(_rewrite(good, tmp_path / "b3.tlm", {**meta, "format_version": 2}))
    with pytest.raises(ModelFileError, match="not a treelearn model file"):
        tio.load(_rewrite(good, tmp_path / "b4.tlm", {**meta, "format": "other"}))
    with pytest.raises(ModelFileError, match="estimator 'os.system'"):
        tio.load(_rewrite(good, tmp_path / "b5.tlm", {**meta, "estimator": "os.system"}))
    with pytest.raises(ModelFileError, match="unknown fitted attributes"):
        tio.load(_rewrite(good, tmp_path / "b6.tlm",
                          {**meta, "fitted": {**meta["fitted"], "__class__": 1}}))
    with pytest.raises(ModelFileError, match="parameters: .*max_depth"):
        tio.load(_rewrite(good, tmp_path / "b7.tlm",
                          {**meta, "params": {**meta["params"], "max_depth": -3}}))
    with pytest.raises(ModelFileError, match="parameters"):
        tio.load(_rewrite(good, tmp_path / "b8.tlm",
                          {**meta, "params": {**meta["params"], "evil": 1}}))
    with pytest.raises(ModelFileError, match="unknown value type 'pickle'"):
        tio.load(_rewrite(good, tmp_path / "b9.tlm", {**meta, "fitted": {
            **meta["fitted"], "classes_": {"$type": "pickle", "data": "gASV"}}}))
    with pytest.raises(ModelFileError, match="constant"):
        tio.load(_rewrite(good, tmp_path / "b10.tlm", members={
            "model.json": json.dumps(meta).replace('"min_weight_fraction_leaf": 0.0',
                                                   '"min_weight_fraction_leaf": NaN').encode()}))


def test_a_pickled_array_is_refused_and_never_run(tmp_path):
    _, good = _fitted(tmp_path)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    payload = np.empty(1, dtype=object)
    payload[0] = Evil()
    meta = _meta(good)
    name = meta["fitted"]["classes_"]["file"]
    with pytest.raises(ModelFileError, match="dtype object"):
        tio.load(_rewrite(good, tmp_path / "evil.tlm",
                          members={name: _npy(payload, allow_pickle=True)}))
    assert not marker.exists()


def test_inconsistent_parts_are_refused(tmp_path):
    est, good = _fitted(tmp_path)
    meta = _meta(good)
    tree = meta["fitted"]["tree_"]

    def with_array(key, a):
        return _rewrite(good, tmp_path / f"{key}.tlm",
                        members={tree[key]["file"]: _npy(a)})

    left = est.tree_.children_left.copy()
    left[left > 0] = np.where(left[left > 0] > 2, 1, left[left > 0])  # a child before its parent
    with pytest.raises(ModelFileError, match="tree"):
        tio.load(with_array("children_left", left))
    cycle = est.tree_.branch_child.copy()
    cycle[-1] = 0  # back to the root
    with pytest.raises(ModelFileError, match="child index"):
        tio.load(with_array("branch_child", cycle))
    with pytest.raises(ModelFileError, match="rows, expected"):
        tio.load(with_array("threshold", est.tree_.threshold[:-1]))
    with pytest.raises(ModelFileError, match="dtype float64, expected integers"):
        tio.load(with_array("feature", est.tree_.feature.astype(float)))
    feat = est.tree_.feature.copy()
    feat[0] = 99
    with pytest.raises(ModelFileError, match="out of range"):
        tio.load(with_array("feature", feat))
    value = est.tree_.value.copy()
    value[0, 0, 0] = np.inf
    with pytest.raises(ModelFileError, match="not finite"):
        tio.load(with_array("value", value))
    f = meta["fitted"]
    with pytest.raises(ModelFileError, match="n_features_in_"):
        tio.load(_rewrite(good, tmp_path / "nf.tlm", {**meta, "fitted": {
            **f, "n_features_in_": 5}}))
    with pytest.raises(ModelFileError, match="classes"):
        tio.load(_rewrite(good, tmp_path / "cl.tlm", members={
            f["classes_"]["file"]: _npy(np.array(["no", "yes", "maybe"]))}))
    with pytest.raises(ModelFileError, match="categories_"):
        tio.load(_rewrite(good, tmp_path / "cat.tlm", {**meta, "fitted": {
            **f, "categories_": {"$type": "list", "items": [None, None, None, None]}}}))
    with pytest.raises(ModelFileError, match="data does not match its shape"):
        tio.load(_rewrite(good, tmp_path / "short.tlm", members={
            tree["threshold"]["file"]: _npy(est.tree_.threshold)[:-8]}))
    with pytest.raises(ModelFileError, match="missing"):
        tio.load(_rewrite(good, tmp_path / "gone.tlm", members={tree["value"]["file"]: None}))


def _deep(depth):
    v = 1
    for _ in range(depth):
        v = {"$type": "list", "items": [v]}
    return v


def _set(path, value):
    """An edit of model.json: set the value at ``path`` (keys and list indices)."""
    def edit(meta):
        node = meta
        for k in path[:-1]:
            node = node[k]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return edit


_PRUNING = ("fitted", "pruning_", "fields")
#: One edit of a valid CART model's JSON each, and the start of the message it must give.
_EDITS = {
    "missing tree": (_set(("fitted", "tree_"), KeyError), "fitted attribute tree_ is missing"),
    "tree is a number": (_set(("fitted", "tree_"), 3), "tree_ is not a tree"),
    "n_outputs": (_set(("fitted", "n_outputs_"), 2), "n_outputs_ or max_features_"),
    "max_features": (_set(("fitted", "max_features_"), 99), "n_outputs_ or max_features_"),
    "bare list": (_set(("fitted", "is_categorical_"), [False] * 4), "a bare list where"),
    "mask as a list": (_set(("fitted", "is_categorical_"),
                            {"$type": "list", "items": [False] * 4}), "is_categorical_ must"),
    "categories short": (_set(("fitted", "categories_", "items"), [None]), "categories_ must"),
    "unpruned not a tree": (_set(("fitted", "unpruned_tree_"), "x"), "unpruned_tree_ is not"),
    "alpha negative": (_set(("fitted", "ccp_alpha_"), -1.0), "ccp_alpha_ must be"),
    "nested deeply": (_set(("fitted", "n_classes_"), _deep(100)), "values nested too deeply"),
    "float text": (_set(("fitted", "ccp_alpha_"), {"$type": "float", "value": "1e3"}), "float"),
    "list without items": (_set(("fitted", "categories_"), {"$type": "list"}), "list without"),
    "dict pairs": (_set(("fitted", "n_classes_"), {"$type": "dict", "items": [[1]]}),
                   "dict without key/value pairs"),
    "dict key": (_set(("fitted", "n_classes_"),
                      {"$type": "dict", "items": [[{"$type": "list", "items": [1]}, 2]]}),
                 "a dict key is not a plain value"),
    "record class": (_set(("fitted", "pruning_", "class"), "Popen"), "record 'Popen'"),
    "record fields": (_set(_PRUNING + ("rule",), KeyError), "record 'CVPruning'"),
    "pruning rule": (_set(_PRUNING + ("rule",), "max"), "pruning_.rule 'max'"),
    "pruning index": (_set(_PRUNING + ("best_index",), 10**6), "pruning_ indices"),
    "pruning not CV": (_set(("fitted", "pruning_"), 1), "pruning_ is not a cross-validated"),
    "path risk": (_set(_PRUNING + ("path", "fields", "risk"), "gini"), "pruning_.path root"),
    "splitter": (_set(("params", "prune_cv"), {"$type": "splitter", "class": "os.system",
                                               "params": {}}), "splitter 'os.system'"),
    "tree count": (_set(("fitted", "tree_", "n_classes"), 0), "tree n_classes 0"),
}


@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_each_fitted_part_is_checked(tmp_path, edit):
    """Every check of the loader, reached by one edit of an otherwise valid file."""
    X, y = load_iris(return_X_y=True)
    good = tio.save(tl.CARTClassifier(random_state=0).fit(X, y), tmp_path / "cart.tlm")
    change, message = _EDITS[edit]
    meta = _meta(good)
    change(meta)
    with pytest.raises(ModelFileError, match=re.escape(message)):
        tio.load(_rewrite(good, tmp_path / "bad.tlm", meta))


def test_save_errors_and_warnings(tmp_path):
    with pytest.raises(TypeError, match="fitted"):
        tio.save(tl.DecisionTreeClassifier(), tmp_path / "m.tlm")
    with pytest.raises(TypeError, match="Pipeline"):
        from sklearn.pipeline import make_pipeline
        tio.save(make_pipeline(tl.DecisionTreeClassifier()), tmp_path / "m.tlm")
    X, y = np.random.default_rng(0).random((50, 2)), np.arange(50) % 2
    est = tl.DecisionTreeClassifier(random_state=np.random.RandomState(0)).fit(X, y)
    with pytest.warns(UserWarning, match="RandomState"):
        tio.save(est, tmp_path / "m.tlm")
    assert tio.load(tmp_path / "m.tlm").random_state is None
    with pytest.raises(IsADirectoryError):
        tio.save(est, tmp_path)
    est.set_params(random_state=0)
    with pytest.raises(TypeError, match="info must be plain JSON"):
        tio.save(est, tmp_path / "m2.tlm", info={"x": float("nan")})
    assert not (tmp_path / "m2.tlm").exists()
    with pytest.raises(TypeError, match="bare Tree"):
        tio.save(est.tree_, tmp_path / "m3.tlm")


def test_save_is_atomic_and_keeps_permissions(tmp_path, monkeypatch):
    est, good = _fitted(tmp_path)
    before = good.read_bytes()
    assert stat.S_IMODE(os.stat(good).st_mode) == 0o666 & ~_umask()
    calls = []
    real = zipfile.ZipFile.writestr

    def crash(self, name, data, *a, **k):
        calls.append(name)
        if len(calls) == 3:
            raise KeyboardInterrupt("power cut")
        return real(self, name, data, *a, **k)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", crash)
    other = tl.DecisionTreeClassifier(max_depth=1).fit(*_table()[:2])
    with pytest.raises(KeyboardInterrupt):
        tio.save(other, good)
    monkeypatch.undo()
    assert good.read_bytes() == before  # the old model, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.tlm"]  # no temporary left
    tio.load(good)
    os.chmod(good, 0o640)  # replacing a file keeps its permissions
    tio.save(other, good)
    assert stat.S_IMODE(os.stat(good).st_mode) == 0o640


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


# -- fuzzing ---------------------------------------------------------------------------------------

_PROBE = _table(60, seed=5)[0]
#: Examples per fuzz test; raise it for a long local run (TREELEARN_FUZZ_EXAMPLES=5000).
FUZZ_EXAMPLES = int(os.environ.get("TREELEARN_FUZZ_EXAMPLES", "150"))


def _load_or_clean_error(path):
    """The loader's contract: a model that predicts, or a ModelFileError; nothing else."""
    try:
        model = tio.load(path)
    except ModelFileError:
        return None
    model.predict(_PROBE)
    return model


@pytest.fixture(scope="module")
def fuzz_source(tmp_path_factory):
    df, y, _ = _table()
    d = tmp_path_factory.mktemp("fuzz")
    est = tl.C45Classifier(missing="c45").fit(df, y)
    return tio.save(est, d / "src.tlm"), d


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_truncated_and_mutated_bytes(fuzz_source, data):
    src, d = fuzz_source
    raw = bytearray(src.read_bytes())
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    else:
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    path = d / "mutated.tlm"
    path.write_bytes(bytes(raw))
    _load_or_clean_error(path)


def _mutate_json(obj, draw):
    """A structurally mutated copy: numbers changed, keys dropped, values swapped."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            roll = draw(st.integers(0, 40))
            if roll == 0:
                continue
            out[k] = draw(st.sampled_from([None, -1, 0, 10**12, "x", [], {}])) if roll == 1 \
                else _mutate_json(v, draw)
        return out
    if isinstance(obj, list):
        return [_mutate_json(v, draw) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (int, float)) and draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from([-1, 0, 1, 2, 255, 2**31, -(2**40), 0.5, 1e300]))
    return obj


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzz_mutated_json_and_arrays(fuzz_source, data):
    src, d = fuzz_source
    meta = _meta(src)
    with zipfile.ZipFile(src) as zf:
        arrays = {n: zf.read(n) for n in zf.namelist() if n.startswith("arrays/")}
    mutated = _mutate_json(meta, data.draw)
    members = {}
    for _ in range(data.draw(st.integers(0, 3))):
        name = data.draw(st.sampled_from(sorted(arrays)))
        a = np.load(io.BytesIO(arrays[name]), allow_pickle=False)
        if a.size and a.dtype.kind in "iuf":
            a = a.copy()
            flat = a.reshape(-1)
            flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(
                st.sampled_from([-3, -2, -1, 0, 1, 5, 10**6]))
        elif a.size and data.draw(st.booleans()):
            a = a[:-1]
        members[name] = _npy(a)
    path = _rewrite(src, d / "structured.tlm", mutated, members)
    _load_or_clean_error(path)


def test_load_with_metadata_is_load_and_read_metadata(tmp_path):
    est, good = _fitted(tmp_path)
    model, meta = tio.load_with_metadata(good)
    assert meta == tio.read_metadata(good)
    same(vars(model), vars(tio.load(good)))
    (tmp_path / "x.tlm").write_text("nope")
    with pytest.raises(ModelFileError, match="not a zip"):
        tio.load_with_metadata(tmp_path / "x.tlm")
