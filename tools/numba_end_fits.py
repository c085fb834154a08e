"""The fits CI runs on each end of the supported Numba window (``.ci/numba-ends``).

In a fresh process: a tree (compared with scikit-learn's, node for node), a histogram tree, a
forest (compared with scikit-learn's forest, tree for tree) and a table with category
columns and holes, each timed; then checks that treelearn's kernel linking was on (inside the
window the self-test must pass, and no LinkingWarning may appear). Run twice on one
``NUMBA_CACHE_DIR``: cold (compiling) and warm (loading). Exit status 1 on any failure.
"""

from __future__ import annotations

import json
import sys
import time
import warnings


def main() -> int:
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numba
        import numpy as np
        import pandas as pd
        from sklearn.ensemble import RandomForestClassifier as SkForest
        from sklearn.tree import DecisionTreeClassifier as SkTree

        import treelearn as tl
        from treelearn.engine import linking

        rng = np.random.default_rng(0)
        X = rng.normal(size=(3000, 6))
        X[:, 2] = rng.integers(0, 7, size=3000)  # a feature of few values
        y = (X[:, 0] + X[:, 1] ** 2 + 0.4 * rng.normal(size=3000) > 0.6).astype(int)
        seconds: dict[str, float] = {}
        problems: list[str] = []

        def timed(name, fit):
            t = time.perf_counter()
            model = fit()
            seconds[name] = round(time.perf_counter() - t, 2)
            return model

        def same(a, b) -> bool:
            return (a.node_count == b.node_count and np.array_equal(a.feature, b.feature)
                    and np.array_equal(a.threshold, b.threshold)
                    and np.allclose(a.value, b.value))

        tree = timed("tree", lambda: tl.DecisionTreeClassifier(random_state=0).fit(X, y))
        if not same(tree.tree_, SkTree(random_state=0).fit(X, y).tree_):
            problems.append("the tree differs from scikit-learn's")
        hist = timed("hist", lambda: tl.DecisionTreeClassifier(splitter="hist").fit(X, y))
        if hist.score(X, y) < 0.95:
            problems.append(f"the hist tree scores {hist.score(X, y):.3f} on its training data")
        forest = timed("forest", lambda: tl.RandomForestClassifier(
            n_estimators=10, random_state=0).fit(X, y))
        theirs = SkForest(n_estimators=10, random_state=0).fit(X, y)
        if not all(same(a.tree_, b.tree_) for a, b in zip(forest.estimators_,
                                                           theirs.estimators_, strict=True)):
            problems.append("the forest differs from scikit-learn's")
        table = pd.DataFrame({"a": X[:, 0], "b": X[:, 1],
                              "c": pd.Categorical(rng.choice(list("pqrstu"), 3000))})
        table.loc[::9, "a"] = np.nan
        table.loc[::13, "c"] = np.nan
        model = timed("table", lambda: tl.DecisionTreeClassifier(random_state=0).fit(table, y))
        if model.score(table, y) < 0.95:
            problems.append(f"the table tree scores {model.score(table, y):.3f}")
        if not linking.active():
            problems.append(f"treelearn's kernel linking is off: {linking.STATE}")
    problems += [f"warning: {w.message}" for w in caught
                 if w.category.__name__ == "LinkingWarning"]
    print(json.dumps({"numba": numba.__version__, "numpy": np.__version__,
                      "link": linking.MODE, "state": linking.STATE, "seconds": seconds,
                      "process": round(time.perf_counter() - start, 1),
                      "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
