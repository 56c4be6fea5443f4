"""Text embedders: what a semantic recall lane turns messages, summaries and queries into.

A plugin registers embedder factories by name through ``lcm_register_embedders``; ``recall.embedder``
names the one to use. An embedder needs nothing from the network unless it says so (``local``): the
built-in ``wordllama`` embedder ships its weights in its wheel.
"""

from .contracts import Embedder, EmbedderFactory, EmbeddingUnavailableError, select_embedder

__all__ = ["Embedder", "EmbedderFactory", "EmbeddingUnavailableError", "select_embedder"]
