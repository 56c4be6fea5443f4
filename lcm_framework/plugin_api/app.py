"""What a plugin's command or capability receives, and configuration files.

``Host`` is what ``run(args, app)`` and a capability's ``handler(app, args)`` get: the resolved ``config``, the
loaded ``plugins``, the storage backend (behind the core's checks), ``project()`` and the configured
``summarizer()``. ``Plugins`` is the loaded plugins' registries (``Host.plugins``, and what a command's
``configure(parser, plugins)`` gets). ``Config`` is the resolved configuration; ``read_config_file`` and
``set_config_key`` read and edit one TOML configuration file.
"""

from ..config import Config
from ..config.files import set_key as set_config_key
from ..config.resolve import read_config_file
from ..kernel.host import Host
from ..kernel.plugins import Plugins

__all__ = ["Config", "Host", "Plugins", "read_config_file", "set_config_key"]
