"""One destination batch: messages, context, native records, redaction counts and the checkpoint,
written in a single storage transaction.

Messages take ``seq`` = their index within their conversation: the file's own
(``BatchTarget.main``) or a sub-agent run's (``Accepted.run``). A message already
stored at that position must have exactly the same role and content, or the
batch fails closed (nothing is written, the checkpoint does not move). Native
records link to the exact message they produced. Sub-agent runs are linked to
the call that started them (``links``). The checkpoint advances by
compare-and-swap on the complete prior checkpoint (revision included).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..storage.contracts import Repositories
from ..storage.models import Checkpoint, FormatIdentity, Message, NativeRecordInput, NewMessage
from ..transcripts.reader import MAX_LINK_SOURCE_ORDINAL
from .errors import IngestError, MessageMismatchError
from .links import SpawnIndex, SpawnOf, link_spawns, record_run
from .runs import Run


@dataclass(frozen=True, slots=True)
class Accepted:
    """A record that passed reading and scrubbing, ready to store."""

    ordinal: int
    end: int
    payload_json: str
    content_sha256: str
    ingest_key: str
    redactions: Mapping[str, int]
    message: NewMessage | None
    run: str | None = None
    """The sidechain run the message belongs to (``None``: the file's own conversation)."""


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A rejected line: metadata only."""

    ordinal: int
    end: int
    reason: str
    raw_sha256: str


@dataclass(frozen=True, slots=True)
class BatchTarget:
    """Where a batch goes; ``checkpoint(inserted, skipped, conversation_id)`` builds the checkpoint it moves to."""

    source_key: str
    locator: str
    session_id: str
    format: FormatIdentity
    scrubber_version: str
    expected: Checkpoint | None
    checkpoint: Callable[[int, int, int | None], Checkpoint]
    conversation_id: int | None
    main: Run
    run_of: Callable[[str], Run]
    spawn_of: SpawnOf | None
    spawn_index: SpawnIndex


@dataclass
class BatchOutcome:
    inserted: int = 0
    skipped: int = 0
    new_messages: int = 0
    conversation_id: int | None = None
    checkpoint: Checkpoint | None = None
    redactions: Counter[str] = field(default_factory=Counter)
    runs: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Sidechain runs written: session id -> (conversation id, new messages)."""
    stored: list[tuple[int, str]] = field(default_factory=list)
    """``(message id, content)`` of the messages the batch inserted (what the semantic lane embeds)."""


class StaleKeySet(Exception):
    """The records already stored were not the ones assumed: reload the stored keys and redo the batch."""


def write_batch(
    repos: Repositories, records: Sequence[Accepted], target: BatchTarget, stored_keys: set[str] | None
) -> BatchOutcome:
    """The transaction body. ``stored_keys`` are the source's known stored ingest keys (``None``: assume none).

    Raises StaleKeySet (the caller rolls back, reloads and retries) when the
    repository inserted a different number of records than assumed.
    """
    outcome = BatchOutcome(conversation_id=target.conversation_id)
    message_ids = _store_messages(repos, records, target, outcome)
    new = [rec for rec in records if stored_keys is None or rec.ingest_key not in stored_keys]
    checkpoint = target.checkpoint(len(new), len(records) - len(new), outcome.conversation_id)
    observed = datetime.now(UTC)
    inputs = [
        NativeRecordInput(
            ingest_key=rec.ingest_key,
            format=target.format,
            native_session_id=target.session_id,
            source_locator=target.locator,
            source_ordinal=rec.ordinal,
            payload_json=rec.payload_json,
            content_sha256=rec.content_sha256,
            scrubber_version=target.scrubber_version,
            observed_at=observed,
            message_id=message_ids.get(rec.ordinal),
        )
        for rec in records
    ]
    result = repos.native_transcripts.ingest_batch(
        inputs, source_key=target.source_key, expected=target.expected, new_checkpoint=checkpoint
    )
    if result.inserted != len(new):
        raise StaleKeySet
    outcome.inserted, outcome.skipped = result.inserted, result.skipped
    outcome.checkpoint = result.checkpoint or checkpoint
    for rec in new:
        outcome.redactions.update(rec.redactions)
    if outcome.redactions:
        repos.redaction_admin.add_counts(dict(outcome.redactions))
    return outcome


def _store_messages(
    repos: Repositories, records: Sequence[Accepted], target: BatchTarget, outcome: BatchOutcome
) -> dict[int, int]:
    """Insert the batch's missing messages, verify the present ones; ``{ordinal: message_id}``."""
    groups: dict[str | None, list[tuple[int, NewMessage]]] = {}
    for rec in records:
        if rec.message is not None:
            if rec.ordinal > MAX_LINK_SOURCE_ORDINAL:
                raise IngestError("source ordinal too large to link a message", locator=target.locator,
                                  code="ordinal_out_of_range")
            groups.setdefault(rec.run, []).append((rec.ordinal, rec.message))
    ids: dict[int, int] = {}
    for key, wanted in groups.items():
        run = target.main if key is None else target.run_of(key)
        conv_id = outcome.conversation_id if key is None else None
        if conv_id is None or repos.conversations.get_conversation(conv_id) is None:
            conv_id = repos.conversations.get_or_create_conversation(run.session_id).conversation_id
        by_seq, new = _store_run(repos, conv_id, [msg for _o, msg in wanted], target.locator, outcome.stored)
        if key is None:
            outcome.conversation_id = conv_id
        else:
            outcome.runs[run.session_id] = (conv_id, new)
        outcome.new_messages += new
        ids.update((ordinal, by_seq[msg.seq]) for ordinal, msg in wanted if msg.seq is not None)
        record_run(repos, conv_id, run, [msg for _o, msg in wanted], target.spawn_of, target.spawn_index)
        link_spawns(repos, run.session_id, conv_id, [(by_seq[m.seq], m) for _o, m in wanted if m.seq is not None],
                    target.spawn_of)
    return ids


def _store_run(repos: Repositories, conv_id: int, wanted: Sequence[NewMessage], locator: str,
               inserted_texts: list[tuple[int, str]]) -> tuple[dict[int, int], int]:
    """One conversation's messages of the batch: ``({seq: message_id}, how many were new)``; the new ones are
    added to ``inserted_texts`` as ``(message id, content)``."""
    conversations = repos.conversations
    first_seq = wanted[0].seq
    assert first_seq is not None
    present = {
        m.seq: m
        for m in conversations.list_messages(
            conv_id, after_seq=first_seq - 1 if first_seq > 0 else None, limit=len(wanted)
        )
    }
    missing: list[NewMessage] = []
    by_seq: dict[int, int] = {}
    for msg in wanted:
        assert msg.seq is not None
        stored = present.get(msg.seq)
        if stored is None:
            missing.append(msg)
        elif not _same(stored, msg):
            raise MessageMismatchError(f"stored message at seq {msg.seq} differs from the transcript", locator=locator)
        else:
            by_seq[msg.seq] = stored.message_id
    if missing:
        inserted = conversations.insert_messages(conv_id, missing)
        repos.context.append_messages(conv_id, [m.message_id for m in inserted])
        by_seq.update((m.seq, m.message_id) for m in inserted)
        inserted_texts.extend((m.message_id, m.content) for m in inserted)
    return by_seq, len(missing)


def _same(stored: Message, msg: NewMessage) -> bool:
    return stored.role == msg.role and stored.content == msg.content


def with_seq(message: NewMessage, seq: int) -> NewMessage:
    return dataclasses.replace(message, seq=seq)
