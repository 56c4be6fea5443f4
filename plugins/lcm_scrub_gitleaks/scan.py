"""Scan files and directories for secrets, the way ``gitleaks dir`` does, storing nothing.

Fragments: a ``.jsonl``/``.ndjson`` file is scanned record by record (one
line each, the unit LCM scrubs); any other file in chunks of about 100 KB
that end at a line break. Binary files (a NUL byte in the first 8 KB) are
skipped; symbolic links and ``.git`` directories are not followed. A line
longer than 10 MiB is scanned in pieces, so memory stays bounded. As gitleaks
does, a generic rule's finding is not reported when another rule's secret on
the same line holds its secret (the more specific rule names it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from lcm_framework.plugin_api import LcmError

if TYPE_CHECKING:
    from lcm_framework.plugin_api.scrub import Finding, Scrubber

CHUNK = 100_000
MAX_PIECE = 10 * 1024 * 1024  # a longer line is scanned in pieces (memory stays bounded)
LINE_FORMATS = (".jsonl", ".ndjson")


@dataclass(frozen=True, slots=True)
class FileFinding:
    rule_id: str
    file: Path
    line: int
    column: int


@dataclass
class ScanReport:
    findings: list[FileFinding] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    skipped: int = 0


def iter_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_symlink() and not path.exists():
            continue
        if path.is_file():
            yield path
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != ".git" and not os.path.islink(os.path.join(root, d)))
                for name in sorted(files):
                    full = Path(root, name)
                    if not full.is_symlink() and full.is_file():
                        yield full
        else:
            raise LcmError(f"{path}: no such file or directory")


def _fragments(fp: BinaryIO, by_line: bool) -> Iterator[tuple[int, bytes]]:
    """(first line number, bytes) pieces of a binary file, each ending at a line break (or EOF)."""
    line = 1
    while True:
        if by_line:
            piece = fp.readline(MAX_PIECE)
        else:
            piece = fp.read(CHUNK)
            if piece and not piece.endswith(b"\n"):
                piece += fp.readline(MAX_PIECE)
        if not piece:
            return
        yield line, piece
        line += piece.count(b"\n")


def scan_paths(scrubber: Scrubber, paths: Sequence[Path]) -> ScanReport:
    report = ScanReport()
    for path in iter_files(paths):
        try:
            with path.open("rb") as fp:
                if b"\x00" in fp.read(8192):
                    report.skipped += 1
                    continue
                fp.seek(0)
                report.files += 1
                report.findings.extend(FileFinding(rid, path, 1, 1) for rid in scrubber.path_findings(str(path)))
                by_line = path.suffix.lower() in LINE_FORMATS
                for first_line, data in _fragments(fp, by_line):
                    report.bytes += len(data)
                    for f in reported(scrubber.scan_bytes(data, str(path)), data):
                        report.findings.append(FileFinding(f.rule_id, path, first_line + f.line - 1, f.column))
        except OSError as exc:
            raise LcmError(f"{path}: cannot read ({type(exc).__name__})") from None
    return report


def _generic(finding: Finding) -> bool:
    return "generic" in finding.rule_id.lower()


def reported(findings: list[Finding], text: str | bytes) -> list[Finding]:
    """The findings of ``text`` as gitleaks reports them: less each generic rule's finding whose secret a
    specific rule's secret on the same line holds (its report filter)."""
    specific = [f for f in findings if not _generic(f)]
    if not specific or len(specific) == len(findings):
        return findings
    chars = text.decode("utf-8", "replace") if isinstance(text, bytes) else text  # findings count characters
    return [f for f in findings if not _generic(f) or not any(
        s.line == f.line and chars[f.start:f.end] in chars[s.start:s.end] for s in specific)]
