"""treelearn: decision trees as the classic literature teaches them, on a Numba engine.

Public names: the estimators :class:`DecisionTreeClassifier` and :class:`DecisionTreeRegressor`,
the textbook presets :class:`ID3Classifier`, :class:`C45Classifier`, :class:`CARTClassifier`
and :class:`CARTRegressor`, the model tree :class:`M5Regressor`, the ensembles of
:mod:`treelearn.ensemble` (bagging, random forests, extra trees, AdaBoost, the OneR and
majority baselines), the :class:`Binner` of the histogram splitter, the flat
:class:`Tree`, converters :func:`to_sklearn` / :func:`from_sklearn`, from :mod:`treelearn.export`
the readers of a tree (:func:`export_text`, :func:`export_rules`, :func:`export_python`,
:func:`export_sql`, :func:`export_graphviz`, :func:`plot_tree`, :func:`plot_decision_regions`
and the interactive :func:`explore`), from :mod:`treelearn.pruning` the :class:`Pruner`
and C4.5's :class:`RuleSet`, model files :func:`save` / :func:`load` (:mod:`treelearn.io`),
the literature's small tables in :mod:`treelearn.datasets`, and for the first run (kernels
compile once per machine) :func:`compile_kernels` and :func:`compile_notice`.
"""

from importlib import import_module
from typing import Any

# isort: split
# First of the engine: its import starts the self-test of the kernel linking (two small
# processes, engine/linking.py), which then runs while scikit-learn and the rest import.
from .engine import linking as _linking  # noqa: F401

# isort: split
from ._estimators import (
    C45Classifier,
    CARTClassifier,
    CARTRegressor,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
    M5Regressor,
)
from ._tree import Tree
from ._version import __version__
from ._warmup import compile_kernels
from .engine.binning import Binner
from .engine.compiling import compile_notice
from .pruning import Pruner, RuleSet

#: Names imported when first used (PEP 562), by their module: a script that fits one tree
#: does not pay for the ensembles, the readers, the optimal tree (scikit-learn's tree
#: module) or the model files (0.2-0.3 s of a 3 s warm process, 2026-12-03).
_LAZY = {
    **dict.fromkeys(("AdaBoostClassifier", "BaggingClassifier", "BaggingRegressor",
                     "ExtraTreesClassifier", "ExtraTreesQuantileRegressor",
                     "ExtraTreesRegressor", "MajorityClassifier",
                     "ObliqueRandomForestClassifier", "ObliqueRandomForestRegressor",
                     "OneRClassifier", "RandomForestClassifier",
                     "RandomForestQuantileRegressor", "RandomForestRegressor"),
                    ".ensemble"),
    **dict.fromkeys(("explore", "export_graphviz", "export_python", "export_rules",
                     "export_sql", "export_text", "plot_decision_regions", "plot_tree"),
                    ".export"),
    "from_sklearn": ".interop", "to_sklearn": ".interop",
    "load": ".io", "save": ".io",
    "OptimalTreeClassifier": ".optimal",
    "ObliqueTreeClassifier": ".oblique", "ObliqueTreeRegressor": ".oblique",
}
_SUBMODULES = ("datasets", "ensemble", "io")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "Binner",
    "C45Classifier",
    "CARTClassifier",
    "CARTRegressor",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesQuantileRegressor",
    "ExtraTreesRegressor",
    "ID3Classifier",
    "M5Regressor",
    "MajorityClassifier",
    "ObliqueRandomForestClassifier",
    "ObliqueRandomForestRegressor",
    "ObliqueTreeClassifier",
    "ObliqueTreeRegressor",
    "OneRClassifier",
    "OptimalTreeClassifier",
    "Pruner",
    "RandomForestClassifier",
    "RandomForestQuantileRegressor",
    "RandomForestRegressor",
    "RuleSet",
    "Tree",
    "__version__",
    "compile_kernels",
    "compile_notice",
    "datasets",
    "ensemble",
    "explore",
    "export_graphviz",
    "export_python",
    "export_rules",
    "export_sql",
    "export_text",
    "from_sklearn",
    "io",
    "load",
    "plot_decision_regions",
    "plot_tree",
    "save",
    "to_sklearn",
]
