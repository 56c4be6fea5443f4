"""``lcm sessions``, the session of every grep hit, and a session prefix that names the main session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_lcm

MAIN = "fe5e1c67-0000-4000-8000-00000000aaaa"
OTHER = "fe5e2222-0000-4000-8000-00000000bbbb"


def record(session: str, n: int, role: str, text: str, *, agent: str | None = None) -> dict[str, Any]:
    base = {"parentUuid": None if n == 1 else f"{session[:8]}-0000-4000-8000-{n - 1:012d}",
            "isSidechain": agent is not None, "userType": "external", "cwd": "/home/dev/app", "sessionId": session,
            "version": "2.0.28", "uuid": f"{session[:8]}-0000-4000-8000-{n:012d}",
            "timestamp": f"2025-09-03T00:{n:02d}:00.000Z", "type": role, "message": {"role": role, "content": text}}
    if agent is not None:
        base["agentId"] = agent
    if role == "assistant":
        base["message"] = {"role": "assistant", "type": "message", "content": [{"type": "text", "text": text}]}
    return base


def transcript(path: Path, session: str, prompt: str, *, with_run: bool) -> Path:
    """A session of three messages; ``with_run``: a sub-agent run of two between them (a sidechain)."""
    run = [record(session, 3, "user", "Explore the parser", agent="run1"),
           record(session, 4, "assistant", "The parser is in src/parse.ts", agent="run1")] if with_run else []
    lines = [record(session, 1, "user", prompt), record(session, 2, "assistant", "On it: the \x1b[31mbuild\x1b[0m."),
             *run, record(session, 5, "user", "thanks, ship it")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    for session, prompt in ((MAIN, "Fix the \x1b]52;c;aGk=\x07flaky build"), (OTHER, "Write the changelog")):
        path = transcript(tmp_path / f"{session}.jsonl", session, prompt, with_run=session == MAIN)
        done = run_lcm("import", "--project", str(root), str(path), cwd=root)
        assert done.returncode == 0, done.stderr
    return root


def test_sessions_json_lists_agent_span_size_prompt_and_the_run_under_its_parent(project: Path) -> None:
    done = run_lcm("sessions", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    sessions = {s["session_id"]: s for s in json.loads(done.stdout)["sessions"]}
    run = f"{MAIN}/sidechain-run1"
    assert set(sessions) == {MAIN, OTHER, run}
    main = sessions[MAIN]
    assert main["agent"] == "claude-code" and main["project_root"] == str(project.resolve())
    assert main["messages"] == 3 and main["subagent_of"] is None
    assert main["first_at"].startswith("2025-09-03T00:01:00") and main["last_at"].startswith("2025-09-03T00:05:00")
    assert main["first_prompt"] == "Fix the \x1b]52;c;aGk=\x07flaky build"  # JSON keeps the exact text
    assert sessions[run]["subagent_of"] == MAIN and sessions[run]["messages"] == 2
    assert sessions[run]["first_prompt"] == "Explore the parser"


def test_sessions_text_shows_runs_indented_under_their_parent_and_escapes_the_prompt(project: Path) -> None:
    done = run_lcm("sessions", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"== {project.resolve()}: 2 sessions, 1 sub-agent runs"
    main = next(i for i, line in enumerate(lines) if line.startswith(MAIN))
    assert "claude-code" in lines[main] and "2025-09-03 00:01 .. 00:05  3 messages" in lines[main]
    assert lines[main + 1] == "    Fix the \\u001b]52;c;aGk=\\u0007flaky build"
    assert lines[main + 2].startswith("    sub-agent run .../sidechain-run1  2025-09-03 00:03 .. 00:04  2 messages")
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout


def test_a_prefix_of_a_main_session_and_its_runs_names_the_main_session(project: Path) -> None:
    done = run_lcm("context", "fe5e1c67", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session_id"] == MAIN
    ambiguous = run_lcm("context", "fe5e", cwd=project)
    assert ambiguous.returncode == 1
    assert f"ambiguous: {MAIN}, {OTHER}" in ambiguous.stderr and "sidechain" not in ambiguous.stderr
    run = run_lcm("context", f"{MAIN}/side", "--json", cwd=project)
    assert json.loads(run.stdout)["session_id"] == f"{MAIN}/sidechain-run1"


def test_grep_hits_name_their_session(project: Path) -> None:
    done = run_lcm("grep", "changelog", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    (hit,) = [h for g in json.loads(done.stdout)["groups"] for h in g["hits"]]
    assert hit["session_id"] == OTHER and hit["conversation_id"]
    text = run_lcm("grep", "changelog", cwd=project).stdout
    assert f"session {OTHER[:8]}" in text
    again = run_lcm("context", OTHER[:8], "--json", cwd=project)
    assert json.loads(again.stdout)["session_id"] == OTHER


def test_search_hits_name_their_session(project: Path) -> None:
    done = run_lcm("search", "changelog", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results and any(r.get("session_id") == OTHER for r in results)
    assert all("session_id" in r or "subagent" in r for r in results if r["id"].startswith("msg_"))
    assert OTHER[:8] in run_lcm("search", "changelog", cwd=project).stdout


def test_sub_agent_runs_stay_runs_through_export_and_import_records(project: Path, tmp_path: Path) -> None:
    exported = tmp_path / "all.jsonl"
    assert run_lcm("export", "-o", str(exported), cwd=project).returncode == 0
    elsewhere = {"LCM_HOME": str(tmp_path / "second-home")}
    done = run_lcm("import-records", str(exported), cwd=project, env=elsewhere)
    assert done.returncode == 0, done.stderr
    listed = json.loads(run_lcm("sessions", "--json", cwd=project, env=elsewhere).stdout)["sessions"]
    runs = {s["session_id"]: s["subagent_of"] for s in listed}
    assert runs[f"{MAIN}/sidechain-run1"] == MAIN and runs[MAIN] is None
    again = run_lcm("context", "fe5e1c67", "--json", cwd=project, env=elsewhere)  # the main session, not the run
    assert again.returncode == 0 and json.loads(again.stdout)["session_id"] == MAIN
    twice = run_lcm("import-records", str(exported), cwd=project, env=elsewhere)  # idempotent: no conflict
    assert twice.returncode == 0 and "differs" not in twice.stdout + twice.stderr, twice.stdout
