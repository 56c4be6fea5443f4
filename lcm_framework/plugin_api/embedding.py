"""What an embedder plugin implements (``lcm_register_embedders``): the contract and its error; and what a
storage adapter scans stored vectors with (``VectorIndex``, ``cosine``: ``lcm_framework.embedding.codec``)."""

from ..embedding import Embedder, EmbedderFactory, EmbeddingUnavailableError
from ..embedding.codec import VectorIndex, candidates_wanted, cosine

__all__ = ["Embedder", "EmbedderFactory", "EmbeddingUnavailableError", "VectorIndex", "candidates_wanted", "cosine"]
