"""Summaries as the model sees them: the XML wrapper of the spec."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from xml.sax.saxutils import quoteattr

from ..storage.models import Summary


def _time(moment: datetime | None) -> str:
    return moment.replace(microsecond=0, tzinfo=None).isoformat() if moment else ""


def summary_xml(summary: Summary, parent_ids: Sequence[str] = ()) -> str:
    attrs = {
        "id": summary.summary_id,
        "kind": summary.kind.value,
        "depth": str(summary.depth),
        "descendant_count": str(summary.descendant_count),
        "earliest_at": _time(summary.earliest_at),
        "latest_at": _time(summary.latest_at),
    }
    head = "<summary " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs.items()) + ">"
    lines = [head]
    if parent_ids:
        lines.append("  <parents>")
        lines.extend(f"    <summary_ref id={quoteattr(pid)} />" for pid in parent_ids)
        lines.append("  </parents>")
    lines += ["  <content>", summary.content, "  </content>", "</summary>"]
    return "\n".join(lines)
