"""A server that stops mid-operation: a clear, sanitized StorageUnavailableError, nothing half-written,
and normal operation once it is back (on a throwaway cluster, never the shared server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.models import NewMessage, ProjectRef, Role

from .cluster import Cluster, throwaway
from .support import TestDatabase

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """One cluster for the module; each test leaves it running."""
    with throwaway() as made:
        yield made


def test_server_stopped_mid_transaction_then_restarted(cluster: Cluster, tmp_path: Path) -> None:
    factory = TestDatabase(cluster.url()).factory("lcm", tmp_path, acquire_timeout_s="1")
    try:
        project = factory.open_project(ProjectRef("o" * 64, "/outage"))
        conv = project.conversations.create_conversation("s")
        project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "before", 1)])

        def interrupted(repos: Any) -> None:
            repos.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "lost", 1)])
            cluster.stop()
            repos.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "never", 1)])

        with pytest.raises(StorageUnavailableError) as info:
            project.transaction(interrupted)
        text = str(info.value)
        assert str(cluster.port) not in text and "127.0.0.1" not in text and "postgresql/" in text
        with pytest.raises(StorageUnavailableError):
            project.conversations.list_messages(conv.conversation_id)
        health = project.health()
        assert not health.ok and health.state == "unavailable"
        assert not factory.health().ok

        cluster.start()
        assert [m.content for m in project.conversations.list_messages(conv.conversation_id)] == ["before"]
        (after,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "after", 1)])
        assert after.seq == 1
        assert project.health().ok and factory.health().ok
    finally:
        factory.close()


def test_server_down_at_start_up_is_unavailable_not_a_fallback(cluster: Cluster, tmp_path: Path) -> None:
    cluster.stop()
    try:
        with pytest.raises(StorageUnavailableError) as info:
            TestDatabase(cluster.url()).factory("lcm", tmp_path, acquire_timeout_s="1")
        assert info.value.backend == "postgresql" and info.value.code == "unavailable"
        assert not list(tmp_path.glob("**/*.db"))
    finally:
        cluster.start()


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # nothing raised while closing
def test_server_stopped_during_an_import_then_rerun_gives_exactly_the_uninterrupted_data(
        cluster: Cluster, tmp_path: Path) -> None:
    from lcm_framework.ingest import import_sources
    from lcm_framework.ingest.report import ProgressEvent
    from tests.ingest.support import claude_records, make_app, snapshot, write_jsonl

    project = tmp_path / "proj"
    source = write_jsonl(tmp_path / "src" / "session.jsonl",
                         claude_records("0f0e0d0c-0000-4000-8000-000000000001", str(project), 30))

    def app(name: str) -> Any:
        return make_app(project, home=tmp_path / f"home-{name}", **{
            "storage.backend": "postgresql", "postgresql.url": cluster.url(), "postgresql.schema": f"imp_{name}",
            "postgresql.allow_plaintext_loopback": "true", "postgresql.acquire_timeout_s": "1"})

    reference = app("reference")
    try:
        assert import_sources(reference, [source], batch_size=10).errors == []
        expected = snapshot(reference, project)
    finally:
        reference.close()

    batches = 0

    def stop_after_three(event: ProgressEvent) -> None:
        nonlocal batches
        if event.kind == "bytes":
            batches += 1
            if batches == 3:
                cluster.stop()

    interrupted = app("interrupted")
    try:
        try:
            report = import_sources(interrupted, [source], batch_size=10, progress=stop_after_three)
        finally:
            cluster.start()
        assert report.errors, "the import should report the outage"
        (failed,) = report.file_reports
        assert failed.error is not None and "unavailable" in (failed.error.code + failed.error.message)
        checkpoint_kept = snapshot(interrupted, project)["checkpoints"]
        assert checkpoint_kept, "the batches committed before the outage keep their checkpoint"
        assert import_sources(interrupted, [source], batch_size=10).errors == []
        assert snapshot(interrupted, project) == expected
    finally:
        interrupted.close()
