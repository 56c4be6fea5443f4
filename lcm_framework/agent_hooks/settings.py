"""The two settings a hook needs (``daemon.port``, ``daemon.autostart``), read without the config package.

``lcm_framework.config`` costs tens of milliseconds at start-up (dataclasses,
inspect, the whole schema); a hook runs on every agent turn. This reader
follows the same precedence for these two keys: defaults < ``$LCM_HOME/config.toml``
< ``<project>/.lcm/config.toml`` < ``LCM_DAEMON_PORT`` / ``LCM_DAEMON_AUTOSTART``.
``tests/hooks`` checks that it agrees with ``load_config``. Invalid values
raise ``ValueError`` (the hook then warns and uses the defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..paths import find_project_root, lcm_home, project_config_path

DEFAULT_PORT = 3737
DEFAULT_AUTOSTART = True
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


class HookSettings:
    __slots__ = ("autostart", "home", "port", "project")

    def __init__(self, home: Path, port: int, autostart: bool, project: Path | None) -> None:
        self.home = home
        self.port = port
        self.autostart = autostart
        self.project = project


def hook_settings(cwd: Path | None, env: Mapping[str, str]) -> HookSettings:
    home = lcm_home(env)
    project = find_project_root(cwd) if cwd is not None else None
    port: Any = DEFAULT_PORT
    autostart: Any = DEFAULT_AUTOSTART
    files = [home / "config.toml"] + ([project_config_path(project)] if project is not None else [])
    for path in files:
        section = _daemon_section(path)
        port = section.get("port", port)
        autostart = section.get("autostart", autostart)
    port = env.get("LCM_DAEMON_PORT", port)
    autostart = env.get("LCM_DAEMON_AUTOSTART", autostart)
    return HookSettings(home, _port(port), _bool(autostart), project)


def _daemon_section(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None
    section = data.get("daemon", {})
    return section if isinstance(section, dict) else {}


def _port(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("daemon.port is not an integer")
    try:
        port = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"daemon.port = {value!r} is not an integer") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"daemon.port = {port} is out of range (1..65535)")
    return port


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
        return value.strip().lower() in TRUE
    raise ValueError(f"daemon.autostart = {value!r} is not true or false")
