"""Choose and build the storage backend by name (stevedore over ``lcm_framework.storage``).

Only the chosen driver is imported, so a SQLite user never imports psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..errors import ConfigError, PluginError
from .checked import CheckedBackend

if TYPE_CHECKING:
    from ..config import Config
    from .contracts import StorageBackendFactory

NAMESPACE = "lcm_framework.storage"


def available_backends() -> list[str]:
    """Names of installed storage drivers (reads entry-point metadata only)."""
    from importlib.metadata import entry_points

    return sorted({ep.name for ep in entry_points(group=NAMESPACE)})


def open_backend(config: Config, name: str | None = None) -> StorageBackendFactory:
    """Build the factory of ``storage.backend`` (or ``name``), wrapped so the core validates every repository
    call (``storage.checked``). Never falls back to another backend."""
    from stevedore import driver
    from stevedore.exception import NoMatches

    backend = name or str(config.get("storage.backend"))
    try:
        manager: driver.DriverManager = driver.DriverManager(
            namespace=NAMESPACE,
            name=backend,
            invoke_on_load=False,
            on_load_failure_callback=_raise_load_failure,
        )
    except NoMatches:
        raise ConfigError(
            f"storage.backend={backend!r} is not an installed backend "
            f"(installed: {', '.join(available_backends()) or 'none'})"
        ) from None
    return CheckedBackend(cast("StorageBackendFactory", manager.driver(config)))


def _raise_load_failure(_manager: object, entrypoint: object, exc: BaseException) -> None:
    name = getattr(entrypoint, "name", "?")
    raise PluginError(f"storage backend {name!r} failed to load: {type(exc).__name__}: {exc}") from exc
