"""Fuzzing the model-file loader: damaged and hostile ``.tlm`` files must give ModelFileError.

    python tools/fuzz_model_files.py --cases 1000000          # 2 worker processes
    python tools/fuzz_model_files.py --start 500000 --cases 500000   # the second half
    python tools/fuzz_model_files.py --case 123456 --show     # replay one case

Each case takes one of the seed models (every estimator kind; numeric data, a table with
categories and missing values, histogram binning, cross-validated and pessimistic pruning,
costs, feature names), writes it, mutates the file, and loads it with ``treelearn.io.load``
and ``read_metadata``. Mutations, picked per case:

* ``bytes``: bit flips, random bytes, truncation, insertion, deletion, a repeated span;
* ``zip``: fields of the zip headers (flags such as "encrypted", compression method, sizes,
  CRC, name and extra lengths);
* ``json``: a valid archive whose ``model.json`` has one value replaced, removed or added
  (wrong types, huge and negative numbers, NaN and infinity, deep nesting, other ``$type``),
  or its text edited;
* ``npy``: a valid archive with one array member's header changed (dtype, shape, fortran
  order, lying lengths, broken header text, version) or its data cut or lengthened;
* ``members``: a member dropped, renamed, swapped with another, duplicated or added.

Outcomes: ``rejected`` (``ModelFileError`` from a written check), ``loaded`` (and then
used: ``predict``, ``predict_proba``, ``export_text``, all of which must work), and the
failures: ``escaped`` (any other exception from loading), ``net`` (a ``ModelFileError`` from
the loader's last-resort conversion of an exception no check foresaw), ``use failed`` (a
model that loaded but could not be used) and ``crashed`` (a worker process died: the chunk is
named). The case number and the seed give the mutation again (``--case``). Not a test (the
test suite runs a few thousand cases of it: ``tests/test_io.py``).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import random
import struct
import sys
import tempfile
import time
import zipfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np

KINDS = ("bytes", "zip", "json", "npy", "members")


# -- seed models ----------------------------------------------------------------------------------

def seed_models() -> list[tuple[str, bytes, object]]:
    """(name, model file bytes, rows to predict) for every kind of model the format holds."""
    import pandas as pd
    from sklearn.model_selection import KFold

    import treelearn as tl
    from treelearn import io as model_io

    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 4)).round(2)
    yc = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 2] > 0.5)]
    yr = X[:, 0] * 2 + X[:, 1] ** 2 + rng.normal(scale=0.3, size=n)
    df = pd.DataFrame({"colour": rng.choice(["red", "green", "blue", "grey"], n),
                       "size": rng.integers(1, 6, n).astype(float),
                       "weight": rng.normal(size=n).round(1)})
    ydf = ((df["colour"].isin(["red", "grey"])) ^ (df["weight"] > 0.4)).astype(int).to_numpy()
    df.loc[rng.random(n) < 0.1, "colour"] = None
    df.loc[rng.random(n) < 0.1, "weight"] = np.nan
    dfn = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    specs = [
        ("tree-classifier", tl.DecisionTreeClassifier(max_depth=4, random_state=0), X, y3),
        ("tree-regressor", tl.DecisionTreeRegressor(max_depth=4, random_state=0), X, yr),
        ("id3-table", tl.ID3Classifier(max_depth=3), df.fillna({"colour": "none",
                                                                "weight": 0.0}), ydf),
        ("c45-table-missing", tl.C45Classifier(subtree_raising=True), df, ydf),
        ("cart-cv-names", tl.CARTClassifier(prune_cv=KFold(4), random_state=0), dfn, yc),
        ("cart-regressor-cv", tl.CARTRegressor(prune_cv=4, random_state=0), X, yr),
        ("hist-costs", tl.DecisionTreeClassifier(
            splitter="hist", max_bins=16, max_depth=4, random_state=0,
            misclassification_cost=[[0, 1, 2], [1, 0, 1], [3, 1, 0]]), X, y3),
        ("multiway-reduced-error", tl.DecisionTreeClassifier(
            categorical_split="multiway", prune="reduced_error", criterion="entropy",
            random_state=0), df, ydf),
        ("forest-hist-table", tl.RandomForestClassifier(
            n_estimators=3, max_depth=4, splitter="hist", oob_score=True, random_state=0),
         df, ydf),
        ("bagging-c45-subspaces", tl.BaggingClassifier(
            tl.C45Classifier(), n_estimators=3, max_features=2, random_state=0), df, ydf),
        ("adaboost-stumps", tl.AdaBoostClassifier(n_estimators=4, random_state=0), X, y3),
        ("extra-regressor", tl.ExtraTreesRegressor(n_estimators=2, max_depth=3,
                                                   random_state=0), X, yr),
        ("oner-table", tl.OneRClassifier(), df, ydf),
        ("oblique-classifier", tl.ObliqueTreeClassifier(max_depth=4, random_state=0), X, y3),
        ("oblique-regressor-cv", tl.ObliqueTreeRegressor(max_depth=4, prune="cv", prune_cv=3,
                                                         random_state=0), X, yr),
        ("oblique-forest", tl.ObliqueRandomForestClassifier(n_estimators=3, max_depth=4,
                                                            oob_score=True, random_state=0),
         X, yc),
        ("quantile-forest", tl.RandomForestQuantileRegressor(
            n_estimators=3, max_depth=4, default_quantiles=[0.1, 0.9], random_state=0), X, yr),
    ]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, est, Xs, ys in specs:
            est.fit(Xs, ys)
            path = os.path.join(tmp, name + ".tlm")
            model_io.save(est, path, info={"rows": int(len(ys)), "seed": name})
            with open(path, "rb") as f:
                out.append((name, f.read(), Xs[:40] if hasattr(Xs, "iloc") else Xs[:40]))
    return out


# -- mutations ------------------------------------------------------------------------------------

def _members(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i.filename)) for i in zf.infolist()]


def _zip(members: list[tuple[str, bytes]], rnd: random.Random) -> bytes:
    buf = io.BytesIO()
    method = zipfile.ZIP_STORED if rnd.random() < 0.3 else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, payload in members:
            zf.writestr(name, payload)
    return buf.getvalue()


_VALUES = [None, True, False, 0, 1, -1, 2, 7, 2**31, 2**63, -(2**63), 10**30, -(10**30), 1e308,
           -1e-300, 0.5, float("nan"), float("inf"), float("-inf"), "", "x", "arrays/0.npy",
           "arrays/../model.json", "nan", "inf", "gini", "tree", "array", [], {}, [1, 2, 3],
           {"$type": "array"}, {"$type": "array", "file": "arrays/0.npy"},
           {"$type": "array", "file": "arrays/1.npy", "object": True}, {"$type": "float"},
           {"$type": "float", "value": "nan"}, {"$type": "list"}, {"$type": "list", "items": 5},
           {"$type": "tuple", "items": [1, "a", None]}, {"$type": "dict", "items": [[1, 2, 3]]},
           {"$type": "dict", "items": [[[1], 2]]}, {"$type": "tree"},
           {"$type": "binner", "max_bins": -4}, {"$type": "record", "class": "CVPruning"},
           {"$type": "record", "class": "object", "fields": {}},
           {"$type": "splitter", "class": "KFold", "params": {"n_splits": -3}},
           {"$type": "splitter", "class": "GroupKFold", "params": {"n_splits": 10**30}},
           {"$type": "splitter", "class": "Popen", "params": {"args": "true"}},
           {"$type": "list", "items": [1, 2], "as_array": True},
           {"$type": "list", "items": [{"$type": "list", "items": []}], "as_array": True}]


def _paths(obj, prefix=()):
    """Every path (tuple of keys and indices) of a JSON value."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def _mutate_json(meta: dict, rnd: random.Random) -> bytes:
    paths = list(_paths(meta))
    path = rnd.choice(paths[1:])
    parent, key = _get(meta, path[:-1]), path[-1]
    op = rnd.random()
    if op < 0.55:
        r = rnd.random()
        if r < 0.7:
            new = rnd.choice(_VALUES)
        elif r < 0.8:
            new = copy.deepcopy(_get(meta, rnd.choice(paths)))  # another part of the file
        elif r < 0.9:
            new = "__DEEP__"  # nesting deeper than json.dumps writes, put in the text below
        else:
            old = parent[key]
            new = (old * rnd.choice([-1, 10**6, 2**40]) if isinstance(old, (int, float))
                   and not isinstance(old, bool) else str(old) + "x")
        parent[key] = new
    elif op < 0.75:
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    elif op < 0.9:
        if isinstance(parent, dict):
            parent[rnd.choice(["extra", "$type", "file", "items", "object", "n_classes"])] = \
                rnd.choice(_VALUES)
        else:
            parent.insert(key, rnd.choice(_VALUES))
    else:
        if isinstance(parent, dict) and len(parent) > 1:  # swap two values
            k2 = rnd.choice(list(parent))
            parent[key], parent[k2] = parent[k2], parent[key]
        elif isinstance(parent, list):
            rnd.shuffle(parent)
    text = json.dumps(meta, allow_nan=True)
    depth = rnd.choice([30, 200, 5000, 100_000])
    text = text.replace('"__DEEP__"', "[" * depth + "1" + "]" * depth)
    if rnd.random() < 0.15:  # a text edit on top
        text = _edit_bytes(text.encode(), rnd, small=True).decode("latin-1")
    return text.encode("latin-1", errors="replace") if rnd.random() < 0.05 else \
        text.encode("utf-8", errors="surrogatepass")


