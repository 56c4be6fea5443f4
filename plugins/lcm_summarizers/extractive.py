"""The offline default: keep the lines an engineer needs later, within the target size.

Lines are scored by their strongest signal, in tiers: error messages and
tracebacks, commands and edited files, the opening line of each user
request, decisions and findings, other message openings, then paths, URLs,
identifiers and measured numbers. The best distinct lines that fit the
budget are emitted in their original (time) order, each under the timestamp
of the message it came from. Deterministic: the same segment always gives
the same text.

Speed matters (compaction of tens of MB): each tier is one linear-time RE2
pass over the UTF-8 bytes, matching whole lines, and lower tiers are skipped
once higher ones already hold more than the budget.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import re2

from lcm_framework.summarize.tokens import estimate_tokens

if TYPE_CHECKING:
    from lcm_framework.config import Config
    from lcm_framework.summarize.contracts import SummaryRequest

NOTICE = (
    "lcm: using the offline extractive summarizer (no summarizer.model configured); "
    "summaries keep key lines verbatim instead of prose."
)
MAX_LINE = 240
MAX_TOOL_LINE = 160
_ERRORS = (
    rb"Traceback \(most recent|[A-Z]\w*(?:Error|Exception)\b|Error: |ERROR|FAILED|FAIL:|fatal: |panic: |"
    rb"npm ERR!|[Ee]xit (?:code|status):? [1-9]|No such file|Permission denied|command not found|"
    rb"[Cc]annot find|is not defined|Segmentation fault|\"is_error\": ?true|AssertionError"
)
_DECISIONS = (
    rb"[Dd]ecided|[Dd]ecision|[Ii]nstead of|[Rr]oot cause|[Tt]he fix|(?:[Ff]ixed|[Rr]esolved) (?:the|by|it|this|a)|"
    rb"TODO:|FIXME|"
    rb"[Tt]he (?:issue|problem|bug|cause) (?:is|was)|[Cc]onclusion|[Ii]mportant|[Ww]e'll |[Ll]et's |I'll "
)
# URLs, paths and measured numbers. Kept deliberately simple: richer alternatives (backticked code,
# definitions, bounded repeats) make RE2's DFA blow up and this pass 10-20x slower.
_REFERENCES = (
    rb"https?://|/[\w.@-]+/[\w.@-]|[\w.@-]/[\w.@/-]*\.[A-Za-z]|\d\.\d+\.\d|"
    rb"\d ?(?:ms|s|sec|seconds|minutes|[KMGT]i?B|%|tokens|bytes|lines|files|tests|passed|failed|errors)\b"
)


def _lines_with(pattern: bytes) -> Any:
    return re2.compile(rb"(?m)[^\n]*(?:" + pattern + rb")[^\n]*")


# Message headers as the compaction engine writes them: "[2026-02-17 07:37] user: ..." for messages,
# "[2026-02-17 07:37 - 2026-02-17 08:00]" for summaries. Python's re is fastest here (literal prefix).
_HEADER = re.compile(rb"\n\[(\d{4}-\d\d-\d\d[T ][\d:.]{4,12}Z?(?: - [^\]\n]{4,40})?)\]")
_USER_HEADER = re.compile(rb"\n\[\d{4}-[^\]\n]{5,60}\] user: ")
_TOOL_CALL = re.compile(rb"tool call ([^:\n]{1,60}):")
_CHANGING_TOOLS = frozenset(
    {b"Bash", b"Edit", b"Write", b"MultiEdit", b"NotebookEdit", b"shell", b"exec_command", b"apply_patch"}
)
_ERROR_LINES = _lines_with(_ERRORS)
_DECISION_LINES = _lines_with(_DECISIONS)
_REFERENCE_LINES = _lines_with(_REFERENCES)
_CODE_SPAN = re.compile(rb"`[^`\n]{2,80}`")  # identifiers quoted in prose; Python's re: literal prefix
W_ERROR, W_CHANGE, W_USER, W_DECISION, W_TOOL, W_REFERENCE, W_HEADER = 7, 6, 6, 5, 4, 3, 2
_WEAKER_TIERS = (
    (W_DECISION, (_DECISION_LINES,)),
    (W_REFERENCE, (_REFERENCE_LINES, _CODE_SPAN)),
    (W_HEADER, (_HEADER,)),
)
_TYPICAL_LINE = 120  # characters, to judge whether weaker tiers could still be chosen
_FRAMED_BUDGET = 600  # characters; smaller budgets get no header and footer lines
_PREFIX = 48  # room for a "[timestamp] " (or "[start - end] ") prefix and the newline


class ExtractiveSummarizer:
    """Deterministic, offline summaries made of the segment's most informative lines."""

    name = "extractive"
    notice = NOTICE

    def __init__(self, config: Config | None = None) -> None:
        self.config = config

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def summarize(self, request: SummaryRequest) -> str:
        return extract(request.segment, request.target_tokens)


