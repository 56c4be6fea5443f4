"""Registers the ``wordllama`` embedder (cheap to import: the model loads on first use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.embedding import Embedder, EmbedderFactory


def _factory(config: Config) -> Embedder:
    from .model import WordLlamaEmbedder

    return WordLlamaEmbedder.load()


@hookimpl
def lcm_register_embedders(register: Callable[[str, EmbedderFactory], None]) -> None:
    register("wordllama", _factory)