_DESCRS = ["<f8", "<i8", "|b1", "<U5", "|O", "V8", ">f8", "<f4", "<c16", "|S3", "<M8[s]",
           "<i4", "<u8", "<f2", "<U0", "<U99999999999", "[('a', '<i8')]", "('descr'", "<q",
           "<i9", "", "?"]
_SHAPES = ["()", "(0,)", "(-1,)", "(-5, 3)", "(10**12,)", "(1, 1, 1, 1)", "(3,)", "(2, 2)",
           "(9223372036854775807,)", "(4294967296, 4294967296)", "(1,", "('a',)", "(1.5,)",
           "(True,)", "[3]", "None", "(2, -2)"]


def _npy_member(payload: bytes, rnd: random.Random) -> bytes:
    if len(payload) < 12 or not payload.startswith(b"\x93NUMPY"):
        return _edit_bytes(payload, rnd)
    major = payload[6]
    hl_size = 2 if major == 1 else 4
    start = 8 + hl_size
    hlen = int.from_bytes(payload[8:start], "little")
    header = payload[start:start + hlen].decode("latin-1")
    data = payload[start + hlen:]
    op = rnd.random()
    if op < 0.25:
        header = (f"{{'descr': '{rnd.choice(_DESCRS)}', 'fortran_order': "
                  f"{rnd.choice(['False', 'True'])}, 'shape': {rnd.choice(_SHAPES)}, }}")
    elif op < 0.35:
        header = header.replace("False", "True") if "False" in header else \
            header.replace("True", "False")
    elif op < 0.5:
        header = _edit_bytes(header.encode("latin-1"), rnd, small=True).decode("latin-1")
    elif op < 0.6:
        header = rnd.choice(["{", "(('descr'", "{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (((((((((((1,),),),),),),),),),),), }", "[" * 3000,
                             "{'descr': '<f8', 'shape': (3,), 'fortran_order': False, "
                             "'extra': 1}", "{'descr': '<f8'}", "1", "'" * 7, ""])
    elif op < 0.75:
        cut = rnd.randrange(len(data) + 1)
        data = data[:cut] if rnd.random() < 0.5 else data + os.urandom(rnd.randrange(1, 64))
    elif op < 0.85:
        hlen_new = rnd.choice([0, 1, hlen - 1, hlen + 1, 2**16 - 1, len(payload)])
        header_bytes = header.encode("latin-1")
        size = hl_size if rnd.random() < 0.8 else (4 if hl_size == 2 else 2)
        lo = (hlen_new % (1 << (8 * size))).to_bytes(size, "little")
        return payload[:6] + bytes([rnd.choice([1, 2, 3, 0, 255])]) + b"\x00" + lo + \
            header_bytes + data
    else:
        data = bytes(rnd.getrandbits(8) for _ in range(min(len(data), 64))) + data[64:]
    header_bytes = header.encode("latin-1", errors="replace")
    if major == 1 and len(header_bytes) >= 2**16:
        major, hl_size = 2, 4
    return payload[:6] + bytes([major, 0]) + len(header_bytes).to_bytes(hl_size, "little") + \
        header_bytes + data


