"""The ``treelearn`` command: point it at a table, get a pruned tree, see it, check it, save
it, use it later. Thin: every subcommand calls the public API (estimators, :mod:`treelearn.io`,
the exporters, :class:`~treelearn.Pruner`, :mod:`treelearn.datasets`, :mod:`treelearn.demos`).

Layout: ``_data`` reads tables and decides column kinds, ``_commands`` runs the subcommands,
this module holds the parser and the error policy: mistakes a user can make (a missing file, an
unknown column, an empty or ragged table, a text regression target, a damaged model file)
print one line ``treelearn: error: ...`` and exit with status 2; running out of memory too
(the fit's estimate names the size and the alternatives). Anything else is a bug of ours and
still prints one line (``treelearn COMMAND: unexpected error: ...``, exit status 1) that asks
for a report; Ctrl-C stops any command within about a second with status 130 and writes no
file (every file is written whole or not at all). ``--debug`` re-raises any of them with
the traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence

from .._interrupt import handling_sigint
from ._errors import UserError

__all__ = ["UserError", "build_parser", "main"]

_EXAMPLES = {
    "fit": """examples:
  treelearn fit iris.csv --target species
  treelearn fit loans.parquet --target default --algorithm c45 -o loans.tlm
  treelearn fit houses.csv --target price --max-depth 6 --prune cv --test-size 0.2""",
    "predict": """examples:
  treelearn predict model.tlm new.csv -o predictions.csv
  treelearn predict model.tlm new.csv --proba --id customer_id""",
    "explain": """examples:
  treelearn explain model.tlm new.csv -o contributions.csv
  treelearn explain model.tlm new.csv --id customer_id --class yes""",
    "evaluate": """examples:
  treelearn evaluate model.tlm test.csv
  treelearn evaluate model.tlm test.csv --target species""",
    "prune": """examples:
  treelearn prune model.tlm                      # the pruning path, no change
  treelearn prune model.tlm --leaves 8 -o small.tlm
  treelearn prune model.tlm --step 0 -o full.tlm  # back to the unpruned tree""",
    "export": """examples:
  treelearn export model.tlm                         # text to the terminal
  treelearn export model.tlm --format rules
  treelearn export model.tlm --format sql --table customers -o score.sql
  treelearn export model.tlm --format svg -o tree.svg
  treelearn export model.tlm --format html -o tree.html --data train.csv""",
    "info": "examples:\n  treelearn info model.tlm",
    "demo": """examples:
  treelearn demo                 # every worked example in short, then the workflow
  treelearn demo sunburn
  treelearn demo square --out pictures/""",
    "compile": """examples:
  treelearn compile                                  # what 'treelearn fit' uses by default
  treelearn compile --algorithm cart forest --splitter best hist
  treelearn compile --algorithm all""",
    "datasets": """examples:
  treelearn datasets
  treelearn datasets export sunburn -o sunburn.csv""",
}


