"""Session ingest records and fenced leases."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from lcm_framework.errors import ConflictError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import SessionIngestRecord


def test_session_ingest_upsert(project: ProjectStorage) -> None:
    repo = project.coordination
    assert repo.get_session_ingest("s") is None
    first = SessionIngestRecord("s", "claude-code", datetime(2024, 1, 1, tzinfo=UTC), 10)
    repo.record_session_ingest(first)
    assert repo.get_session_ingest("s") == first
    second = replace(first, completed_at=datetime(2024, 2, 1, tzinfo=UTC), message_count=12)
    repo.record_session_ingest(second)
    assert repo.get_session_ingest("s") == second


def test_lease_exclusive_until_released(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("compact:1", "worker-a", 30)
    assert lease is not None and lease.holder == "worker-a" and lease.expires_at > datetime.now(UTC)
    assert repo.acquire_lease("compact:1", "worker-b", 30) is None
    assert repo.acquire_lease("compact:2", "worker-b", 30) is not None
    repo.check_fence(lease)
    repo.release_lease(lease)
    with pytest.raises(ConflictError):
        repo.check_fence(lease)
    taken = repo.acquire_lease("compact:1", "worker-b", 30)
    assert taken is not None and taken.fence > lease.fence
    repo.release_lease(lease)  # a stale release changes nothing
    repo.check_fence(taken)


def test_same_holder_regrant_keeps_lease(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("l", "a", 30)
    again = repo.acquire_lease("l", "a", 60)
    assert lease is not None and again is not None
    assert again.fence == lease.fence and again.expires_at >= lease.expires_at
    repo.check_fence(again)


def test_expired_lease_is_taken_over_with_a_new_fence(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("l", "a", 0.05)
    assert lease is not None
    time.sleep(0.12)
    with pytest.raises(ConflictError):
        repo.check_fence(lease)
    with pytest.raises(ConflictError):
        repo.renew_lease(lease, 30)
    other = repo.acquire_lease("l", "b", 30)
    assert other is not None and other.fence > lease.fence
    with pytest.raises(ConflictError):
        repo.check_fence(lease)


def test_expired_lease_regranted_to_same_holder_gets_new_fence(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("l", "a", 0.05)
    assert lease is not None
    time.sleep(0.12)
    again = repo.acquire_lease("l", "a", 30)
    assert again is not None and again.fence > lease.fence
    with pytest.raises(ConflictError):
        repo.check_fence(lease)


def test_renew_extends_a_live_lease(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("l", "a", 0.5)
    assert lease is not None
    renewed = repo.renew_lease(lease, 60)
    assert renewed.fence == lease.fence and renewed.expires_at > lease.expires_at
    repo.check_fence(renewed)
    assert repo.acquire_lease("l", "b", 30) is None


def test_fence_check_inside_a_transaction_guards_the_write(project: ProjectStorage) -> None:
    repo = project.coordination
    lease = repo.acquire_lease("l", "a", 30)
    assert lease is not None
    repo.release_lease(lease)
    repo.acquire_lease("l", "b", 30)

    def fenced_write(tx):  # type: ignore[no-untyped-def]
        tx.coordination.check_fence(lease)
        tx.redaction_admin.add_counts({"written": 1})

    with pytest.raises(ConflictError):
        project.transaction(fenced_write)
    assert project.redaction_admin.get_counts() == {}


def test_leases_are_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    assert project.coordination.acquire_lease("l", "a", 30) is not None
    assert other_project.coordination.acquire_lease("l", "b", 30) is not None
