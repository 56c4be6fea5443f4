"""The safe-path module: LCM tightens only LCM_HOME and what it creates; user-named outputs are published
beside the target, never through a link, never over a file without ``replace``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lcm_framework.errors import LcmError
from lcm_framework.safe_paths import UnsafeDestinationError, atomic_write_private, ensure_private_dir, write_output


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def loose_dir(path: Path, perms: int = 0o755) -> Path:
    path.mkdir(parents=True)
    path.chmod(perms)
    return path


def test_missing_directories_are_created_0700_down_from_the_first_existing_one(tmp_path: Path) -> None:
    outside = loose_dir(tmp_path / "project")
    ensure_private_dir(outside / "a" / "b" / "c", home=tmp_path / "lcm")
    assert mode(outside) == 0o755
    assert [mode(outside / "a"), mode(outside / "a" / "b"), mode(outside / "a" / "b" / "c")] == [0o700] * 3


@pytest.mark.parametrize("perms", [0o755, 0o1777, 0o775])
def test_an_existing_directory_outside_home_keeps_its_mode(tmp_path: Path, perms: int) -> None:
    shared = loose_dir(tmp_path / "shared", perms)
    assert ensure_private_dir(shared, home=tmp_path / "lcm") == shared
    assert mode(shared) == perms


def test_home_and_directories_inside_it_are_tightened(tmp_path: Path) -> None:
    home = loose_dir(tmp_path / "lcm")
    files = loose_dir(home / "projects" / "p" / "files")
    ensure_private_dir(files, home=home)
    ensure_private_dir(home, home=home)
    assert mode(files) == mode(home) == 0o700


def test_a_link_inside_home_to_a_directory_outside_does_not_tighten_its_target(tmp_path: Path) -> None:
    home = loose_dir(tmp_path / "lcm")
    elsewhere = loose_dir(tmp_path / "srv")
    (home / "projects").symlink_to(elsewhere)
    ensure_private_dir(home / "projects", home=home)
    assert mode(elsewhere) == 0o755


def test_the_default_home_is_lcm_home(tmp_path: Path, lcm_env: Path) -> None:
    inside = loose_dir(lcm_env / "imports")
    outside = loose_dir(tmp_path / "elsewhere")
    ensure_private_dir(inside)
    ensure_private_dir(outside)
    assert (mode(inside), mode(outside)) == (0o700, 0o755)


def test_private_writes_keep_the_mode_of_a_foreign_parent(tmp_path: Path) -> None:
    project = loose_dir(tmp_path / "project" / ".lcm")
    atomic_write_private(project / "config.toml", b"x = 1\n", home=tmp_path / "lcm")
    assert mode(project) == 0o755 and mode(project / "config.toml") == 0o600


def test_write_output_refusals(tmp_path: Path) -> None:
    here = loose_dir(tmp_path / "exports")
    target = here / "out.jsonl"
    write_output(target, b"one")
    with pytest.raises(UnsafeDestinationError, match="already exists"):
        write_output(target, b"two")
    write_output(target, b"three", replace=True)
    assert target.read_bytes() == b"three" and mode(target) == 0o600
    (here / "link").symlink_to(target)
    (here / "dangling").symlink_to(here / "nowhere")
    for name in ("link", "dangling"):
        with pytest.raises(UnsafeDestinationError, match="symbolic link"):
            write_output(here / name, b"four", replace=True)
    assert target.read_bytes() == b"three" and not (here / "nowhere").exists()
    with pytest.raises(UnsafeDestinationError, match="not a regular file"):
        write_output(here, b"five", replace=True)
    assert sorted(p.name for p in here.iterdir()) == ["dangling", "link", "out.jsonl"]  # no temporary left
    assert mode(here) == 0o755


def test_the_daemon_pid_file_is_private(lcm_env: Path) -> None:
    from tests.daemon.support import DaemonProcess, free_port

    daemon = DaemonProcess(lcm_env, free_port()).start()
    try:
        assert mode(lcm_env / "daemon.pid") == 0o600
    finally:
        daemon.stop()


def test_an_output_that_cannot_be_written_is_a_typed_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(LcmError, match="cannot write"):
        write_output(tmp_path / "a-file" / "out.jsonl", b"data")


def test_the_daemon_token_creates_missing_parents_of_its_home_0700(tmp_path: Path) -> None:
    from lcm_framework.daemon_client.files import ensure_token

    home = tmp_path / "a" / "b" / ".lcm"
    ensure_token(home)
    for directory in (tmp_path / "a", tmp_path / "a" / "b", home):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory


def test_an_agent_config_write_never_follows_a_link_planted_beside_it(tmp_path: Path) -> None:
    from lcm_framework.installer.changes import write_atomic

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    config = tmp_path / "agent" / "settings.json"
    config.parent.mkdir()
    config.write_text("{}")
    for name in (f".{config.name}.lcm-tmp-{os.getpid()}", f".{config.name}.lcm-tmp"):  # names a writer might use
        (config.parent / name).symlink_to(outside)
    write_atomic(config, '{"hooks": {}}\n', 0o644)
    assert outside.read_text() == "keep me"
    assert config.read_text() == '{"hooks": {}}\n' and not config.is_symlink()
    assert stat.S_IMODE(config.stat().st_mode) == 0o644
