"""Progress bars for long work (command-line fits and cross-validation, benchmarks).

A bar goes to standard error and only when that is a terminal, so piped or redirected output
stays clean; ``quiet`` turns it off. Lines printed while a bar runs go through :func:`say`,
which keeps them above the bar instead of tearing it.
"""

from __future__ import annotations

import sys


def progress(total: int | None, desc: str, *, quiet: bool = False, unit: str = "step"):
    """A tqdm bar of ``total`` steps on standard error (disabled off a terminal or when
    ``quiet``); use it as a context manager or close it."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, file=sys.stderr, leave=False, unit=unit,
                disable=quiet or not sys.stderr.isatty())


def say(text: str) -> None:
    """Print ``text`` to standard output above any running bar."""
    from tqdm import tqdm

    tqdm.write(text, file=sys.stdout)
    sys.stdout.flush()


def run_main(main) -> None:
    """Run a script's ``main()`` (the benchmarks') so that Ctrl-C ends it within about a
    second (see :mod:`treelearn._interrupt`) with one line and exit status 130, no
    traceback. A scikit-learn or LightGBM fit under way when the key is pressed finishes
    first: their compiled loops do not look at signals."""
    from ._interrupt import handling_sigint

    try:
        with handling_sigint():
            main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
