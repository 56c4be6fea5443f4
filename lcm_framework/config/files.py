"""Write one key into a config file, keeping every other key and value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..safe_paths import atomic_write_private
from .resolve import read_toml


def set_key(path: Path, key: str, value: Any) -> None:
    """Set ``section.name`` to ``value`` in the TOML file at ``path`` (``None`` removes it), privately."""
    import tomli_w

    section, _, name = key.partition(".")
    data: dict[str, Any] = read_toml(path) if path.is_file() else {}
    body = data.setdefault(section, {})
    if value is None:
        body.pop(name, None)
        if not body:
            data.pop(section)
    else:
        body[name] = value
    atomic_write_private(path, tomli_w.dumps(data).encode("utf-8"))
