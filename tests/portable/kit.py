"""Portable records built by hand (as a hostile or careless author would) and the CLI to import them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lcm_framework.compaction.ids import file_id
from lcm_framework.portable.records import with_digest
from tests.conftest import run_lcm

T = "2026-03-01T09:00:00+00:00"
HEADER = {"format": "lcm-records", "version": 1, "backend": "sqlite", "created_at": T}


def project(root: Path | str) -> dict[str, Any]:
    return with_digest({"type": "project", "user_wide": False, "root": str(root)})


def message(seq: int, content: str, *, role: str = "user", parts: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    return {"seq": seq, "role": role, "content": content, "token_count": len(content) // 4 + 1, "created_at": T,
            "parts": parts or []}


def part(text: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "text", "text": text, "tool_call_id": None, "tool_name": None, "is_error": False,
            "raw_json": None, "metadata": None, **fields}


def large_file(content: str, *, seq: int | None = 0, name: str | None = "notes.txt", **fields: Any
               ) -> dict[str, Any]:
    import hashlib

    data = content.encode("utf-8")
    return {"file_id": file_id(content), "message_seq": seq, "file_name": name, "mime_type": "text/plain",
            "byte_size": len(data), "token_count": len(data) // 4 + 1, "sha256": hashlib.sha256(data).hexdigest(),
            "exploration_summary": "a text file", "created_at": T, "content": content, **fields}


def summary(summary_id: str, content: str, seqs: list[int], **fields: Any) -> dict[str, Any]:
    return {"summary_id": summary_id, "kind": "leaf", "depth": 0, "content": content, "token_count": 10,
            "earliest_at": T, "latest_at": T, "descendant_count": 0, "file_ids": [], "source_seqs": seqs,
            "parent_ids": [], **fields}


def native(payload: dict[str, Any], *, seq: int | None = 0, ordinal: int = 0) -> dict[str, Any]:
    import hashlib

    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"ingest_key": hashlib.sha256(f"key{ordinal}".encode()).hexdigest(),
            "format": ["claude", "claude-jsonl", "1"], "native_session_id": "s1",
            "source_locator": "/home/dev/.claude/projects/x/s1.jsonl", "source_ordinal": ordinal,
            "payload_json": text, "content_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "scrubber_version": "lcm-scrub/2:test", "observed_at": T, "message_seq": seq}


def conversation(session_id: str = "s1", *, digest: bool = True, **fields: Any) -> dict[str, Any]:
    record = {"type": "conversation", "session_id": session_id, "segment": 0, "title": None,
              "messages": [message(0, "hello")], "files": [], "summaries": [], "context": [["message", 0]],
              "native": [], **fields}
    return with_digest(record) if digest else record


def memory(content: str, **fields: Any) -> dict[str, Any]:
    return with_digest({
        "type": "memory", "content": content, "tags": [], "confidence": 0.5, "archived": False,
        "created_at": T, "updated_at": T, "source_summary_id": None,
        "lineage": {"origin": "import", "kind": None, "summaries": [], "messages": [], "extra": {}},
        "recall": {"surfaced": 0, "useful": 0, "not_useful": 0, "last_surfaced_at": None, "surfacings": []},
        **fields})


def write(path: Path, *records: dict[str, Any] | str, header: dict[str, Any] | str = HEADER) -> Path:
    """``path`` holding the header and ``records`` (a string is written as the line itself)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in (header, *records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Cli:
    """``lcm`` for one project on one backend (a subprocess per call)."""

    root: Path
    home: Path
    env: dict[str, str]
    options: tuple[str, ...] = ()
    backend: str = "sqlite"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_lcm("--project", str(self.root), *self.options, *args, cwd=self.root, env=self.env, timeout=300)

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def refused(self, *args: str) -> str:
        """stderr of a call that must fail the way bad input does: exit 2, one error line, no traceback."""
        done = self.run(*args)
        assert done.returncode == 2, (done.returncode, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.startswith("lcm: error: "), done.stderr
        return done.stderr

    def grep(self, pattern: str) -> str:
        """``lcm grep --json`` over every project, meta records included (exit 1 when nothing matches)."""
        done = self.run("grep", pattern, "--all-projects", "--include-meta", "--json")
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    def export(self, path: Path) -> str:
        self.ok("export", "--all-projects", "-o", str(path), "--force")
        return path.read_text("utf-8")


@contextmanager
def cli_for(backend: str, tmp_path: Path) -> Iterator[Cli]:
    """A project dir and an LCM_HOME on ``backend`` (``postgresql`` uses a throwaway schema)."""
    from tests.compaction.helpers import project_dir

    root = project_dir(tmp_path)
    home = tmp_path / "lcm-home"
    if backend == "sqlite":
        yield Cli(root, home, {"LCM_HOME": str(home), "LCM_STORAGE_BACKEND": "sqlite"})
        return
    from tests.postgres.support import require_database

    db = require_database()
    with db.pooled_schema() as schema:
        yield Cli(root, home, {"LCM_HOME": str(home), "LCM_STORAGE_BACKEND": "postgresql",
                               "LCM_POSTGRES_URL": db.url, "LCM_POSTGRES_ALLOW_PLAINTEXT": "true"},
                  ("-c", f"postgresql.schema={schema}"), backend)
