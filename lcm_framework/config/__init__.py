"""One resolved configuration for every entry point."""

from .registry import SettingsRegistry
from .resolve import Config, load_config, mask_secret, parse_overrides
from .schema import SETTINGS, Setting

__all__ = ["SETTINGS", "Config", "Setting", "SettingsRegistry", "load_config", "mask_secret", "parse_overrides"]