def _edit_bytes(data: bytes, rnd: random.Random, small: bool = False) -> bytes:
    b = bytearray(data)
    for _ in range(1 if small else rnd.choice([1, 1, 2, 4, 16])):
        op = rnd.random()
        pos = rnd.randrange(len(b) + 1) if b else 0
        if op < 0.35 and b:
            p = min(pos, len(b) - 1)
            b[p] ^= 1 << rnd.randrange(8)
        elif op < 0.5 and b:
            p = min(pos, len(b) - 1)
            b[p] = rnd.getrandbits(8)
        elif op < 0.6:
            del b[pos:]
        elif op < 0.75:
            b[pos:pos] = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 9)))
        elif op < 0.9:
            del b[pos:pos + rnd.randrange(1, 17)]
        else:
            span = bytes(b[pos:pos + rnd.randrange(1, 64)])
            b[pos:pos] = span * rnd.randrange(1, 4)
    return bytes(b)


# field offsets in a local header (PK\3\4) and a central directory entry (PK\1\2)
_LOCAL = {"flags": (6, "<H"), "method": (8, "<H"), "crc": (14, "<I"), "csize": (18, "<I"),
          "usize": (22, "<I"), "name_len": (26, "<H"), "extra_len": (28, "<H")}
_CENTRAL = {"flags": (8, "<H"), "method": (10, "<H"), "crc": (16, "<I"), "csize": (20, "<I"),
            "usize": (24, "<I"), "name_len": (28, "<H"), "extra_len": (30, "<H"),
            "comment_len": (32, "<H"), "offset": (42, "<I")}
