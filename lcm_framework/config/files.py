"""Write one key into a config file, keeping every other key and value."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..paths import ensure_private_dir


def set_key(path: Path, key: str, value: Any) -> None:
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
    ensure_private_dir(path.parent)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
