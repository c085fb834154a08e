"""The package's import structure (the engine-rooms issue): no module imports, directly or
through others, a module that imports it back, counting the imports inside functions too,
and the compiling helpers sit below the engine."""

from __future__ import annotations

import ast
import pathlib

import treelearn

ROOT = pathlib.Path(treelearn.__file__).parent

#: Modules above every other: they may import the package itself (its public names).
TOP = ("treelearn.cli", "treelearn.demos")


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(mods: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """Each module's treelearn imports, at the top or inside functions (not those under
    ``if TYPE_CHECKING``); ``from . import x`` counts as importing module ``x`` when it is
    one, else its package."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        package = m if path.name == "__init__.py" else m.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and getattr(block.test, "id", None) == "TYPE_CHECKING"
                       for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # for annotations only, never run
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                names = [f"{base}.{a.name}" for a in node.names]
                targets = [n if n in mods else base for n in names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[m].update(t for t in targets if t in mods and t != m)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (depth-first search), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return path[path.index(t):] + [t]
            if t not in state and (found := visit(t)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_module_imports_one_that_imports_it_back():
    graph = _imports(_modules())
    for m in graph:
        if m.startswith(TOP):
            graph[m].discard("treelearn")
    assert "treelearn._compiling" in graph and "treelearn.engine.fit" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_circle_search_finds_circles():
    """The search itself (a circle of three), and imports inside functions are read: the
    exact grower imports ``_compiling`` only in ``later_kernels``."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    graph = _imports(_modules())
    assert "treelearn._compiling" in graph["treelearn.engine.layouts.presorted"]
    graph["treelearn._compiling"].add("treelearn.engine.layouts.presorted")  # the old circle
    assert _cycle(graph) is not None


def test_the_compiling_helpers_sit_below_the_engine():
    """``_compiling`` (a call's signature) imports nothing of treelearn; the engine's
    compiling module imports nothing above the engine but ``_compiling``."""
    graph = _imports(_modules())
    assert graph["treelearn._compiling"] == set()
    above = {t for t in graph["treelearn.engine.compiling"] if not t.startswith("treelearn.engine")}
    assert above == {"treelearn._compiling"}


def test_modules_outside_the_engine_enter_it_through_few_modules():
    """At most four engine modules per module outside the engine (the estimators: the
    engine's entry, ``build``, and two for preparing columns); and the estimators grow
    trees through ``build.grow`` alone."""
    graph = _imports(_modules())
    wide = {}
    for m, targets in graph.items():
        if m.startswith("treelearn.engine"):
            continue
        n = sum(t.startswith("treelearn.engine.") for t in targets)
        if n > 4:
            wide[m] = n
    assert wide == {}
    assert {t for t in graph["treelearn._estimators"] if t.startswith("treelearn.engine.")} \
        == {"treelearn.engine.build", "treelearn.engine.binning", "treelearn.engine.columns"}


def test_the_engine_reaches_above_itself_once():
    """Below the engine: Ctrl-C, memory checks and a call's signature. Above it, one import:
    the driver's assembly of the flat Tree (``engine.fit``; the layouts and the entry name
    Tree in annotations only)."""
    graph = _imports(_modules())
    out = {(m, t) for m, targets in graph.items() if m.startswith("treelearn.engine")
           for t in targets if not t.startswith("treelearn.engine")}
    below = {"treelearn._interrupt", "treelearn._memory", "treelearn._compiling"}
    assert {t for _, t in out} - below == {"treelearn._tree"}
    assert {m for m, t in out if t == "treelearn._tree"} == {"treelearn.engine.fit"}
