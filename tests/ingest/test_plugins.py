"""Formats come from plugins: a third-party format registered in-process imports, a broken one fails
typed without losing what was stored or stopping the other files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.ingest import import_sources
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.models import FormatIdentity, NewMessage, Role
from lcm_framework.transcripts.contracts import MappedRecord, TranscriptFormat

from .support import claude_records, write_jsonl


class ToyFormat:
    """One ``{"toy": session, "say": text}`` object per line; ``"boom"`` makes the mapper raise."""

    identity = FormatIdentity("toy-client", "toy-jsonl", "v1")
    provider = "toy"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        return []

    def discover(self, root: Path) -> Iterator[Path]:
        return iter(())

    def sniff(self, head: Sequence[Any]) -> bool:
        return bool(head) and all(isinstance(r, dict) and "toy" in r for r in head)

    def map_record(self, record: Any) -> MappedRecord:
        if record.get("say") == "boom":
            raise RuntimeError("mapper bug")
        text = str(record.get("say", ""))
        return MappedRecord(session_id=record["toy"], cwd=record.get("cwd"),
                            message=NewMessage(Role.USER, text, len(text) // 4) if text else None)

    def structural_samples(self) -> Sequence[Any]:
        return ({"toy": "s", "say": "hello"},)


class ToyPlugin:
    @hookimpl
    def lcm_register_formats(self, register: Callable[[TranscriptFormat], None]) -> None:
        register(ToyFormat())


def test_plugin_format_imports_and_a_mapper_bug_fails_only_its_file(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    good = [{"toy": "toy-1", "cwd": str(proj), "say": f"line {i}"} for i in range(7)]
    (src / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    bad = [{"toy": "toy-2", "cwd": str(proj), "say": f"line {i}"} for i in range(6)]
    bad.insert(5, {"toy": "toy-2", "say": "boom"})
    (src / "bad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bad))
    write_jsonl(src / "claude.jsonl", claude_records("toy-3", str(proj), 1))
    app = App(load_config(project=proj, plugins=build_plugins()), build_plugins(extra=[("toy", ToyPlugin())]))
    try:
        report = import_sources(app, [src], batch_size=2)
        by_file = {f.locator: f for f in report.file_reports}
        assert by_file["good.jsonl"].ok and by_file["good.jsonl"].messages == 7
        assert by_file["good.jsonl"].format_id == "toy-client/toy-jsonl/v1"
        assert by_file["claude.jsonl"].ok and by_file["claude.jsonl"].messages == 4
        failed = by_file["bad.jsonl"]
        assert failed.error is not None and failed.error.code == "format_error"
        assert "RuntimeError" in failed.error.message and "boom" not in failed.error.message
        assert failed.stored == 4  # the two batches before the bad record stay committed
        with app.project(proj) as st:
            cp = st.native_transcripts.get_checkpoint("toy-client:bad.jsonl")
            assert cp is not None and cp.last_source_ordinal == 3
            assert len(st.native_transcripts.list_by_source("bad.jsonl")) == 4
        assert [f.locator for f in import_sources(app, [src], provider="toy").file_reports
                if f.status != "skipped"] == ["bad.jsonl", "good.jsonl"]
    finally:
        app.close()
