"""The offline promotion extractor: durable insights picked from a summary's source messages, deterministically.

Kinds, each a sentence pattern (case-insensitive) over message text:
* ``root_cause``: "root cause", "the problem was", "caused by", "fixed by", "the fix was" ...
* ``decision``: "decided", "we'll use", "going with", "switched to", "instead of" ...
* ``convention``: "convention", "the project uses", "is configured to" ...
* ``constraint`` (user messages only): "don't", "never", "always", "must", "make sure", "only use" ...
* ``command``: a shell tool call whose result reports success ("passed", "succeeded") and no failure, or
  reports nothing wrong while the assistant's next line says it succeeded.

A candidate is one sentence of ``MIN_CHARS``..``MAX_CHARS`` characters (longer ones are cut at a word);
its tags are the file paths it names, then its kind.

What is not the user's own words yields nothing (``own_words``): text the agent client wrote into a user turn
(an expanded slash command or ``/init`` prompt, marked ``client_authored`` by its format), a user turn that is
a pasted template or document (markdown headings, or more than ``TEMPLATE_LINES`` lines), and in a sub-agent run
every user turn (the parent model's instructions). Exploration commands (``ls``, ``cat``, ``find`` ...) are no
command worth remembering.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..storage.models import Message, MessagePart, PartKind, Role
from ..transcripts.contracts import client_authored

MIN_CHARS = 24
MAX_CHARS = 320
TEMPLATE_LINES = 20
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "run_terminal_cmd"})
EXPLORATION = frozenset({"ls", "cd", "pwd", "find", "tree", "cat", "echo", "mkdir", "grep", "rg", "head", "tail",
                         "wc", "which", "sed", "awk", "sort", "du", "df", "file", "stat", "touch", "true"})
_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_PATTERNS: tuple[tuple[str, re.Pattern[str], frozenset[Role]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE), roles) for kind, pattern, roles in (
        ("root_cause", r"\b(root cause|the (cause|problem|issue|bug) (was|is)|caused by|fixed by|the fix (is|was)"
                       r"|fixed (it|this) by|because of)\b", frozenset({Role.ASSISTANT, Role.USER})),
        ("decision", r"\b(decided|decision|we('ll| will) use|going with|(chose|choose) |switch(ed)? to|instead of"
                     r"|settled on)\b", frozenset({Role.ASSISTANT, Role.USER})),
        ("convention", r"\b(by convention|convention is|the project uses|is configured (to|with)|we always)\b",
         frozenset({Role.ASSISTANT, Role.USER})),
        ("constraint", r"\b(don't|do not|never|always|must|make sure|only use|avoid|run (them|it|tests) with)\b",
         frozenset({Role.USER})),
    )
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PATH = re.compile(r"(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|\b[\w-]+\.(?:py|ts|js|toml|json|md|yaml|yml|sql|sh)\b")
_SUCCESS = re.compile(r"\b(passed|succeeded|success|ok)\b", re.IGNORECASE)
_FAILURE = re.compile(r"\b(fail(ed|ure)?|error|traceback|not found)\b", re.IGNORECASE)
_CONFIRMED = re.compile(r"\b(passed|succeeded|successful(ly)?|works|is running)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    kind: str
    tags: tuple[str, ...]
    message_ids: tuple[int, ...]


def clean(sentence: str) -> str:
    text = re.sub(r"[*_]{2,}", "", sentence).strip()
    text = re.sub(r"^(?:[-*>]|\d+\.)\s+", "", text)
    text = " ".join(text.split())
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS].rsplit(" ", 1)[0] + " ..."
    return text


def tags_of(text: str, kind: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*_PATH.findall(text), kind]))


def sentences(message: Message) -> Iterable[tuple[str, str]]:
    """``(kind, sentence)`` for every sentence of ``message`` that states a durable insight."""
    for raw in _SENTENCE.split(message.content):
        text = clean(raw)
        if not len(text) >= MIN_CHARS or text.startswith(("tool call", "[")) or text.endswith("?"):
            continue
        for kind, pattern, roles in _PATTERNS:
            if message.role in roles and pattern.search(text):
                yield kind, text
                break


def own_words(message: Message, parts: Sequence[MessagePart], *, subagent: bool = False) -> bool:
    """Whether ``message`` may state an insight of the conversation (see the module docstring)."""
    if message.role is not Role.USER:
        return True
    if subagent or any(client_authored(p.metadata) for p in parts if p.kind is PartKind.TEXT):
        return False
    return not _HEADING.search(message.content) and message.content.count("\n") < TEMPLATE_LINES


def _explores(command: str) -> bool:
    """A command that only looks around or writes a file inline: every word before a pipe or ``&&`` is one of
    ``EXPLORATION`` (or a heredoc ``cat > f << EOF``)."""
    steps = re.split(r"\|\|?|&&|;", command.split("<<", 1)[0])
    return all((step.split() or ["true"])[0] in EXPLORATION for step in steps)


def commands(messages: Sequence[Message], parts: dict[int, list[MessagePart]]) -> Iterable[Candidate]:
    """Shell commands that worked (exploration commands left out): the tool result reports success and no
    failure, or it reports nothing wrong and the assistant's next words say it succeeded."""
    calls: dict[str, tuple[str, int]] = {}
    quiet: tuple[str, int, int] | None = None  # the last clean result that did not say it succeeded
    for message in messages:
        if quiet is not None and message.role is Role.ASSISTANT and message.content:
            if _CONFIRMED.search(message.content.split("\n", 1)[0]):
                yield _worked(*quiet)
            quiet = None
        for part in parts.get(message.message_id, []):
            if part.kind is PartKind.TOOL_CALL and (part.tool_name or "").lower() in SHELL_TOOLS and part.tool_call_id:
                command = _command(part)
                if command and not _explores(command):
                    calls[part.tool_call_id] = (command, message.message_id)
            elif part.kind is PartKind.TOOL_RESULT and part.tool_call_id in calls and not part.is_error:
                command, call_message = calls.pop(part.tool_call_id)
                result = part.text or ""
                if _FAILURE.search(result):
                    continue
                if _SUCCESS.search(result):
                    yield _worked(command, call_message, message.message_id)
                else:
                    quiet = (command, call_message, message.message_id)


