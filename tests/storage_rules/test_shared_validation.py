"""The shared data rules raise typed errors tagged with the caller's backend/domain/project, with no database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from lcm_framework.errors import ConflictError, DataValidationError, StorageError
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    NativeRecordInput,
    NewMessage,
    NewPart,
    NewSummary,
    Role,
    SummaryKind,
)
from lcm_framework.storage.validation import (
    Validator,
    validate_append,
    validate_insert,
    validate_native_batch,
    validate_new_summary,
    validate_session,
)

V = Validator("somebackend", "somedomain", "proj")


def _code(exc: pytest.ExceptionInfo[StorageError]) -> tuple[str, str | None, str | None, str | None]:
    err = exc.value
    return err.code, err.backend, err.domain, err.project


def _summary(**over: object) -> NewSummary:
    values: dict[str, object] = dict(summary_id="s1", conversation_id=1, kind=SummaryKind.LEAF, depth=0,
                                     content="c", token_count=1, earliest_at=None, latest_at=None,
                                     descendant_count=0, source_message_ids=(1, 2))
    values.update(over)
    return NewSummary(**values)  # type: ignore[arg-type]


def _cp(source_key: str = "src", **over: object) -> Checkpoint:
    values: dict[str, object] = dict(source_key=source_key, revision=0, byte_offset=0, prefix_sha256="p",
                                     scrubber_version="v", last_source_ordinal=0, imported=0, skipped=0,
                                     quarantined=0)
    values.update(over)
    return Checkpoint(**values)  # type: ignore[arg-type]


def _record(**over: object) -> NativeRecordInput:
    values: dict[str, object] = dict(ingest_key="k", format=FormatIdentity("c", "f", "1"), native_session_id="s",
                                     source_locator="l", source_ordinal=0, payload_json="{}", content_sha256="h",
                                     scrubber_version="v", observed_at=datetime.now(UTC))
    values.update(over)
    return NativeRecordInput(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("summary", "code"), [
    (_summary(summary_id=""), "empty_id"),
    (_summary(kind="middle"), "invalid_enum"),
    (_summary(depth=1), "invalid_lineage"),
    (_summary(kind=SummaryKind.CONDENSED, depth=1), "invalid_lineage"),
    (_summary(content="a\x00b"), "nul_character"),
    (_summary(source_message_ids=(-1,)), "integer_out_of_range"),
])
def test_bad_summaries(summary: NewSummary, code: str) -> None:
    with pytest.raises(DataValidationError) as exc:
        validate_new_summary(V, summary)
    assert _code(exc) == (code, "somebackend", "somedomain", "proj")


def test_good_summary_returns_its_kind() -> None:
    assert validate_new_summary(V, _summary(kind="leaf")) is SummaryKind.LEAF


@pytest.mark.parametrize(("args", "code"), [
    (([_record()], "", None, _cp("")), "empty_id"),
    (([_record()], "src", _cp("other"), _cp()), "source_key_mismatch"),
    (([_record()], "src", None, _cp(imported=True)), "invalid_type"),
    (([_record(ingest_key="")], "src", None, _cp()), "empty_id"),
    (([_record(format=FormatIdentity("c\x00", "f", "1"))], "src", None, _cp()), "nul_character"),
    (([_record(message_id=2**53)], "src", None, _cp()), "integer_out_of_range"),
])
def test_bad_native_batches(args: tuple[Any, ...], code: str) -> None:
    with pytest.raises(DataValidationError) as exc:
        validate_native_batch(V, *args)
    assert _code(exc)[0] == code


def test_message_batches() -> None:
    part = NewPart(kind="picture")  # type: ignore[arg-type]
    with pytest.raises(DataValidationError) as exc:
        validate_append(V, 1, [NewMessage(Role.USER, "x", 1, parts=[part])])
    assert _code(exc)[0] == "invalid_enum"
    with pytest.raises(DataValidationError) as exc:
        validate_append(V, 1, [NewMessage(Role.USER, "x", 1, seq=3)])
    assert _code(exc)[0] == "explicit_seq"
    with pytest.raises(DataValidationError) as exc:
        validate_insert(V, 1, [NewMessage(Role.USER, "x", 1)])
    assert _code(exc)[0] == "missing_seq"
    with pytest.raises(ConflictError) as conflict:
        validate_insert(V, 1, [NewMessage(Role.USER, "x", 1, seq=3), NewMessage(Role.USER, "y", 1, seq=3)])
    assert _code(conflict) == ("duplicate", "somebackend", "somedomain", "proj")
    with pytest.raises(DataValidationError) as exc:
        validate_append(V, 1, [NewMessage("robot", "x", 1)])  # type: ignore[arg-type]
    assert _code(exc)[0] == "invalid_enum"
    assert validate_insert(V, 1, [NewMessage(Role.USER, "x", 1, seq=5), NewMessage(Role.TOOL, "y", 1, seq=2)]) \
        == [5, 2]
    assert validate_append(V, 1, [NewMessage("assistant", "x", 1)]) == [Role.ASSISTANT]  # type: ignore[arg-type]


def test_sessions() -> None:
    with pytest.raises(DataValidationError) as exc:
        validate_session(V, 5, None)  # type: ignore[arg-type]
    assert _code(exc)[0] == "invalid_type"
    with pytest.raises(DataValidationError) as exc:
        validate_session(V, "s", "t\x00")
    assert _code(exc)[0] == "nul_character"


def test_limit_and_not_found() -> None:
    assert V.limit(None) is None and V.limit(-1) is None and V.limit(3) == 3
    with pytest.raises(DataValidationError):
        V.limit(True)
    err = V.not_found("conversation")
    assert (err.code, str(err).startswith("conversation does not exist")) == ("not_found", True)
