"""The bundled sample sessions, and both formats reached through the real plugin hooks."""

from __future__ import annotations

from pathlib import Path

import pytest
from lcm_format_claude.format import FORMAT as CLAUDE
from lcm_format_codex.format import FORMAT as CODEX

from lcm_framework.storage.models import PartKind, Role
from lcm_framework.transcripts.contracts import TranscriptFormat
from tests.conftest import CLAUDE_SESSIONS

from .helpers import SAMPLES, map_all, messages, plugins, read_jsonl, unpaired_calls

CLAUDE_SAMPLES = sorted(CLAUDE.discover(SAMPLES / "claude" / "projects"))
CODEX_SAMPLES = sorted(CODEX.discover(SAMPLES / "codex"))


def test_samples_are_found_through_the_client_env_vars() -> None:
    (claude_root,) = CLAUDE.default_roots({"CLAUDE_CONFIG_DIR": str(SAMPLES / "claude")})
    (codex_root,) = CODEX.default_roots({"CODEX_HOME": str(SAMPLES / "codex")})
    assert [p.name for p in CLAUDE.discover(claude_root)] == [p.name for p in CLAUDE_SAMPLES]
    assert len(CLAUDE_SAMPLES) == 2
    assert [p.relative_to(codex_root).parts[0] for p in CODEX.discover(codex_root)] == [
        "archived_sessions",
        "sessions",
    ]


@pytest.mark.parametrize(
    ("fmt", "path"),
    [(CLAUDE, p) for p in CLAUDE_SAMPLES] + [(CODEX, p) for p in CODEX_SAMPLES],
    ids=lambda v: v.name if isinstance(v, Path) else v.provider,
)
def test_samples_map_completely_with_paired_tool_calls(fmt: TranscriptFormat, path: Path) -> None:
    records = read_jsonl(path)
    assert 10 <= len(records) <= 80
    assert fmt.sniff(records[:5])
    mapped = map_all(fmt, records)
    msgs = messages(mapped)
    assert len(msgs) + sum(1 for m in mapped if m.kind) >= len(records) // 2  # turns and scaffolding
    assert unpaired_calls(msgs) == (set(), set())
    assert {m.session_id for m in mapped if m.session_id} == {path.stem.removeprefix("rollout-")[-36:]}
    assert {m.cwd for m in mapped if m.cwd} == {"/home/dev/orders-api" if fmt is CLAUDE else "/home/dev/ledger"}
    assert all(
        m.timestamp is not None for m in mapped if m.metadata.get("type") not in {"summary", "file-history-snapshot"}
    )
    roles = {m.role for m in msgs}
    assert {Role.USER, Role.ASSISTANT, Role.TOOL} <= roles


def _contents(paths: list[Path], fmt: TranscriptFormat) -> str:
    return "\n".join(m.content for p in paths for m in messages(map_all(fmt, read_jsonl(p))))


def test_planted_details_are_in_message_content() -> None:
    claude = _contents(CLAUDE_SAMPLES, CLAUDE)
    for detail in (
        "OSError: [Errno 98] Address already in use",
        "8432",
        "48213",
        "src/orders_api/testing.py",
        "3e1a9c4",
    ):
        assert detail in claude
    codex = _contents(CODEX_SAMPLES, CODEX)
    for detail in ("attempt to subtract with overflow", "src/balance.rs:88", "InsufficientFunds", "5d7e9b1", "v0.7.1"):
        assert detail in codex


def test_samples_flag_their_failed_tool_calls() -> None:
    for fmt, paths, expected in ((CLAUDE, CLAUDE_SAMPLES, 3), (CODEX, CODEX_SAMPLES, 1)):
        results = [p for m in messages(map_all(fmt, [r for x in paths for r in read_jsonl(x)])) for p in m.parts]
        assert sum(p.is_error for p in results if p.kind is PartKind.TOOL_RESULT) == expected


def test_each_format_sniffs_only_its_own_samples() -> None:
    for path in CLAUDE_SAMPLES:
        assert not CODEX.sniff(read_jsonl(path)[:5])
    for path in CODEX_SAMPLES:
        assert not CLAUDE.sniff(read_jsonl(path)[:5])


def test_formats_registered_through_entry_points() -> None:
    loaded = plugins()
    formats = loaded.formats()
    assert formats["claude-code/claude-jsonl/v1"].provider == "claude"
    assert formats["codex/codex-jsonl/v1"].provider == "codex"
    owners = loaded.provenance("format")
    assert (owners["claude-code/claude-jsonl/v1"], owners["codex/codex-jsonl/v1"]) == ("claude_code", "codex")


def test_sniff_hook_picks_the_right_format() -> None:
    loaded = plugins()
    for path in [*CLAUDE_SAMPLES, *sorted(CLAUDE_SESSIONS.glob("*.jsonl"))]:
        assert loaded.sniff_format(read_jsonl(path)[:5]) == "claude-code/claude-jsonl/v1", path
    for path in CODEX_SAMPLES:
        assert loaded.sniff_format(read_jsonl(path)[:5]) == "codex/codex-jsonl/v1", path
    for head in ([], [{"hello": "world"}], [[1, 2, 3]], [{"role": "user", "content": "x"}]):
        assert loaded.sniff_format(head) is None


def test_disabled_plugin_registers_nothing() -> None:
    loaded = plugins({"LCM_DISABLE_PLUGINS": "codex"})
    assert "codex/codex-jsonl/v1" not in loaded.formats()
    assert loaded.sniff_format(read_jsonl(CODEX_SAMPLES[0])[:5]) is None
