"""Transcripts the real Claude Code and Codex CLIs wrote (tests/formats/agent_written/): the agents' scaffolding,
client metadata and LCM's own restored context are native records with a kind, never messages."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from lcm_format_claude.format import FORMAT as CLAUDE
from lcm_format_codex.format import FORMAT as CODEX

from lcm_framework.storage.models import Role

from .helpers import read_jsonl

HERE = Path(__file__).parent / "agent_written"
SCAFFOLDING = ("<skills_instructions>", "<permissions instructions>", "<environment_context>",
               "# Restored context (LCM)", "<local-command", "<command-name>", "This session is being continued")


def conversation(fmt: object, name: str) -> tuple[list[tuple[Role, str]], Counter[str]]:
    mapped = [fmt.map_record(r) for r in read_jsonl(HERE / name)]  # type: ignore[attr-defined]
    turns = [(m.message.role, m.message.content) for m in mapped if m.message is not None]
    return turns, Counter(m.kind for m in mapped if m.kind)


def test_claude_compact_session_keeps_only_the_turns() -> None:
    turns, kinds = conversation(CLAUDE, "claude-2.1.197-compact.jsonl")
    assert [role for role, _ in turns] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert turns[0][1] == "run the echo command please" and turns[2][1] == "hello-e2e-marker"
    assert not any(tag in text for _, text in turns for tag in SCAFFOLDING)
    # the compact boundary (system), the caveat (isMeta), the /compact echo and its stdout, two SessionStart
    # hook runs; Claude's summary; the agent, skill and MCP listings Claude injects
    assert kinds == {"client_meta": 6, "compact_summary": 1, "agent_scaffolding": 3}


def test_claude_never_reimports_lcm_context() -> None:
    turns, kinds = conversation(CLAUDE, "claude-2.1.197-restored.jsonl")
    assert turns == [(Role.USER, "new session prompt"), (Role.ASSISTANT, "ok new")]
    assert kinds["lcm_context"] == 2  # the SessionStart hook's output and the context attachment it made


def test_codex_session_keeps_only_the_turns() -> None:
    turns, kinds = conversation(CODEX, "codex-0.171.0-shell.jsonl")
    assert [role for role, _ in turns] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert turns[0][1] == "run the echo command please" and "hello-e2e-marker" in turns[2][1]
    assert not any(tag in text for _, text in turns for tag in SCAFFOLDING)
    assert kinds == {"agent_scaffolding": 2}  # skills list and permissions (one record), environment context


def test_codex_never_reimports_lcm_context() -> None:
    turns, kinds = conversation(CODEX, "codex-0.171.0-restored.jsonl")
    assert [role for role, _ in turns] == [Role.USER, Role.ASSISTANT]
    assert kinds == {"agent_scaffolding": 2, "lcm_context": 1}
    assert not any(tag in text for _, text in turns for tag in SCAFFOLDING)
