"""Records plugins contribute through the ``register`` callbacks of the hooks."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..app import App
    from ..config import Config
    from ..storage.contracts import StorageBackendFactory
    from .plugins import Plugins


@dataclass(frozen=True, slots=True)
class Allowlist:
    """A gitleaks allowlist: a finding matching any (or, with condition AND, all) criteria is kept."""

    regexes: tuple[str, ...] = ()
    regex_target: str = "secret"  # secret | match | line
    stopwords: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    condition: str = "OR"
    description: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule in gitleaks' schema."""

    id: str
    regex: str
    description: str = ""
    secret_group: int = 0
    entropy: float | None = None
    keywords: tuple[str, ...] = ()
    allowlists: tuple[Allowlist, ...] = ()
    category: str = ""
    path: str = ""
    """gitleaks' ``path`` regex: the rule only applies to files whose path matches (never to plain text)."""

    @property
    def redaction_category(self) -> str:
        return self.category or self.id


@dataclass(frozen=True, slots=True)
class RulePack:
    """A named set of rules plus pack-wide allowlists (gitleaks' ``[allowlist]``)."""

    name: str
    rules: tuple[Rule, ...]
    allowlists: tuple[Allowlist, ...] = ()
    source: str = ""


class PromptSource(Protocol):
    """Provides Jinja template text by name (e.g. ``leaf.j2``)."""

    name: str
    priority: int
    """Higher wins when two sources define the same template (built-ins use 0)."""

    def get_source(self, template: str) -> str | None: ...
    def list_templates(self) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Argument:
    """One argument of a capability: the only description of it (``kernel.arguments`` derives the
    MCP schema, the daemon's checks and the CLI options from it, defaults included).

    ``kind`` is str, int, float, bool or list (of text). ``flag`` names the CLI option when the derived one
    (``--name``, ``--no-name`` for a flag that defaults to true, a positional for a required text) does not fit.
    ``off_help`` is the help of that ``--no-...`` option, which turns the argument off (``help`` says what
    it does on, as the MCP schema shows it).
    """

    name: str
    kind: type
    help: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    flag: str = ""
    off_help: str = ""


@dataclass(frozen=True, slots=True)
class Capability:
    """An agent-facing tool, served by ``lcm mcp`` (tool ``name``), the daemon (``POST /<name without lcm_>``)
    and ``lcm tool NAME``, all from ``arguments``.

    ``handler(app, args)`` gets the arguments checked and completed with their
    defaults; ``requires`` names storage capability flags (``regex_search`` ...)
    the tool needs.
    """

    name: str
    description: str
    arguments: tuple[Argument, ...]
    handler: Callable[[App, Mapping[str, Any]], Any]
    requires: frozenset[str] = frozenset()

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments (what MCP's ``tools/list`` shows)."""
        from .arguments import json_schema

        return json_schema(self.arguments)


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """A ``lcm`` subcommand. ``configure(parser, plugins)`` adds its options (``plugins``: the loaded plugins,
    the process's one manager); ``run`` returns the exit code."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser, Plugins], None]
    run: Callable[[argparse.Namespace, App], int]
    description: str = ""
    aliases: Sequence[str] = field(default_factory=tuple)
    repairs_config: bool = False
    """Runs even when a configuration file holds an invalid value (that key keeps its default and a warning
    names it), because the command is how the user repairs it (``lcm config``)."""


@dataclass(frozen=True, slots=True)
class StorageBackendInfo:
    """A storage backend: ``storage.backend`` names it; ``factory(config)`` builds its
    ``StorageBackendFactory`` (import the driver inside it, so only the chosen backend's is loaded)."""

    name: str
    description: str
    factory: Callable[[Config], StorageBackendFactory]
