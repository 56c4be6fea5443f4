"""Choose and build the storage backend by name, among those the plugins register.

A backend is declared once, by ``lcm_register_storage_backends``; its
``factory`` imports the driver only when called, so a SQLite user never
imports psycopg.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ..errors import ConfigError, LcmError, PluginError
from .checked import CheckedBackend

if TYPE_CHECKING:
    from ..config import Config
    from ..kernel.extensions import StorageBackendInfo
    from ..kernel.plugins import Plugins
    from .contracts import StorageBackendFactory


def installed_backend(plugins: Plugins, name: str, source: str = "") -> StorageBackendInfo:
    """The backend a loaded plugin registers as ``name``; else a ConfigError naming ``source`` (where the
    value came from), the closest name and every installed backend, with the fix."""
    registered = plugins.storage_backends()
    info = registered.get(name)
    if info is not None:
        return info
    from ..config.redact import for_error

    close = difflib.get_close_matches(name, list(registered), n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    origin = f" (from {source})" if source else ""
    raise ConfigError(
        f"storage.backend = {for_error(name)}{origin} is not an available storage backend; {hint}"
        f"available: {', '.join(sorted(registered)) or 'none'} (set one: lcm config set storage.backend NAME; "
        "a backend plugin left out by LCM_LOAD_PLUGINS / LCM_DISABLE_PLUGINS: see `lcm plugins --all`)"
    )


def open_backend(config: Config, name: str | None = None, *, plugins: Plugins) -> StorageBackendFactory:
    """Build the factory of ``storage.backend`` (or ``name``), wrapped so the core validates every repository
    call (``storage.checked``), among those ``plugins`` register. Never falls back to another backend.
    """
    backend = name or str(config.get("storage.backend"))
    info = installed_backend(plugins, backend, config.source("storage.backend") if name is None else "")
    try:
        return CheckedBackend(info.factory(config))
    except LcmError:
        raise
    except ImportError as exc:
        raise PluginError(f"storage backend {backend!r} failed to load: {type(exc).__name__}: {exc}") from exc