def extract(segment: str, target_tokens: int) -> str:
    """The lines of ``segment`` worth keeping, within about ``target_tokens`` tokens (chars/4)."""
    budget = max(target_tokens, 16) * 4
    segment = segment.strip()
    if len(segment) <= budget:
        return segment
    data = b"\n" + segment.encode("utf-8", "surrogatepass")
    total = data.count(b"\n")
    framed = budget >= _FRAMED_BUDGET
    head = f"[extractive summary of {total} lines; {_time_range(data)}]" if framed else ""
    room = budget - len(head) - 80 if framed else budget  # 80: the closing "Expand for details" line
    found: list[tuple[int, int]] = []  # (weight, any position inside the line)
    found += [(W_ERROR, m.start()) for m in _ERROR_LINES.finditer(data)]
    found += [(W_USER, m.start() + 1) for m in _USER_HEADER.finditer(data)]
    found += [(W_CHANGE if m.group(1) in _CHANGING_TOOLS else W_TOOL, m.start()) for m in _TOOL_CALL.finditer(data)]
    for weight, scans in _WEAKER_TIERS:
        if _filled(found, room):
            break
        for scan in scans:
            found += [(weight, m.start() + (scan is _HEADER)) for m in scan.finditer(data)]
    chosen = _choose(data, found, room)
    body = _render(data, chosen)
    footer = f"Expand for details about: the other {total - len(chosen)} of {total} source lines" if framed else ""
    return "\n".join(part for part in (head, body, footer) if part)


def _filled(found: list[tuple[int, int]], room: int) -> bool:
    """Whether the candidates so far would already fill ``room`` (estimated, with the per-weight cap)."""
    per_weight = Counter(weight for weight, _anchor in found)
    return sum(min(count * _TYPICAL_LINE, room // 2) for count in per_weight.values()) >= room


def _choose(data: bytes, found: list[tuple[int, int]], room: int) -> list[tuple[int, int, int]]:
    """(start, end, width) of the best distinct lines fitting ``room`` characters, in source order.

    A first round lets no single weight take more than half the room, so a run of tool calls cannot
    crowd out the user's requests or the errors; a second round fills what is left.
    """
    ranked = sorted(found, key=lambda item: (-item[0], -item[1]))
    seen_lines: set[int] = set()
    seen_text: set[bytes] = set()
    chosen: list[tuple[int, int, int]] = []
    find, rfind = data.find, data.rfind
    for share in (room // 2, room):
        spent: dict[int, int] = {}
        for weight, anchor in ranked:
            if room < 24:
                break
            start = anchor if data[anchor - 1 : anchor] == b"\n" else rfind(b"\n", 0, anchor) + 1
            if start in seen_lines:
                continue
            end = find(b"\n", start)
            end = len(data) if end < 0 else end
            width = MAX_TOOL_LINE if weight in (W_CHANGE, W_TOOL) else MAX_LINE
            cost = min(end - start, width + 2) + _PREFIX
            if cost > room or spent.get(weight, 0) + cost > share:
                continue
            seen_lines.add(start)
            key = data[start : min(end, start + width)].strip()
            if not key or key in seen_text:
                continue
            seen_text.add(key)
            chosen.append((start, end, width))
            spent[weight] = spent.get(weight, 0) + cost
            room -= cost
    chosen.sort()
    return chosen


def _render(data: bytes, chosen: list[tuple[int, int, int]]) -> str:
    out: list[str] = []
    shown = ""
    for start, end, width in chosen:
        text = _clip(data, start, end, width)
        stamp, stamp_at = _stamp_before(data, start)
        if stamp and stamp != shown and stamp_at != start:
            text = f"[{stamp}] {text}"
        shown = stamp or shown
        out.append(text)
    return "\n".join(out)


def _stamp_before(data: bytes, pos: int) -> tuple[str, int]:
    """Timestamp of the message header at or before ``pos`` and the header's position."""
    at = data.rfind(b"\n[", 0, pos + 1)
    while at >= 0:
        match = _HEADER.match(data, at)
        if match:
            return match.group(1).decode("ascii", "replace"), at + 1
        at = data.rfind(b"\n[", 0, at)
    return "", -1


def _time_range(data: bytes) -> str:
    first_match = _HEADER.search(data)
    if first_match is None:
        return "no timestamps"
    first = first_match.group(1).decode("ascii", "replace").split(" - ")[0]
    last = _stamp_before(data, len(data))[0].split(" - ")[-1]
    return first if first == last else f"{first} .. {last}"


def _clip(data: bytes, start: int, end: int, width: int) -> str:
    """The line, stripped; a long line keeps its first ``width`` bytes."""
    if end - start <= width:
        return data[start:end].decode("utf-8", "replace").strip()
    return data[start : start + width].decode("utf-8", "ignore").strip() + " …"
