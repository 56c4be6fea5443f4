"""Prompt templates: every built-in renders, strict variables, override directory, prompt-source plugins."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lcm_prompts.plugin import TEMPLATE_DIR

from lcm_framework.config import Config
from lcm_framework.errors import ConfigError, PluginError
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import Plugins
from lcm_framework.summarize.contracts import Level
from lcm_framework.summarize.prompts import TEMPLATES, DirectorySource, PromptRenderer, prompt_for_depth

SEGMENT = "[2026-02-17 07:37] user: fix tests/test_ledger.py\n\n[2026-02-17 07:38] assistant: done"
COMMON = {"segment": SEGMENT, "previous_context": "", "depth": 0, "target_tokens": 777, "level": Level.NORMAL}
LARGE = {"file_name": "dump.sql", "mime_type": "application/sql", "content_excerpt": "CREATE TABLE t", "byte_size": 123}


PROMOTE = {"summary": "fixed the ledger test", "max_items": 5}


def variables(name: str, **extra: Any) -> dict[str, Any]:
    return {**COMMON, **{"large_file": LARGE, "promote": PROMOTE}.get(name, {}), **extra}


@pytest.fixture
def renderer(make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]) -> PromptRenderer:
    return PromptRenderer(make_config(), make_plugins())


def test_every_declared_template_ships_and_nothing_else(renderer: PromptRenderer) -> None:
    shipped = sorted(p.stem for p in TEMPLATE_DIR.glob("*.j2"))
    assert shipped == sorted(TEMPLATES)
    assert sorted(renderer.available()) == sorted(TEMPLATES)


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_renders_with_builtins(renderer: PromptRenderer, name: str) -> None:
    text = renderer.render(name, **variables(name, depth=2))
    assert text.strip() and "{{" not in text and "{%" not in text
    assert "builtin" in renderer.template_origin(name)
    if name == "large_file":
        assert "dump.sql" in text and "application/sql" in text and "123 bytes" in text and "CREATE TABLE t" in text
    elif name == "promote":
        assert SEGMENT in text and "fixed the ledger test" in text and "at most 5 lines" in text
    elif name != "system":
        assert SEGMENT in text and "777" in text
        assert "Expand for details about:" in text


@pytest.mark.parametrize("name", [n for n in TEMPLATES if n not in ("system", "large_file", "promote")])
def test_previous_context_block_only_when_given(renderer: PromptRenderer, name: str) -> None:
    without = renderer.render(name, **variables(name))
    with_context = renderer.render(name, **variables(name, previous_context="EARLIER-FACT-42"))
    assert "previous_context" not in without and "EARLIER-FACT-42" not in without
    assert "<previous_context>\nEARLIER-FACT-42\n</previous_context>" in with_context


@pytest.mark.parametrize("name", ["condensed_d1", "condensed_d2", "condensed_d3"])
def test_condensed_templates_tighten_at_aggressive_level(renderer: PromptRenderer, name: str) -> None:
    normal = renderer.render(name, **variables(name, depth=3))
    aggressive = renderer.render(name, **variables(name, depth=3, level=Level.AGGRESSIVE))
    assert "hard limit" in aggressive and "hard limit" not in normal
    assert "depth 3" in normal


@pytest.mark.parametrize("name", [n for n in TEMPLATES if n != "system"])
def test_missing_variable_raises_naming_template_and_variable(renderer: PromptRenderer, name: str) -> None:
    given = variables(name)
    missing = "content_excerpt" if name == "large_file" else "segment"
    del given[missing]
    with pytest.raises(ConfigError) as caught:
        renderer.render(name, **given)
    assert repr(name) in str(caught.value) and missing in str(caught.value)


def test_unknown_template_is_a_clear_error(renderer: PromptRenderer) -> None:
    with pytest.raises(ConfigError, match="no prompt source provides template 'nope'"):
        renderer.render("nope")
    with pytest.raises(ConfigError, match="'nope'"):
        renderer.template_origin("nope")


def test_prompt_for_depth() -> None:
    assert prompt_for_depth(0, Level.NORMAL) == "leaf"
    assert prompt_for_depth(0, Level.AGGRESSIVE) == "leaf_aggressive"
    assert prompt_for_depth(1, Level.NORMAL) == "condensed_d1"
    assert prompt_for_depth(2, Level.AGGRESSIVE) == "condensed_d2"
    assert [prompt_for_depth(d, Level.NORMAL) for d in (3, 4, 9)] == ["condensed_d3"] * 3
    assert all(prompt_for_depth(d, lv) in TEMPLATES for d in range(6) for lv in Level)


def test_override_dir_replaces_one_template_by_name(
    tmp_path: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    override = tmp_path / "my-prompts"
    override.mkdir()
    (override / "leaf.j2").write_text("MINE {{ target_tokens }}: {{ segment }}", encoding="utf-8")
    renderer = PromptRenderer(make_config(LCM_PROMPTS_OVERRIDE_DIR=str(override)), make_plugins())
    assert renderer.render("leaf", **COMMON) == f"MINE 777: {SEGMENT}\n"
    assert str(override / "leaf.j2") in renderer.template_origin("leaf")
    assert "builtin" in renderer.template_origin("leaf_aggressive")
    assert renderer.render("leaf_aggressive", **COMMON).startswith("A previous summary")


def test_missing_override_dir_is_a_config_error(
    tmp_path: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    with pytest.raises(ConfigError, match=r"prompts\.override_dir = .*nowhere .*LCM_PROMPTS_OVERRIDE_DIR"):
        PromptRenderer(make_config(LCM_PROMPTS_OVERRIDE_DIR=str(tmp_path / "nowhere")), make_plugins())


def test_lcm_home_prompts_dir_is_the_default_override(
    lcm_env: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    (lcm_env / "prompts").mkdir(parents=True)
    (lcm_env / "prompts" / "system.j2").write_text("Custom system prompt.", encoding="utf-8")
    renderer = PromptRenderer(make_config(), make_plugins())
    assert renderer.render("system") == "Custom system prompt.\n"
    assert "user override" in renderer.template_origin("system")


def test_override_with_undefined_variable_names_the_file(
    tmp_path: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    (tmp_path / "leaf.j2").write_text("{{ segmnet }}", encoding="utf-8")
    (tmp_path / "condensed_d1.j2").write_text("{% if %}", encoding="utf-8")
    renderer = PromptRenderer(make_config(LCM_PROMPTS_OVERRIDE_DIR=str(tmp_path)), make_plugins())
    with pytest.raises(ConfigError) as caught:
        renderer.render("leaf", **COMMON)
    assert "segmnet" in str(caught.value) and str(tmp_path / "leaf.j2") in str(caught.value)
    with pytest.raises(ConfigError, match="syntax error at line 1"):
        renderer.render("condensed_d1", **COMMON)


class _Pack:
    """A third-party prompt pack registered in-process."""

    def __init__(self, directory: Path, priority: int, name: str = "pack") -> None:
        self.source = DirectorySource(name, directory, priority)

    @hookimpl
    def lcm_register_prompt_sources(self, register: Callable[[object], None]) -> None:
        register(self.source)


def test_higher_priority_plugin_replaces_one_template(
    tmp_path: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    (tmp_path / "condensed_d2.j2").write_text("PACK d{{ depth }}", encoding="utf-8")
    renderer = PromptRenderer(make_config(), make_plugins(extra=[("mypack", _Pack(tmp_path, priority=10))]))
    assert renderer.render("condensed_d2", **{**COMMON, "depth": 2}) == "PACK d2\n"
    assert "plugin 'mypack'" in renderer.template_origin("condensed_d2")
    assert "builtin" in renderer.template_origin("condensed_d1")


def test_lower_priority_plugin_does_not_win_and_override_dir_beats_plugins(
    tmp_path: Path, make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    low, high, user = tmp_path / "low", tmp_path / "high", tmp_path / "user"
    for directory in (low, high, user):
        directory.mkdir()
    (low / "leaf.j2").write_text("LOW", encoding="utf-8")
    (low / "extra_only.j2").write_text("ONLY {{ depth }}", encoding="utf-8")
    (high / "system.j2").write_text("HIGH", encoding="utf-8")
    (user / "system.j2").write_text("USER", encoding="utf-8")
    plugins = make_plugins(extra=[("low", _Pack(low, -5, "low")), ("high", _Pack(high, 99, "high"))])
    renderer = PromptRenderer(make_config(LCM_PROMPTS_OVERRIDE_DIR=str(user)), plugins)
    assert renderer.render("leaf", **COMMON).startswith("Summarize the following segment")
    assert renderer.render("system") == "USER\n"
    assert renderer.render("extra_only", depth=1) == "ONLY 1\n"


class _BrokenSource:
    name = "broken"
    priority = 50

    def get_source(self, template: str) -> str | None:
        raise OSError("disk on fire")

    def list_templates(self) -> list[str]:
        return ["leaf.j2"]


class _BrokenPack:
    @hookimpl
    def lcm_register_prompt_sources(self, register: Callable[[object], None]) -> None:
        register(_BrokenSource())


def test_broken_prompt_source_is_a_plugin_error(
    make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    renderer = PromptRenderer(make_config(), make_plugins(extra=[("shaky", _BrokenPack())]))
    with pytest.raises(PluginError, match=r"prompt source 'broken' \(plugin 'shaky'\).*OSError: disk on fire"):
        renderer.render("leaf", **COMMON)


def test_prompt_modules_import_neither_jinja_nor_litellm() -> None:
    code = (
        "import sys, lcm_framework.summarize.prompts, lcm_framework.summarize.tokens, lcm_prompts.plugin, "
        "lcm_summarizers.plugin; print(sorted(m for m in ('jinja2', 'litellm') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