def _worked(command: str, call_message: int, result_message: int) -> Candidate:
    return Candidate(f"Command that worked: `{command}`", "command", tags_of(command, "command"),
                     (call_message, result_message))


def _command(part: MessagePart) -> str | None:
    for source in (part.text, part.raw_json):
        try:
            data = json.loads(source) if source else None
        except json.JSONDecodeError:
            continue
        found = _find_command(data)
        if found:
            return clean(found)
    return None


def _find_command(data: object) -> str | None:
    if isinstance(data, dict):
        value = data.get("command") or data.get("cmd")
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return " ".join(value)
        for key in ("input", "arguments"):
            if key in data:
                inner = data[key]
                if isinstance(inner, str):
                    try:
                        inner = json.loads(inner)
                    except json.JSONDecodeError:
                        continue
                found = _find_command(inner)
                if found:
                    return found
    return None


def extract(messages: Sequence[Message], parts: dict[int, list[MessagePart]], *,
            subagent: bool = False) -> list[Candidate]:
    """Every candidate insight of these messages, in message order, each text once (``subagent``: the messages
    are a sub-agent run's)."""
    found: list[Candidate] = []
    seen: set[str] = set()
    for message in messages:
        if not own_words(message, parts.get(message.message_id, ()), subagent=subagent):
            continue
        for kind, text in sentences(message):
            if text.lower() not in seen:
                seen.add(text.lower())
                found.append(Candidate(text, kind, tags_of(text, kind), (message.message_id,)))
    for candidate in commands(messages, parts):
        if candidate.text.lower() not in seen:
            seen.add(candidate.text.lower())
            found.append(candidate)
    return found
