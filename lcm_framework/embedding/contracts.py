"""The embedder contract and how the configured one is chosen."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import ConfigError, LcmError

if TYPE_CHECKING:
    from ..config import Config


class EmbeddingUnavailableError(LcmError):
    """The embedder cannot run here: its package is not installed, or its model cannot be loaded."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dimensions`` floats, unit length, one per text, in order."""

    @property
    def name(self) -> str: ...
    @property
    def dimensions(self) -> int: ...
    @property
    def local(self) -> bool:
        """True when it runs without the network (no download, no API)."""
        ...

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]: ...


EmbedderFactory = Callable[["Config"], Embedder]


def select_embedder(factories: Mapping[str, EmbedderFactory], config: Config) -> Embedder:
    """The embedder ``recall.embedder`` names, built for ``config``."""
    name = str(config.get("recall.embedder"))
    if name not in factories:
        raise ConfigError(f"recall.embedder={name!r} is not registered (available: {', '.join(sorted(factories))})")
    return factories[name](config)
