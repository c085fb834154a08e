"""The routing rule of a :class:`~treelearn._tree.Tree` as data: the test on each branch.

One statement of "which cases take branch ``b`` of node ``i``" for everything that reads a tree
as conditions rather than running it: C4.5's rules (:mod:`treelearn.pruning.rules`), the text,
rule, Python and SQL exporters and the explorer (:mod:`treelearn.export`). The compiled router
(:func:`treelearn._tree.route`) is the other statement; tests check that both agree.

A numeric node sends ``x <= threshold`` to branch 0 and the rest to branch 1 (``x`` compared as
float32, see :mod:`treelearn._tree`); an oblique node compares its weighted sum
``w1*x1 + w2*x2 + ...`` instead (summed in float64, terms in order); a categorical node sends
each level code to the branch its table names; a missing value (and a level the node never
saw) goes where ``missing_branch`` says, which for C4.5's fractional nodes is every branch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._tree import MISSING_FRACTIONAL, Tree


@dataclass(frozen=True)
class Condition:
    """One test of a rule on feature ``feature`` (a column of the encoded X).

    ``op`` is "<=" or ">" (with ``threshold``) or "in" (``levels``: level codes; ``known``:
    the levels the node routes, any other level is treated as missing); a missing value
    satisfies it when ``missing`` is True. ``terms``: for an oblique split, the
    ``(feature, weight)`` pairs of the weighted sum compared with ``threshold`` (``feature``
    is then the term of largest ``|weight|``); a missing value is a NaN sum. ``seen``: the
    node met missing values at fit, so its route for them was learned; readers write "or
    missing" only then (:attr:`says_missing`), while :meth:`satisfied` follows the route
    either way, as the tree does.
    """

    feature: int
    op: str
    threshold: float = np.nan
    levels: tuple = ()
    missing: bool = False
    known: tuple = ()
    seen: bool = True
    terms: tuple = ()

    @property
    def only_missing(self) -> bool:
        """Whether only missing values (and levels the node never saw) pass: a categorical
        branch that holds no level, as an optimal tree's test for missing values has."""
        return self.op == "in" and not self.levels and self.missing

    @property
    def says_missing(self) -> bool:
        """Whether readers show "or missing": a missing value passes, and the tree learned
        that from missing values at fit (not where the test itself reads "is missing")."""
        return self.missing and self.seen and not self.only_missing

    def values(self, X: np.ndarray) -> np.ndarray:
        """The float64 values the test compares: ``X``'s column, or the weighted sum summed
        left to right as the tree sums it."""
        if not self.terms:
            return np.asarray(X[:, self.feature], dtype=np.float32).astype(np.float64)
        s = np.zeros(X.shape[0])
        for f, w in self.terms:
            s = s + w * np.asarray(X[:, f], dtype=np.float32).astype(np.float64)
        return s

    def satisfied(self, X: np.ndarray) -> np.ndarray:
        """Boolean mask of the rows of encoded ``X`` that pass the test."""
        if self.terms:
            x64 = self.values(X)
            nan = np.isnan(x64)
            ok = (x64 <= self.threshold) if self.op == "<=" else (x64 > self.threshold)
            return ok | (nan & self.missing)
        x = X[:, self.feature]
        nan = np.isnan(x)
        if self.op == "in":
            codes = np.where(nan, -1, x).astype(np.int64)
            ok = np.isin(codes, np.asarray(self.levels, dtype=np.int64))
            # A level outside ``levels`` that the node never saw is routed as missing.
            return ok | ((nan | ~np.isin(codes, np.asarray(self.known, dtype=np.int64)))
                         & self.missing)
        # float32 values against the float64 threshold, as the tree compares them.
        x64 = x.astype(np.float64)
        ok = (x64 <= self.threshold) if self.op == "<=" else (x64 > self.threshold)
        return ok | (nan & self.missing)

    def test_text(self, categories=None, decimals: int | None = None) -> str:
        """The test without the feature's name: ``<= 0.8``, ``= red``, ``in {red, blonde}``,
        ``is missing``; thresholds with ``decimals`` digits (None: 6 significant digits)."""
        if self.only_missing:
            return "is missing"
        if self.op == "in":
            lv = categories[self.feature] if categories is not None else None
            shown = [str(lv[c]) if lv is not None else str(c) for c in self.levels]
            return f"= {shown[0]}" if len(shown) == 1 else f"in {{{', '.join(shown)}}}"
        thr = f"{self.threshold:.6g}" if decimals is None else f"{self.threshold:.{decimals}f}"
        return f"{self.op} {thr}"

    def text(self, names=None, categories=None, show_missing: bool = True,
             decimals: int | None = None) -> str:
        """Readable form, e.g. ``petal width <= 0.8`` or ``(hair in {red, blonde} or
        missing)`` (see :meth:`test_text`)."""
        if self.terms:
            name = sum_text(self.terms, names, decimals)
        else:
            name = names[self.feature] if names is not None else f"feature_{self.feature}"
        s = f"{name} {self.test_text(categories, decimals)}"
        return f"({s} or missing)" if self.says_missing and show_missing else s


