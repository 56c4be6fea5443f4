"""The compaction and recall commands as real subprocesses on a real imported session."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from lcm_framework.cli.main import main
from lcm_framework.compaction import CompactionEngine
from tests.compaction.helpers import ingest, make_app, project_dir, texts
from tests.conftest import CLAUDE_SAMPLE, run_lcm

SESSION = CLAUDE_SAMPLE
DETAIL = "The integration tests started failing on my machine and in CI"


def lcm(root: Path, *args: str) -> tuple[int, str, str]:
    """Run lcm on ``root``; the project's LCM_HOME is its sibling ``home`` directory."""
    home = root.parent / "home" / ".lcm"
    done = run_lcm("--project", str(root), *args, cwd=root, env={"LCM_HOME": str(home), "HOME": str(home.parent)})
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    root = project_dir(tmp_path)
    code, _out, err = lcm(root, "import", str(SESSION), "--project", str(root))
    assert code == 0, err
    return root


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Imported and compacted once for the read-only tests of this module."""
    root = project_dir(tmp_path_factory.mktemp("compacted"))
    (root.parent / "home").mkdir()
    assert lcm(root, "import", str(SESSION), "--project", str(root))[0] == 0
    code, out, err = lcm(root, "compact", "--all")
    assert code == 0, err
    assert "extractive" in err and "summaries created" in out
    return root


def test_import_compact_grep_expand_recovers_the_original_verbatim(compacted: Path) -> None:
    imported = compacted
    code, out, err = lcm(imported, "grep", "8432", "--scope", "messages", "--json")
    assert code == 0, err
    groups = json.loads(out)["groups"]
    covered = [g for g in groups if g["summary_id"]]
    assert covered, groups
    summary_id = covered[0]["summary_id"]
    hit_ids = {h["id"] for h in covered[0]["hits"]}
    code, out, err = lcm(imported, "expand", summary_id, "--include-messages", "--json")
    assert code == 0, err
    nodes = json.loads(out)["nodes"]
    messages = {n["id"]: n["content"] for n in nodes if n["kind"] == "message"}
    assert hit_ids <= set(messages)
    assert any(DETAIL in text for text in messages.values())
    code, out, _ = lcm(imported, "verify")
    assert code == 0 and "every message is reachable" in out


def test_describe_summary_message_and_lineage(compacted: Path) -> None:
    imported = compacted
    code, out, _ = lcm(imported, "grep", "8432", "--json")
    hit = next(h for g in json.loads(out)["groups"] if g["summary_id"] for h in g["hits"])
    code, out, err = lcm(imported, "describe", hit["id"], "--json")
    assert code == 0, err
    message = json.loads(out)
    assert message["kind"] == "message" and message["lineage"]["summaries"]
    summary_id = message["lineage"]["summaries"][0]
    code, out, _ = lcm(imported, "describe", summary_id)
    assert code == 0 and "source_messages (" in out and hit["id"] in out and "--- content ---" in out
    code, _, err = lcm(imported, "describe", "sum_0000000000000000")
    assert code == 1 and "not in this project" in err and "Traceback" not in err
    code, _, err = lcm(imported, "describe", "bogus")
    assert code == 2 and "msg_<number>" in err


def test_context_json_and_text(compacted: Path) -> None:
    imported = compacted
    code, out, err = lcm(imported, "context", "7c1f3a52", "--format", "json", "--budget", "100000")
    assert code == 0, err
    whole = json.loads(out)  # the session fits: every message raw, no summary needed
    assert whole["session_id"].startswith("7c1f3a52") and whole["dropped_items"] == 0
    assert not any("<summary id=" in json.dumps(m) for m in whole["messages"])
    tight = whole["token_estimate"] - 1
    code, out, err = lcm(imported, "context", "7c1f3a52", "--format", "json", "--budget", str(tight))
    assert code == 0, err
    data = json.loads(out)
    assert data["messages"][0]["content"][0]["text"].startswith("<summary id=\"sum_")
    assert data["fresh_tail_tokens"] <= data["token_estimate"] <= tight
    code, out, _ = lcm(imported, "context", "7c1f3a52", "--budget", str(tight))
    assert code == 0 and "<summary id=" in out
    code, _, err = lcm(imported, "context", "no-such-session")
    assert code == 1 and "no session" in err


def test_compact_dry_run_changes_nothing_then_search_ranks(imported: Path) -> None:
    code, out, _ = lcm(imported, "compact", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["conversations"][0]["action_taken"]
    code, out, _ = lcm(imported, "search", "integration port", "--json")
    assert code == 0
    document = json.loads(out)
    ranked = document["results"]
    assert ranked and all("rank" not in r and "kind" not in r for r in ranked)  # the order is the rank
    assert all(a["score"] >= b["score"] for a, b in itertools.pairwise(ranked))
    assert document["projects"] == [{"project_id": document["projects"][0]["project_id"], "root": str(imported)}]
    assert lcm(imported, "search", "zzzqqqxxyy")[0] == 1
    code, out, err = lcm(imported, "compact", "--session", "7c1f", "--budget", "100", "--json")
    assert code == 0, err
    report = json.loads(out)["conversations"][0]
    assert report["mode"] == "until_under" and report["action_taken"] and not report["dry_run"]
    assert report["tokens_after"] < report["tokens_before"]


def test_grep_modes_scopes_session_since_and_limit(compacted: Path) -> None:
    imported = compacted
    code, out, _ = lcm(imported, "grep", "port 84[0-9]2", "--mode", "regex", "--json", "--limit", "1",
                       "--session", "7c1f", "--since", "2025-09-01")
    assert code == 0 and sum(len(g["hits"]) for g in json.loads(out)["groups"]) == 1
    code, out, _ = lcm(imported, "grep", "8432", "--since", "2030-01-01")
    assert code == 1 and "no match" in out
    code, _, err = lcm(imported, "grep", "x", "--since", "yesterday")
    assert code == 2 and "ISO" in err
    code, _, err = lcm(imported, "grep", "8432", "--session", "no-such-session")
    assert code == 1 and "no session 'no-such-session' in this project" in err and "Traceback" not in err
    code, _, err = lcm(imported, "grep", "8432", "--session", "no-such-session", "--all-projects")
    assert code == 1 and "no session 'no-such-session' in any project" in err and "Traceback" not in err


def test_verify_reports_an_unreachable_message(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    app = make_app(root)
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(3))
        lost = storage.conversations.append_messages(cid, texts(1, start=3))[0]  # never added to the context
    app.close()
    code, out, _ = lcm(root, "verify")
    assert code == 1 and f"msg_{lost.message_id}" in out and "FAIL" in out
    code, out, _ = lcm(root, "verify", "--json")
    assert code == 1 and json.loads(out)["conversations"][0]["unreachable"] == [lost.message_id]


def test_all_projects_finds_and_expands_across_projects(tmp_path: Path) -> None:
    roots = [project_dir(tmp_path, "one"), project_dir(tmp_path, "two")]
    for n, root in enumerate(roots):
        app = make_app(root)  # LCM_HOME = tmp_path/home/.lcm, as lcm() uses
        with app.project() as storage:
            cid, _ = ingest(storage, f"s{n}", texts(20, start=n * 100))
            assert CompactionEngine(app).compact(storage, cid).action_taken
        app.close()
    code, out, _ = lcm(roots[0], "grep", "fact105", "--json")
    assert code == 1
    code, out, _ = lcm(roots[0], "grep", "fact105", "--all-projects", "--json")
    assert code == 0
    found = json.loads(out)
    assert len(found) == 1 and found[0]["groups"]  # only the projects with a hit are listed
    summary_id = found[0]["groups"][0]["summary_id"]
    assert summary_id
    code, out, _ = lcm(roots[0], "expand", summary_id, "--include-messages", "--all-projects", "--json")
    assert code == 0 and any("fact105" in n["content"] for n in json.loads(out)[0]["nodes"])
    code, out, _ = lcm(roots[0], "describe", summary_id, "--all-projects", "--json")
    assert code == 0 and json.loads(out)[0]["id"] == summary_id
    code, out, _ = lcm(roots[0], "search", "fact105", "--all-projects", "--json")
    assert code == 0
    document = json.loads(out)
    assert [p["root"] for p in document["projects"]] == [str(roots[1])]
    assert {r["project_id"] for r in document["results"]} == {document["projects"][0]["project_id"]}


def test_compact_verify_and_context_across_projects(tmp_path: Path) -> None:
    roots = [project_dir(tmp_path, "one"), project_dir(tmp_path, "two")]
    for n, root in enumerate(roots):
        app = make_app(root)
        with app.project() as storage:
            ingest(storage, f"s{n}", texts(30, start=n * 100))
        app.close()
    code, out, err = lcm(roots[0], "compact", "--all-projects", "--json")
    assert code == 0, err
    projects = json.loads(out)["projects"]
    assert len(projects) == 2 and all(p["conversations"][0]["action_taken"] for p in projects)
    code, out, err = lcm(roots[0], "compact", "--all-projects")
    assert code == 0 and "2 conversation(s) in 2 project(s)" in out, err
    code, out, _ = lcm(roots[0], "verify", "--all-projects", "--json")
    verified = json.loads(out)
    assert code == 0 and verified["ok"] and len(verified["projects"]) == 2
    assert lcm(roots[0], "context", "s1")[0] == 1  # the session is in the other project
    code, out, err = lcm(roots[0], "context", "s1", "--all-projects", "--json")
    assert code == 0 and json.loads(out)["session_id"] == "s1", err
    code, _, err = lcm(roots[0], "context", "nobody", "--all-projects")
    assert code == 1 and "in any project" in err
    code, _, err = lcm(roots[0], "compact", "--session", "nobody", "--all-projects")
    assert code == 1 and "in any project" in err


def test_expand_stops_at_the_token_cap(compacted: Path) -> None:
    imported = compacted
    code, out, _ = lcm(imported, "grep", "8432", "--json")
    summary_id = next(g["summary_id"] for g in json.loads(out)["groups"] if g["summary_id"])
    code, out, _ = lcm(imported, "expand", summary_id, "--include-messages", "--token-cap", "100", "--json")
    data = json.loads(out)
    assert code == 0 and data["truncated"] and data["tokens"] <= 100



@pytest.mark.parametrize("command", ["compact", "context", "grep", "search", "describe", "expand", "verify", "mcp"])
def test_every_command_has_a_useful_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and len(out) > 300
    assert "--json" in out or command == "mcp"
