"""The CLI is the top layer: no core module below it and no recall plugin module imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import lcm_recall

import lcm_framework


def _cli_imports(path: Path, package: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            absolute = module if node.level == 0 else ".".join([*package.split(".")[: 1 - node.level or None],
                                                                 module]).strip(".")
            names = [absolute] + [f"{absolute}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [f"{path.name}:{node.lineno}" for n in names if n.startswith("lcm_framework.cli")][:1]
    return found


def _modules(root: Path, package: str) -> list[tuple[Path, str]]:
    out = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        out.append((path, ".".join([package, *parts[:-1]])))
    return out


def test_nothing_below_the_cli_imports_it() -> None:
    core = Path(lcm_framework.__file__).parent
    modules = [(p, pkg) for p, pkg in _modules(core, "lcm_framework") if not pkg.startswith("lcm_framework.cli")]
    modules += _modules(Path(lcm_recall.__file__).parent, "lcm_recall")
    assert len(modules) > 50
    offenders = [hit for path, pkg in modules for hit in _cli_imports(path, pkg)]
    assert offenders == []


def test_the_check_sees_relative_and_absolute_cli_imports(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("from ..cli.output import print_json\nimport lcm_framework.cli.main\nfrom . import jsonable\n")
    assert _cli_imports(sample, "lcm_framework.daemon") == ["m.py:1", "m.py:2"]
