"""A tree as code: Python source and SQL that predict exactly like the model.

Both read the flat tree through :mod:`treelearn._paths`' routing rule and reproduce the model's
arithmetic operation for operation, so their predictions are the model's, not approximations:

* **Thresholds in the raw-value domain.** The model compares ``float32(x) <= t``. Rounding to
  float32 is monotonic, so that test equals ``x <= T`` for one float64 ``T`` (the largest float64
  whose float32 rounding is at most ``t``, :func:`raw_threshold`); the code compares the raw
  value with ``T`` and routes every float64 input as the model does.
* **Missing values** (None/NaN in Python, NULL in SQL) and categorical levels never seen at a node
  go where ``missing_branch`` says. At C4.5's fractional nodes the value is
  ``sum_b r_b * value(child_b)`` in branch order, exactly as :func:`treelearn._tree.route`
  computes it; SQL writes it as ``(CASE WHEN missing THEN r_b WHEN taken THEN 1.0 ELSE 0.0
  END) * value(child_b) + ...``, whose size is linear in the tree (multiplying by 1 and adding
  0 change nothing, so a case that is not missing gets exactly its branch's value).
* **Classes** as the estimator picks them: the first largest class fraction, or the least
  expected cost summed in :func:`treelearn._tree.expected_costs`' order; probabilities divided
  by their sum grouped as NumPy's pairwise sum groups it.

* **Oblique splits**: the weighted sum ``w1 * x1 + w2 * x2 + ...`` summed left to right in
  float64 and compared with the threshold itself, as the model does; a missing value in any
  term is a missing sum. Generated Python rounds each value to float32 first, as the model
  reads it; SQL, which has no float32, multiplies the value as stored (identical for values
  that are float32 numbers, as for linear leaves below).
* **Linear leaves** (model trees): the intercept, then each coefficient times its value,
  summed left to right as the model sums; a missing value reads the leaf's fill value. The
  model multiplies the float32 rounding of each value: generated Python rounds the same way,
  SQL has no float32 and multiplies the value as stored (identical for values that are
  float32 numbers, within float32 rounding, ~6e-8 relative, for others).

Numbers are written with ``repr`` (shortest round-trip form), which Python and SQLite read back
to the same float64. Deep trees: generated Python opens a new function every
:data:`MAX_NESTING` levels (Python limits indentation). SQL nests the first
:data:`SQL_NESTING` levels of a tree and writes each region below them as one flat CASE, a WHEN
per path (the tree's rules), which does not nest however deep the tree is; fractional nodes
nest one expression inside the next, and databases limit that nesting (SQLite's parser: about
20 fractional nodes on a path). Generated Python calls a function per fractional node on a
path (Python's recursion limit: about 1,000).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np

from .._paths import Condition, branch_condition, node_terms
from .._tree import MISSING_FRACTIONAL, Tree
from .._version import __version__
from ._view import TreeView, view_of
from .rules import merge_conditions

#: Levels of nested ``if`` in one generated Python function before a new function starts.
MAX_NESTING = 30
#: Levels of nested CASE at the top of a tree without fractional nodes; below, flat regions.
SQL_NESTING = 10  # SQLite's parser takes about 20


def raw_threshold(t: float) -> float:
    """The largest float64 ``T`` with ``float32(T) <= t``: for every float64 ``x``,
    ``np.float32(x) <= t`` if and only if ``x <= T`` (NaN aside)."""
    t = float(t)
    if math.isinf(t):
        return t
    with np.errstate(over="ignore"):
        u = np.float32(t)
        if float(u) > t:
            u = np.nextafter(u, np.float32(-np.inf))
        up = np.nextafter(u, np.float32(np.inf))
    # float32 neighbours' midpoint is exact in float64; past the largest float32 the next
    # "neighbour" is 2**128, where rounding goes to infinity.
    lo = float(u) if np.isfinite(u) else -(2.0 ** 128)
    hi = float(up) if np.isfinite(up) else 2.0 ** 128
    m = (lo + hi) / 2.0
    with np.errstate(over="ignore"):
        if np.float32(m) <= u:
            return m
    return float(np.nextafter(m, -np.inf))


def pairwise_sum(items: list, add):  # add: (partial sum, partial sum) -> sum
    """Sum ``items`` grouped as NumPy's pairwise summation of a contiguous float64 row does
    (sequential below 8 items, eight running sums up to 128, halves above), with ``add``
    combining two partial sums: float addition, or joining expression strings."""
    n = len(items)
    if n < 8:
        res = items[0]
        for v in items[1:]:
            res = add(res, v)
        return res
    if n <= 128:
        r = list(items[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] = add(r[j], items[i + j])
            i += 8
        res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        for v in items[i:]:
            res = add(res, v)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return add(pairwise_sum(items[:n2], add), pairwise_sum(items[n2:], add))


def _branch_ratios(tree: Tree, node: int) -> list[float]:
    """Each branch's share of the node's training weight, as the router computes it."""
    kids = tree.children(node)
    total = 0.0
    for c in kids:
        total += float(tree.weighted_n_node_samples[c])
    return [float(tree.weighted_n_node_samples[c]) / total for c in kids]


def _branch_levels(tree: Tree, node: int) -> tuple[list[list[int]], list[int]]:
    """Level codes routed to each branch of a categorical node, and all routed codes."""
    cb = tree.cat_branch[tree.cat_ptr[node]:tree.cat_ptr[node + 1]]
    per = [np.flatnonzero(cb == b).tolist() for b in range(int(tree.n_branches[node]))]
    return per, np.flatnonzero(cb >= 0).tolist()


def _plain(v):
    """A level or class as a plain Python object (NumPy scalars unwrapped)."""
    return v.item() if isinstance(v, np.generic) else v


def _py_literal(v) -> str:
    v = _plain(v)
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"  # repr gives "inf", not a Python literal
    if v is None or isinstance(v, bool | int | float | str):
        return repr(v)
    raise TypeError(f"a level or class of type {type(v).__name__} ({v!r}) cannot be written "
                    "as source; use str, int, float or bool labels.")


def _sql_literal(v) -> str:
    v = _plain(v)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            raise TypeError("NaN cannot be written as a SQL literal.")
        # SQL has no infinity literal; 1e999 overflows to it in SQLite, PostgreSQL and others
        return repr(v) if math.isfinite(v) else ("1e999" if v > 0 else "-1e999")
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise TypeError(f"a level or class of type {type(v).__name__} ({v!r}) cannot be written "
                    "as a SQL literal; use str, int, float or bool labels.")


def _sql_name(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _fractional_nodes(tree: Tree) -> np.ndarray:
    return np.flatnonzero(tree.missing_branch == MISSING_FRACTIONAL)


# -- Python ----------------------------------------------------------------------------------------

_PY_HELPERS = '''

def _missing(v):
    """None, NaN and pandas' NA are missing values."""
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(v != v)
    except TypeError:
        return False


