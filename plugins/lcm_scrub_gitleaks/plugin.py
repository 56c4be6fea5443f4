"""Entry point ``gitleaks``: the built-in rule packs and the ``lcm sensitive`` command.

Packs: ``builtin`` (our gitleaks-format TOML), ``gitleaks-config`` (the file
named by ``security.gitleaks_config``) and ``sensitive-patterns`` (config
``security.sensitive_patterns`` plus ``<project>/.lcm/sensitive-patterns.txt``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import Setting, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api import CommandSpec, RulePack
    from lcm_framework.plugin_api.app import Config

BUILTIN_TOML = Path(__file__).parent / "rules" / "builtin.toml"


def _loadable(value: str) -> None:
    """``lcm config set security.gitleaks_config PATH``: the file must be an absolute path to rules that load
    and compile, since a file that does not stops every write (scrubbing fails closed)."""
    from lcm_framework.plugin_api import ConfigError, LcmError
    from lcm_framework.plugin_api.scrub import scrubber_from_packs

    from .loader import load_gitleaks_file

    path = Path(value).expanduser()
    if not path.is_absolute():
        raise ConfigError(f"security.gitleaks_config must be an absolute path (got a relative one: {value!r})")
    try:
        scrubber_from_packs([load_gitleaks_file(path, "gitleaks-config")])
    except LcmError as exc:
        raise ConfigError(f"security.gitleaks_config not set: {exc}") from None


SETTINGS = (
    Setting("security.sensitive_patterns", list, [], "Extra regexes (RE2) whose matches are redacted."),
    Setting("security.gitleaks_config", str, None, "A gitleaks TOML file loaded as an extra rule pack.",
            nullable=True, check=_loadable),
)


@hookimpl
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    for setting in SETTINGS:
        register(setting)


def builtin_pack() -> RulePack:
    from .loader import load_gitleaks_file

    return load_gitleaks_file(BUILTIN_TOML, "builtin")


@hookimpl
def lcm_register_rule_packs(register: Callable[[RulePack], None], config: Config) -> None:
    from .custom import custom_pack, project_patterns_file, read_patterns
    from .loader import load_gitleaks_file

    register(builtin_pack())
    gitleaks_config = config.get("security.gitleaks_config")
    if gitleaks_config:
        register(load_gitleaks_file(Path(gitleaks_config).expanduser(), "gitleaks-config"))
    project_file = project_patterns_file(config.project_root)
    patterns = list(config.get("security.sensitive_patterns") or [])
    project = read_patterns(project_file)
    if patterns or project:
        register(custom_pack(patterns, project, project_file))


@hookimpl
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    from .command import COMMAND

    register(COMMAND)