_END = {"entries_disk": (8, "<H"), "entries": (10, "<H"), "cd_size": (12, "<I"),
        "cd_offset": (16, "<I"), "comment_len": (20, "<H")}


def _zip_fields(data: bytes, rnd: random.Random) -> bytes:
    b = bytearray(data)
    sig, fields = rnd.choice([(b"PK\x03\x04", _LOCAL), (b"PK\x01\x02", _CENTRAL),
                              (b"PK\x05\x06", _END)])
    spots = []
    i = b.find(sig)
    while i >= 0:
        spots.append(i)
        i = b.find(sig, i + 1)
    if not spots:
        return _edit_bytes(data, rnd)
    at = rnd.choice(spots)
    name = rnd.choice(list(fields))
    off, fmt = fields[name]
    if at + off + struct.calcsize(fmt) > len(b):
        return bytes(b)
    (old,) = struct.unpack_from(fmt, b, at + off)
    top = 0xFFFF if fmt == "<H" else 0xFFFFFFFF
    if name == "flags":
        new = old ^ rnd.choice([0x1, 0x8, 0x40, 0x800, 0x2000, 0x1 | 0x40])
    elif name == "method":
        new = rnd.choice([0, 1, 6, 8, 9, 12, 14, 93, 98, 99, top])
    else:
        new = rnd.choice([0, 1, old + 1, max(old - 1, 0), old * 2 % (top + 1), top,
                          rnd.randrange(top + 1)])
    struct.pack_into(fmt, b, at + off, new & top)
    return bytes(b)


def _member_ops(members: list[tuple[str, bytes]], rnd: random.Random) -> list:
    members = list(members)
    op = rnd.random()
    i = rnd.randrange(len(members))
    if op < 0.25:
        members.pop(i)
    elif op < 0.45:
        name, payload = members[i]
        members[i] = (rnd.choice(["arrays/999.npy", "model.json", "arrays/0.npy", "x/" + name,
                                  name.upper(), name + "\x00"]), payload)
    elif op < 0.65 and len(members) > 2:
        j = rnd.randrange(1, len(members))
        k = rnd.randrange(1, len(members))
        (a, pa), (b, pb) = members[j], members[k]
        members[j], members[k] = (a, pb), (b, pa)
    elif op < 0.85:
        members.append(members[i])  # a duplicate name
    else:
        members.append((rnd.choice(["arrays/77.npy", "extra.txt", "../evil", "/abs"]),
                        os.urandom(rnd.randrange(0, 100))))
    return members


