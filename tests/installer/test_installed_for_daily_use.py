"""LCM installed the way a user installs a Python command-line tool: wheels of the clone and the contrib agent
plugins in a fresh virtual environment outside the clone (the README's "Installed for daily use"), working there
on its own: ``lcm install --dry-run`` points the agents' hooks at that environment's ``lcm``, ``lcm doctor`` runs,
and every package imports from that environment, not from the clone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import OFFLINE_ENV
from tests.contrib import OFFLINE, PIP, REPO, source_copy

PLUGINS = ("lcm-format-gemini", "lcm-format-qwen", "lcm-format-opencode", "lcm-format-copilot")
ROOT_PARTS = ("pyproject.toml", "README.md", "lcm_framework", "formats", "plugins", "prompts")
"""What the root distribution is built from (``[tool.setuptools.packages.find]``)."""


def _copy_root(into: Path) -> Path:
    root = into / "lcm"
    root.mkdir()
    for name in ROOT_PARTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        else:
            shutil.copy2(source, root / name)
    return root


def _venv(path: Path) -> Path:
    """A fresh environment whose third-party dependencies are this one's (a path entry, no download); this
    environment's own packages (the clone's editable install among them) are not on its path."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python


@pytest.mark.slow
def test_wheels_installed_outside_the_clone_work_on_their_own(tmp_path: Path) -> None:
    sources = tmp_path / "src"
    sources.mkdir()
    built = [str(_copy_root(sources)), *(str(source_copy(p, sources)) for p in PLUGINS)]
    wheels = tmp_path / "wheels"
    subprocess.run([*PIP, "wheel", "--quiet", *OFFLINE, "-w", str(wheels), *built], check=True, capture_output=True,
                   timeout=600)
    assert sorted(w.name.split("-")[0] for w in wheels.glob("*.whl")) == [
        "lcm_format_copilot", "lcm_format_gemini", "lcm_format_opencode", "lcm_format_qwen", "lcm_framework"]
    python = _venv(tmp_path / "venv")
    subprocess.run([*PIP, "--python", str(python), "install", "--quiet", "--no-index", "--no-deps",
                    *map(str, wheels.glob("*.whl"))], check=True, capture_output=True, timeout=300)

    home = tmp_path / "home"
    for agent_dir in (".claude", ".gemini", ".qwen", ".config/opencode", ".copilot"):
        (home / agent_dir).mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LCM_HOME": str(home / ".lcm"), **OFFLINE_ENV}
    lcm = tmp_path / "venv" / "bin" / "lcm"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    imported = run(str(python), "-c", "import json, lcm_framework, lcm_format_claude, lcm_format_gemini, "
                   "lcm_format_qwen as q; print(json.dumps([m.__file__ for m in (lcm_framework, lcm_format_claude, "
                   "lcm_format_gemini, q)]))")
    assert imported.returncode == 0, imported.stderr
    venv = str(tmp_path / "venv")
    assert all(f.startswith(venv) for f in json.loads(imported.stdout)), imported.stdout  # not the clone's

    dry = run(str(lcm), "install", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert {"claude", "gemini", "qwen", "opencode", "copilot"} <= set(report["agents"])
    diffs = "".join(f["diff"] for f in report["files"])
    for agent in ("gemini", "qwen"):
        assert f"{lcm} hook SessionStart --agent {agent}" in diffs  # the hooks run this environment's lcm
    for agent in ("opencode", "copilot"):  # their hooks live in a plugin file or a hooks file of LCM's own
        assert any(str(lcm) in f["diff"] for f in report["files"] if agent in f["path"]), agent
    assert str(REPO) not in diffs
    assert not (home / ".gemini" / "settings.json").exists()  # a dry run writes nothing

    doctor = run(str(lcm), "doctor", "--json")
    checks = {c["name"]: c["status"] for c in json.loads(doctor.stdout)["checks"]}
    assert {"gemini_hooks", "qwen_hooks", "opencode_hooks", "copilot_hooks", "claude_hooks"} <= set(checks), checks
    assert checks["gemini_hooks"] == checks["qwen_hooks"] == "fail"  # found, not installed yet: doctor says so
    plugins = {p["name"]: p for p in json.loads(run(str(lcm), "plugins", "--json").stdout)}
    assert [plugins[name]["distribution"] for name in ("gemini_cli", "qwen_code", "opencode", "copilot_cli")] == [
        "lcm-format-gemini", "lcm-format-qwen", "lcm-format-opencode", "lcm-format-copilot"]
