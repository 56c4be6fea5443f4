"""Resolve one configuration: defaults < global file < project file < LCM_* env < flags."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..paths import find_project_root, lcm_home, project_config_path
from .redact import for_error, withheld
from .registry import SettingsRegistry, collect_settings
from .schema import Setting

if TYPE_CHECKING:
    from ..kernel.plugins import Plugins

PARENT_FLAGS = "LCM_PARENT_FLAGS"
"""The variable that hands a run's ``--set`` values to the processes it starts (a JSON object of key: value),
applied there as flags: the daemon and import workers resolve the configuration their command resolved."""


@dataclass(frozen=True, slots=True)
class Resolved:
    value: Any
    source: str


@dataclass(frozen=True)
class Config:
    """The resolved configuration shared by the CLI, daemon, MCP server and doctor."""

    home: Path
    project_root: Path
    values: Mapping[str, Resolved] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    settings: SettingsRegistry = field(default_factory=SettingsRegistry)
    """The keys this run knows: the core's and the loaded plugins'."""
    problems: tuple[str, ...] = ()
    """File values left at their default because they were invalid (only when loaded ``repairing``)."""

    def get(self, key: str) -> Any:
        try:
            return self.values[key].value
        except KeyError:
            raise ConfigError(self.settings.unknown(key)) from None

    def source(self, key: str) -> str:
        return self.values[key].source

    def display(self, key: str) -> str:
        """The value as safe to print: secret-bearing values are masked."""
        return display_value(self.settings.lookup(key), self.get(key))

    @property
    def flags(self) -> dict[str, Any]:
        """The values set on the command line (``--set``, or handed down by the command that started this
        process), by key."""
        return {key: r.value for key, r in self.values.items() if r.source == "flag"}

    def child_env(self) -> dict[str, str]:
        """The environment of a process this run starts (the daemon, an import worker): this run's variables
        plus its command-line values (``PARENT_FLAGS``), so the child resolves the same configuration. In the
        environment rather than on the child's command line, where a secret would show in ``ps``."""
        env = {k: v for k, v in self.env.items() if k != PARENT_FLAGS}
        if self.flags:
            env[PARENT_FLAGS] = json.dumps(self.flags, sort_keys=True)
        return env

    @property
    def global_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def project_file(self) -> Path:
        return project_config_path(self.project_root)


def display_value(setting: Setting, value: Any) -> str:
    if value is None:
        return "(unset)"
    if setting.secret:
        return mask_secret(str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and "://" in value:
        return mask_url_credentials(value)
    return str(value)


def mask_url_credentials(value: str) -> str:
    """Hide the user-info part of a URL (``scheme://user:pass@host`` -> ``scheme://***@host``)."""
    scheme, rest = value.split("://", 1)
    authority, slash, tail = rest.partition("/")
    if "@" not in authority:
        return value
    return f"{scheme}://***@{authority.rsplit('@', 1)[1]}{slash}{tail}"


def mask_secret(value: str) -> str:
    """Keep a URL's scheme and host, hide credentials; other secrets keep 4 characters."""
    if "://" in value:
        scheme, rest = value.split("://", 1)
        hostpart = rest.split("/", 1)[0].rsplit("@", 1)[-1]
        return f"{scheme}://***@{hostpart}/***"
    return (value[:4] + "***") if len(value) > 8 else "***"


def load_config(
    *,
    cwd: Path | None = None,
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    files_only: bool = False,
    plugins: Plugins,
    repairing: bool = False,
) -> Config:
    """Resolve every key. ``overrides`` are command-line flags (highest precedence).

    The keys are the core's plus those ``plugins`` declare: the process loads its plugins first, once
    (``build_plugins`` reads only the environment, never the configuration) and passes them here.
    ``files_only`` stops after the configuration files (what ``lcm config get`` shows
    without ``--effective``): no ``LCM_*`` variables but ``LCM_HOME``, no flags. ``repairing`` (``lcm config``)
    keeps the default for a file key that is unknown or invalid and names it in ``Config.problems`` instead of
    refusing the whole run, so the command that fixes the file can run.
    """
    environ = dict(os.environ if env is None else env)
    settings = collect_settings(plugins)
    home = lcm_home(environ)
    root = (project or find_project_root(cwd or Path.cwd())).resolve()
    values: dict[str, Resolved] = {k: Resolved(s.default, "default") for k, s in settings.items()}

    problems: list[str] = []
    for path, label in ((home / "config.toml", "global"), (project_config_path(root), "project")):
        for key, raw in read_config_file(path, settings, problems if repairing else None).items():
            try:
                values[key] = Resolved(settings.parse(key, raw, f"{label} file {path}"), f"{label}:{path}")
            except ConfigError as exc:
                if not repairing:
                    raise
                problems.append(str(exc))

    if files_only:
        return Config(home=home, project_root=root, values=values, env=environ, settings=settings,
                      problems=tuple(problems))
    for key, setting in settings.items():
        for name in setting.env:
            if name in environ:
                values[key] = Resolved(settings.parse(key, environ[name], f"environment {name}"), f"env:{name}")
                break

    for key, raw in _parent_flags(environ).items():
        values[key] = Resolved(settings.parse(key, raw, f"environment {PARENT_FLAGS} (the --set flags of the "
                                              "lcm command that started this process)"), "flag")
    for key, raw in (overrides or {}).items():
        if raw is not None:
            values[key] = Resolved(settings.parse(key, raw, "command line"), "flag")
    return Config(home=home, project_root=root, values=values, env=environ, settings=settings,
                  problems=tuple(problems))


def _parent_flags(environ: Mapping[str, str]) -> dict[str, Any]:
    """The command-line values ``PARENT_FLAGS`` hands down (``Config.child_env``); a ConfigError when it is not
    a JSON object (never printing it: it may hold a secret)."""
    text = environ.get(PARENT_FLAGS)
    if not text:
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ConfigError(f"environment {PARENT_FLAGS} must be a JSON object of configuration keys and values "
                          "(it is set by lcm for the processes it starts; unset it)")
    return {key: raw for key, raw in found.items() if raw is not None}


def read_config_file(path: Path, settings: SettingsRegistry, problems: list[str] | None = None) -> dict[str, Any]:
    """Flatten a TOML file into dotted keys; unknown keys are refused (or, given ``problems``, listed there
    and left out)."""
    if not path.is_file():
        return {}
    data = read_toml(path)
    flat: dict[str, Any] = {}
    for section, body in data.items():
        if not isinstance(body, dict):
            why = withheld(section)
            named = repr(section) if why is None else f"(not shown: {why})"
            raise ConfigError(f"{path}: top-level key {named} must be a [section]")
        for name, raw in body.items():
            key = f"{section}.{name}"
            if key not in settings:
                if problems is None:
                    raise ConfigError(f"{path}: {settings.unknown(key)}")
                problems.append(f"{path}: {settings.unknown(key)}")
                continue
            flat[key] = raw
    return flat


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document at ``path``; ConfigError when it is not UTF-8 TOML (too deep, a huge integer)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not valid TOML: not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(f"{path} is not valid TOML: nested too deeply") from None
    except ValueError as exc:  # TOMLDecodeError names the line and column, never the text
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def parse_overrides(pairs: Sequence[str]) -> dict[str, str]:
    """``-c KEY=VALUE`` flags as a mapping for ``load_config(overrides=...)``."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got {for_error(pair)}")
        out[key.strip()] = value
    return out
