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

from . import datasets, ensemble, io
from ._compiling import compile_kernels, compile_notice
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
from .engine.binning import Binner
from .ensemble import (
    AdaBoostClassifier,
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    MajorityClassifier,
    OneRClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from .export import (
    explore,
    export_graphviz,
    export_python,
    export_rules,
    export_sql,
    export_text,
    plot_decision_regions,
    plot_tree,
)
from .interop import from_sklearn, to_sklearn
from .io import load, save
from .optimal import OptimalTreeClassifier
from .pruning import Pruner, RuleSet

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
    "ExtraTreesRegressor",
    "ID3Classifier",
    "M5Regressor",
    "MajorityClassifier",
    "OneRClassifier",
    "OptimalTreeClassifier",
    "Pruner",
    "RandomForestClassifier",
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
