"""The extension surface of LCM: every hook a plugin can implement.

Plugins are found through the ``lcm_framework.plugins`` entry-point group
(built-ins included). Hooks that contribute things take a ``register``
callback so the core owns naming, duplicates and provenance.
Arguments are only ever added to these hooks, never removed or renamed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from ..agents.contracts import AgentIntegration
    from ..config import Config, Setting
    from ..embedding import EmbedderFactory
    from ..summarize.contracts import SummarizerFactory
    from ..transcripts.contracts import TranscriptFormat
    from .extensions import Capability, CommandSpec, PromptSource, RulePack, StorageBackendInfo

PROJECT = "lcm"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def lcm_register_formats(register: Callable[[TranscriptFormat], None]) -> None:
    """Register transcript formats (one ``register(format)`` call each), keyed by format identifier; a file
    of unknown format is detected with each format's ``sniff``."""


@hookspec
def lcm_register_rule_packs(register: Callable[[RulePack], None], config: Config) -> None:
    """Register scrubber rule packs; scrubbing applies every pack, sorted by pack name."""


@hookspec
def lcm_register_summarizers(register: Callable[[str, SummarizerFactory], None]) -> None:
    """Register summarizer factories by name (``summarizer.provider`` selects one)."""


@hookspec
def lcm_register_embedders(register: Callable[[str, EmbedderFactory], None]) -> None:
    """Register text embedder factories by name (``recall.embedder`` selects one) for the semantic recall lane."""


@hookspec
def lcm_register_prompt_sources(register: Callable[[PromptSource], None]) -> None:
    """Register Jinja prompt template sources; the highest priority source with a template wins."""


@hookspec
def lcm_register_storage_backends(register: Callable[[StorageBackendInfo], None]) -> None:
    """Register storage backends (``StorageBackendInfo``: name, description, factory); ``storage.backend``
    selects one by name."""


@hookspec
def lcm_register_capabilities(register: Callable[[Capability], None]) -> None:
    """Register agent-facing tools, served by ``lcm mcp`` and the daemon."""


@hookspec
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    """Declare this plugin's configuration keys (one ``register(Setting(...))`` each); keys the core or another
    plugin declares are refused. Called while the configuration loads, so it must not read the configuration."""


@hookspec
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    """Register ``lcm`` subcommands."""


@hookspec
def lcm_register_agents(register: Callable[[AgentIntegration], None]) -> None:
    """Register coding agent integrations (``lcm install NAME``, ``lcm hook EVENT --agent NAME``), keyed by name."""