def mutate(data: bytes, case: int, seed: int) -> tuple[str, bytes]:
    """The mutation of ``data`` for ``case`` (deterministic in ``case`` and ``seed``)."""
    rnd = random.Random(seed * 1_000_003 + case)
    kind = KINDS[case % len(KINDS)]
    if kind == "bytes":
        return kind, _edit_bytes(data, rnd)
    if kind == "zip":
        out = _zip_fields(data, rnd)
        if rnd.random() < 0.3:
            out = _zip_fields(out, rnd)
        return kind, out
    members = _members(data)
    if kind == "json":
        meta = json.loads(dict(members)["model.json"])
        new = _mutate_json(meta, rnd)
        members = [(n, new if n == "model.json" else p) for n, p in members]
    elif kind == "npy":
        arrays = [k for k, (n, _) in enumerate(members) if n.endswith(".npy")]
        k = rnd.choice(arrays)
        members[k] = (members[k][0], _npy_member(members[k][1], rnd))
    else:
        members = _member_ops(members, rnd)
    return kind, _zip(members, rnd)


# -- running --------------------------------------------------------------------------------------

_SEEDS: list | None = None


def _seeds():
    global _SEEDS
    if _SEEDS is None:
        import warnings

        warnings.filterwarnings("ignore")
        _SEEDS = seed_models()
    return _SEEDS


def _use(model, X) -> None:
    """What a loaded model must do: predict, give probabilities, print."""
    import treelearn as tl

    names = getattr(model, "feature_names_in_", None)
    if hasattr(X, "columns") and names is not None and len(names) == X.shape[1]:
        X = X.set_axis(list(names), axis=1)  # a mutation renamed the features
    if getattr(model, "n_features_in_", None) != X.shape[1] or (
            hasattr(X, "columns") != (names is not None)):
        X = np.zeros((3, model.n_features_in_))  # a mutation changed the features
        if model.is_categorical_.any():
            return  # levels unknown: prediction on made-up rows is not defined
    model.predict(X)
    if hasattr(model, "predict_proba"):
        p = model.predict_proba(X)
        if not np.all(np.isfinite(p)):
            raise ValueError("probabilities are not finite")
    if hasattr(model, "estimators_"):
        tl.export_text(model.estimators_[0], max_depth=4)
    elif hasattr(model, "rules_"):
        model.export_text()
    else:
        tl.export_text(model, max_depth=4)


