"""Where a case of ``compare.py`` spends its time, kernel by kernel (Linux ``perf``).

    python benchmarks/profile_kernels.py flights-frame-exact-full
    python benchmarks/profile_kernels.py forest-diamonds-exact --repeats 1 --top 40 --quick
    python benchmarks/profile_kernels.py forest-diamonds-exact --repeats 1 --event page-faults

``perf`` names the functions of shared libraries, but Numba's kernels are machine code in
anonymous memory, which it shows as bare addresses. This script runs the case's treelearn fit
once on an empty kernel cache of its own, so that every kernel is compiled in this process and
its LLVM module is at hand; writes ``/tmp/perf-<pid>.map``, perf's map of code generated at run
time, with the address of every compiled function; then records ``--repeats`` timed fits with
``perf record -p`` and prints perf's top symbols, Numba's mangled names shortened to
``module.function``. With ``--event page-faults`` it counts, instead of time, the code that
first touches fresh memory (the kernel's ``clear_page_erms`` in a time profile says only that
pages were cleared, not for whom). Helpers that LLVM inlined count in their caller;
``cfunc.`` entries are a kernel's wrapper called from Python, ``__gufunc__.`` entries the
bodies of ``prange`` loops.

Two cautions from use: on a virtual machine the first touch of memory can cost far more than
later ones (2.3 s per GB on this project's machine until its memory had been touched once), so
the kernel's page clearing (``clear_page_erms``) may weigh more than it will elsewhere; and
time in ``gc_collect_main`` after the last fit is the interpreter's exit. Needs ``perf``
(Debian's linux-perf). Not a test: the profile depends on the machine.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_CHILD = "TREELEARN_PROFILE_CHILD"


def short_name(symbol: str) -> str:
    """``treelearn.engine.ranked.search_ranked`` from Numba's mangled symbol (other symbols
    unchanged)."""
    prefix = ""
    for p in ("cfunc.", "__gufunc__."):
        if symbol.startswith(p):
            prefix, symbol = p, symbol[len(p):]
    if not symbol.startswith("_ZN"):
        return prefix + symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j:j + n])
        i = j + n
    name = ".".join(parts).replace("_3c", "<").replace("_3e", ">")
    return prefix + name


def write_perf_map() -> int:
    """Write ``/tmp/perf-<pid>.map`` for every function of every compiled Numba kernel in this
    process; returns how many addresses it holds."""
    from numba.core.registry import CPUDispatcher

    addresses: dict[int, str] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in obj.overloads.values():
            library = cres.library
            module = getattr(library, "_final_module", None)
            if module is None:  # loaded from a cache: no module to list
                continue
            for fn in module.functions:
                if fn.is_declaration:
                    continue
                address = library._codegen._engine.get_function_address(fn.name)
                if address:
                    addresses[address] = fn.name
    items = sorted(addresses.items())
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for k, (address, name) in enumerate(items):
            size = items[k + 1][0] - address if k + 1 < len(items) else 4096
            out.write(f"{address:x} {min(size, 1 << 20):x} {name}\n")
    return len(items)


def profile(case: str, repeats: int, top: int, quick: bool, frequency: int,
            event: str | None = None) -> None:
    sys.path.insert(0, str(HERE))
    from compare import _cases

    cases = _cases()
    if case not in cases:
        raise SystemExit(f"unknown case {case!r}; python benchmarks/compare.py --list")
    fit = cases[case][0]("treelearn", quick)
    t = time.perf_counter()
    fit()
    print(f"first fit (compiles): {time.perf_counter() - t:.1f} s")
    print(f"perf map: {write_perf_map()} functions")
    data = Path(tempfile.mkdtemp()) / "perf.data"
    # an event (``page-faults``) samples where it happens: which code touches fresh pages
    what = ["-e", event, "-c", "1"] if event else ["-F", str(frequency)]
    rec = subprocess.Popen(["perf", "record", *what, "-p", str(os.getpid()),
                            "-o", str(data)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # perf attaches
    for _ in range(repeats):
        t = time.perf_counter()
        fit()
        print(f"fit: {time.perf_counter() - t:.3f} s")
    rec.send_signal(signal.SIGINT)
    rec.wait()
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort",
                             "sym", "--stdio"], capture_output=True, text=True, check=True)
    rows = []
    for line in report.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[(.)\]\s+(\S+)", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), short_name(m.group(3))))
    print(f"{'share':>7}  where  symbol")
    for share, where, name in rows[:top]:
        print(f"{share:6.2f}%  {'kernel' if where == 'k' else 'user':<6} {name}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", help="a case of compare.py (its --list)")
    ap.add_argument("--repeats", type=int, default=3, help="timed fits recorded (default 3)")
    ap.add_argument("--top", type=int, default=30, help="symbols printed (default 30)")
    ap.add_argument("--quick", action="store_true", help="compare.py's tenth of the rows")
    ap.add_argument("--frequency", type=int, default=999, help="samples a second (default 999)")
    ap.add_argument("--event", help="count a perf event where it happens instead of sampling "
                    "time, e.g. page-faults (which code touches fresh memory)")
    args = ap.parse_args(argv)
    if os.environ.get(_CHILD) != "1":
        # a fresh process on an empty cache of its own: every kernel compiled here
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, **{_CHILD: "1"})
            raise SystemExit(subprocess.call([sys.executable, __file__, *sys.argv[1:]],
                                             env=env))
    profile(args.case, args.repeats, args.top, args.quick, args.frequency, args.event)


if __name__ == "__main__":
    main()