def _mix(*parts):
    """sum of share * value over the branches, in branch order (C4.5's fractional cases)."""
    out = [0.0] * len(parts[0][1])
    for share, value in parts:
        for k, v in enumerate(value):
            out[k] += share * v
    return out
'''




_PY_F32 = '''

import math
import struct


def _f32(v):
    """v rounded to float32, as the model reads its inputs."""
    try:
        return struct.unpack("f", struct.pack("f", float(v)))[0]
    except OverflowError:
        return math.copysign(math.inf, float(v))
'''


_PY_OBLIQUE = '''

def _wsum(x, terms):
    """An oblique split's weighted sum, left to right from 0.0 as the model sums it (NaN
    when a term's value is missing)."""
    s = 0.0
    for f, w in terms:
        if _missing(x[f]):
            return math.nan
        s = s + w * _f32(x[f])
    return s
'''


_PY_LINEAR = '''

def _lin(v, terms):
    """A leaf's linear model: the intercept plus coefficient * value, left to right (a
    missing value replaced by the leaf's mean of the feature), as the model sums it. A
    categorical term carries the levels that read 1 and those that read 0 (others: the
    fill value)."""
    for term in terms:
        c, x, fill = term[:3]
        if _missing(x):
            x = fill
        elif len(term) == 5:
            x = 1.0 if x in term[3] else 0.0 if x in term[4] else fill
        else:
            x = _f32(x)
        v = v + c * x
    return v
