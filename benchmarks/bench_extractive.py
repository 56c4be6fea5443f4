"""Extractive summarizer throughput on leaf segments built from the real sessions.

Data: the real Claude Code sessions in ``../shared/testdata`` mapped by the
Claude Code format plugin into messages, written as the compaction engine
writes leaf segments (``[YYYY-MM-DD HH:MM] role: text``), cut into ~20k-token
chunks and repeated up to ~16 MB of segment text (about 4M tokens at chars/4,
the token volume quoted for ~50 MB of sessions; ``--quick``: 2 MB). This is an
upper bound: the Claude Code format maps sidechain records to no message, so
50 MB of these sessions give the summarizer far less text than that. The
repetition flatters one thing, stated here: the summarizer caches the kind of
each distinct term (identifier, number, word; 65,536 terms), and repeated
segments bring no new term, so on a larger vocabulary that lookup misses more.
Its scoring keeps nothing between segments.

Figures, all from the same run: the baselines (UTF-8 encoding of the same
text, and the deterministic truncation fallback), then the extractive
summarizer at the leaf target of 1,000 tokens. Target: several tens of MB/s,
so that extractive compaction of 50 MB of sessions costs well under a second.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from lcm_format_claude.format import FORMAT
from lcm_summarizers.extractive import extract
from lcm_summarizers.truncate import truncate_text

from lcm_framework.compaction.segments import stamp

SESSIONS = Path(__file__).resolve().parent.parent.parent / "shared" / "testdata" / "transcripts" / "claude-code"
MB = 1024 * 1024
CHUNK_CHARS = 80_000  # ~20k tokens: compaction.leaf_chunk_tokens
LEAF_TARGET = 1_000


def session_text() -> str:
    blocks = []
    for path in sorted(SESSIONS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                message = FORMAT.map_record(json.loads(line)).message
            except ValueError:
                continue
            if message is not None and message.content:
                blocks.append(f"[{stamp(message.created_at)}] {message.role.value}: {message.content}")
    return "\n\n".join(blocks)


def chunks(total_chars: int) -> list[str]:
    text = session_text()
    out: list[str] = []
    used = 0
    while used < total_chars:
        for start in range(0, len(text), CHUNK_CHARS):
            piece = text[start : start + CHUNK_CHARS]
            out.append(piece)
            used += len(piece)
            if used >= total_chars:
                break
    return out


def timed(work: Callable[[str], object], pieces: list[str], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for piece in pieces:
            work(piece)
        best = min(best, time.perf_counter() - started)
    return best


def main(quick: bool) -> None:
    pieces = chunks((2 if quick else 16) * MB)
    size = sum(len(p) for p in pieces)
    print(f"data: {len(pieces)} segments, {size / MB:.1f} MB of segment text (~{size // 4 / 1e6:.1f}M tokens)")
    encode = timed(lambda s: s.encode("utf-8"), pieces)
    truncate = timed(lambda s: truncate_text(s, 512), pieces)
    extractive = timed(lambda s: extract(s, LEAF_TARGET), pieces)
    for label, seconds in (("baseline utf-8 encode", encode), ("baseline truncate", truncate),
                           ("extractive (target 1000)", extractive)):
        print(f"{label:28s} {seconds:7.3f} s  {size / MB / seconds:9.1f} MB/s")
    print(f"extractive / encode: {extractive / encode:.1f}x slower; extractive / truncate: "
          f"{extractive / truncate:.1f}x slower")
    ratio = sum(len(extract(p, LEAF_TARGET)) for p in pieces[:50]) / sum(len(p) for p in pieces[:50])
    print(f"extractive output / input size (first 50 segments): {ratio:.3f}")
