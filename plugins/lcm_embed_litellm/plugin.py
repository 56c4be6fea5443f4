"""Registers the ``litellm`` embedder and its settings (cheap to import: litellm loads on first use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import Setting, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.embedding import Embedder, EmbedderFactory

SETTINGS = (
    Setting("embedding.model", str, None, "litellm embedding model of recall.embedder=litellm, e.g. "
            "openai/text-embedding-3-small or ollama/nomic-embed-text.", env=("LCM_EMBEDDING_MODEL",), nullable=True),
    Setting("embedding.api_base", str, None, "Base URL of an OpenAI-compatible or Ollama embedding server.",
            nullable=True),
    Setting("embedding.timeout_s", float, 30.0, "Per-request timeout of the litellm embedder.", minimum=1),
)


@hookimpl
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    for setting in SETTINGS:
        register(setting)


def _factory(config: Config) -> Embedder:
    from .model import LitellmEmbedder

    return LitellmEmbedder.from_config(config)


@hookimpl
def lcm_register_embedders(register: Callable[[str, EmbedderFactory], None]) -> None:
    register("litellm", _factory)
