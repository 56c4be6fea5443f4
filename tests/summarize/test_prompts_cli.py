"""``lcm prompts``: the real command in a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lcm_framework.summarize.prompts import TEMPLATES
from tests.conftest import run_lcm


def env(home: Path) -> dict[str, str]:
    return {"LCM_HOME": str(home), "HOME": str(home.parent)}


def test_list_shows_every_template_and_its_origin(lcm_env: Path, tmp_path: Path) -> None:
    (lcm_env / "prompts").mkdir(parents=True)
    (lcm_env / "prompts" / "leaf.j2").write_text("mine {{ segment }}", encoding="utf-8")
    result = run_lcm("prompts", "--json", cwd=tmp_path, env=env(lcm_env))
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert set(rows) == set(TEMPLATES)
    assert "user override" in rows["leaf"]["origin"] and str(lcm_env / "prompts" / "leaf.j2") in rows["leaf"]["origin"]
    assert "builtin" in rows["system"]["origin"]
    table = run_lcm("prompts", "list", cwd=tmp_path, env=env(lcm_env))
    assert table.returncode == 0 and "condensed_d3" in table.stdout and "user override" in table.stdout


def test_show_prints_the_winning_template(lcm_env: Path, tmp_path: Path) -> None:
    result = run_lcm("prompts", "show", "leaf", "--json", cwd=tmp_path, env=env(lcm_env))
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert "{{ segment }}" in shown["source"] and "builtin" in shown["origin"]
    plain = run_lcm("prompts", "show", "large_file", cwd=tmp_path, env=env(lcm_env))
    assert plain.stdout.startswith("# large_file: ") and "{{ content_excerpt }}" in plain.stdout


def test_unknown_template_and_bad_override_dir_are_clean_errors(lcm_env: Path, tmp_path: Path) -> None:
    result = run_lcm("prompts", "show", "nope", cwd=tmp_path, env=env(lcm_env))
    assert result.returncode == 2 and "no prompt source provides template 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
    missing = {**env(lcm_env), "LCM_PROMPTS_OVERRIDE_DIR": os.fspath(tmp_path / "missing")}
    bad = run_lcm("prompts", cwd=tmp_path, env=missing)
    assert bad.returncode == 2 and "prompts.override_dir" in bad.stderr and "Traceback" not in bad.stderr
