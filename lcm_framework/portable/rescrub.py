"""Scrub an imported record again with this LCM's scrubber, as if its texts arrived through ``lcm import``.

A records file may come from anywhere (a teammate, an older LCM with fewer rules, a hand edit), so every
text a checked record holds goes through the scrubber before anything is stored: titles, session ids,
messages and their parts (``raw_json`` and ``metadata`` as JSON when they are JSON), large-file contents,
names and exploration summaries, summaries, native payloads, and memories with their tags, lineage and
surfacing queries. Ids and digests need no scrubbing: the reader admits only their exact hex shapes.

A large file whose content changes is stored under the id of its scrubbed content (with its size, hash
and token count recomputed), and the record's summaries follow it; a native payload that changes gets
the hash of its scrubbed JSON.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..compaction.ids import file_id
from ..scrub import Scrubber, ScrubRejected
from ..summarize.tokens import estimate_tokens
from .records import RecordFormatError


class Rescrubber:
    """Scrubs records with one scrubber; ``ScrubRejected`` becomes ``RecordFormatError``."""

    def __init__(self, scrubber: Scrubber) -> None:
        self.scrubber = scrubber

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A scrubbed copy of a checked ``conversation`` or ``memory`` record (its stale digest removed)."""
        try:
            scrubbed = self._conversation(record) if record["type"] == "conversation" else self._memory(record)
        except ScrubRejected as exc:
            raise RecordFormatError(f"the scrubber refused the record ({exc.reason.value})") from None
        scrubbed.pop("digest", None)
        return scrubbed

    def text(self, value: str) -> str:
        return self.scrubber.scrub_text(value)[0]

    def maybe(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def json_text(self, value: str | None) -> str | None:
        """JSON text scrubbed as a record (its strings and keys; canonical JSON when something changed),
        any other text as text."""
        if value is None:
            return None
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, dict | list):
            return self.text(value)
        scrubbed = self.scrubber.scrub_record(parsed)
        return scrubbed.canonical_json if scrubbed.redactions else value

    def _conversation(self, record: dict[str, Any]) -> dict[str, Any]:
        files = [self._file(f) for f in record["files"]]
        renamed = {old["file_id"]: new["file_id"] for old, new in zip(record["files"], files, strict=True)
                   if old["file_id"] != new["file_id"]}
        return {
            **record, "session_id": self.text(record["session_id"]), "title": self.maybe(record["title"]),
            "messages": [{**m, "content": self.text(m["content"]), "parts": [self._part(p) for p in m["parts"]]}
                         for m in record["messages"]],
            "files": files,
            "summaries": [self._summary(s, renamed) for s in record["summaries"]],
            "native": [self._native(n) for n in record["native"]],
            **({"subagent": self._subagent(record["subagent"])} if "subagent" in record else {}),
        }

    def _subagent(self, link: dict[str, Any]) -> dict[str, Any]:
        parent = link["parent"]
        return {**link, "parent_session_id": self.text(link["parent_session_id"]),
                "agent_id": self.maybe(link["agent_id"]), "agent_type": self.maybe(link["agent_type"]),
                "tool_call_id": self.maybe(link["tool_call_id"]),
                "parent": [self.text(parent[0]), *parent[1:]] if parent is not None else None}

    def _part(self, part: dict[str, Any]) -> dict[str, Any]:
        return {**part, "text": self.maybe(part["text"]), "tool_call_id": self.maybe(part["tool_call_id"]),
                "tool_name": self.maybe(part["tool_name"]), "raw_json": self.json_text(part["raw_json"]),
                "metadata": self.json_text(part["metadata"])}

    def _file(self, f: dict[str, Any]) -> dict[str, Any]:
        content = self.text(f["content"])
        scrubbed = {**f, "file_name": self.maybe(f["file_name"]), "mime_type": self.maybe(f["mime_type"]),
                    "exploration_summary": self.text(f["exploration_summary"]), "content": content}
        if content != f["content"]:
            data = content.encode("utf-8")
            scrubbed.update(file_id=file_id(content), byte_size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                            token_count=estimate_tokens(content))
        return scrubbed

    def _summary(self, s: dict[str, Any], renamed: dict[str, str]) -> dict[str, Any]:
        content = self.text(s["content"])
        for old, new in renamed.items():
            content = content.replace(old, new)
        return {**s, "content": content, "file_ids": [renamed.get(f, f) for f in s["file_ids"]]}

    def _native(self, n: dict[str, Any]) -> dict[str, Any]:
        payload = self.json_text(n["payload_json"]) or ""
        scrubbed = {**n, "native_session_id": self.text(n["native_session_id"]),
                    "source_locator": self.text(n["source_locator"]), "payload_json": payload}
        if payload != n["payload_json"]:
            scrubbed["content_sha256"] = hashlib.sha256(payload.encode("utf-8")).hexdigest()
        return scrubbed

    def _memory(self, record: dict[str, Any]) -> dict[str, Any]:
        lineage, recall = record["lineage"], record["recall"]
        extra = self.scrubber.scrub_record(lineage["extra"]).value if lineage["extra"] else {}
        return {
            **record, "content": self.text(record["content"]), "tags": [self.text(t) for t in record["tags"]],
            "source_summary_id": self.maybe(record["source_summary_id"]),
            "lineage": {**lineage, "origin": self.text(lineage["origin"]), "kind": self.maybe(lineage["kind"]),
                        "summaries": [self.text(s) for s in lineage["summaries"]],
                        "messages": [[self.text(s), segment, seq] for s, segment, seq in lineage["messages"]],
                        "extra": extra},
            "recall": {**recall, "surfacings": [[self.text(q), at] for q, at in recall["surfacings"]]},
        }
