"""`lcm export -o PATH` writes a new file beside PATH and renames it; the directory keeps its mode, and a
link, a non-regular file or (without --force) an existing file at PATH is refused."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.portable.kit import Cli, cli_for


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    with cli_for("sqlite", tmp_path) as made:
        yield made


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def exported(path: Path) -> bool:
    return json.loads(path.read_text().splitlines()[0])["format"] == "lcm-records"


@pytest.mark.parametrize("shared_mode", [0o1777, 0o755])
def test_export_into_a_directory_lcm_does_not_own_keeps_its_mode(cli: Cli, tmp_path: Path, shared_mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(shared_mode)
    cli.ok("export", "-o", str(shared / "records.jsonl"))
    assert mode(shared) == shared_mode
    assert exported(shared / "records.jsonl") and mode(shared / "records.jsonl") == 0o600
    assert [p.name for p in shared.iterdir()] == ["records.jsonl"]  # no temporary file left beside it


def test_missing_directories_are_created_private(cli: Cli, tmp_path: Path) -> None:
    cli.ok("export", "-o", str(tmp_path / "new" / "sub" / "records.jsonl"))
    assert mode(tmp_path / "new") == mode(tmp_path / "new" / "sub") == 0o700
    assert exported(tmp_path / "new" / "sub" / "records.jsonl")


def test_an_existing_file_is_replaced_only_with_force(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "records.jsonl"
    target.write_text("yesterday's export\n")
    err = cli.refused("export", "-o", str(target))
    assert "already exists" in err and "--force" in err
    assert target.read_text() == "yesterday's export\n"
    cli.ok("export", "-o", str(target), "--force")
    assert exported(target) and mode(target) == 0o600


def test_a_link_or_a_non_regular_file_at_the_path_is_refused_even_with_force(cli: Cli, tmp_path: Path) -> None:
    victim = tmp_path / "victim.conf"
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    (tmp_path / "link").symlink_to(victim)
    (tmp_path / "dangling").symlink_to(tmp_path / "created-through-the-link")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, expected in (("link", "symbolic link"), ("dangling", "symbolic link"), ("fifo", "not a regular file"),
                           ("dir", "not a regular file")):
        assert expected in cli.refused("export", "-o", str(tmp_path / name), "--force"), name
    assert victim.read_text() == "keep me\n" and mode(victim) == 0o644
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "created-through-the-link").exists()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode) and list((tmp_path / "dir").iterdir()) == []