def _sub(sub, name: str, help: str, description: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=description, epilog=_EXAMPLES[name],
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``treelearn`` command."""
    from ..demos import DEMOS
    from . import _commands as c

    parser = argparse.ArgumentParser(
        prog="treelearn", description="Decision trees as the classic literature teaches them.",
        epilog="Run 'treelearn COMMAND --help' for a command's options and examples.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars (they show only on a terminal anyway)")
    parser.add_argument("--version", action="version", version=f"treelearn {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = _sub(sub, "fit", "fit a tree to a table, report its scores, save it",
             "Read a table (CSV, TSV or Parquet), fit a tree to predict --target, print it "
             "with held-out and cross-validated scores, and save it as a model file.")
    p.add_argument("data", help="the table (.csv, .tsv, .parquet)")
    p.add_argument("--target", required=True, help="the column to predict")
    p.add_argument("--algorithm", choices=("cart", "c45", "id3", "tree", "m5", "forest",
                                           "extra", "adaboost", "oner", "optimal", "oblique",
                                           "oblique-forest", "quantile-forest"),
                   default="cart",
                   help="cart (default: binary splits, 10-fold CV pruning, 1-SE rule), c45 "
                        "(gain ratio, pessimistic pruning), id3 (information gain, "
                        "unpruned), tree (scikit-learn's defaults, unpruned), m5 (model "
                        "tree: linear models at the leaves, M5 pruning and smoothing; numeric "
                        "targets); ensembles: "
                        "forest (random forest), extra (extremely randomized trees; numeric "
                        "columns without missing values), adaboost (boosted stumps, or trees "
                        "of --max-depth); oner (Holte's one-attribute rule, a yardstick); "
                        "optimal (the proven optimal tree of --max-depth, default 3, by "
                        "branch and bound; text columns tested level by level, no holes in "
                        "numeric columns); oblique (splits on weighted sums of numeric "
                        "columns, w1*x1 + w2*x2 <= t, by OC1's search; no category columns, "
                        "no holes; unpruned unless --prune); oblique-forest (a random forest "
                        "of such trees, each split the best of sparse random projections, "
                        "SPORF); quantile-forest (a random forest whose leaves keep their "
                        "targets: 'treelearn predict --quantiles' gives prediction intervals; "
                        "numeric targets)")
    p.add_argument("--monotonic", metavar="COL=+1,COL=-1",
                   help="monotonic constraints: predictions never decrease (+1) or never "
                        "increase (-1) as a numeric column grows (classification: the "
                        "probability of the second class in sorted order); cart, c45, id3, "
                        "tree, forest, extra, adaboost")
    p.add_argument("--time-limit", type=float,
                   help="seconds the optimal search may take (default: to its end); the "
                        "best tree found so far is kept")
    p.add_argument("--n-estimators", type=int,
                   help="trees of forest, extra, oblique-forest and quantile-forest "
                        "(default 100), rounds of adaboost (default 50)")
    p.add_argument("--task", choices=("auto", "classification", "regression"), default="auto",
                   help="auto: text, booleans and integers with at most 20 values are "
                        "classes; other numbers are regressed")
    p.add_argument("--criterion", help="split criterion (gini, entropy, gain_ratio, "
                                       "misclassification, chi2; squared_error, "
                                       "absolute_error, sdr)")
    p.add_argument("--prune", choices=("cv", "none", "pessimistic", "reduced_error", "mdl",
                                       "m5"),
                   help="pruning (default: the algorithm's)")
    p.add_argument("--max-depth", type=int, help="stop growing at this depth (default: none)")
    p.add_argument("--min-samples-leaf", type=int,
                   help="least rows in a leaf (default: the algorithm's; C4.5: 2, else 1)")
    p.add_argument("--min-samples-split", type=int,
                   help="least rows in a node to split it (default 2)")
    p.add_argument("--max-leaf-nodes", type=int,
                   help="grow best-first to at most this many leaves (default: no limit)")
    p.add_argument("--splitter", choices=("best", "hist"), help="exact or histogram split search")
    p.add_argument("--categorical", default="auto", metavar="auto|none|COLS",
                   help="categorical columns: auto (text columns; default), none, or names "
                        "separated by commas")
    p.add_argument("--ignore", default="", metavar="COLS", help="columns not to learn from")
    p.add_argument("--features", default="", metavar="COLS",
                   help="learn from exactly these columns")
    p.add_argument("--test-size", type=float, default=0.25,
                   help="share of rows held out for the reported score (0: none; default 0.25)")
    p.add_argument("--cv", type=int, default=5,
                   help="folds of the reported cross-validated score on the training rows "
                        "(0: none; default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--show-depth", type=int, default=6,
                   help="depth of the printed tree (default 6)")
    p.add_argument("--sep", help="column separator of a text table (default: from the suffix)")
    p.add_argument("-o", "--output", help="model file (default: DATA's name with .tlm)")
    p.set_defaults(func=c.fit)

    p = _sub(sub, "predict", "predict the rows of a table with a saved model",
             "Write one prediction per row of DATA (CSV), with class probabilities on request.")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--proba", action="store_true", help="add a column per class probability")
    p.add_argument("--quantiles", metavar="Q,Q,...",
                   help="quantile forests: add a column per quantile of the target, e.g. "
                        "0.05,0.5,0.95 (a 90%% prediction interval and the median)")
    p.add_argument("--id", default="", metavar="COLS", help="columns of DATA to copy beside")
    p.add_argument("--sep")
    p.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    p.set_defaults(func=c.predict)

    p = _sub(sub, "explain", "each column's contribution to each prediction (SHAP values)",
             "Write, for every row of DATA, each column's contribution to the saved model's "
             "prediction: exact SHAP values (path-dependent TreeSHAP), one column "
             "shap_COLUMN per model column, beside expected_value and the prediction, so "
             "that expected_value plus the contributions is the prediction. A "
             "classifier is explained through its class probabilities: the second class of "
             "two, every class of more (columns suffixed _CLASS), or --class; AdaBoost "
             "through its decision function (one column for two classes). Prints the "
             "columns by mean |SHAP| to standard error.")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--class", dest="class_", metavar="LABEL",
                   help="classification: explain this class's probability only")
    p.add_argument("--id", default="", metavar="COLS", help="columns of DATA to copy beside")
    p.add_argument("--sep")
    p.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    p.set_defaults(func=c.explain)

    p = _sub(sub, "evaluate", "score a saved model on a labelled table",
             "Accuracy and a confusion matrix (classification) or R2, MAE and RMSE "
             "(regression) of a saved model on DATA.")
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--target", help="the label column (default: the one the model was fit on)")
    p.add_argument("--sep")
    p.set_defaults(func=c.evaluate)

    p = _sub(sub, "prune", "walk a saved tree's cost-complexity path, save a pruned one",
             "Print the weakest-link pruning path of a saved model (from its unpruned tree when "
             "it kept one) and, with a selection, save the tree at that step.")
    p.add_argument("model")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--step", type=int, help="step of the path (0: the whole tree; negative: "
                                              "from the end, -1 is the root alone)")
    sel.add_argument("--leaves", type=int, help="the largest tree with at most this many leaves")
    sel.add_argument("--alpha", type=float, help="the subtree kept by this ccp_alpha")
    sel.add_argument("--weight", type=float,
                     help="least cost + WEIGHT x leaves (cost in training cases)")
    p.add_argument("-o", "--output", help="model file for the pruned tree (default: MODEL's "
                                          "name with .pruned.tlm)")
    p.set_defaults(func=c.prune)

    p = _sub(sub, "export", "write a saved tree as text, rules, code, a graph or a web page",
             "Read a saved tree as text, if-then rules, Python, SQL, Graphviz DOT, an image "
             "(svg/png/pdf, needs Graphviz's dot) or the interactive HTML explorer.")
    p.add_argument("model")
    p.add_argument("--format", default="text",
                   choices=("text", "rules", "python", "sql", "dot", "svg", "png", "pdf", "html"))
    p.add_argument("-o", "--output", help="file to write (default: standard output; required "
                                          "for svg, png, pdf and html)")
    p.add_argument("--max-depth", type=int, help="text and dot: depth shown")
    p.add_argument("--tree", type=int, metavar="K",
                   help="an ensemble's tree number K (from 0) to export")
    p.add_argument("--table", help="sql: a SELECT over this table instead of an expression")
    p.add_argument("--data", help="html: a table for the scores along the pruning slider")
    p.add_argument("--target", help="html: the label column of --data (default: the model's)")
    p.add_argument("--sep")
    p.set_defaults(func=c.export)

    p = _sub(sub, "info", "describe a saved model",
             "Parameters, size, features and training data of a saved model.")
    p.add_argument("model")
    p.set_defaults(func=c.info)

    p = _sub(sub, "demo", "run the literature's worked examples",
             "Run a worked example of the literature and print its published numbers beside "
             "ours. Without a name: every example in short, then the command line's workflow.")
    p.add_argument("name", nargs="?", choices=tuple(DEMOS), metavar="NAME",
                   help="; ".join(f"{k}: {v[0]}" for k, v in DEMOS.items()))
    p.add_argument("--out", help="square: directory for the pictures and the explorer page "
                                 "(default: treelearn-demo)")
    p.set_defaults(func=c.demo)

    p = _sub(sub, "compile", "compile the kernels once, before the first fit (images, CI caches)",
             "Compile (or load from the cache) every kernel the given algorithms need, by "
             "fitting them on small generated tables of every kind (numbers, weights, "
             "categories and holes, sparse rows), so that the first real fit starts at once. "
             "Run it when building a Docker image or a CI cache, and keep the folder it "
             "prints.")
    p.add_argument("--algorithm", nargs="+", default=["cart"],
                   choices=tuple(c.ALGORITHMS) + ("all",),
                   help="the algorithms of 'treelearn fit' to prepare (default: cart)")
    p.add_argument("--splitter", nargs="+", default=["best"], choices=("best", "hist"),
                   help="split searches to prepare (default: best)")
    p.add_argument("--task", choices=("both", "classification", "regression"),
                   default="both", help="targets to prepare (default: both)")
    p.set_defaults(func=c.compile_kernels)

    p = _sub(sub, "datasets", "list or export the tables shipped with treelearn",
             "The small tables of the worked examples (also treelearn.datasets in Python).")
    p.add_argument("action", nargs="?", choices=("list", "export"), default="list")
    p.add_argument("name", nargs="?")
    p.add_argument("-o", "--output", help="CSV file to write (default: standard output)")
    p.set_defaults(func=c.datasets)
    return parser


def _notice(args):
    """The first-run compile notice, off with ``--quiet``."""
    from contextlib import nullcontext

    if not args.quiet:
        return nullcontext()
    from ..engine.compiling import silenced

    return silenced()


def _version() -> str:
    from .._version import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``treelearn`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        with handling_sigint(), _notice(args):
            args.func(args)
    except BrokenPipeError:  # pragma: no cover - output piped into e.g. head
        return 0
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"treelearn {args.command}: interrupted (nothing was written)", file=sys.stderr)
        return 130
    except (UserError, ValueError, OSError) as exc:
        # ValueError: the library's own checks of what the user gave (parameters, data, a
        # damaged model file: ModelFileError); OSError: files that cannot be read or written
        if args.debug:
            raise
        print(f"treelearn: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        if args.debug:
            raise
        print(f"treelearn {args.command}: out of memory: {_one_line(exc) or 'no details'}",
              file=sys.stderr)
        return 2
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        if args.debug:
            raise
        print(f"treelearn {args.command}: unexpected error: {type(exc).__name__}: "
              f"{_one_line(exc)} (this is a bug; run again with --debug for the traceback "
              "and report it)", file=sys.stderr)
        return 1
    return 0


def run() -> None:
    """The ``treelearn`` command as a process: :func:`main`'s status as the exit status.

    After a Ctrl-C (status 130) the process ends at once, without the interpreter's exit
    handlers: an interrupted thread pool (joblib's threading backend is
    ``multiprocessing.pool.ThreadPool``) can block its finalizer forever, and a CI run caught
    the command hanging there after printing its message. Nothing is left to clean up by
    then: files are written atomically, and the unwinding that printed the message removed
    the temporary ones.

    Otherwise the garbage collector is frozen before the exit: the interpreter's final
    collections then skip the objects that exist (the command's files are closed by then;
    exit handlers still run). Those collections walk every object Numba and scikit-learn
    made (about 230,000 after a fit): a process that fitted one tree took 0.58 s from its
    last line to its end, 0.07 s frozen, and ``treelearn demo`` 3.0 s instead of 2.8 s
    (medians of four; this project's 2-core machine, 2026-12-02)."""
    status = main()
    if status == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    gc.freeze()
    sys.exit(status)


def _one_line(exc: BaseException, limit: int = 500) -> str:
    """The exception's message on one line, cut to ``limit`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
