"""Assembly with the app's configuration and large-file references (used by the CLI and the daemon)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .assemble import AssembledContext, assemble

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage


def assemble_context(
    app: App, storage: ProjectStorage, conversation_id: int, *, budget_tokens: int | None = None
) -> AssembledContext:
    """``assemble`` with ``compaction.*`` settings; blocks above the large-file threshold become references."""
    from ..compaction import CompactionEngine

    engine = CompactionEngine(app)
    files = engine.file_store(storage)
    budget = budget_tokens or int(app.config.get("compaction.context_budget_tokens"))
    return assemble(
        storage,
        conversation_id,
        budget=budget,
        fresh_tail_count=engine.settings.fresh_tail_count,
        text_filter=lambda message, text: files.rewrite(message.conversation_id, message.message_id, text).text,
    )
