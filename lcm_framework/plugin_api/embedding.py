"""What an embedder plugin implements (``lcm_register_embedders``): the contract and its error."""

from ..embedding import Embedder, EmbedderFactory, EmbeddingUnavailableError

__all__ = ["Embedder", "EmbedderFactory", "EmbeddingUnavailableError"]
