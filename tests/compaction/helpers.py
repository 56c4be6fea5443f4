"""Shared set-up of the compaction, recall and MCP tests: real SQLite projects, a scripted summarizer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.errors import SummarizerError
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import Message, NewMessage, NewPart, PartKind, Role
from lcm_framework.summarize.contracts import SummaryRequest

T0 = datetime(2026, 2, 17, 7, 0, tzinfo=UTC)
SMALL = {
    "compaction.leaf_chunk_tokens": 1000,
    "compaction.fresh_tail_count": 4,
    "compaction.leaf_min_fanout": 3,
    "compaction.condensed_min_fanout": 2,
    "compaction.leaf_target_tokens": 100,
    "compaction.condensed_target_tokens": 100,
}


@dataclass
class ScriptedSummarizer:
    """Behaviour per level: ``ok`` (short summary), ``empty``, ``oversized``, ``error`` or ``crash``."""

    script: Mapping[str, str]
    requests: list[SummaryRequest] = field(default_factory=list)
    name: str = "scripted"

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        behaviour = self.script.get(request.level.value, "ok")
        if behaviour == "empty":
            return "   "
        if behaviour == "oversized":
            return request.segment + " and more padding" * 10
        if behaviour == "error":
            raise SummarizerError("provider returned 529 overloaded")
        if behaviour == "crash":
            raise RuntimeError("unexpected provider payload")
        return f"summary at depth {request.depth} ({request.level.value}): {request.segment[:80]}"


class ScriptedPlugin:
    def __init__(self, summarizer: ScriptedSummarizer) -> None:
        self.summarizer = summarizer

    @hookimpl
    def lcm_register_summarizers(self, register: Any) -> None:
        register("scripted", lambda _config: self.summarizer)


def project_dir(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True, exist_ok=True)
    return root


def make_app(
    root: Path, overrides: Mapping[str, Any] | None = None, extra: Iterable[tuple[str, object]] = ()
) -> App:
    values = {k: str(v) for k, v in {**SMALL, **(overrides or {})}.items()}
    return App(load_config(project=root, overrides=values, plugins=build_plugins()), build_plugins(extra=list(extra)))


def scripted_app(
    root: Path, script: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> tuple[App, ScriptedSummarizer]:
    summarizer = ScriptedSummarizer(script)
    app = make_app(root, {"summarizer.provider": "scripted", **(overrides or {})},
                   extra=[("scripted_test", ScriptedPlugin(summarizer))])
    return app, summarizer


def new_message(
    index: int, text: str, tokens: int | None = None, *, parts: Sequence[NewPart] | None = None
) -> NewMessage:
    return NewMessage(
        role=Role.USER if index % 2 == 0 else Role.ASSISTANT,
        content=text,
        token_count=tokens if tokens is not None else (len(text) + 3) // 4,
        created_at=T0 + timedelta(minutes=index),
        parts=tuple(parts) if parts is not None else (NewPart(PartKind.TEXT, text=text),),
    )


def ingest(storage: ProjectStorage, session: str, messages: Sequence[NewMessage]) -> tuple[int, list[Message]]:
    """Store messages and append them to the context, as transcript import does."""
    conversation = storage.conversations.get_or_create_conversation(session)
    stored = storage.conversations.append_messages(conversation.conversation_id, messages)
    storage.context.append_messages(conversation.conversation_id, [m.message_id for m in stored])
    return conversation.conversation_id, stored


def texts(count: int, words: int = 60, start: int = 0) -> list[NewMessage]:
    return [
        new_message(i, f"message {i} fact{i} " + " ".join(f"w{i}x{j}" for j in range(words)))
        for i in range(start, start + count)
    ]
