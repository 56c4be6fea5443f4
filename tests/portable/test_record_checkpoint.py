"""What an imported conversation's native records leave behind: the checkpoint of its portable segment, and
the count ``lcm export`` reports."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from tests.portable.kit import Cli, cli_for, conversation, memory, message, native, project, write


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    with cli_for("sqlite", tmp_path) as made:
        yield made


def test_an_imported_segment_checkpoints_its_native_records_exactly(cli: Cli, tmp_path: Path) -> None:
    natives = [native({"type": "user", "n": 0}, ordinal=3), native({"type": "summary"}, seq=None, ordinal=7)]
    record = conversation("s9", segment=2, messages=[message(0, "hello")], native=natives)
    cli.ok("import-records", str(write(tmp_path / "r.jsonl", project(cli.root), record)))
    env = {**os.environ, **cli.env}
    app = App(load_config(project=cli.root, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        with app.project() as storage:
            checkpoint = storage.native_transcripts.get_checkpoint("portable:s9:2")
    finally:
        app.close()
    assert checkpoint is not None
    assert (checkpoint.byte_offset, checkpoint.prefix_sha256) == (0, "")
    assert (checkpoint.skipped, checkpoint.quarantined) == (0, 0)
    assert checkpoint.last_source_ordinal == 7 and checkpoint.imported == 2
    assert checkpoint.scrubber_version == "lcm-scrub/2:test"


def test_export_reports_how_many_records_it_wrote(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", project(cli.root), conversation("s1"), conversation("s2"), memory("Keep it"))
    cli.ok("import-records", str(path))
    out = tmp_path / "out.jsonl"
    done = cli.run("export", "-o", str(out))
    assert done.returncode == 0, done.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert f"exported {len(written)} records" in done.stderr and len(written) == 4  # project + 2 + memory
