"""The differential test's gitleaks comes from the Debian mirror the machine's apt sources name."""

from __future__ import annotations

from pathlib import Path

import pytest

from .gitleaks_binary import GitleaksUnavailable, debian_mirror


def test_the_mirror_is_read_from_deb822_and_one_line_sources_security_left_out(tmp_path: Path) -> None:
    parts = tmp_path / "sources.list.d"
    parts.mkdir()
    (parts / "a-security.sources").write_text("Types: deb\nURIs: http://security.debian.org/debian-security\n")
    (parts / "debian.sources").write_text("Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n")
    assert debian_mirror((tmp_path / "sources.list", parts)) == "http://mirror.example/debian"
    one_line = tmp_path / "one.list"
    one_line.write_text("# comment\ndeb [arch=amd64] https://ftp.example.org/debian bookworm main\n")
    assert debian_mirror((one_line,)) == "https://ftp.example.org/debian"


def test_no_debian_source_is_a_clear_refusal(tmp_path: Path) -> None:
    (tmp_path / "other.list").write_text("deb http://ppa.example/ubuntu jammy main\n")
    with pytest.raises(GitleaksUnavailable, match="no Debian mirror"):
        debian_mirror((tmp_path / "other.list",))
