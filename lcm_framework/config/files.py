"""Write one key into a config file, keeping every other key and value."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..safe_paths import atomic_write_private


def set_key(path: Path, key: str, value: Any) -> None:
    """Set ``section.name`` to ``value`` in the TOML file at ``path`` (``None`` removes it), privately."""
    import tomli_w

    section, _, name = key.partition(".")
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    body = data.setdefault(section, {})
    if value is None:
        body.pop(name, None)
        if not body:
            data.pop(section)
    else:
        body[name] = value
    atomic_write_private(path, tomli_w.dumps(data).encode("utf-8"))
