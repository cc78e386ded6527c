"""The package's layers, as docs/architecture.md draws them, checked on the source.

Every ``import`` of every module counts, including those inside functions and under
``TYPE_CHECKING``: a layer that needs a type from a higher one is a layer in the wrong place.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "groupcoord"

# Each layer and the layers it may import (besides itself). Anything not named here is a
# layer no one may import until it is added.
ALLOWED: dict[str, set[str]] = {
    "_native": set(),
    "errors": set(),
    "config": set(),
    "versions": set(),
    "partitioner": {"_native"},
    "format": {"_native", "versions"},
    "purgatory": {"_native"},
    "topic_regex": {"_native"},
    "protocol": {"errors", "versions"},
    "log": {"format", "errors"},
    "storage": {"log", "format", "config", "errors"},
    "coordinator": {"log", "format", "purgatory", "config", "errors", "partitioner",
                    "topic_regex"},
    "spark": {"format", "storage", "protocol", "errors"},
    "server": {"coordinator", "protocol", "storage", "log", "format", "purgatory", "config",
               "errors", "partitioner", "_native"},
    "cli": {"server", "coordinator", "protocol", "storage", "log", "format", "purgatory",
            "config", "errors", "partitioner", "groupcoord"},
    "groupcoord": {"_native"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    known = set(modules) | {"groupcoord._native"}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        graph[name]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
                           else node.module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            graph[name].update(t for t in targets if t in known and t != name)
    return dict(graph)


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "groupcoord.coordinator.group_coordinator" in graph
    assert "groupcoord.format.codec" in graph["groupcoord.format.replay_rules"]


def test_no_module_imports_itself_back() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if layer(target) != layer(module) and layer(target) not in ALLOWED.get(layer(module), set())
    )
    assert wrong == []


@pytest.mark.parametrize("higher", ["server", "storage", "protocol", "cli", "spark"])
def test_the_coordinator_never_imports(higher: str) -> None:
    assert higher not in ALLOWED["coordinator"]
    assert not any(layer(t) == higher for m, ts in import_graph().items()
                   if layer(m) == "coordinator" for t in ts)
