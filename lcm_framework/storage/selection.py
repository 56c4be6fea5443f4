"""Choose and build the storage backend by name, among those the plugins register.

A backend is declared once, by ``lcm_register_storage_backends``; its
``factory`` imports the driver only when called, so a SQLite user never
imports psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError, LcmError, PluginError
from .checked import CheckedBackend

if TYPE_CHECKING:
    from ..config import Config
    from ..plugins import Plugins
    from .contracts import StorageBackendFactory


def open_backend(config: Config, name: str | None = None, *, plugins: Plugins | None = None) -> StorageBackendFactory:
    """Build the factory of ``storage.backend`` (or ``name``), wrapped so the core validates every repository
    call (``storage.checked``). Never falls back to another backend.

    Without ``plugins`` the plugins ``config.env`` selects are loaded.
    """
    if plugins is None:
        from ..plugins import build_plugins

        plugins = build_plugins(config.env)
    backend = name or str(config.get("storage.backend"))
    registered = plugins.storage_backends()
    info = registered.get(backend)
    if info is None:
        raise ConfigError(
            f"storage.backend={backend!r} is not provided by any loaded plugin "
            f"(registered: {', '.join(sorted(registered)) or 'none'}; "
            "check LCM_LOAD_PLUGINS / LCM_DISABLE_PLUGINS and `lcm plugins --all`)"
        )
    try:
        return CheckedBackend(info.factory(config))
    except LcmError:
        raise
    except ImportError as exc:
        raise PluginError(f"storage backend {backend!r} failed to load: {type(exc).__name__}: {exc}") from exc
