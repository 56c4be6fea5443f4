"""The offline default: keep the sentences and lines that carry the most information, within the target.

The segment is split into messages (``[2026-02-17 07:37] user: ...`` headers,
or ``[start - end]`` headers of summaries being condensed) and each message into
units: sentences of prose, lines of tool output. A unit scores by what it
tells that the rest of the segment does not:

* rare terms: each distinct word weighs its inverse frequency among the units;
  identifiers (``AB-1234``, ``retry_budget``, ``v2.14.3``, paths, URLs) weigh
  more, bare numbers and hashes less (they are rare by nature); a unit counts
  its 8 weightiest terms (a line of 60 ids is not 60 facts);
* error lines weigh 1.6x; decisions and commands that change things get a
  bonus, the opening of each user request too;
* repeats count once: the same text anywhere, or within one tool output the
  same line once digits and hashes are blanked (log lines, test listings);
  tool-output lines that are mostly punctuation (JSON noise) are never chosen.

Tool output and conversation share the budget in proportion to their size (each
at least a quarter when both exist). The best units per character are chosen,
then printed in their original order under the header of the message they came
from. Size follows the source: a leaf gets a twentieth of its tokens (1,000 for
a 20,000-token chunk), at least 400, never more than the target. The last line says how much
was left out and names its topics (identifiers the conversation mentions there, never
code vocabulary). Deterministic: the same segment gives the same text.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import re2

from lcm_framework.plugin_api.storage import STOP_WORDS
from lcm_framework.plugin_api.summarize import estimate_tokens

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.summarize import SummaryRequest

NOTICE = (
    "lcm: using the offline extractive summarizer (no summarizer.model configured); "
    "summaries keep key sentences and lines verbatim instead of prose."
)
MAX_UNIT = 280  # characters of one unit; longer ones are clipped with " …"
TERMS_PER_UNIT = 8  # a unit's information: its 8 weightiest terms (a list of 60 ids is not 60 facts)
ERROR_WEIGHT = 1.6  # errors are what an engineer most often needs back
SOURCE_SHARE = 20  # a leaf summary gets about 1/SOURCE_SHARE of its source's tokens
MIN_LEAF_TOKENS = 400  # but short sources keep at least this much (never more than the target)
_FRAMED_BUDGET = 600  # characters; smaller budgets get no header and footer lines
_FOOTER_ROOM = 200

_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d[T ][\d:.]{4,12}Z?(?: - [^\]\n]{4,40})?)\](?: ([a-z_]+):)? ?", re.M)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\[`\"'(])")
_TERM = re.compile(r"[a-z0-9_][\w.\-/:@#]*[a-z0-9_]")  # applied to lower-cased text; two characters or more
_IDENTIFIER = re.compile(r"[a-z]+[-_][a-z0-9]|[a-z][0-9]|[0-9][a-z]|\w/\w|\w\.\w+\.\w|^v?\d+\.\d+\.\d+|://")
_NUMBERISH = re.compile(r"^[0-9a-f.:\-]+$|^\d")
_ERROR = (
    r"Traceback \(most recent|[A-Z]\w*(?:Error|Exception)\b|\bError: |\bERROR\b|\bFAILED\b|\bFAIL:|fatal: |panic: |"
    r"npm ERR!|[Ee]xit (?:code|status):? [1-9]|No such file|Permission denied|command not found|"
    r"[Cc]annot find|is not defined|Segmentation fault|\"is_error\": ?true|AssertionError"
)
_DECISION = (
    r"[Dd]ecided|[Dd]ecision|[Ii]nstead of|[Rr]oot cause|[Tt]he fix|(?:[Ff]ixed|[Rr]esolved) (?:the|by|it|this|a)|"
    r"TODO:|FIXME|[Tt]he (?:issue|problem|bug|cause) (?:is|was)|[Cc]onclusion|[Ii]mportant|[Ww]e'll |[Ll]et's |I'll "
)
_FLAGGED = re2.compile(f"(?P<error>{_ERROR})|(?P<decision>{_DECISION})")  # no match of either spans a newline
_TOOL_CALL = re.compile(r"^tool call ([^:\n]{1,60}):")
_CHANGING_TOOLS = frozenset({"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "shell", "exec_command",
                             "apply_patch"})
_SHAPE = re.compile(r"\b[0-9a-fA-F]{6,}\b|\d+")
_NOT_ALNUM = re.compile(r"[\W_]+")


@dataclass(slots=True)
class _Message:
    stamp: str
    role: str
    start: int  # character offset of the header in the segment
    tool_output: bool


@dataclass(slots=True)
class _Unit:
    message: int
    order: int
    text: str
    terms: frozenset[str]
    bonus: float
    tool: bool
    error: bool
    score: float = 0.0


class ExtractiveSummarizer:
    """Deterministic, offline summaries made of the segment's most informative sentences and lines."""

    name = "extractive"
    notice = NOTICE

    def __init__(self, config: Config | None = None) -> None:
        self.config = config

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def summarize(self, request: SummaryRequest) -> str:
        target = request.target_tokens
        if request.depth == 0:
            target = min(target, max(estimate_tokens(request.segment) // SOURCE_SHARE, MIN_LEAF_TOKENS))
        return extract(request.segment, target)


def extract(segment: str, target_tokens: int) -> str:
    """The units of ``segment`` worth keeping, within about ``target_tokens`` tokens (chars/4)."""
    budget = max(target_tokens, 16) * 4
    segment = segment.strip()
    if len(segment) <= budget:
        return segment
    segment = segment.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # re2 needs valid UTF-8
    messages, units = _units(segment)
    lines = segment.count("\n") + 1
    framed = budget >= _FRAMED_BUDGET
    head = f"[extractive summary of {lines} lines; {_time_range(messages)}]" if framed else ""
    room = budget - len(head) - (_FOOTER_ROOM if framed else 0) - 2
    _score(units)
    chosen = _choose(units, messages, room)
    body = _render(units, messages, chosen)
    while len(body) > room and chosen:  # the estimate of prefixes was short: drop the weakest
        chosen.discard(min(chosen, key=lambda i: (units[i].score, -i)))
        body = _render(units, messages, chosen)
    footer = _footer(units, chosen, lines) if framed else ""
    return "\n".join(part for part in (head, body, footer) if part)


def _units(segment: str) -> tuple[list[_Message], list[_Unit]]:
    headers = list(_HEADER.finditer(segment))
    if not headers or headers[0].start() > 0:
        headers.insert(0, None)  # type: ignore[arg-type]  # text before the first header
    messages: list[_Message] = []
    units: list[_Unit] = []
    known: dict[str, frozenset[str]] = {}  # terms by text: tool output repeats lines
    previous_call = False
    for n, header in enumerate(headers):
        start = header.end() if header else 0
        end = headers[n + 1].start() if n + 1 < len(headers) else len(segment)
        text = segment[start:end].strip()
        role = (header.group(2) or "") if header else ""
        call = _TOOL_CALL.match(text)
        tool_output = role == "tool" or (role == "user" and previous_call and call is None)
        previous_call = call is not None
        messages.append(_Message(header.group(1) if header else "", role, header.start() if header else 0,
                                 tool_output))
        index = len(messages) - 1
        pieces = [piece if len(piece) <= MAX_UNIT else piece[:MAX_UNIT].rstrip() + " …"  # what can be shown
                  for piece in ([text] if call else _pieces(text, prose=not tool_output))]
        errors, decisions = _flagged(pieces)
        for order, piece in enumerate(pieces):
            bonus = 0.0
            if call:
                bonus = 3.0 if call.group(1) in _CHANGING_TOOLS else 1.0
            elif order == 0 and role == "user" and not tool_output:
                bonus = 2.0
            if order in decisions:
                bonus += 2.5
            terms = known.get(piece)
            if terms is None:
                terms = known[piece] = frozenset(_TERM.findall(piece.lower())) - STOP_WORDS
            units.append(_Unit(index, order, piece, terms, bonus, tool_output, order in errors))
    return messages, units


def _flagged(pieces: list[str]) -> tuple[set[int], set[int]]:
    """Indexes of the pieces holding an error line, and of those holding a decision: one re2 scan of the
    pieces joined by newlines (one call per message, not two per piece)."""
    starts = list(itertools.accumulate((len(piece) + 1 for piece in pieces[:-1]), initial=0))
    found: dict[str | None, set[int]] = {"error": set(), "decision": set()}
    for match in _FLAGGED.finditer("\n".join(pieces)):
        found[match.lastgroup].add(bisect.bisect_right(starts, match.start()) - 1)
    return found["error"], found["decision"]


def _pieces(text: str, *, prose: bool) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not prose:
        return lines
    return [p.strip() for line in lines for p in _SENTENCE.split(line) if p.strip()]


@functools.lru_cache(maxsize=1 << 16)
def _kind_factor(term: str) -> float:
    """Identifiers weigh 1.5x their rarity; bare numbers and hashes are capped at 1 (0 here marks the cap)."""
    if _NUMBERISH.match(term):
        return 0.0
    return 1.5 if _IDENTIFIER.search(term) else 1.0


def _score(units: list[_Unit]) -> None:
    """Information per unit: rare-term weight plus bonuses; repeats and noise score zero."""
    df = Counter(itertools.chain.from_iterable(u.terms for u in units))
    total = max(len(units), 1)
    weight = {}
    for term, n in df.items():
        idf, factor = math.log(1 + total / n), _kind_factor(term)
        weight[term] = idf * factor if factor else min(idf, 1.0)
    seen: set[tuple[int, str] | str] = set()
    for unit in units:
        if unit.text in seen or not unit.terms:
            continue
        seen.add(unit.text)
        if unit.tool:  # tool output: repeated lines (once numbers are blanked) and JSON noise
            shape = (unit.message, _SHAPE.sub("0", unit.text))
            if shape in seen or len(unit.text) - len(_NOT_ALNUM.sub("", unit.text)) > 0.55 * len(unit.text):
                continue
            seen.add(shape)
        information = sum(sorted(map(weight.__getitem__, unit.terms), reverse=True)[:TERMS_PER_UNIT])
        unit.score = (information + unit.bonus) * (ERROR_WEIGHT if unit.error else 1.0)


def _choose(units: list[_Unit], messages: list[_Message], room: int) -> set[int]:
    """Indexes of the units to keep: best score per character, tool output and conversation each in its share."""
    sizes = {kind: sum(len(u.text) for u in units if u.tool is kind) for kind in (True, False)}
    total = sum(sizes.values()) or 1
    shares = {kind: room * min(max(size / total, 0.25), 0.75) if sizes[not kind] else room
              for kind, size in sizes.items()}
    ranked = sorted((i for i, u in enumerate(units) if u.score > 0),
                    key=lambda i: (-units[i].score / (len(units[i].text) + 40), i))
    chosen: set[int] = set()
    opened: set[int] = set()
    spent = {True: 0.0, False: 0.0}
    used = 0
    for strict in (True, False):  # first within each share, then whatever room is left
        for i in ranked:
            unit = units[i]
            if i in chosen:
                continue
            cost = len(unit.text) + 3 + (0 if unit.message in opened else len(messages[unit.message].stamp) + 16)
            over_share = spent[unit.tool] > 0 and spent[unit.tool] + cost > shares[unit.tool]
            if used + cost > room or (strict and over_share):  # a share always holds its best unit
                continue
            chosen.add(i)
            opened.add(unit.message)
            spent[unit.tool] += cost
            used += cost
    return chosen


def _render(units: list[_Unit], messages: list[_Message], chosen: set[int]) -> str:
    lines: list[str] = []
    current = -1
    for i in sorted(chosen):
        unit = units[i]
        if unit.message != current:
            current = unit.message
            message = messages[current]
            prefix = (f"[{message.stamp}] " if message.stamp else "") + (f"{message.role}: " if message.role else "")
            lines.append(prefix + unit.text)
        else:
            lines[-1] += " … " + unit.text
    return "\n".join(lines)


def _footer(units: list[_Unit], chosen: set[int], lines: int) -> str:
    """How much was left out, and its topics: the identifiers (paths, names such as retry_budget or AB-1234,
    versions) the conversation's omitted passages mention and no shown one does, recurring but in less than a
    fifth of the passages, most distinctive first. Tool output and tool calls name no topics: their code, JSON
    keys and listings (const, string, file_path, drwxr-xr-x) are vocabulary, not what the work was about."""
    shown = {term for i in chosen for term in units[i].terms}
    df = Counter(term for i, unit in enumerate(units)
                 if i not in chosen and unit.score > 0 and not unit.tool and not _TOOL_CALL.match(unit.text)
                 for term in unit.terms)
    common = max(len(units) // 5, 2)  # in a fifth of the passages or more: vocabulary, not a topic
    weights = {term: n * math.log(1 + len(units) / n) for term, n in df.items()
               if term not in shown and 2 <= n < common and _kind_factor(term) > 1.0}
    topics = [term for term, _w in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:12]]
    left = f"{len(units) - len(chosen)} of {len(units)} passages of {lines} lines not shown"
    while topics:
        text = f"Expand for details about: {', '.join(topics)} ({left})"
        if len(text) <= _FOOTER_ROOM:
            return text
        topics.pop()  # the least distinctive
    return f"Expand for details: {left}"


def _time_range(messages: list[_Message]) -> str:
    stamps = [m.stamp for m in messages if m.stamp]
    if not stamps:
        return "no timestamps"
    first, last = stamps[0].split(" - ")[0], stamps[-1].split(" - ")[-1]
    return first if first == last else f"{first} .. {last}"
