"""Reading a tree: exporters read only the flat :class:`~treelearn._tree.Tree` (through
:func:`~treelearn.export._view.view_of`), so they work for every estimator, multiway categorical
nodes and missing-value routing included, and for fitted scikit-learn trees.

* text: :func:`export_text`, :func:`export_rules` (one rule per leaf), :func:`leaf_rules`;
* code: :func:`export_python`, :func:`export_sql` (predict exactly like the model);
* graphs: :func:`export_graphviz` (DOT text), :func:`render_graphviz` (SVG/PNG/PDF via ``dot``);
* matplotlib: :func:`plot_tree`, :func:`plot_decision_regions` (leaves' exact rectangles),
  :func:`plot_feature_importances` (impurity and permutation; ensembles too), the pruning
  pictures, and an ensemble's out-of-bag error against its number of trees
  (:func:`plot_oob_error`), a forest's proximities as a map (:func:`plot_proximities`); a
  one-feature regression with fitted curves, a model tree's
  lines over a constant tree's steps (:func:`plot_fit_1d`); SHAP values as a beeswarm of
  every row (:func:`plot_shap_summary`) and one row's waterfall (:func:`plot_shap_waterfall`);
* :func:`explore`: one self-contained interactive HTML page (tree, pruning slider, regions).

matplotlib is imported only when a plotting function is called.
"""

from .code import export_python, export_sql, raw_threshold
from .explorer import explore
from .graphviz import export_graphviz, render_graphviz
from .plot import plot_decision_regions, plot_feature_importances, plot_tree
from .plot_ensemble import plot_oob_error, plot_proximities
from .plot_model import plot_fit_1d
from .plot_pruning import plot_cost_complexity, plot_cv_pruning, plot_pruned_tree, plot_tree_size
from .plot_shap import plot_shap_summary, plot_shap_waterfall
from .rules import LeafRule, export_rules, leaf_rules
from .text import export_text

__all__ = [
    "LeafRule", "explore", "export_graphviz", "export_python", "export_rules", "export_sql",
    "export_text", "leaf_rules", "plot_cost_complexity", "plot_cv_pruning",
    "plot_decision_regions", "plot_feature_importances", "plot_fit_1d", "plot_oob_error",
    "plot_proximities", "plot_pruned_tree", "plot_shap_summary", "plot_shap_waterfall",
    "plot_tree",
    "plot_tree_size", "raw_threshold", "render_graphviz",
]
