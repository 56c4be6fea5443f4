"""Which files an import reads, and the client root each one is located under.

With no path, every selected format's default roots are scanned with its own
``discover``. An explicit file or directory is located under the deepest
registered default root that contains it (so the same file always gets the
same locator, whichever way it was named); otherwise under the directory
given, or the file's own directory. The format is decided later, by content.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..transcripts.contracts import TranscriptFormat
from .errors import IngestError, SourceRefusedError
from .source import relative_locator


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A file to import: its client root, its locator there, and whether it was named explicitly."""

    path: Path
    root: Path
    locator: str
    named: bool = False


@dataclass(frozen=True, slots=True)
class MissingPath:
    path: Path
    error: IngestError


def select_formats(formats: Mapping[str, TranscriptFormat], provider: str | None) -> dict[str, TranscriptFormat]:
    """Formats of ``provider`` (``None`` or ``all``: every registered format)."""
    if provider in (None, "all"):
        return dict(formats)
    return {fid: fmt for fid, fmt in formats.items() if fmt.provider == provider}


def _default_roots(formats: Mapping[str, TranscriptFormat], env: Mapping[str, str]) -> list[Path]:
    return [root.expanduser().resolve() for _fid, fmt in sorted(formats.items()) for root in fmt.default_roots(env)]


def _owning_root(target: Path, roots: Iterable[Path]) -> Path | None:
    """The deepest default root containing ``target`` (already resolved)."""
    inside = [root for root in roots if target.is_relative_to(root)]
    return max(inside, key=lambda r: len(r.parts)) if inside else None


def plan_sources(
    formats: Mapping[str, TranscriptFormat],
    selected: Mapping[str, TranscriptFormat],
    paths: Sequence[Path] | None,
    env: Mapping[str, str],
) -> list[SourceSpec | MissingPath]:
    """Every source to import, deduplicated by (root, locator), in a stable order."""
    planned: list[SourceSpec | MissingPath] = []
    seen: dict[tuple[Path, str], int] = {}

    def add(spec: SourceSpec) -> None:
        key = (spec.root, spec.locator)
        if key not in seen:
            seen[key] = len(planned)
            planned.append(spec)
        elif spec.named:  # also named explicitly: an unrecognized format is then an error
            planned[seen[key]] = spec

    def add_file(path: Path, root: Path, named: bool = False) -> None:
        try:
            add(SourceSpec(path, root, relative_locator(root, path), named))
        except SourceRefusedError as exc:
            planned.append(MissingPath(path, exc))

    if not paths:
        for _fid, fmt in sorted(selected.items()):
            for root in fmt.default_roots(env):
                for path in fmt.discover(root.expanduser()):
                    add_file(path, root.expanduser().resolve())
        return planned

    roots = _default_roots(formats, env)
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            real = path.resolve()
            root = _owning_root(real, roots) or real
            found: set[Path] = set()
            for fmt in selected.values():
                found.update(fmt.discover(path))
            found.update(p for p in path.rglob("*.jsonl") if p.is_file())
            for file in sorted(found, key=lambda p: p.as_posix()):
                add_file(file, root)
        elif path.is_file() or path.is_symlink():
            parent = path.parent.resolve()
            add_file(path, _owning_root(parent, roots) or parent, named=True)
        else:
            planned.append(MissingPath(path, IngestError("no such file or directory", code="not_found")))
    return planned