def sum_text(terms, names=None, decimals: int | None = 2) -> str:
    """A weighted sum as text, ``0.71*x1 - 0.71*x2``: ``terms`` are ``(feature, weight)``
    pairs, weights with ``decimals`` digits (None: 6 significant digits)."""
    out = ""
    for f, w in terms:
        name = names[f] if names is not None else f"feature_{f}"
        num = f"{abs(w):.6g}" if decimals is None else f"{abs(w):.{decimals}f}"
        if not out:
            out = f"-{num}*{name}" if w < 0 else f"{num}*{name}"
        else:
            out += f" {'-' if w < 0 else '+'} {num}*{name}"
    return out


def node_terms(tree: Tree, node: int) -> tuple:
    """The ``(feature, weight)`` pairs of an oblique node (empty for any other node)."""
    if tree.obl_ptr is None or tree.obl_ptr[node + 1] == tree.obl_ptr[node]:
        return ()
    a, b = tree.obl_ptr[node], tree.obl_ptr[node + 1]
    return tuple(zip(tree.obl_feature[a:b].tolist(), tree.obl_weight[a:b].tolist(),
                     strict=True))


def branch_condition(tree: Tree, node: int, branch: int) -> Condition:
    """The test a case passes to take branch ``branch`` of internal node ``node``."""
    mb = tree.missing_branch[node]
    missing = bool(mb == branch or mb == MISSING_FRACTIONAL)
    seen = bool(tree.missing_seen[node])
    f = int(tree.feature[node])
    cb = tree.cat_branch[tree.cat_ptr[node]:tree.cat_ptr[node + 1]]
    if cb.size:
        return Condition(f, "in", levels=tuple(np.flatnonzero(cb == branch).tolist()),
                         missing=missing, known=tuple(np.flatnonzero(cb >= 0).tolist()),
                         seen=seen)
    return Condition(f, "<=" if branch == 0 else ">", threshold=float(tree.threshold[node]),
                     missing=missing, seen=seen, terms=node_terms(tree, node))


def node_conditions(tree: Tree) -> list[list[Condition]]:
    """For every node, the conditions on the path from the root to it (root: none)."""
    out: list[list[Condition]] = [[] for _ in range(tree.node_count)]
    ptr, kids = tree.branch_ptr, tree.branch_child
    # Parents come before their children, so one forward pass sees every parent first.
    for node in range(tree.node_count):
        for b in range(ptr[node + 1] - ptr[node]):
            out[int(kids[ptr[node] + b])] = out[node] + [branch_condition(tree, node, b)]
    return out


def leaf_conditions(tree: Tree) -> list[tuple[int, list[Condition]]]:
    """(leaf, conditions on its path) for every leaf, in node order."""
    conds = node_conditions(tree)
    return [(i, conds[i]) for i in np.flatnonzero(tree.branch_ptr[1:] == tree.branch_ptr[:-1])]
