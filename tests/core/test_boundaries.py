"""The two import boundaries: plugins use only the public plugin API; the core never imports a plugin."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import lcm_framework.plugin_api
from tests.conftest import REPO

API = "lcm_framework.plugin_api"
PLUGIN_ROOTS = ("plugins", "formats", "prompts", "contrib")


DYNAMIC = "<a module named at run time>"
"""What ``_imported`` reports for ``import_module(name)`` / ``__import__(name)`` whose module it cannot read."""


def _dynamic_target(call: ast.Call, package: str) -> str | None:
    """The module ``importlib.import_module(...)`` or ``__import__(...)`` loads (``DYNAMIC`` when the source does
    not say which), or None when ``call`` is no such call. An f-string that starts with ``__package__`` or
    ``__name__`` stays in the caller's own package; one that starts with text is read up to its first field."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in {"import_module", "__import__"}:
        return None
    arg = call.args[0] if call.args else None
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.FormattedValue) and isinstance(first.value, ast.Name) and first.value.id in {
                "__package__", "__name__"}:
            return package
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value:
            return first.value.rstrip(".")
    return DYNAMIC


def _imported(path: Path, package: str) -> list[tuple[int, str]]:
    """Every module (and ``module.name``) an import statement of ``path`` names, made absolute, and every module
    it loads through ``importlib.import_module`` or ``__import__``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and (target := _dynamic_target(node, package)) is not None:
            found.append((node.lineno, target))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) + 1 - node.level] if node.level else []
            module = ".".join([*base, node.module or ""]).strip(".")
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return found


def _is_api(name: str) -> bool:
    return name == API or name.startswith(API + ".")


def _plugin_modules() -> list[tuple[Path, str]]:
    """Every .py of the plugin trees with its package name (a tree's top-level packages have __init__.py)."""
    out = []
    for root in PLUGIN_ROOTS:
        for init in sorted((REPO / root).rglob("__init__.py")):
            top = init.parent
            if (top.parent / "__init__.py").exists():
                continue
            for path in top.rglob("*.py"):
                parts = path.relative_to(top.parent).with_suffix("").parts
                out.append((path, ".".join(parts[:-1])))
    return out


def _plugin_packages() -> set[str]:
    return {package.split(".")[0] for _, package in _plugin_modules()}


def _api_offenders(path: Path, package: str) -> list[tuple[int, str]]:
    return [(line, name) for line, name in _imported(path, package)
            if (name in {"lcm_framework", DYNAMIC} or name.startswith("lcm_framework.")) and not _is_api(name)]


def test_plugins_import_only_the_public_plugin_api() -> None:
    modules = _plugin_modules()
    assert {"lcm_sqlite", "lcm_postgres", "lcm_format_claude", "lcm_format_gemini", "lcm_prompts"} <= {
        p.split(".")[0] for _, p in modules}
    offenders = [f"{path.relative_to(REPO)}:{line}: {name}" for path, package in modules
                 for line, name in _api_offenders(path, package)]
    assert offenders == []


def test_the_core_imports_no_plugin() -> None:
    plugins = _plugin_packages()
    core = Path(lcm_framework.plugin_api.__file__).parent.parent
    offenders = []
    for path in core.rglob("*.py"):
        package = ".".join(["lcm_framework", *path.relative_to(core).with_suffix("").parts[:-1]])
        offenders += [f"{path.relative_to(core.parent)}:{line}: {name}" for line, name in _imported(path, package)
                      if name.split(".")[0] in plugins]
    assert len(plugins) >= 9
    assert offenders == []


def test_the_checks_see_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import lcm_framework.storage\nfrom lcm_framework import storage, plugin_api\n"
                      "from lcm_framework.plugin_api.storage import Health\nfrom lcm_framework.app import App\n"
                      "def f():\n    from lcm_framework.cli.output import print_json\n"
                      "from . import sibling\nimport lcm_sqlite.factory\n"
                      "import importlib\nfrom importlib import import_module\n"
                      "importlib.import_module('lcm_framework.storage.checked')\n__import__('lcm_framework.app')\n"
                      "import_module(f'lcm_framework.cli.{name}')\nimport_module(f'{__package__}.mine')\n"
                      "import_module(name)\nimport_module('lcm_framework.plugin_api.output')\n")
    assert _api_offenders(sample, "some_plugin") == [
        (1, "lcm_framework.storage"), (2, "lcm_framework.storage"), (4, "lcm_framework.app.App"),
        (6, "lcm_framework.cli.output.print_json"), (11, "lcm_framework.storage.checked"), (12, "lcm_framework.app"),
        (13, "lcm_framework.cli"), (15, DYNAMIC)]
    imported = _imported(sample, "lcm_framework.daemon")
    assert (7, "lcm_framework.daemon.sibling") in imported and (8, "lcm_sqlite.factory") in imported


def _api_modules() -> list[object]:
    pkg = lcm_framework.plugin_api
    return [pkg, *(importlib.import_module(f"{API}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__))]


@pytest.mark.parametrize("module", _api_modules(), ids=lambda m: getattr(m, "__name__", "?"))
def test_every_export_is_declared_documented_and_listed_in_the_docs(module: object) -> None:
    exported = list(getattr(module, "__all__", []))
    assert exported, "an API module declares __all__"
    # a submodule is public only when listed (an editor namespace such as plugin_api.agents.jsonfile)
    public = {n for n in vars(module) if not n.startswith("_")
              and (not inspect.ismodule(getattr(module, n)) or n in exported)}
    public -= {"annotations"}
    assert public == set(exported), "every public name is in __all__ and nothing else is"
    objects = {n: getattr(module, n) for n in exported}
    undocumented = [n for n, o in objects.items() if (inspect.isclass(o) or inspect.isroutine(o))
                    and not (inspect.getdoc(o) or "").strip()]
    assert undocumented == []
    docs = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = docs.split("## The plugin API", 1)[1].split("\n## ", 1)[0]
    name = getattr(module, "__name__", "")
    assert f"`{name}`" in section
    missing = [n for n in exported if not re.search(rf"\b{re.escape(n)}\b", section)]
    assert missing == []
