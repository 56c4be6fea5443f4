"""The core's import graph has no circle and no upward import.

Computed from the source with ``ast``, no module is imported. An edge is every import that runs: at a module's
top level and inside functions (a lazy import runs too, later). Imports under ``if TYPE_CHECKING:`` are not
counted: they never run, so they cannot make an import-time loop, and they name types only (a command's
``run(args, app: App)`` and the ``App`` holding the plugins that registered it refer to each other by design).
``from pkg import name`` is an edge to the module ``pkg.name`` when there is one, else to ``pkg`` itself.

Two rules, over ``lcm_framework``:

* no cycle between modules;
* no upward import: the top-level packages and loose modules (``kernel``, ``storage``, ``daemon``, ``app``, ...)
  form a layered graph, so no module imports from a package that imports it, directly or through others.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

LCM_FRAMEWORK = Path(__file__).resolve().parents[2] / "lcm_framework"

Edges = dict[str, dict[str, str]]
"""module -> {imported module: where (``path:line``)}"""


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
            (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
            or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
        ):
            for statement in node.body:
                skipped.update(id(inner) for inner in ast.walk(statement))
    return skipped


def import_graph(root: Path) -> Edges:
    modules = module_names(root)
    edges: Edges = defaultdict(dict)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges[name].setdefault(target, f"{path.relative_to(root.parent)}:{node.lineno}")
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted({*edges, *(t for targets in edges.values() for t in targets)}):
        if node not in index:
            visit(node)
    return found


def package_edges(edges: Edges, root_name: str) -> Edges:
    """The graph between the top-level packages and loose modules of ``root_name``."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    between: Edges = defaultdict(dict)
    for source, targets in edges.items():
        for target, where in targets.items():
            a, b = unit(source), unit(target)
            if a != b and root_name not in (a, b):
                between[a].setdefault(b, f"{source} -> {target} ({where})")
    return between


def explain(found: list[list[str]], edges: Edges) -> str:
    lines = []
    for component in found:
        members = set(component)
        lines.append(" <-> ".join(component))
        lines += [f"    {a} imports {b}: {where}" for a in component for b, where in edges.get(a, {}).items()
                  if b in members]
    return "\n".join(lines)


def test_no_module_imports_itself_through_others() -> None:
    edges = import_graph(LCM_FRAMEWORK)
    found = cycles(edges)
    assert not found, "import cycles between modules:\n" + explain(found, edges)


def test_no_module_imports_from_a_package_that_imports_it() -> None:
    between = package_edges(import_graph(LCM_FRAMEWORK), "lcm_framework")
    found = cycles(between)
    assert not found, "packages importing each other (an upward import):\n" + explain(found, between)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_the_checks_see_lazy_relative_and_package_level_loops(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "from .base import thing\n",
        "pkg/low/base.py": "def thing():\n    from ..high.top import other\n",
        "pkg/high/__init__.py": "",
        "pkg/high/top.py": "from ..low import thing\nother = 1\n",
        "pkg/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .loose import X\n",
        "pkg/loose.py": "from . import typed\nX = 1\n",
    })
    edges = import_graph(root)
    assert edges["pkg.low"] == {"pkg.low.base": "pkg/low/__init__.py:1"}
    assert "pkg.loose" not in edges.get("pkg.typed", {})  # a TYPE_CHECKING import is not an edge
    assert cycles(edges) == [["pkg.high.top", "pkg.low", "pkg.low.base"]]  # the lazy import closes it
    assert cycles(package_edges(edges, "pkg")) == [["pkg.high", "pkg.low"]]
