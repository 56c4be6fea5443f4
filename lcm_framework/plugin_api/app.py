"""The application handle a command or capability receives, and configuration files.

``App`` gives ``config``, ``plugins``, ``storage`` (the backend factory) and ``project()``; ``Config`` is the
resolved configuration; ``read_config_file``/``set_config_key`` read and edit one TOML configuration file.
"""

from ..app import App
from ..config import Config
from ..config.files import set_key as set_config_key
from ..config.resolve import read_config_file

__all__ = ["App", "Config", "read_config_file", "set_config_key"]
