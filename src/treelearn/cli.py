"""The ``treelearn`` command. Thin: it only calls the public API.

Subcommands so far: ``demo`` (the literature's worked examples, printed with the published
numbers beside ours). Errors a user can cause print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import numpy as np


def _demo_iris() -> str:
    """Iris with entropy, max_depth=3, min_samples_split=10 (classification-trees notebook)."""
    from sklearn.datasets import load_iris

    from . import DecisionTreeClassifier, export_text

    data = load_iris()
    est = DecisionTreeClassifier(criterion="entropy", max_depth=3, min_samples_split=10,
                                 random_state=0).fit(data.data, data.target)
    counts = np.bincount(est.predict(data.data), minlength=3).tolist()
    root = est.tree_
    lines = [
        "Iris, criterion='entropy', max_depth=3, min_samples_split=10",
        "(worked example of the classification-trees notebook)",
        "",
        export_text(est, feature_names=[n.replace(" (cm)", "") for n in data.feature_names],
                    class_names=list(data.target_names)).rstrip(),
        "",
        f"{'':24}{'literature':>16}{'treelearn':>16}",
        f"{'root entropy (bits)':24}{1.585:>16.3f}{root.impurity[0]:>16.3f}",
        f"{'training accuracy':24}{0.9733:>16.4f}{est.score(data.data, data.target):>16.4f}",
        f"{'predicted class counts':24}{'[50, 48, 52]':>16}{str(counts):>16}",
    ]
    return "\n".join(lines)


DEMOS: dict[str, Callable[[], str]] = {"iris": _demo_iris}


class UserError(Exception):
    """A mistake of the user's (bad argument, missing file): one line, exit status 2."""


def _cmd_demo(args: argparse.Namespace) -> None:
    if args.name not in DEMOS:
        raise UserError(f"unknown demo {args.name!r}; choose one of: {', '.join(DEMOS)}")
    print(DEMOS[args.name]())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``treelearn`` command."""
    parser = argparse.ArgumentParser(
        prog="treelearn",
        description="Decision trees as the classic literature teaches them.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run a worked example of the literature",
        description="Run a worked example and print the literature's numbers beside ours.",
        epilog="examples:\n  treelearn demo\n  treelearn demo iris",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("name", nargs="?", default="iris",
                      help=f"which example (default: iris; one of {', '.join(DEMOS)})")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``treelearn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        args.func(args)
    except (UserError, ValueError, TypeError, OSError) as exc:
        if args.debug:
            raise
        print(f"treelearn: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
