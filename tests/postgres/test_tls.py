"""Verified TLS against a throwaway server with a generated CA (certificate names only ``localhost``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.models import NewMessage, ProjectRef, Role
from tests.conftest import skip_or_fail

from .cluster import Cluster, ClusterUnavailable
from .support import TestDatabase

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def tls_cluster() -> Iterator[Cluster]:
    try:
        cluster = Cluster(tls_names=("localhost",))
    except ClusterUnavailable as exc:
        skip_or_fail(f"throwaway cluster unavailable: {exc}")
        raise
    yield cluster
    cluster.destroy()


def make(cluster: Cluster, tmp_path: Path, host: str, ca: Path) -> object:
    db = TestDatabase(cluster.url(host))
    return db.factory("lcm", tmp_path, ca_file=str(ca), allow_plaintext_loopback="false")


def test_verified_connection_succeeds(tls_cluster: Cluster, tmp_path: Path) -> None:
    assert tls_cluster.tls is not None
    factory = make(tls_cluster, tmp_path, "localhost", tls_cluster.tls.ca_pem)
    try:
        project = factory.open_project(ProjectRef("t" * 64, "/tls"))  # type: ignore[attr-defined]
        conv = project.conversations.create_conversation("s")
        project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "over tls", 1)])
        with factory.runtime.connection("test") as conn:  # type: ignore[attr-defined]
            assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()[0]
            assert conn.info.parameter_status("TimeZone") == "UTC"
    finally:
        factory.close()  # type: ignore[attr-defined]


def test_unknown_ca_is_refused(tls_cluster: Cluster, tmp_path: Path) -> None:
    assert tls_cluster.tls is not None
    with pytest.raises(StorageUnavailableError) as info:
        make(tls_cluster, tmp_path, "localhost", tls_cluster.tls.other_ca_pem)
    assert info.value.code == "tls_verify_failed"
    assert str(tls_cluster.port) not in str(info.value) and "localhost" not in str(info.value)


def test_host_name_mismatch_is_refused(tls_cluster: Cluster, tmp_path: Path) -> None:
    """The certificate names ``localhost`` only; 127.0.0.1 is the same server but not the verified name."""
    assert tls_cluster.tls is not None
    with pytest.raises(StorageUnavailableError) as info:
        make(tls_cluster, tmp_path, "127.0.0.1", tls_cluster.tls.ca_pem)
    assert info.value.code == "tls_verify_failed" and "127.0.0.1" not in str(info.value)
