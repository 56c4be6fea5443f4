"""Text output a person can read: describe without Python reprs and with wrapped id lists, context warns when
over its budget, import says when nothing was new, plugins fits the terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, run_lcm

ROOT = "/home/dev/orders-api"  # the sample session's working directory


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("readable")
    values = {"HOME": str(home), "LCM_HOME": str(home / ".lcm"), "COLUMNS": "60"}
    first = run_lcm("import", str(CLAUDE_SAMPLE), env=values)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported: 1 files (1 imported)")
    done = run_lcm("--project", ROOT, "--set", "compaction.fresh_tail_count=2", "compact", "--all", env=values)
    assert done.returncode == 0, done.stderr
    added = run_lcm("--project", ROOT, "memory", "add", "Deploys go through the blue-green switch",
                    "--tag", "command", "--tag", "ci", "--json", env=values)
    assert added.returncode == 0, added.stderr
    return {**values, "MEMORY": json.loads(added.stdout)["id"]}


def lcm(env: dict[str, str], *args: str) -> str:
    done = run_lcm("--project", ROOT, *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


REPR = re.compile(r"\{'|\['|': |\bTrue\b|\bFalse\b|\bNone\b|datetime\.")


def header(text: str) -> str:
    return text.split("--- content ---")[0]


def test_describe_prints_fields_not_python_reprs_and_wraps_id_lists(env: dict[str, str]) -> None:
    summary = json.loads(lcm(env, "grep", "8432", "--scope", "summaries", "--json"))["summary_hits"][0]["id"]
    described = json.loads(lcm(env, "describe", summary, "--json"))
    assert len(described["lineage"]["source_messages"]) > 6  # enough ids to need more than one line
    for ref in (summary, "msg_1", env["MEMORY"]):
        text = header(lcm(env, "describe", ref))
        assert not REPR.search(text), text
        assert all(len(line) <= 60 for line in text.splitlines()[1:]), text
    memory = header(lcm(env, "describe", env["MEMORY"]))
    assert "  tags: command, ci\n" in memory and "  archived: no\n" in memory
    lines = header(lcm(env, "describe", summary)).splitlines()
    sources = lines.index(next(line for line in lines if line.startswith("  source_messages (")))
    assert lines[sources + 1].startswith("    msg_")  # continued, indented under its field


def test_context_over_its_budget_says_so_on_stderr(env: dict[str, str]) -> None:
    done = run_lcm("--project", ROOT, "context", CLAUDE_SAMPLE_ID, "--budget", "10", "--json", env=env)
    estimate = json.loads(done.stdout)["token_estimate"]
    assert estimate > 10
    assert f"the context is {estimate:,} tokens, over the budget of 10:" in done.stderr
    within = run_lcm("--project", ROOT, "context", CLAUDE_SAMPLE_ID, "--budget", "100000", env=env)
    assert within.returncode == 0 and "over the budget" not in within.stderr


def test_import_of_nothing_new_says_so_in_a_sentence(env: dict[str, str]) -> None:
    again = run_lcm("import", str(CLAUDE_SAMPLE), env=env)
    assert again.stdout.splitlines()[0] == "nothing new was imported: 1 transcript files (1 unchanged)"
    dry = run_lcm("import", str(CLAUDE_SAMPLE), "--dry-run", env=env)
    assert dry.stdout.startswith("nothing new would be imported: ")
    empty = run_lcm("import", str(Path(env["HOME"]) / "no-transcripts-here"), env=env)
    assert "0 bytes" not in empty.stdout


def test_plugins_all_fits_the_terminal(env: dict[str, str]) -> None:
    for columns in ("60", "100"):
        out = run_lcm("plugins", "--all", env={**env, "COLUMNS": columns}).stdout
        assert "lcm_recall" in out or "recall" in out
        assert max(len(line) for line in out.splitlines()) <= int(columns), out


def test_commands_over_every_project_name_each_by_its_root(env: dict[str, str], tmp_path: Path) -> None:
    elsewhere = {"cwd": tmp_path}
    for args in (("grep", "8432", "--all-projects"), ("expand", "msg_1", "--all-projects"),
                 ("verify", "--all-projects"), ("promote", "--all-projects"), ("vacuum", "--all-projects"),
                 ("describe", "msg_1", "--all-projects")):
        done = run_lcm(*args, env=env, **elsewhere)  # type: ignore[arg-type]
        assert done.returncode in (0, 1), done.stderr
        assert ROOT in done.stdout, (args, done.stdout)
        assert not re.search(r"project [0-9a-f]{12}\b", done.stdout), (args, done.stdout)