'''


_PY_SUM = """

def _sum(v):
    return pairwise_sum(v, lambda a, b: a + b)
"""


def _tests(view: TreeView, node: int, sql: bool) -> tuple[str, list[str]]:
    """(the missing test, the test of each branch) of internal ``node``, in Python or SQL.

    The missing test also catches categorical levels the node never saw. Branch tests are
    written for values that are not missing.
    """
    tree = view.tree
    f = int(tree.feature[node])
    terms = node_terms(tree, node)
    if terms:
        # the sum is compared with the threshold itself (float64 against float64)
        x = _sql_sum(view, terms) if sql else f"_wsum(x, {terms!r})"
        thr = repr(float(tree.threshold[node]))
        return (f"{x} IS NULL" if sql else f"_missing({x})"), [f"{x} <= {thr}", f"{x} > {thr}"]
    if sql:
        x = _sql_name(view.feature_names[f])
        lit, missing, into = _sql_literal, f"{x} IS NULL", (lambda xs: f"IN ({', '.join(xs)})")
    else:
        x = f"x[{f}]"
        lit, missing, into = _py_literal, f"_missing({x})", (lambda xs: f"in {{{', '.join(xs)}}}")
    if tree.cat_ptr[node + 1] > tree.cat_ptr[node]:
        lv = view.categories[f]
        per, known = _branch_levels(tree, node)
        missing += f" OR {x} NOT " if sql else f" or {x} not "
        missing += into([lit(lv[c]) for c in known])
        # a branch of no level (an optimal tree's branch of missing values) takes no value
        never = "1 = 0" if sql else "False"
        return missing, [f"{x} {into([lit(lv[c]) for c in codes])}" if codes else never
                         for codes in per]
    thr = lit(raw_threshold(tree.threshold[node]))
    return missing, [f"{x} <= {thr}", f"{x} > {thr}"]


def _branch_comment(view: TreeView, node: int, b: int) -> str:
    return branch_condition(view.tree, node, b).text(view.feature_names, view.categories)


def _python_function(view: TreeView, root: int, starts: set, fractional: set,
                     depth: np.ndarray) -> str:
    """Source of ``_n{root}(x)``, the value of node ``root`` for row ``x``. Adds to ``starts``
    the nodes whose own functions it calls."""
    tree = view.tree
    lines = [f"def _n{root}(x):"]
    stack: list[tuple[str, object, int]] = [("node", root, 1)]
    while stack:
        kind, item, ind = stack.pop()
        pad = "    " * ind
        if kind == "line":
            lines.append(pad + str(item))
            continue
        node = int(item)
        kids = tree.children(node).tolist()
        if node != root and (node in starts or (
                kids and (depth[node] - depth[root]) % MAX_NESTING == 0)):
            starts.add(node)
            lines.append(pad + f"return _n{node}(x)")
            continue
        if not kids:
            if tree.has_linear_leaves:
                icpt, feats, coefs, fills = tree.leaf_model(node)
                terms = ""
                for k, (f, c, fl) in enumerate(zip(feats, coefs, fills, strict=True)):
                    levels = tree.term_levels(int(tree.lin_ptr[node]) + k)
                    sets = ""
                    if levels is not None:
                        lv = view.categories[int(f)]
                        one = [_py_literal(lv[int(code)]) for code, o in zip(*levels,
                                                                           strict=True) if o]
                        zero = [_py_literal(lv[int(code)]) for code, o in zip(*levels,
                                                                            strict=True)
                                if not o]
                        sets = f", {{{', '.join(one)}}}, {{{', '.join(zero)}}}"
                    terms += f"({float(c)!r}, x[{int(f)}], {float(fl)!r}{sets}), "
                lines.append(pad + f"return (_lin({float(icpt)!r}, ({terms})),)")
                continue
            value = ", ".join(repr(float(v)) for v in tree.value[node, 0])
            lines.append(pad + f"return ({value},)")
            continue
        missing, tests = _tests(view, node, sql=False)
        mb = int(tree.missing_branch[node])
        todo: list[tuple[str, object, int]] = []
        if node in fractional:
            parts = ", ".join(f"({r!r}, _n{c}(x))"
                              for r, c in zip(_branch_ratios(tree, node), kids, strict=True))
            todo += [("line", f"if {missing}:", ind), ("line", f"return _mix({parts})", ind + 1)]
            rest = len(kids) - 1
        else:
            rest = mb
            if tree.cat_ptr[node + 1] == tree.cat_ptr[node]:
                # numeric: keep the reading order "<=" first, missing values joining a side
                tests[0] = (f"{missing} or {tests[0]}" if mb == 0
                            else f"not {missing} and {tests[0]}")
                rest = 1
        first = node not in fractional
        for b, c in enumerate(kids):
            if b == rest:
                continue
            todo.append(("line", f"{'if' if first else 'elif'} {tests[b]}:  "
                                 f"# {_branch_comment(view, node, b)}", ind))
            todo.append(("node", c, ind + 1))
            first = False
        todo.append(("line", f"# {_branch_comment(view, node, rest)}", ind))
        todo.append(("node", kids[rest], ind))
        stack.extend(reversed(todo))
    return "\n".join(lines)


def export_python(model, *, feature_names: Sequence[str] | None = None,
                  class_names: Sequence | None = None) -> str:
    """The tree as a Python module (source text) with no dependencies.

    The module defines ``predict(x)`` and, for classifiers, ``predict_proba(x)`` and
    ``CLASSES``, for one row ``x``: a sequence of raw feature values in the model's feature
    order (``FEATURES`` lists the names; categorical features hold their levels, e.g. strings;
    None or NaN for a missing value). Predictions equal the model's for every row, including
    missing values, unseen levels and C4.5's fractional cases (module docstring).

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    feature_names : sequence of str, optional
        Names used in comments and ``FEATURES``.
    class_names : sequence, optional
        Labels ``predict`` returns; defaults to the model's ``classes_``.

    Returns
    -------
    source : str
        Run it with ``exec`` or save it as a ``.py`` file.
    """
    view = view_of(model, feature_names, class_names, "export_python")
    tree = view.tree
    fractional = set(_fractional_nodes(tree).tolist())
    depth = tree.node_depths()
    # Functions start at the root, at the children of fractional nodes (each branch's value is
    # needed on its own) and every MAX_NESTING levels (Python's limit on indentation).
    starts = {0}
    for i in fractional:
        starts.update(tree.children(i).tolist())
    funcs: dict[int, str] = {}
    while starts - funcs.keys():
        root = min(starts - funcs.keys())
        funcs[root] = _python_function(view, root, starts, fractional, depth)
    labels = _labels(view, class_names)
    return _python_module(view, labels, [funcs[k] for k in sorted(funcs)])


def _labels(view: TreeView, class_names) -> list | None:
    """What predictions return: the given class names, else the classes themselves."""
    if not view.is_classifier:
        return None
    return list(view.classes) if class_names is None else list(class_names)


def _python_module(view: TreeView, labels, funcs: list[str]) -> str:
    tree = view.tree
    kind = "classifier" if view.is_classifier else "regressor"
    head = [
        f'"""Decision tree {kind} exported by treelearn {__version__} '
        f"({tree.node_count} nodes, {tree.n_leaves} leaves).",
        "",
        "predict(x) takes one row x: a sequence of raw feature values in the order of FEATURES",
        "(None or NaN for a missing value). Generated code: it predicts exactly like the model.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"FEATURES = {tuple(view.feature_names)!r}",
    ]
    if view.is_classifier:
        head.append("CLASSES = (" + ", ".join(_py_literal(c) for c in labels) + ",)")
        if view.cost_matrix is not None:
            rows = ", ".join("(" + ", ".join(repr(float(c)) for c in row) + ",)"
                             for row in view.cost_matrix)
            head.append(f"COSTS = ({rows},)  # COSTS[true][predicted]")
    body = [_PY_HELPERS]
    if tree.has_linear_leaves or tree.is_oblique:
        body.append(_PY_F32)
    if tree.is_oblique:
        body.append(_PY_OBLIQUE)
    if tree.has_linear_leaves:
        body.append(_PY_LINEAR)
    if view.is_classifier:
        # the generator's own summation, so the module divides by exactly NumPy's sums
        body.append("\n\n" + inspect.getsource(pairwise_sum) + _PY_SUM)
    body.append("\n\n" + "\n\n\n".join(funcs))
    if view.is_classifier:
        if view.cost_matrix is not None:
            choose = '''    # expected cost of each prediction j, summed over true classes in order
    cost = [v[0] * c for c in COSTS[0]]
    for i in range(1, len(COSTS)):
        cost = [cost[j] + v[i] * COSTS[i][j] for j in range(len(cost))]
    return CLASSES[min(range(len(cost)), key=cost.__getitem__)]'''
        else:
            choose = "    return CLASSES[max(range(len(v)), key=v.__getitem__)]"
        body.append(f'''


