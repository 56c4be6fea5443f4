"""WordLlama's bundled 256-dimension static model (``l2_supercat``), loaded by path from its wheel.

The package's own ``WordLlama.load`` looks for the bundled tokenizer in ``tokenizer/`` while the wheel ships
it in ``tokenizers/``, then tries to download it; loading the files by path keeps the embedder offline.
Needs the optional ``semantic`` dependencies (``pip install 'lcm-framework[semantic]'``): wordllama, NumPy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.embedding import EmbeddingUnavailableError

MODEL = "l2_supercat"
DIMENSIONS = 256
TENSOR = "embedding.weight"


@dataclass
class WordLlamaEmbedder:
    """Unit-length vectors of ``DIMENSIONS`` floats: the mean of the texts' token vectors."""

    inference: Any
    name: str = "wordllama"
    dimensions: int = DIMENSIONS
    local: bool = True

    @classmethod
    def load(cls) -> WordLlamaEmbedder:
        try:
            import wordllama
            from safetensors import safe_open
            from wordllama.inference import WordLlamaInference
            from wordllama.wordllama import WordLlama
        except ImportError as exc:
            raise EmbeddingUnavailableError(
                f"the wordllama embedder needs the optional semantic dependencies ({exc.name} is not installed): "
                "pip install 'lcm-framework[semantic]'") from None
        package = Path(wordllama.__file__).parent
        weights = package / "weights" / f"{MODEL}_{DIMENSIONS}.safetensors"
        tokenizer = package / "tokenizers" / f"{MODEL}_tokenizer_config.json"
        for needed in (weights, tokenizer):
            if not needed.is_file():
                raise EmbeddingUnavailableError(f"the installed wordllama has no bundled {needed.name}")
        with safe_open(str(weights), framework="np", device="cpu") as tensors:
            embedding = tensors.get_tensor(TENSOR)
        return cls(WordLlamaInference(embedding, WordLlama.load_tokenizer(tokenizer), binary=False))

    def embed(self, texts: Sequence[str]) -> Any:
        """A ``len(texts) x DIMENSIONS`` float32 NumPy array (an empty text is the zero vector)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = np.asarray(self.inference.embed(list(texts), norm=False), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
