"""One resolved configuration for every entry point."""

from .resolve import Config, load_config, mask_secret, parse_overrides
from .schema import SETTINGS, Setting

__all__ = ["SETTINGS", "Config", "Setting", "load_config", "mask_secret", "parse_overrides"]
