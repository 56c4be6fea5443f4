"""The semantic lane's scan (``embedding.codec``): quantized vectors, sign-bit candidates, exact cosine."""

from __future__ import annotations

import pytest

from tests.conftest import skip_or_fail


@pytest.fixture(autouse=True)
def _numpy() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError:
        skip_or_fail("the semantic lane needs NumPy (pip install -e '.[test,semantic]')")


@pytest.mark.parametrize("dimensions", [256, 20])  # 64-bit words, and single bytes
def test_candidates_are_the_nearest_by_sign_bits_in_order_and_filtered(dimensions: int) -> None:
    import numpy as np

    from lcm_framework.embedding.codec import VectorIndex, quantize

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((3000, dimensions)).astype(np.float32)
    stored = quantize(vectors)
    index = VectorIndex()
    for start in range(0, 3000, 1000):  # loaded in parts, as a backend loads new rows
        index.add([(n + 1, n // 100, stored[n]) for n in range(start, start + 1000)])
    assert len(index) == 3000 and index.last == 3000
    query = rng.standard_normal(dimensions).astype(np.float32)
    signs = np.frombuffer(b"".join(stored), dtype=np.int8).reshape(3000, dimensions) > 0
    distance = (signs != (query > 0)).sum(axis=1)
    picked = index.candidates(query, 50)
    assert len(picked) == 50 and len(set(picked)) == 50
    assert sorted(distance[np.array(picked) - 1]) == list(distance[np.array(picked) - 1])  # nearest first
    assert distance[np.array(picked) - 1].max() == np.sort(distance)[49]
    assert {(r - 1) // 100 for r in index.candidates(query, 30, conversations=[3])} == {3}
    assert all((r - 1) // 100 not in (0, 1) for r in index.candidates(query, 500, excluded=[0, 1]))
    assert len(index.candidates(query, 10_000)) == 3000
    assert index.candidates(query[:5], 10) == []  # another dimension count finds nothing


def test_cosine_ranks_quantized_vectors_as_the_floats_rank() -> None:
    import numpy as np

    from lcm_framework.embedding.codec import cosine, quantize

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((200, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[17] + 0.1 * rng.standard_normal(64).astype(np.float32)
    exact = vectors @ (query / np.linalg.norm(query))
    found = cosine(query, list(enumerate(quantize(vectors))), 5)
    assert found[0][0] == 17 and len({k for k, _ in found} & set(np.argsort(-exact)[:5].tolist())) >= 4
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    assert abs(found[0][1] - exact[17]) < 0.02
    assert cosine(query, [(0, b"\x01\x02")], 5) == []  # another length is left out
