"""The ``litellm`` embedder through the real ``litellm.embedding`` path, against the fake model server's
OpenAI-compatible embeddings route (only the model is faked): the semantic lane fills and searches with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.embedding import EmbeddingUnavailableError
from lcm_framework.recall.semantic import fill, lane, nearest, query_vector
from lcm_framework.storage.models import NewMessage, Role, SearchTarget
from tests.conftest import skip_or_fail
from tests.e2e.fake_embeddings import DIMENSIONS
from tests.e2e.fake_model import FakeModel
from tests.ingest.support import make_app


@pytest.fixture(autouse=True)
def _numpy() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError:
        skip_or_fail("the semantic lane needs NumPy: pip install -e '.[test,semantic]'")


@pytest.fixture
def server() -> Iterator[FakeModel]:
    model = FakeModel()
    try:
        yield model
    finally:
        model.close()


def settings(url: str) -> dict[str, str]:
    return {"recall.semantic": "on", "recall.embedder": "litellm", "embedding.model": "openai/fake-embed",
            "embedding.api_base": f"{url}/v1"}


def test_the_litellm_embedder_fills_the_lane_and_finds_by_it(tmp_path: Path, server: FakeModel,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-not-a-key")
    app = make_app(tmp_path / "proj", **settings(server.url))
    try:
        embedder = lane(app.config, app.plugins)
        assert embedder is not None and embedder.name == "litellm:openai/fake-embed" and not embedder.local
        with app.project() as storage:
            conversation = storage.conversations.get_or_create_conversation("s")
            stored = storage.conversations.append_messages(conversation.conversation_id, [
                NewMessage(Role.USER, text, 5) for text in ("the invoice worker port", "lunch at noon", "")])
            filled = fill(storage, embedder)
            assert filled.messages == 3 and storage.vectors.space().dimensions == DIMENSIONS  # type: ignore[union-attr]
            hits = nearest(storage, query_vector(embedder, "invoice worker"), SearchTarget.MESSAGES, 1)
            assert [h.id for h in hits] == [str(stored[0].message_id)]
    finally:
        app.close()
    embedded = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert embedded and all(r.body["model"] == "fake-embed" for r in embedded)
    assert any(" " in r.body["input"] for r in embedded)  # the empty text went as one space


def test_an_unreachable_provider_is_a_typed_error_without_the_key(tmp_path: Path, server: FakeModel,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-secret-123")
    url = server.url
    server.close()
    app = make_app(tmp_path / "proj", **settings(url), **{"embedding.timeout_s": "2"})
    try:
        embedder = lane(app.config, app.plugins)
        assert embedder is not None
        with pytest.raises(EmbeddingUnavailableError, match="openai/fake-embed") as caught:
            embedder.embed(["hello"])
        assert "sk-fake-secret-123" not in str(caught.value)
    finally:
        app.close()


def test_without_a_model_the_litellm_embedder_says_which_setting_is_missing(tmp_path: Path) -> None:
    app = make_app(tmp_path / "proj", **{"recall.semantic": "on", "recall.embedder": "litellm"})
    try:
        with pytest.raises(EmbeddingUnavailableError, match=r"embedding\.model"):
            lane(app.config, app.plugins)
    finally:
        app.close()
