"""`lcm import-records` on a damaged or careless file: one typed error naming the line, exit 2, no traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.portable.records import with_digest
from tests.portable.kit import HEADER, Cli, cli_for, conversation, memory, project, summary, write


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    with cli_for("sqlite", tmp_path) as made:
        yield made


def _bad_lines(root: Path) -> list[tuple[str, list[str] | bytes, str]]:
    head, good_project = json.dumps(HEADER), json.dumps(project(root))
    dangling = conversation(summaries=[summary("sum_00000000000000aa", "s", [9])])
    return [
        ("wrong type", [head, good_project, json.dumps(conversation(messages="hello"))],
         "line 3: conversation.messages: expected a list"),
        ("dangling seq", [head, good_project, json.dumps(dangling)],
         "line 3: conversation.summaries[0].source_seqs names a message the record lacks"),
        ("lone surrogate", [head, good_project, json.dumps({**memory("m"), "content": "\ud800"})],
         "line 3: a string holds a lone surrogate"),
        ("not UTF-8", head.encode() + b"\n" + good_project.encode() + b"\n\xc3\x28\n", "line 3 is not UTF-8"),
        ("version -7", [json.dumps({**HEADER, "version": -7}), good_project], "version must be a positive integer"),
        ("version true", [json.dumps({**HEADER, "version": True}), good_project],
         "version must be a positive integer"),
        ("relative root", [head, json.dumps(with_digest({"type": "project", "user_wide": False, "root": "../../etc"}))],
         "line 2: project.root: expected an absolute, normalized path"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_bad_input_is_a_typed_error_naming_the_line(cli: Cli, tmp_path: Path, case: int) -> None:
    name, content, expected = _bad_lines(cli.root)[case]
    path = tmp_path / "bad.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text("\n".join(content) + "\n", encoding="utf-8")
    err = cli.refused("import-records", str(path))
    assert expected in err, name
    assert "Traceback" not in err


def test_a_missing_or_unreadable_file_is_a_typed_error(cli: Cli, tmp_path: Path) -> None:
    assert "cannot read" in cli.refused("import-records", str(tmp_path / "absent.jsonl"))
    assert "not a regular file" in cli.refused("import-records", str(tmp_path))  # a directory
    assert "not a regular file" in cli.refused("import-records", "/dev/zero")  # an endless device: never read
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in cli.refused("import-records", str(fifo))  # would block the reader


def test_an_endless_line_is_refused_at_the_cap_without_reading_it_all() -> None:
    import io

    from lcm_framework.portable.reader import RecordFormatError, lines

    stream = io.BytesIO(b'{"a": 1}\n' + b"x" * 5000)
    numbered = lines(stream, max_line_bytes=1000)
    assert next(numbered) == (1, '{"a": 1}\n')
    with pytest.raises(RecordFormatError, match="line 2 is longer than 1,000 bytes"):
        next(numbered)
    assert stream.tell() <= 10 + 1001  # no more of the line was read than the cap


def test_records_before_a_bad_line_stay_imported(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", project(cli.root), memory("Keep this one"), "{not json")
    assert "line 4: not JSON" in cli.refused("import-records", str(path))
    assert "Keep this one" in cli.ok("memory", "list", "--json")
