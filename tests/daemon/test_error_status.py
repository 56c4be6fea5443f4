"""The HTTP status the daemon answers for each error LCM raises (what the hooks and clients branch on)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lcm_framework import errors
from lcm_framework.daemon.bodies import BadRequest
from lcm_framework.daemon.server import error_status
from lcm_framework.recall.refs import RecallNotFoundError


def storage(kind: type[errors.StorageError], code: str) -> errors.StorageError:
    return kind("failed", backend="sqlite", domain="messages", code=code)


@pytest.mark.parametrize(("exc", "answer"), [
    (storage(errors.DataValidationError, "bad_value"), (400, "bad_value")),
    (errors.ConfigError("no such key"), (400, "ConfigError")),
    (storage(errors.NotFoundError, "no_conversation"), (404, "no_conversation")),
    (RecallNotFoundError("no such id"), (404, "not_found")),
    (storage(errors.ConflictError, "revision"), (409, "revision")),
    (errors.TranscriptError("unreadable"), (422, "TranscriptError")),
    (storage(errors.UnsupportedCapabilityError, "no_vectors"), (501, "no_vectors")),
    (storage(errors.StorageUnavailableError, "locked"), (503, "locked")),
    (storage(errors.StorageError, "disk_full"), (500, "disk_full")),
    (errors.SummarizerError("provider down"), (500, "SummarizerError")),
    (ValueError("a bug"), (500, "internal_error")),
])
def test_each_error_has_its_status_and_code(exc: BaseException, answer: tuple[int, str]) -> None:
    assert error_status(exc) == answer


def test_a_bad_request_keeps_its_own_status() -> None:
    found = error_status(BadRequest("too large", status=413, code="body_too_large"))
    assert found == (413, "body_too_large")


def test_a_running_daemon_keeps_its_files_private(tmp_path: Path) -> None:
    """The log (which names projects and errors), the token and the pid file are the user's alone."""
    from tests.daemon.support import DaemonProcess, free_port

    daemon = DaemonProcess(tmp_path / "home", free_port()).start(timeout=60)
    try:
        for name in ("daemon.log", "daemon.token", "daemon.pid"):
            assert stat.S_IMODE((tmp_path / "home" / name).stat().st_mode) == 0o600, name
    finally:
        daemon.stop()
