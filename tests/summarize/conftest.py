"""Shared set-up for summarizer and prompt tests: a real config and real plugins (ours only)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.config import Config, load_config
from lcm_framework.kernel.plugins import Plugins, build_plugins
from lcm_framework.summarize.contracts import Level, SummaryRequest

OUR_PLUGINS = {"LCM_LOAD_PLUGINS": "prompts,summarizers"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".lcm").mkdir(parents=True)
    return root


@pytest.fixture
def make_config(project: Path, lcm_env: Path) -> Callable[..., Config]:
    def make(**env: str) -> Config:
        return load_config(project=project, env={"LCM_HOME": str(lcm_env), **env}, plugins=build_plugins(env))

    return make


@pytest.fixture
def make_plugins() -> Callable[..., Plugins]:
    def make(extra: Iterable[tuple[str, object]] = ()) -> Plugins:
        return build_plugins(env=OUR_PLUGINS, extra=extra, stderr=io.StringIO())

    return make


def request(segment: str = "seg", target_tokens: int = 200, **overrides: Any) -> SummaryRequest:
    fields: dict[str, Any] = {
        "system_prompt": "You summarize.",
        "prompt": f"Summarize:\n{segment}",
        "segment": segment,
        "target_tokens": target_tokens,
        "level": Level.NORMAL,
        "depth": 0,
        "temperature": 0.2,
    }
    fields.update(overrides)
    return SummaryRequest(**fields)
