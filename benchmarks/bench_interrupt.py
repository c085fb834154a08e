"""Ctrl-C and memory limits, measured: how long a fit takes to stop after SIGINT, and what a
fit too big for the memory says.

    python benchmarks/bench_interrupt.py                # every case, 3 signals each
    python benchmarks/bench_interrupt.py --quick        # smaller data, 1 signal each

Each case starts a fresh Python process that fits once on a small sample (compilation),
prints READY, then starts the long fit; the signal comes ``--delay`` seconds later, and the
time from the signal to the end of the process is what the table shows (the process must end
with a plain ``KeyboardInterrupt``, or exit status 130 for the command line, never a fitted
model or a written file). Then the memory-limit messages of a few fits that do not fit in
``TREELEARN_MEMORY_LIMIT=1G``. Not a test (numbers depend on the machine; the test suite
checks both behaviours on smaller data).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_DATA = textwrap.dedent("""
    import numpy as np, pandas as pd
    def data(kind, n):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, 28)).astype(np.float32)
        y = (X[:, :6].sum(axis=1) + rng.normal(size=n) > 0).astype(int)
        if kind != "table":
            return X, y
        df = pd.DataFrame(X[:, :8], columns=[f"x{i}" for i in range(8)])
        df.iloc[rng.random(n) < 0.05, 0] = np.nan
        df["city"] = pd.Categorical(rng.integers(0, 300, n).astype(str))
        df["kind"] = pd.Categorical(rng.choice(list("abcdefgh"), n))
        return df, y
""")

_FIT = _DATA + textwrap.dedent("""
    import sys, treelearn as tl
    kind, n, make = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    X, y = data(kind, n)
    est = eval(make)
    small = X.iloc[:3000] if hasattr(X, "iloc") else X[:3000]
    eval(make).fit(small, y[:3000])
    print("READY", flush=True)
    est.fit(X, y)
    print("DONE", flush=True)
""")

CASES = [
    ("exact tree, fully grown", "numeric", "tl.DecisionTreeClassifier()"),
    ("hist tree, fully grown", "numeric", "tl.DecisionTreeClassifier(splitter='hist')"),
    ("table, CART with 10-fold CV pruning", "table", "tl.CARTClassifier(random_state=0)"),
    ("table, C4.5 (pessimistic pruning)", "table", "tl.C45Classifier()"),
    ("random forest, hist, n_jobs=2", "numeric",
     "tl.RandomForestClassifier(splitter='hist', n_jobs=2, random_state=0)"),
    ("random forest, exact, n_jobs=2", "numeric",
     "tl.RandomForestClassifier(n_jobs=2, random_state=0)"),
    ("AdaBoost, exact stumps", "numeric", "tl.AdaBoostClassifier(n_estimators=200)"),
]


def _interrupt(p: subprocess.Popen, delay: float) -> tuple[float, str, str] | None:
    """SIGINT to ``p`` after ``delay`` seconds; (seconds from the signal to its end, its
    output, its errors), or None if it ended first."""
    time.sleep(delay)
    if p.poll() is not None:
        return None
    t = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    return time.perf_counter() - t, out, err


def _stop_time(script: Path, kind: str, n: int, make: str, delay: float) -> tuple[float, str]:
    p = subprocess.Popen([sys.executable, str(script), kind, str(n), make],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "READY":
        p.kill()
        return float("nan"), f"did not start: {p.stderr.read()[-300:]}"
    got = _interrupt(p, delay)
    if got is None:
        return float("nan"), "ended before the signal"
    stopped, out, err = got
    if "DONE" in out:
        return stopped, "finished the fit instead"
    last = err.strip().splitlines()[-1] if err.strip() else ""
    return stopped, "ok" if last == "KeyboardInterrupt" else f"ended with: {last}"


def _cli_stop_time(tmp: Path, n: int, delay: float) -> tuple[float, str]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(n, 8)).round(3), columns=[f"x{i}" for i in range(8)])
    df["kind"] = rng.choice(list("abcdef"), n)
    df["y"] = np.where(df["x0"] + rng.normal(size=n) > 0, "yes", "no")
    data = tmp / "big.csv"
    df.to_csv(data, index=False)
    out = tmp / "big.tlm"
    p = subprocess.Popen([sys.executable, "-m", "treelearn.cli", "-q", "fit", str(data),
                          "--target", "y", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    got = _interrupt(p, delay)
    if got is None:
        return float("nan"), "ended before the signal"
    stopped, _, err = got
    ok = p.returncode == 130 and not out.exists()
    return stopped, "ok (status 130, nothing written)" if ok else \
        f"status {p.returncode}: {err.strip()[-200:]}"


def _memory_messages() -> list[tuple[str, str]]:
    import numpy as np

    import treelearn as tl

    os.environ["TREELEARN_MEMORY_LIMIT"] = "1G"
    X = np.broadcast_to(np.float32(0.5), (5_000_000, 50))  # no memory behind it
    y = np.zeros(5_000_000)
    out = []
    for name, est in (("exact tree", tl.DecisionTreeClassifier()),
                      ("hist tree", tl.DecisionTreeClassifier(splitter="hist")),
                      ("random forest, exact, n_jobs=2", tl.RandomForestClassifier(n_jobs=2))):
        try:
            est.fit(X, y)
            out.append((name, "(no error)"))
        except MemoryError as exc:
            out.append((name, str(exc)))
    del os.environ["TREELEARN_MEMORY_LIMIT"]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller data, one signal per case")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--delay", type=float, default=2.0, help="seconds into the fit")
    args = ap.parse_args(argv)
    n = 200_000 if args.quick else 1_000_000
    repeats = 1 if args.quick else args.repeats
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "fit.py"
        script.write_text(_FIT)
        for name, kind, make in CASES:
            times = []
            notes = set()
            for _ in range(repeats):
                t, note = _stop_time(script, kind, n, make, args.delay)
                times.append(t)
                notes.add(note)
            rows.append((f"{name} ({n:,} rows)", times, ", ".join(sorted(notes))))
            print(f"{rows[-1][0]}: " + ", ".join(f"{t:.2f}" for t in times) + f" s  {rows[-1][2]}",
                  flush=True)
        times = []
        notes = set()
        for _ in range(repeats):
            t, note = _cli_stop_time(Path(tmp), n // 2, args.delay + 4.0)
            times.append(t)
            notes.add(note)
        rows.append((f"treelearn fit, CSV of {n // 2:,} rows", times, ", ".join(sorted(notes))))
    print(f"\n{'case':<58}{'stop after SIGINT, s':>24}  outcome")
    for name, times, note in rows:
        print(f"{name:<58}{' / '.join(f'{t:.2f}' for t in times):>24}  {note}")
    print("\nMemoryError messages with TREELEARN_MEMORY_LIMIT=1G, 5,000,000 x 50:")
    for name, msg in _memory_messages():
        print(f"- {name}: {msg}")


if __name__ == "__main__":
    main()
