"""Import says which projects it filled; a command finding nothing here says where the data is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, run_lcm


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, Path]:
    """(project A holding the sample session, an unrelated directory B)."""
    project_a, elsewhere = tmp_path / "project-a", tmp_path / "dir-b"
    for directory in (project_a, elsewhere):
        (directory / ".git").mkdir(parents=True)
    done = run_lcm("import", "--project", str(project_a), str(CLAUDE_SAMPLE), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stored = json.loads(run_lcm("stats", "--json", cwd=project_a).stdout)["projects"]
    (row,) = stored
    assert row["root"] == str(project_a.resolve())
    lines = done.stdout.splitlines()
    assert f"  {project_a.resolve()}: 1 sessions, {row['messages']} messages" in lines
    assert any("--all-projects" in line for line in lines[lines.index("new messages by project:"):])
    return project_a.resolve(), elsewhere


def test_import_json_lists_the_projects_it_filled(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    summary = json.loads(run_lcm("import", "--json", "--project", str(root), str(CLAUDE_SAMPLE)).stdout)
    assert summary["projects"] == [{"project_root": str(root.resolve()), "project_id": summary["conversations"][0][
        "project_id"], "sessions": 1, "subagent_runs": 0, "new_messages": summary["messages"]}]
    again = json.loads(run_lcm("import", "--json", "--project", str(root), str(CLAUDE_SAMPLE)).stdout)
    assert again["projects"] == []  # nothing new: no project filled


@pytest.mark.parametrize("command", [
    ("search", "integration"),
    ("grep", "integration"),
    ("compact", "--all"),
    ("compact", "--all", "--json"),
    ("context", CLAUDE_SAMPLE_ID[:8]),
    ("grep", "integration", "--session", CLAUDE_SAMPLE_ID[:8]),
    ("compact", "--session", CLAUDE_SAMPLE_ID[:8]),
    ("memory", "list"),
    ("verify",),
])
def test_nothing_found_here_names_the_project_holding_data(imported: tuple[Path, Path],
                                                           command: tuple[str, ...]) -> None:
    project_a, elsewhere = imported
    done = run_lcm(*command, cwd=elsewhere)
    assert "Traceback" not in done.stderr
    hint = [line for line in done.stderr.splitlines() if "data is in:" in line]
    assert len(hint) == 1, done.stderr
    assert f"nothing found in this project ({elsewhere.resolve()})" in hint[0]
    assert f"{project_a} (1 sessions, " in hint[0]
    assert "--all-projects" in hint[0] and f"lcm --project {project_a} COMMAND" in hint[0]
    if "--json" in command:
        json.loads(done.stdout)  # the hint stays off stdout


def test_the_hint_leads_somewhere(imported: tuple[Path, Path]) -> None:
    project_a, elsewhere = imported
    found = run_lcm("--project", str(project_a), "context", CLAUDE_SAMPLE_ID[:8], cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    everywhere = run_lcm("grep", "integration", "--all-projects", "--json", cwd=elsewhere)
    assert everywhere.returncode == 0, everywhere.stderr
    assert json.loads(everywhere.stdout)[0]["project_id"] and "data is in:" not in everywhere.stderr


def test_no_hint_when_this_project_holds_all_the_data(imported: tuple[Path, Path]) -> None:
    project_a, elsewhere = imported
    done = run_lcm("grep", "no-such-word-anywhere", cwd=project_a)
    assert done.returncode == 1 and "hint:" not in done.stderr
    (elsewhere / "notes.txt").write_text("x")
    assert run_lcm("memory", "add", "deploy on fridays", cwd=elsewhere).returncode == 0  # B now holds a memory,
    other = run_lcm("grep", "no-such-word-anywhere", cwd=project_a)  # but no messages: not listed
    assert "hint:" not in other.stderr


def test_a_miss_in_a_project_with_data_names_the_other_projects(imported: tuple[Path, Path]) -> None:
    project_a, elsewhere = imported
    assert run_lcm("import", "--project", str(elsewhere), str(CLAUDE_SAMPLE)).returncode == 0
    done = run_lcm("grep", "no-such-word-anywhere", cwd=elsewhere)
    assert f"other projects hold data: {project_a} (1 sessions, " in done.stderr


def test_with_no_data_anywhere_the_hint_says_how_to_import(tmp_path: Path) -> None:
    done = run_lcm("search", "anything", cwd=tmp_path)
    assert done.returncode == 1
    assert "no project under $LCM_HOME holds data yet: `lcm import`" in done.stderr