def run_case(case: int, seed: int, path: str) -> tuple[str, str]:
    """One case: (outcome, detail)."""
    from treelearn import io as model_io

    seeds = _seeds()
    name, data, X = seeds[(case // len(KINDS)) % len(seeds)]
    kind, blob = mutate(data, case, seed)
    with open(path, "wb") as f:
        f.write(blob)
    try:
        model_io.read_metadata(path)
        model = model_io.load(path)
    except model_io.ModelFileError as exc:
        if exc.__cause__ is not None:  # the loader's last-resort net, not a written check
            cause = exc.__cause__
            return "net", f"{kind}/{name}: {type(cause).__name__}: {str(cause)[:160]}"
        return "rejected", kind
    except Exception as exc:  # noqa: BLE001 - the harness counts what escapes
        return "escaped", f"{kind}/{name}: {type(exc).__module__}.{type(exc).__name__}: " \
                          f"{str(exc)[:160]}"
    try:
        _use(model, X)
    except Exception as exc:  # noqa: BLE001
        return "use failed", f"{kind}/{name}: {type(exc).__name__}: {str(exc)[:160]}"
    return "loaded", kind


def run_chunk(start: int, stop: int, seed: int) -> dict:
    """Cases ``start..stop-1``: outcome counts, the first failures, the slowest case."""
    counts: Counter = Counter()
    failures: list = []
    slowest = (0.0, -1)
    _seeds()  # fitted once per process, not timed as a case
    fd, path = tempfile.mkstemp(suffix=".tlm", dir="/dev/shm" if os.path.isdir("/dev/shm")
                                else None)
    os.close(fd)
    try:
        for case in range(start, stop):
            t = time.perf_counter()
            outcome, detail = run_case(case, seed, path)
            dt = time.perf_counter() - t
            slowest = max(slowest, (dt, case))
            counts[outcome] += 1
            if outcome in ("rejected", "loaded"):
                counts[f"  {outcome} after {detail}"] += 1
            elif len(failures) < 20:
                failures.append((case, outcome, detail))
    finally:
        os.unlink(path)
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except ImportError:  # pragma: no cover - not on POSIX
        peak = float("nan")
    return {"counts": counts, "failures": failures, "slowest": slowest, "peak_mb": peak}


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run(cases: int, seed: int = 0, workers: int = 2, chunk: int = 5000,
        log=print, start: int = 0) -> dict:
    """Run ``cases`` cases, numbered from ``start``, on ``workers`` processes (1: in this
    process); the merged result. A long run can be made of several runs of consecutive
    ranges (a case depends only on its number and the seed)."""
    total: Counter = Counter()
    failures: list = []
    slowest = (0.0, -1)
    peak = 0.0
    crashed = []
    t0 = time.perf_counter()
    end = start + cases
    ranges = [(a, min(end, a + chunk)) for a in range(start, end, chunk)]

    def merge(res):
        nonlocal slowest, peak
        total.update(res["counts"])
        failures.extend(res["failures"][: max(0, 50 - len(failures))])
        slowest = max(slowest, res["slowest"])
        peak = max(peak, res["peak_mb"])

    if workers <= 1:
        for a, b in ranges:
            merge(run_chunk(a, b, seed))
    else:
        pending = list(ranges)
        while pending:
            pool = ProcessPoolExecutor(workers, initializer=_ignore_sigint)
            try:
                futs = {pool.submit(run_chunk, a, b, seed): (a, b) for a, b in pending}
                pending = []
                merged = set()
                for fut, rng in futs.items():
                    try:
                        merge(fut.result())
                        merged.add(rng)
                    except BrokenProcessPool:
                        # a worker died (the chunk is reported); the rest start again
                        crashed.append(rng)
                        pending = [r for r in futs.values() if r not in merged and r != rng]
                        break
                    log(f"  {sum(total[k] for k in OUTCOMES):,} cases, "
                        f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
            except KeyboardInterrupt:
                # the workers ignore SIGINT; stop them now rather than after their chunk
                for proc in list(getattr(pool, "_processes", {}).values()):
                    proc.terminate()
                raise
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
    return {"cases": cases, "start": start, "seed": seed, "seconds": time.perf_counter() - t0,
            "counts": total, "failures": failures, "slowest": slowest, "peak_mb": peak,
            "crashed": crashed}


OUTCOMES = ("rejected", "loaded", "net", "escaped", "use failed")


def report(res: dict) -> str:
    c = res["counts"]
    lines = [f"{res['cases']:,} cases (from case {res['start']:,}, seed {res['seed']}) in "
             f"{res['seconds']:.0f} s "
             f"({1e3 * res['seconds'] / max(res['cases'], 1):.2f} ms per case per worker pool)"]
    for k in OUTCOMES:
        lines.append(f"{k:<12} {c[k]:>10,}")
    lines.append(f"{'crashed':<12} {len(res['crashed']):>10,} chunks {res['crashed']}")
    for k in sorted(x for x in c if x.startswith("  ")):
        lines.append(f"{k:<34} {c[k]:>10,}")
    lines.append(f"slowest case {res['slowest'][1]}: {res['slowest'][0] * 1e3:.1f} ms; "
                 f"peak memory of a worker {res['peak_mb']:.0f} MB")
    for case, outcome, detail in res["failures"]:
        lines.append(f"FAIL case {case}: {outcome}: {detail}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0,
                    help="number of the first case (to split a long run into ranges)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=5000)
    ap.add_argument("--case", type=int, help="replay one case and print the outcome")
    ap.add_argument("--show", action="store_true", help="with --case: the full traceback")
    args = ap.parse_args(argv)
    if args.case is not None:
        if args.show:
            import traceback

            from treelearn import io as model_io

            name, data, X = _seeds()[(args.case // len(KINDS)) % len(_seeds())]
            kind, blob = mutate(data, args.case, args.seed)
            print(f"seed model {name}, mutation {kind}, {len(blob)} bytes")
            with tempfile.NamedTemporaryFile(suffix=".tlm") as f:
                f.write(blob)
                f.flush()
                try:
                    _use(model_io.load(f.name), X)
                    print("loaded and used")
                except Exception:  # noqa: BLE001
                    traceback.print_exc()
            return 0
        with tempfile.NamedTemporaryFile(suffix=".tlm") as f:
            print(run_case(args.case, args.seed, f.name))
        return 0
    res = run(args.cases, args.seed, args.workers, args.chunk, start=args.start)
    print(report(res))
    bad = sum(res["counts"][k] for k in ("net", "escaped", "use failed")) + len(res["crashed"])
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
