"""``lcm sensitive scan`` and ``audit`` report what ``gitleaks dir`` reports: a generic rule's finding gives
way to a specific rule's on the same line whose secret holds it."""

from __future__ import annotations

from pathlib import Path

from lcm_scrub_gitleaks.audit import audit_project
from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.scan import scan_paths

from lcm_framework.scrub import Scrubber, scrubber_from_packs
from lcm_framework.storage.models import NewMessage, Role
from tests.ingest.support import make_app

RULES = """
[[rules]]
id = "generic-assignment"
regex = '''key=([a-z0-9_]{10,30})'''
keywords = ["key="]

[[rules]]
id = "svc-token"
regex = '''(svc_[a-z0-9]{11})'''
keywords = ["svc_"]
"""


TEXT = ("key=svc_abcdef12345\n"  # both rules, one secret: the specific one
        "key=plainvalue123\n"  # the generic rule alone
        "key=other_value_9 and svc_zyxwvu98765\n"  # two secrets: both reported
        "svc_qwerty54321\n")
REPORTED = [(1, "svc-token"), (2, "generic-assignment"), (3, "generic-assignment"), (3, "svc-token"),
            (4, "svc-token")]


def _scrubber(tmp_path: Path) -> Scrubber:
    (tmp_path / "rules.toml").write_text(RULES)
    return scrubber_from_packs([load_gitleaks_file(tmp_path / "rules.toml", "test")])


def test_a_generic_finding_gives_way_to_the_specific_one_on_its_line(tmp_path: Path) -> None:
    target = tmp_path / "files"
    target.mkdir()
    (target / "notes.txt").write_text(TEXT)
    assert sorted((f.line, f.rule_id) for f in scan_paths(_scrubber(tmp_path), [target]).findings) == REPORTED


def test_audit_reports_stored_text_the_same_way(tmp_path: Path) -> None:
    app = make_app(tmp_path / "project")
    try:
        with app.project() as st:
            conv = st.conversations.create_conversation("session-1")
            st.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, TEXT, 1)])
            report = audit_project(st, _scrubber(tmp_path))
        found = sorted((f.line, f.rule_id) for f in report.findings if f.kind == "message" and f.field == "content")
        assert found == REPORTED
    finally:
        app.close()
