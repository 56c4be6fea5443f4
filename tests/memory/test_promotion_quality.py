"""Promotion keeps what a user would call a memory: the user's own words and commands that worked, never the
client's slash-command expansions, pasted templates or a sub-agent's instructions; a confirmation counts once,
and a forgotten memory stays forgotten. Through the real CLI on generated Claude Code sessions."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lcm_framework.memory.extract import extract, own_words
from lcm_framework.storage.models import Message, MessagePart, PartKind, Role
from lcm_framework.transcripts.contracts import CLIENT_AUTHORED
from tests.conftest import run_lcm

SMALL = ["-c", "compaction.leaf_chunk_tokens=600", "-c", "compaction.leaf_target_tokens=100",
         "-c", "compaction.leaf_min_fanout=2", "-c", "compaction.condensed_target_tokens=100",
         "-c", "compaction.fresh_tail_count=2"]
TEMPLATE_RULE = "Make sure to include the important parts of the Cursor rules"
TYPED_RULE = "Never push to main directly, open a pull request"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


class Session:
    """A Claude Code session file written record by record."""

    def __init__(self, cwd: Path, session_id: str) -> None:
        self.records: list[dict[str, Any]] = []
        self.base = {"isSidechain": False, "userType": "external", "cwd": str(cwd), "sessionId": session_id,
                     "version": "2.0.28", "gitBranch": "main"}

    def add(self, kind: str, content: Any, **extra: Any) -> None:
        n = len(self.records)
        parent = self.records[-1]["uuid"] if self.records else None
        self.records.append({**self.base, "parentUuid": parent, "uuid": str(uuid.uuid4()), "type": kind,
                             "timestamp": f"2025-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
                             "message": {"role": kind, "content": content}, **extra})

    def shell(self, call_id: str, command: str, output: str, then: str) -> None:
        self.add("assistant", [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}])
        self.add("user", [{"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": False}])
        self.add("assistant", [{"type": "text", "text": then}])

    def filler(self, turns: int) -> None:
        for i in range(turns):
            self.add("user", f"Next step {i}: look at the module layout and tell me what each part of it does.")
            self.add("assistant", [{"type": "text", "text": f"Part {i} of the layout holds the handlers, the "
                                    "models and a few helpers; nothing there needs a change right now."}])

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def _session(root: Path, tmp: Path, name: str, *, typed: bool = True) -> Path:
    session = Session(root, str(uuid.uuid5(uuid.NAMESPACE_URL, name)))
    session.add("user", "<command-message>init is analyzing your codebase…</command-message>\n"
                        "<command-name>/init</command-name>")
    session.add("user", [{"type": "text", "text": f"Please analyze this codebase. {TEMPLATE_RULE}. Don't include "
                          "generic development practices in the file you write."}], isMeta=True)
    if typed:
        session.add("user", f"{TYPED_RULE}. Then check the types.")
    session.shell(f"{name}-ls", "ls -la src", "ok: 3 files", "Three files are there.")
    session.shell(f"{name}-tsc", "npx tsc --noEmit --skipLibCheck", "",
                  "Great! The TypeScript check succeeded without errors.")
    session.filler(12)
    return session.write(tmp / "sources" / f"{name}.jsonl")


def _memories(root: Path) -> list[dict[str, Any]]:
    done = run_lcm("memory", "list", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["memories"])


def _promote(root: Path) -> dict[str, Any]:
    done = run_lcm("promote", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)[0])


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


def test_promotion_takes_the_users_words_and_commands_that_worked_not_the_clients(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert run_lcm("import", str(_session(root, tmp_path, "one")), "--project", str(root), cwd=root).returncode == 0
    done = run_lcm(*SMALL, "compact", "--all", cwd=root)
    assert done.returncode == 0, done.stderr
    contents = [m["content"] for m in _memories(root)]
    assert any(TYPED_RULE in c for c in contents), contents
    assert "Command that worked: `npx tsc --noEmit --skipLibCheck`" in contents  # confirmed by the next words
    assert not any("Cursor rules" in c or "generic development" in c for c in contents), contents
    assert not any("ls -la" in c for c in contents), contents


def test_a_confirmation_counts_once_and_a_forgotten_memory_stays_forgotten(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for name in ("one", "two"):
        assert run_lcm("import", str(_session(root, tmp_path, name)), "--project", str(root),
                       cwd=root).returncode == 0
    assert run_lcm(*SMALL, "compact", "--all", cwd=root).returncode == 0
    rule = next(m for m in _memories(root) if TYPED_RULE in m["content"])
    assert len(rule["lineage"]["summaries"]) == 2  # the second session confirmed it and is cited
    confidence = rule["confidence"]
    for _ in range(2):
        again = _promote(root)
        assert again["created"] == [] and again["reinforced"] == [], again
    assert next(m for m in _memories(root) if m["id"] == rule["id"])["confidence"] == confidence

    assert run_lcm("memory", "forget", rule["id"], cwd=root).returncode == 0
    assert _promote(root)["created"] == []
    assert not any(TYPED_RULE in m["content"] for m in _memories(root))
    added = run_lcm("memory", "add", f"{TYPED_RULE}.", "--json", cwd=root)  # the user may say it again
    assert added.returncode == 0, added.stderr


def _message(mid: int, role: Role, content: str) -> Message:
    return Message(mid, 1, mid, role, content, 10, NOW)


def _text(mid: int, text: str, metadata: str | None = None) -> MessagePart:
    return MessagePart(f"p{mid}", mid, 0, PartKind.TEXT, text, None, None, False, None, metadata)


def test_own_words_are_the_users_typed_turns_and_every_assistant_turn() -> None:
    typed = _message(1, Role.USER, "Never push to main directly.")
    assert own_words(typed, [_text(1, typed.content)])
    assert not own_words(typed, [_text(1, typed.content, CLIENT_AUTHORED)])
    assert not own_words(typed, [_text(1, typed.content)], subagent=True)
    template = _message(2, Role.USER, "## Process\n\n1. Never repeat yourself.\n")
    assert not own_words(template, [_text(2, template.content)])
    pasted = _message(3, Role.USER, "Always check this.\n" + "line\n" * 25)
    assert not own_words(pasted, [_text(3, pasted.content)])
    answer = _message(4, Role.ASSISTANT, "## Summary\nThe root cause was a stale lock file.")
    assert own_words(answer, [], subagent=True)
    found = extract([typed, answer], {1: [_text(1, typed.content, CLIENT_AUTHORED)]})
    assert [c.kind for c in found] == ["root_cause"]
