"""Which rules each project's stored data was last audited with: ``$LCM_HOME/sensitive-audit.json``.

``lcm sensitive audit`` records, per project id, the digest of the effective
rules it scanned with; ``lcm doctor`` compares it with today's digest and says
an audit is due when they differ. The file holds digests, dates and finding
counts only, never a secret.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..safe_paths import atomic_write_private

FILE_NAME = "sensitive-audit.json"


@dataclass(frozen=True, slots=True)
class AuditMark:
    digest: str
    audited_at: str
    findings: int


def _read(home: Path) -> dict[str, dict[str, object]]:
    try:
        doc = json.loads((home / FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    projects = doc.get("projects") if isinstance(doc, dict) else None
    return projects if isinstance(projects, dict) else {}


def last_audit(home: Path, project_id: str) -> AuditMark | None:
    entry = _read(home).get(project_id)
    if not isinstance(entry, dict) or not isinstance(entry.get("digest"), str):
        return None
    findings = entry.get("findings")
    return AuditMark(str(entry["digest"]), str(entry.get("audited_at", "")),
                     findings if isinstance(findings, int) else 0)


def record_audit(home: Path, project_id: str, digest: str, findings: int) -> None:
    """Remember that ``project_id`` was audited now with the rules of ``digest`` (read by ``lcm doctor``)."""
    projects = _read(home)
    projects[project_id] = {"digest": digest, "audited_at": datetime.now(UTC).isoformat(timespec="seconds"),
                            "findings": findings}
    data = json.dumps({"projects": projects}, indent=2, sort_keys=True) + "\n"
    atomic_write_private(home / FILE_NAME, data.encode("utf-8"))
