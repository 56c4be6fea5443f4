"""The ``lcm_register_embedders`` extension point and the built-in local ``wordllama`` embedder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lcm_framework.config import load_config
from lcm_framework.embedding import EmbeddingUnavailableError, select_embedder
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins


def test_the_configured_embedder_is_chosen_by_name_and_an_unknown_one_is_a_config_error(tmp_path: Path) -> None:
    plugins = build_plugins()
    assert "wordllama" in plugins.embedders()
    config = load_config(project=tmp_path, overrides={"recall.embedder": "no-such-embedder"}, plugins=plugins)
    with pytest.raises(ConfigError, match=r"no-such-embedder.*available: .*wordllama"):
        select_embedder(plugins.embedders(), config)


def test_without_the_optional_package_the_embedder_says_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import fails as when it is not installed
    plugins = build_plugins()
    with pytest.raises(EmbeddingUnavailableError, match=r"lcm-framework\[semantic\]"):
        select_embedder(plugins.embedders(), load_config(project=tmp_path, plugins=plugins))


def test_wordllama_embeds_offline_unit_vectors_that_rank_by_meaning(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    import socket

    import numpy

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the local embedder reached for the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    plugins = build_plugins()
    embedder = select_embedder(plugins.embedders(), load_config(project=tmp_path, plugins=plugins))
    assert (embedder.name, embedder.dimensions, embedder.local) == ("wordllama", 256, True)
    vectors = numpy.asarray(embedder.embed(["how do we deploy this service to production?",
                                            "Deploys go through the blue-green script, never kubectl apply by hand",
                                            "what is the capital of Peru", ""]))
    assert vectors.shape == (4, 256)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4 and float(abs(vectors[3]).sum()) == 0.0
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_wordllama_vectors_are_the_mean_of_each_texts_token_vectors_whatever_the_batch(tmp_path: Path) -> None:
    """The inference (pieces tokenized once, token vectors gathered a few hundred at a time across texts) gives
    what the plain definition gives: each text tokenized whole, the mean of its rows of the embedding."""
    pytest.importorskip("wordllama")
    import random

    import numpy

    from plugins.lcm_embed_wordllama.model import GATHERED, WordLlamaEmbedder

    embedder = WordLlamaEmbedder.load()
    inference = embedder.inference
    rng = random.Random(7)
    words = ["deploy", "the", "service", "to", "production", "blue-green", "script", "never", "apply", "by", "hand",
             "river", "piano", "Maplestone", "naïve", "x86_64"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    texts[5] = " ".join(rng.choice(words) for _ in range(GATHERED * 2))  # one text longer than a gathering
    got = numpy.asarray(embedder.embed(texts))
    for n, text in enumerate(texts):
        ids = inference.tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            assert not got[n].any()
            continue
        want = inference.embedding[ids].mean(axis=0)
        want /= numpy.linalg.norm(want)
        assert numpy.allclose(got[n], want, atol=1e-5), n
