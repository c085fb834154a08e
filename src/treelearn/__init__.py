"""treelearn: decision trees as the classic literature teaches them, on a Numba engine.

Public names: the estimators :class:`DecisionTreeClassifier` and :class:`DecisionTreeRegressor`,
the textbook presets :class:`ID3Classifier`, :class:`C45Classifier`, :class:`CARTClassifier`
and :class:`CARTRegressor`, the :class:`Binner` of the histogram splitter, the flat
:class:`Tree`, converters :func:`to_sklearn` / :func:`from_sklearn`, :func:`export_text`, and
from :mod:`treelearn.pruning` the :class:`Pruner` and C4.5's :class:`RuleSet`.
"""

from ._binning import Binner
from ._estimators import (
    C45Classifier,
    CARTClassifier,
    CARTRegressor,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ID3Classifier,
)
from ._tree import Tree
from ._version import __version__
from .export import export_text
from .interop import from_sklearn, to_sklearn
from .pruning import Pruner, RuleSet

__all__ = [
    "Binner",
    "Pruner",
    "RuleSet",
    "C45Classifier",
    "CARTClassifier",
    "CARTRegressor",
    "ID3Classifier",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "Tree",
    "export_text",
    "from_sklearn",
    "to_sklearn",
    "__version__",
]
