"""Where a memory came from, kept as JSON in the memory's ``metadata`` (memory writes it; recall and the
portable records read it).

``{"origin": "user" | "mcp" | "promotion" | "import", "summaries": [sum_...], "messages": [message ids],
"kind": "decision" | ...}``; ``source_summary_id`` is the first summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Lineage:
    origin: str = "user"
    summaries: tuple[str, ...] = ()
    messages: tuple[int, ...] = ()
    kind: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_metadata(self) -> str:
        data: dict[str, Any] = {**self.extra, "origin": self.origin}
        if self.summaries:
            data["summaries"] = list(self.summaries)
        if self.messages:
            data["messages"] = list(self.messages)
        if self.kind:
            data["kind"] = self.kind
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    def citing(self, other: Lineage) -> Lineage:
        """This lineage also citing ``other``'s summaries and messages (a confirmation of the same insight)."""
        return Lineage(self.origin, tuple(dict.fromkeys([*self.summaries, *other.summaries])),
                       tuple(dict.fromkeys([*self.messages, *other.messages])), self.kind, self.extra)

    @property
    def source_summary_id(self) -> str | None:
        return self.summaries[0] if self.summaries else None


def parse(metadata: str | None) -> Lineage:
    """The lineage of stored metadata; text that is not a JSON object counts as a user memory's extra note."""
    try:
        data = json.loads(metadata) if metadata else {}
    except json.JSONDecodeError:
        data = {"note": metadata}
    if not isinstance(data, dict):
        data = {"note": metadata}
    summaries = _strings(data.pop("summaries", ()))
    messages = tuple(m for m in data.pop("messages", ()) if isinstance(m, int) and not isinstance(m, bool))
    kind = data.pop("kind", None)
    return Lineage(str(data.pop("origin", "user")), summaries, messages, kind if isinstance(kind, str) else None,
                   data)


def _strings(values: Any) -> tuple[str, ...]:
    return tuple(v for v in values if isinstance(v, str)) if isinstance(values, Sequence) else ()
