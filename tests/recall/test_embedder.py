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
