"""The audit marks ``lcm sensitive audit`` leaves for ``lcm doctor``: per project, the rules digest and count."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from lcm_framework.scrub.audit_marks import FILE_NAME, last_audit, record_audit


def test_a_recorded_audit_is_read_back_per_project(tmp_path: Path) -> None:
    assert last_audit(tmp_path, "p1") is None
    record_audit(tmp_path, "p1", "d" * 64, 3)
    record_audit(tmp_path, "p2", "e" * 64, 0)
    mark = last_audit(tmp_path, "p1")
    assert mark is not None and (mark.digest, mark.findings) == ("d" * 64, 3) and mark.audited_at[:2] == "20"
    other = last_audit(tmp_path, "p2")
    assert other is not None and (other.digest, other.findings) == ("e" * 64, 0)
    record_audit(tmp_path, "p1", "f" * 64, 1)  # a later audit replaces the project's mark only
    assert last_audit(tmp_path, "p1").digest == "f" * 64  # type: ignore[union-attr]
    assert last_audit(tmp_path, "p2").digest == "e" * 64  # type: ignore[union-attr]
    path = tmp_path / FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(json.loads(path.read_text())["projects"]) == {"p1", "p2"}


def test_an_unreadable_or_odd_file_means_no_audit(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    for text in ("{not json", "[]", '{"projects": []}', '{"projects": {"p1": {"digest": 7}}}'):
        path.write_text(text)
        assert last_audit(tmp_path, "p1") is None
    path.write_text('{"projects": {"p1": {"digest": "abc", "findings": "many"}}}')
    assert last_audit(tmp_path, "p1").findings == 0  # type: ignore[union-attr]
    record_audit(tmp_path, "p2", "d" * 64, 2)  # an odd file is rewritten whole, keeping what it can read
    assert last_audit(tmp_path, "p2").findings == 2  # type: ignore[union-attr]
