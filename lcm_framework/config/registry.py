"""The keys of one run: the core's plus those the loaded plugins declare (``lcm_register_settings``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, PluginError
from .redact import for_error, withheld
from .schema import SETTINGS, Setting, declaration_problem, parse_value

if TYPE_CHECKING:
    from ..kernel.plugins import Plugins

CORE = "core"
"""The owner of the keys in ``schema.SETTINGS``."""


@dataclass(frozen=True)
class SettingsRegistry:
    """Every known key with its owner (``core`` or a plugin name), and which plugins were loaded."""

    specs: Mapping[str, Setting] = field(default_factory=lambda: dict(SETTINGS))
    owners: Mapping[str, str] = field(default_factory=lambda: dict.fromkeys(SETTINGS, CORE))
    plugins: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    """Plugins whose ``lcm_register_settings`` failed (their keys are unknown)."""

    def __contains__(self, key: object) -> bool:
        return key in self.specs

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def items(self) -> Iterator[tuple[str, Setting]]:
        return iter(self.specs.items())

    def lookup(self, key: str, where: str = "") -> Setting:
        """The setting of ``key``; an unknown key is a ConfigError naming the plugins and the closest key."""
        found = self.specs.get(key)
        if found is None:
            raise ConfigError(self.unknown(key, where))
        return found

    def unknown(self, key: str, where: str = "") -> str:
        why = withheld(key)
        if why is not None:
            named, close = f"(not shown: {why})", []
        else:
            named, close = repr(key), difflib.get_close_matches(key, list(self.specs), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; `lcm config list` shows every key"
        loaded = ", ".join(self.plugins) or "none"
        broken = f"; plugins whose settings failed to load: {', '.join(self.failed)}" if self.failed else ""
        origin = f" (from {where})" if where else ""
        return (f"unknown configuration key {named}{origin}{hint} (keys come from the core and the loaded "
                f"plugins: {loaded}{broken})")

    def parse(self, key: str, raw: Any, where: str) -> Any:
        """``raw`` coerced to the type of ``key``; ConfigError naming the key, source and allowed values (the
        refused value only when it is no secret: ``redact.for_error``)."""
        setting = self.lookup(key, where)
        try:
            return parse_value(setting, raw)
        except ValueError as exc:
            shown = for_error(raw, secret=setting.secret)
            raise ConfigError(
                f"{key} = {shown} (from {where}) is invalid: {exc}; allowed: {setting.describe_allowed()}"
            ) from None


def collect_settings(plugins: Plugins) -> SettingsRegistry:
    """The core keys plus every loaded plugin's; an invalid or clashing declaration is a PluginError."""
    declared = plugins.settings()
    owners = plugins.provenance("setting")
    specs: dict[str, Setting] = dict(SETTINGS)
    owned: dict[str, str] = dict.fromkeys(SETTINGS, CORE)
    for key, setting in sorted(declared.items()):
        owner = owners.get(key, "?")
        problem = (f"{key!r} is a core setting" if key in SETTINGS
                   else declaration_problem(setting) if isinstance(setting, Setting)
                   else f"registered {type(setting).__name__}, not a Setting")
        if problem is not None:
            raise PluginError(f"plugin {owner!r} declares an invalid setting: {problem} "
                              f"(fix the plugin or disable it: LCM_DISABLE_PLUGINS={owner})")
        specs[key] = setting
        owned[key] = owner
    failed = tuple(sorted({f.name for f in plugins.failures if "lcm_register_settings" in f.error}))
    return SettingsRegistry(specs, owned, tuple(sorted(plugins.infos)), failed)
