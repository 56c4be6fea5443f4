"""``prepare_writes``: a hint ahead of a transaction that never changes what is stored or read back."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from lcm_framework.storage.contracts import ProjectStorage, Repositories
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    NativeRecordInput,
    NewMessage,
    NewPart,
    PartKind,
    Role,
)

FMT = FormatIdentity("claude-code", "jsonl", "1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)
OUTPUT = "\n".join(f"line {n}: résumé \"quoted\" \\ tab\t{n * 7}" for n in range(40))
CALL = json.dumps({"command": "pytest -q tests/test_cache.py --maxfail 1 " + "-k " * 40})


def _batch() -> list[tuple[NewMessage, str]]:
    """Messages whose text their parts and native payloads repeat (verbatim and JSON-quoted), as imports do."""
    result = NewMessage(Role.TOOL, OUTPUT, 300, seq=1, parts=(NewPart(
        PartKind.TOOL_RESULT, text=OUTPUT, tool_call_id="call_1",
        raw_json=json.dumps({"type": "tool_result", "tool_use_id": "call_1", "content": OUTPUT})),))
    call = NewMessage(Role.ASSISTANT, "Let me run the tests.\n" + CALL, 60, seq=0, parts=(
        NewPart(PartKind.TEXT, text="Let me run the tests.",
                raw_json='{"type": "text", "text": "Let me run the tests."}'),
        NewPart(PartKind.TOOL_CALL, text=CALL, tool_call_id="call_1", tool_name="Bash",
                raw_json=json.dumps({"type": "tool_use", "id": "call_1", "name": "Bash", "input": json.loads(CALL)}))))
    short = NewMessage(Role.USER, "thanks", 1, seq=2)
    return [(m, json.dumps({"type": m.role.value, "message": {"content": m.content}, "n": i}, ensure_ascii=False))
            for i, m in enumerate((call, result, short))]


def _write(project: ProjectStorage, batch: list[tuple[NewMessage, str]], *, prepare: bool) -> int:
    if prepare:
        project.prepare_writes([m for m, _p in batch], [(p, m) for m, p in batch])

    def body(repos: Repositories) -> int:
        conv = repos.conversations.create_conversation("s1")
        stored = repos.conversations.insert_messages(conv.conversation_id, [m for m, _p in batch])
        pairs = enumerate(zip([p for _m, p in batch], stored, strict=True))
        records = [NativeRecordInput(f"key-{i}", FMT, "s1", "a.jsonl", i, payload, f"{i:064x}", "scrub-1", NOW,
                                     msg.message_id) for i, (payload, msg) in pairs]
        repos.native_transcripts.ingest_batch(records, source_key="src", expected=None, new_checkpoint=Checkpoint(
            "src", 0, 10, "ab" * 32, "scrub-1", 2, 3, 0, 0, "{}"))
        return conv.conversation_id

    return project.transaction(body)


def _read(project: ProjectStorage, conversation_id: int) -> list[object]:
    messages = project.conversations.list_messages(conversation_id)
    parts = project.conversations.list_parts([m.message_id for m in messages])
    native = project.native_transcripts.list_by_source("a.jsonl")
    return [[(m.role, m.content, m.seq) for m in messages],
            [[(p.kind, p.text, p.raw_json, p.tool_call_id) for p in parts.get(m.message_id, [])] for m in messages],
            [(r.payload_json, r.source_ordinal, r.message_id is not None) for r in native]]


def test_a_prepared_batch_reads_back_exactly_what_was_written(project: ProjectStorage,
                                                              other_project: ProjectStorage) -> None:
    batch = _batch()
    prepared = _read(project, _write(project, batch, prepare=True))
    plain = _read(other_project, _write(other_project, batch, prepare=False))
    assert prepared == plain
    assert prepared[0] == [(m.role, m.content, m.seq) for m, _p in batch]
    assert prepared[1][1] == [(PartKind.TOOL_RESULT, OUTPUT, batch[1][0].parts[0].raw_json, "call_1")]
    assert [r[0] for r in prepared[2]] == [p for _m, p in batch]


def test_what_was_prepared_but_not_written_is_never_stored(project: ProjectStorage) -> None:
    batch = _batch()
    project.prepare_writes([m for m, _p in batch], [(p, m) for m, p in batch])
    assert project.stats().messages == 0
    other = [(NewMessage(m.role, m.content.upper(), m.token_count, seq=m.seq, parts=m.parts), p) for m, p in batch]
    conversation_id = _write(project, other, prepare=False)  # the same payloads, linked to other texts
    read = _read(project, conversation_id)
    assert read[0] == [(m.role, m.content, m.seq) for m, _p in other]
    assert [r[0] for r in read[2]] == [p for _m, p in batch]


def test_prepare_inside_a_transaction_changes_nothing(project: ProjectStorage) -> None:
    batch = _batch()

    def body(repos: Repositories) -> int:
        project.prepare_writes([m for m, _p in batch], [(p, m) for m, p in batch])
        conv = repos.conversations.create_conversation("s2")
        repos.conversations.insert_messages(conv.conversation_id, [m for m, _p in batch])
        return conv.conversation_id

    conversation_id = project.transaction(body)
    assert _read(project, conversation_id)[0] == [(m.role, m.content, m.seq) for m, _p in batch]
