"""Helpers shared by the format tests: reading JSONL and checking mapped sessions."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lcm_framework.kernel.plugins import Plugins, build_plugins
from lcm_framework.storage.models import NewMessage, PartKind
from lcm_framework.transcripts.contracts import MappedRecord, TranscriptFormat

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "formats" / "samples"


def read_jsonl(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def map_all(fmt: TranscriptFormat, records: Iterable[Any]) -> list[MappedRecord]:
    return [fmt.map_record(r) for r in records]


def messages(mapped: Iterable[MappedRecord]) -> list[NewMessage]:
    return [m.message for m in mapped if m.message is not None]


def unpaired_calls(msgs: Iterable[NewMessage]) -> tuple[set[str], set[str]]:
    """(tool call ids without a result, result ids without a call) over all parts."""
    calls: set[str] = set()
    results: set[str] = set()
    for msg in msgs:
        for part in msg.parts:
            if part.kind is PartKind.TOOL_CALL:
                assert part.tool_call_id, part
                calls.add(part.tool_call_id)
            elif part.kind is PartKind.TOOL_RESULT:
                assert part.tool_call_id, part
                results.add(part.tool_call_id)
    return calls - results, results - calls


def plugins(env: Mapping[str, str] | None = None) -> Plugins:
    """The real plugin manager from entry points (warnings about absent sibling plugins swallowed)."""
    return build_plugins(env or {}, stderr=io.StringIO())