def predict_proba(x):
    """Class probabilities of row x, in the order of CLASSES."""
    v = _n0(x)
    s = _sum(v)
    if s == 0.0:
        s = 1.0
    return [p / s for p in v]


def predict(x):
    """Predicted class of row x."""
    v = _n0(x)
{choose}
''')
    else:
        body.append('''


def predict(x):
    """Predicted value of row x."""
    return _n0(x)[0]
''')
    return "\n".join(head) + "\n" + "".join(body)


# -- SQL -------------------------------------------------------------------------------------------

def _sql_sum(view: TreeView, terms) -> str:
    """An oblique split's weighted sum in SQL, left to right (NULL when a value is)."""
    return "(" + " + ".join(f"{float(w)!r} * {_sql_name(view.feature_names[f])}"
                            for f, w in terms) + ")"


def _sql_condition(view: TreeView, c: Condition) -> str:
    """A :class:`Condition` in SQL (NULL is a missing value; a level the node never saw
    counts as missing)."""
    if c.terms:
        x = _sql_sum(view, c.terms)
        test = f"{x} {c.op} {float(c.threshold)!r}"
        return f"({x} IS NULL OR {test})" if c.missing else test
    x = _sql_name(view.feature_names[c.feature])
    if c.op == "in":
        lv = view.categories[c.feature]
        test = (f"{x} IN ({', '.join(_sql_literal(lv[k]) for k in c.levels)})" if c.levels
                else "1 = 0")  # no level: only missing values pass (an optimal tree's test)
        if c.missing:
            known = ", ".join(_sql_literal(lv[k]) for k in c.known)
            test = f"({x} IS NULL OR {x} NOT IN ({known}) OR {test})"
        return test
    test = f"{x} {c.op} {_sql_literal(raw_threshold(c.threshold))}"
    return f"({x} IS NULL OR {test})" if c.missing else test


def _sql_tree(view: TreeView, leaf: Callable[[int], str]) -> str:
    """One SQL expression for the whole tree; ``leaf(node)`` gives a leaf's expression.

    A region of the tree without fractional nodes is one flat CASE with a WHEN per path
    through it (the conjunction of the path's tests, which exactly one path passes), so its
    depth does not nest; fractional nodes nest, as their arithmetic requires, and a tree
    without them nests its first :data:`SQL_NESTING` levels, below which regions are flat.
    """
    tree = view.tree
    fractional = set(_fractional_nodes(tree).tolist())
    # Without fractional nodes the top SQL_NESTING levels nest (a row then scans only the
    # WHENs of its own region below them, not one per leaf of the tree).
    depth = tree.node_depths()
    nested = set() if fractional else set(
        np.flatnonzero((depth < SQL_NESTING) & (tree.children_left >= 0)).tolist())
    starts = {0}
    for i in fractional | nested:
        starts.update(tree.children(i).tolist())
    expr: dict[int, str] = {}
    # Children come after their parents: build from the last node back to the root.
    for node in sorted(starts | fractional | nested, reverse=True):
        if node in nested:
            missing, tests = _tests(view, node, sql=True)
            kids = tree.children(node).tolist()
            rest = int(tree.missing_branch[node])
            if tree.cat_ptr[node + 1] == tree.cat_ptr[node]:
                # numeric: "<=" first; NULL <= t is not true, so NULL takes the ELSE branch
                if rest == 0:
                    tests[0] = f"{missing} OR {tests[0]}"
                rest = 1
            whens = " ".join(f"WHEN {tests[b]} THEN {expr[c]}"
                             for b, c in enumerate(kids) if b != rest)
            expr[node] = f"CASE {whens} ELSE {expr[kids[rest]]} END"
            continue
        if node in fractional:
            missing, tests = _tests(view, node, sql=True)
            expr[node] = "(" + " + ".join(
                f"(CASE WHEN {missing} THEN {r!r} WHEN {tests[b]} THEN 1.0 ELSE 0.0 END)"
                f" * {expr[c]}"
                for b, (r, c) in enumerate(zip(_branch_ratios(tree, node),
                                               tree.children(node).tolist(), strict=True))
            ) + ")"
            continue
        # The paths from ``node`` to the leaves and fractional nodes below it.
        ends: list[tuple[int, list[Condition]]] = []
        stack: list[tuple[int, list[Condition]]] = [(node, [])]
        while stack:
            i, conds = stack.pop()
            kids = tree.children(i).tolist()
            if not kids or i in fractional:
                ends.append((i, conds))
                continue
            for b in range(len(kids) - 1, -1, -1):
                stack.append((kids[b], conds + [branch_condition(tree, i, b)]))
        value = [expr[i] if i in fractional else leaf(i) for i, _ in ends]
        if len(ends) == 1:
            expr[node] = value[0]
            continue
        whens = " ".join(
            f"WHEN {' AND '.join(_sql_condition(view, c) for c in merge_conditions(conds))} "
            f"THEN {v}" for (_, conds), v in zip(ends[:-1], value[:-1], strict=True))
        expr[node] = f"CASE {whens} ELSE {value[-1]} END"
    return expr[0]


def export_sql(model, *, table: str | None = None, feature_names: Sequence[str] | None = None,
               class_names: Sequence | None = None, proba: bool = False,
               columns: Sequence[str] = ()) -> str:
    """The tree as SQL: a CASE expression, or a SELECT statement over ``table``.

    Columns are the model's features, named by ``feature_names`` (default: the model's own);
    NULL is a missing value. The prediction equals the model's for every row (module
    docstring).

    Parameters
    ----------
    model : fitted treelearn or scikit-learn tree, or Tree
    table : str, optional
        Without it, the prediction as one SQL expression (a nested CASE). With it, a statement
        ``SELECT <columns>, <prediction> AS prediction [, proba_<class> ...] FROM table``.
        A classifier whose tree sends missing values down every branch (C4.5) needs ``table``
        (its class compares several sums, computed once in a sub-query).
    feature_names : sequence of str, optional
        Column names of the features.
    class_names : sequence, optional
        Labels the prediction returns; defaults to the model's ``classes_``.
    proba : bool, default=False
        With ``table``: also one column of probability per class (``proba_<label>``).
    columns : sequence of str, default=()
        With ``table``: columns of the table to select first (e.g. a key).

    Returns
    -------
    sql : str
    """
    view = view_of(model, feature_names, class_names, "export_sql")
    if table is None and (proba or columns):
        raise ValueError("proba and columns need table= (they are columns of a SELECT).")
    if table is not None and (not isinstance(table, str) or not table):
        raise ValueError(f"table must be a non-empty table name; got {table!r}.")
    tree = view.tree
    labels = _labels(view, class_names)
    fractional = _fractional_nodes(tree).size > 0
    value = tree.value[:, 0, :]

    def num(k: int) -> Callable[[int], str]:
        return lambda node: repr(float(value[node, k]))

    def linear(node: int) -> str:
        # left to right from the intercept, as the model sums; NULL reads the leaf's mean
        icpt, feats, coefs, fills = tree.leaf_model(node)
        out = repr(float(icpt))
        for k, (f, c, fl) in enumerate(zip(feats, coefs, fills, strict=True)):
            x = _sql_name(view.feature_names[int(f)])
            levels = tree.term_levels(int(tree.lin_ptr[node]) + k)
            if levels is None:
                val = f"COALESCE({x}, {float(fl)!r})"
            else:
                lv = view.categories[int(f)]
                one = ", ".join(_sql_literal(lv[int(q)]) for q, o in zip(*levels, strict=True)
                                if o)
                zero = ", ".join(_sql_literal(lv[int(q)]) for q, o in zip(*levels, strict=True)
                                 if not o)
                val = (f"(CASE WHEN {x} IN ({one}) THEN 1.0 WHEN {x} IN ({zero}) THEN 0.0 "
                       f"ELSE {float(fl)!r} END)")
            out = f"({out} + {float(c)!r} * {val})"
        return out

    pieces: list[str] = []
    inner = None
    if not view.is_classifier and tree.has_linear_leaves:
        pred = _sql_tree(view, linear)
    elif not view.is_classifier:
        pred = _sql_tree(view, num(0))
    elif not fractional:
        cls = view.node_class
        pred = _sql_tree(view, lambda node: _sql_literal(labels[int(cls[node])]))
        if proba:
            sums = value.sum(axis=1, keepdims=True)
            sums[sums == 0.0] = 1.0
            p = value / sums
            pieces = [f"{_sql_tree(view, lambda node, k=k: repr(float(p[node, k])))} AS "
                      f"{_sql_name(f'proba_{c}')}" for k, c in enumerate(labels)]
    else:
        if table is None:
            raise ValueError("this tree sends missing values down every branch (C4.5): its "
                             "class compares several sums; pass table= to get a SELECT.")
        K = value.shape[1]
        v = [f'"_v{k}"' for k in range(K)]
        inner = ", ".join(f"{_sql_tree(view, num(k))} AS {v[k]}" for k in range(K))
        if view.cost_matrix is not None:
            C = view.cost_matrix
            score = [_sequential_sum([f"{v[i]} * {float(C[i, j])!r}" for i in range(K)])
                     for j in range(K)]
            better = "<="
        else:
            score, better = v, ">="
        whens = []
        for j in range(K - 1):
            conds = " AND ".join(f"{score[j]} {better} {score[m]}" for m in range(j + 1, K))
            whens.append(f"WHEN {conds} THEN {_sql_literal(labels[j])}")
        pred = f"CASE {' '.join(whens)} ELSE {_sql_literal(labels[K - 1])} END"
        if proba:
            total = pairwise_sum(v, lambda a, b: f"({a} + {b})")
            norm = f"(CASE WHEN {total} = 0.0 THEN 1.0 ELSE {total} END)"
            pieces = [f"{v[k]} / {norm} AS {_sql_name(f'proba_{c}')}"
                      for k, c in enumerate(labels)]
    if table is None:
        return pred
    select = [_sql_name(c) for c in columns] + [f"{pred} AS prediction"] + pieces
    source = _sql_name(table)
    if inner is not None:
        source = f"(SELECT *, {inner} FROM {source})"
    return f"SELECT {', '.join(select)} FROM {source}"


def _sequential_sum(terms: list[str]) -> str:
    """``((t0 + t1) + t2) + ...``: the order of :func:`treelearn._tree.expected_costs`."""
    out = terms[0]
    for t in terms[1:]:
        out = f"({out} + {t})"
    return out
