"""WordLlama's bundled 256-dimension static model (``l2_supercat``), loaded by path from its wheel.

The package's own ``WordLlama.load`` looks for the bundled tokenizer in ``tokenizer/`` while the wheel ships
it in ``tokenizers/``, then tries to download it; loading the files by path keeps the embedder offline. Its
inference (the mean of the token vectors) is repeated here so the package is never imported: its pydantic
configuration takes seconds to import, which every import and hook would pay.
Needs the optional ``semantic`` dependencies (``pip install 'lcm-framework[semantic]'``): wordllama, NumPy.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.embedding import EmbeddingUnavailableError

MODEL = "l2_supercat"
DIMENSIONS = 256
TENSOR = "embedding.weight"
CACHE = 200_000
"""Pieces whose tokens are kept (a few MB)."""
GATHERED = 256
"""Token vectors gathered at a time (256 KB: in a core's cache; 2x faster than gathering all of a batch's)."""


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
            import numpy
            from safetensors import safe_open
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingUnavailableError(
                f"the wordllama embedder needs the optional semantic dependencies ({exc.name} is not installed): "
                "pip install 'lcm-framework[semantic]'") from None
        package = _package()
        weights = package / "weights" / f"{MODEL}_{DIMENSIONS}.safetensors"
        tokenizer_file = package / "tokenizers" / f"{MODEL}_tokenizer_config.json"
        for needed in (weights, tokenizer_file):
            if not needed.is_file():
                raise EmbeddingUnavailableError(f"the installed wordllama has no bundled {needed.name}")
        with safe_open(str(weights), framework="np", device="cpu") as tensors:
            embedding = numpy.asarray(tensors.get_tensor(TENSOR), dtype=numpy.float32)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_truncation()
        return cls(_Inference(embedding, tokenizer))

    def embed(self, texts: Sequence[str]) -> Any:
        """A ``len(texts) x DIMENSIONS`` float32 NumPy array (an empty text is the zero vector)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self.inference.embed(list(texts))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


@dataclass
class _Inference:
    """WordLlama's inference (``wordllama.inference.WordLlamaInference.embed``): the mean of the text's token
    vectors, without importing the wordllama package (its configuration models take seconds to import).

    The tokenizer (Llama 2's: spaces become ``▁``, no pre-tokenizer, no merge across a ``▁``) gives each
    space-separated piece the same tokens alone as within its text, so a piece's tokens are looked up once
    and kept (``CACHE`` pieces at most): tokenizing is what costs, and words repeat."""

    embedding: Any
    tokenizer: Any
    pieces: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        split = [text.split(" ") for text in texts]
        missing = list({p for pieces in split for p in pieces if p not in self.pieces})
        if len(self.pieces) + len(missing) > CACHE:
            self.pieces.clear()
        top = self.embedding.shape[0] - 1
        for start in range(0, len(missing), 4096):
            chunk = missing[start:start + 4096]
            for piece, encoded in zip(chunk, self.tokenizer.encode_batch_fast(chunk, add_special_tokens=False),
                                      strict=True):
                found = encoded.ids
                in_range = not found or max(found) <= top
                self.pieces[piece] = tuple(found) if in_range else tuple(min(i, top) for i in found)
        tokens = self.pieces.__getitem__
        ids = [list(itertools.chain.from_iterable(map(tokens, pieces))) for pieces in split]
        lengths = np.fromiter(map(len, ids), np.int64, len(ids))
        flat = np.fromiter(itertools.chain.from_iterable(ids), np.int64, int(lengths.sum()))
        ends = np.cumsum(lengths)
        starts = ends - lengths
        out = np.zeros((len(texts), self.embedding.shape[1]), dtype=np.float32)
        filled = np.flatnonzero(lengths > 0)
        if not len(filled):
            return out
        # whole texts of about GATHERED tokens at a time: their gathered rows stay in the core's cache
        cuts = np.unique(np.append(np.searchsorted(starts[filled], np.arange(0, len(flat), GATHERED)), len(filled)))
        for i, j in itertools.pairwise(cuts):
            rows = filled[i:j]
            first = starts[rows[0]]
            out[rows] = np.add.reduceat(self.embedding.take(flat[first:ends[rows[-1]]], axis=0), starts[rows] - first,
                                        axis=0)
        out[filled] /= lengths[filled][:, None]
        return out


def _package() -> Path:
    """The installed wordllama package's folder, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailableError("the wordllama embedder needs the optional semantic dependencies "
                                        "(wordllama is not installed): pip install 'lcm-framework[semantic]'")
    return Path(next(iter(spec.submodule_search_locations)))
