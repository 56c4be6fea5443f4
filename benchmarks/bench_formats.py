"""Transcript format mapping throughput (``map_record``), against parsing the same lines.

Data: the real Claude Code sessions in ``../shared/testdata`` (as they are, and
with every record turned into a main-thread record so every line becomes a
message, the worst case) and the bundled Codex samples, repeated up to ~8 MB of
JSONL (``--quick``: 1 MB). Figures from the same run: ``json.loads`` of the lines
(the baseline every import pays anyway), then ``map_record`` of the parsed values,
in MB of source JSONL per second and records per second, with the ratio to the
baseline. Target: mapping costs no more than about twice the parse, so it stays a
small part of an import that must reach 30 MB/s with scrubbing and storage.
The repetition cannot flatter the mapper: ``map_record`` keeps nothing between
records, and the baseline parses the same lines.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lcm_format_claude.format import FORMAT as CLAUDE
from lcm_format_codex.format import FORMAT as CODEX

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT.parent / "shared" / "testdata" / "transcripts" / "claude-code"
CODEX_SAMPLES = ROOT / "formats" / "samples" / "codex"
MB = 1024 * 1024


def _lines(paths: list[Path], total: int) -> list[str]:
    source = [line for p in paths for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[str] = []
    size = 0
    while size < total:
        for line in source:
            out.append(line)
            size += len(line) + 1
    return out


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _report(name: str, lines: list[str], fmt: Any, transform: Callable[[Any], Any] = lambda r: r) -> None:
    size = sum(len(line) + 1 for line in lines) / MB
    parsed: list[Any] = []
    parse = _timed(lambda: parsed.extend(json.loads(line) for line in lines))
    records = [transform(r) for r in parsed]
    mapped: list[Any] = []
    map_time = _timed(lambda: mapped.extend(fmt.map_record(r) for r in records))
    messages = sum(m.message is not None for m in mapped)
    print(
        f"{name:<28} {size:6.1f} MB {len(lines):>8} records {messages:>8} messages | "
        f"json.loads {size / parse:7.1f} MB/s | map_record {size / map_time:7.1f} MB/s "
        f"{len(lines) / map_time:>9.0f} rec/s | map/parse time {map_time / parse:4.2f}x"
    )


def main(quick: bool) -> None:
    total = (1 if quick else 8) * MB
    claude = _lines(sorted(SESSIONS.glob("*.jsonl")), total)
    codex = _lines(sorted(CODEX.discover(CODEX_SAMPLES)), total)
    _report("claude (real sessions)", claude, CLAUDE)
    _report("claude (all main-thread)", claude, CLAUDE, lambda r: {**r, "isSidechain": False})
    _report("codex (samples)", codex, CODEX)


if __name__ == "__main__":
    main(quick=True)
