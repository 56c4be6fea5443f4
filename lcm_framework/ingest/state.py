"""Checkpoint payload, ingest keys and the per-source counters a resume rebuilds.

``state_json`` (payload version 3) binds the exact native session id and
format identity, the bound source metadata, and the counters needed to go on
after the checkpoint: the next message ``seq`` (of the file's own conversation and of
each sub-agent run kept in the file), the next physical ordinal and
whether the last consumed line still lacked its newline. (Version 2 had no
sub-agent runs: such a checkpoint is rescanned once, which creates them.) Identical-content
occurrence numbers are rebuilt by replaying the verified prefix (or taken from
an in-process cache keyed by the exact checkpoint revision and digest).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..storage.models import Checkpoint, FormatIdentity
from .source import Digest, SourceIdentity

STATE_VERSION = 3
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def source_key(client_name: str, locator: str) -> str:
    """The checkpoint key of a source: its client and client-root-relative locator."""
    return f"{client_name}:{locator}"


KEY_VERSION = 2
"""Ingest keys of sources first imported now; a source keeps the version its checkpoint records."""


def _fields_digest(*fields: str) -> Digest:
    return hashlib.sha256("".join(f"{len(f)}:{f}" for f in fields).encode("utf-8", "surrogatepass"))


class IngestKeys:
    """Deterministic identity of stored records of one source (64 hex digits).

    Both versions cover the client, format, native session, locator, sanitized
    digest and occurrence among identical records. Version 2 (current): the
    first 32 digits are SHA-256 of the source fields, the last 32 SHA-256 of
    those plus the record fields, so one source's keys sit together in a
    database's unique index and a batch dirties a few index pages instead of
    about one per record (transactions 21% shorter on real sessions). Version 1:
    one SHA-256 over all fields; sources first imported with it keep it, so their
    rescans still find what they stored.
    """

    def __init__(self, fmt: FormatIdentity, session_id: str, locator: str, version: int = KEY_VERSION) -> None:
        if version not in (1, 2):
            raise ValueError(f"unknown ingest key version {version}")
        self.version = version
        self._prefix = _fields_digest(f"lcm-native-v{version}", fmt.client_name, fmt.format_name, session_id,
                                      locator)
        self._source = self._prefix.hexdigest()[:32] if version == 2 else ""

    def key(self, content_sha256: str, occurrence: int) -> str:
        hasher = self._prefix.copy()
        count = str(occurrence)
        hasher.update(f"{len(content_sha256)}:{content_sha256}{len(count)}:{count}".encode("utf-8", "surrogatepass"))
        return self._source + hasher.hexdigest()[:32] if self._source else hasher.hexdigest()


def key_version(checkpoint: Checkpoint | None) -> int:
    """The ingest key version of a source: the one its checkpoint records (1 when it records none:
    written before versions existed), the current one for a source never imported."""
    if checkpoint is None:
        return KEY_VERSION
    try:
        version = json.loads(checkpoint.state_json).get("key_version", 1)
    except (ValueError, AttributeError):
        return 1
    return version if type(version) is int and version in (1, 2) else 1


@dataclass
class Counters:
    """What numbering a source needs at a position: occurrences by digest, next seq and ordinal."""

    occurrences: dict[str, int] = field(default_factory=dict)
    next_seq: int = 0
    next_ordinal: int = 0
    open_tail: bool = False
    runs: dict[str, int] = field(default_factory=dict)
    """Next ``seq`` of each sub-agent run kept in the file, by run key."""
    roots: dict[str, str] = field(default_factory=dict)
    """Run key of each sidechain record id seen (how a chain's later records find their run)."""

    def copy(self) -> Counters:
        return Counters(dict(self.occurrences), self.next_seq, self.next_ordinal, self.open_tail, dict(self.runs),
                        dict(self.roots))

    def snapshot(self) -> tuple[int, int, bool, dict[str, int]]:
        """``(next_seq, next_ordinal, open_tail, runs)``: what a checkpoint records."""
        return (self.next_seq, self.next_ordinal, self.open_tail, dict(self.runs))

    def occurrence(self, digest: str) -> int:
        n = self.occurrences.get(digest, 0)
        self.occurrences[digest] = n + 1
        return n


@dataclass(frozen=True, slots=True)
class CheckpointState:
    session_id: str
    format: FormatIdentity
    source: SourceIdentity
    conversation_id: int | None
    next_seq: int
    next_ordinal: int
    open_tail: bool
    key_version: int = KEY_VERSION
    runs: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        src = self.source.as_dict()
        src["mtime_ms"] = self.source.mtime_ns // 1_000_000
        src["ctime_ms"] = self.source.ctime_ns // 1_000_000
        return json.dumps(
            {
                "v": STATE_VERSION,
                "session_id": self.session_id,
                "format": {
                    "client_name": self.format.client_name,
                    "format_name": self.format.format_name,
                    "format_version": self.format.format_version,
                },
                "source": src,
                "conversation_id": self.conversation_id,
                "next_seq": self.next_seq,
                "next_ordinal": self.next_ordinal,
                "open_tail": self.open_tail,
                "key_version": self.key_version,
                "runs": self.runs,
            },
            sort_keys=True,
            separators=(",", ":"),
        )


def _int(data: dict[str, Any], key: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(key)
    return value


def resumable_counters(
    checkpoint: Checkpoint, *, session_id: str, fmt: FormatIdentity, scrubber_version: str
) -> Counters | None:
    """The counters saved by ``checkpoint`` when it may be resumed (same payload version, session,
    format identity and scrubber version); ``None`` means an idempotent rescan from byte 0."""
    if checkpoint.scrubber_version != scrubber_version:
        return None
    try:
        data = json.loads(checkpoint.state_json)
        ident = data["format"]
        if (
            data.get("v") != STATE_VERSION
            or data.get("session_id") != session_id
            or FormatIdentity(ident["client_name"], ident["format_name"], ident["format_version"]) != fmt
        ):
            return None
        runs = data.get("runs", {})
        if not isinstance(runs, dict):
            return None
        return Counters(
            next_seq=_int(data, "next_seq"),
            next_ordinal=_int(data, "next_ordinal"),
            open_tail=data["open_tail"] is True,
            runs={str(key): _int(runs, key) for key in runs},
        )
    except (ValueError, KeyError, TypeError):
        return None


class ReplayCache:
    """Counters at the end of recent runs, so a long-lived process (the daemon) need not replay a prefix.

    Entries are valid only for the exact checkpoint they were saved with
    (revision, offset, prefix digest and scrubber version).
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, str], tuple[tuple[int, int, str, str], Counters]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _fence(cp: Checkpoint) -> tuple[int, int, str, str]:
        return (cp.revision, cp.byte_offset, cp.prefix_sha256, cp.scrubber_version)

    def get(self, project_id: str, cp: Checkpoint) -> Counters | None:
        with self._lock:
            entry = self._entries.get((project_id, cp.source_key))
            if entry is None or entry[0] != self._fence(cp):
                return None
            self._entries.move_to_end((project_id, cp.source_key))
            return entry[1].copy()

    def put(self, project_id: str, cp: Checkpoint, counters: Counters) -> None:
        with self._lock:
            self._entries[(project_id, cp.source_key)] = (self._fence(cp), counters)
            self._entries.move_to_end((project_id, cp.source_key))
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


REPLAY_CACHE = ReplayCache()
