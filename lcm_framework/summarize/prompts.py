"""Render the summarization prompts from Jinja templates found by name.

Sources, highest precedence first: the user's override directory
(``prompts.override_dir``, else ``$LCM_HOME/prompts/`` when it exists), then the
prompt sources plugins register (higher ``priority`` wins; built-ins use 0).
A template is the file ``<name>.j2``. Undefined variables raise.
"""

from __future__ import annotations

import threading
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, PluginError
from .contracts import Level

if TYPE_CHECKING:
    from ..config import Config
    from ..kernel.extensions import PromptSource
    from ..kernel.plugins import Plugins

TEMPLATES = ("system", "leaf", "leaf_aggressive", "condensed_d1", "condensed_d2", "condensed_d3", "large_file",
             "promote")
SUFFIX = ".j2"
OVERRIDE_PRIORITY = 1_000_000


class DirectorySource:
    """A prompt source reading ``<name>.j2`` files from a directory."""

    def __init__(self, name: str, directory: Path, priority: int = 0) -> None:
        self.name = name
        self.directory = Path(directory)
        self.priority = priority

    def path(self, template: str) -> Path:
        return self.directory / template

    def get_source(self, template: str) -> str | None:
        path = self.path(template)
        if "/" in template or "\\" in template or not path.is_file():
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"prompt template {path} cannot be read: {exc}") from None

    def list_templates(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.name for p in self.directory.iterdir() if p.suffix == SUFFIX and p.is_file())


def override_directory(config: Config) -> Path | None:
    """The configured override directory, or ``$LCM_HOME/prompts`` when it exists."""
    configured = config.get("prompts.override_dir")
    if configured:
        directory = Path(str(configured)).expanduser()
        if not directory.is_dir():
            raise ConfigError(
                f"prompts.override_dir = {directory} (from {config.source('prompts.override_dir')}) "
                "is not a directory"
            )
        return directory
    default = config.home / "prompts"
    return default if default.is_dir() else None


def prompt_for_depth(depth: int, level: Level) -> str:
    """Template name for a summary of ``depth`` (0 = leaf) at escalation ``level``.

    Condensed templates read ``level`` themselves to tighten their output.
    """
    if depth <= 0:
        return "leaf_aggressive" if level is Level.AGGRESSIVE else "leaf"
    return f"condensed_d{min(depth, 3)}"


class PromptRenderer:
    """Finds templates across sources and renders them with strict undefined variables."""

    def __init__(self, config: Config, plugins: Plugins) -> None:
        self._sources: list[tuple[PromptSource, str]] = []
        directory = override_directory(config)
        if directory is not None:
            self._sources.append((DirectorySource("override", directory, OVERRIDE_PRIORITY), "user override"))
        registered = plugins.prompt_sources()
        owners = plugins.provenance("prompt_source")
        for source in registered:
            self._sources.append((source, f"plugin {owners.get(source.name, '?')!r}"))
        self._lock = threading.Lock()
        self._env: Any = None

    def _find(self, template: str) -> tuple[str, str] | None:
        """(source text, origin) of the winning source for a file name like ``leaf.j2``."""
        for source, owner in self._sources:
            try:
                text = source.get_source(template)
            except ConfigError:
                raise
            except Exception as exc:  # a broken prompt plugin gets a typed error naming it
                raise PluginError(
                    f"prompt source {source.name!r} ({owner}) failed to provide {template}: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            if text is not None:
                if not isinstance(text, str):
                    raise PluginError(f"prompt source {source.name!r} ({owner}) returned a non-text {template}")
                return text, _origin(source, owner, template)
        return None

    def template_origin(self, name: str) -> str:
        """Which source (and file, when it has one) provides template ``name``."""
        return self.template_source(name)[1]

    def template_source(self, name: str) -> tuple[str, str]:
        """(Jinja text, origin) of the template ``name`` that wins."""
        found = self._find(name + SUFFIX)
        if found is None:
            raise ConfigError(f"no prompt source provides template {name!r} ({self._searched()})")
        return found

    def available(self) -> dict[str, str]:
        """Every template name any source provides, with the origin that wins."""
        names = {t[: -len(SUFFIX)] for s, _o in self._sources for t in s.list_templates() if t.endswith(SUFFIX)}
        return {name: self.template_origin(name) for name in sorted(names)}

    def render(self, name: str, **variables: Any) -> str:
        """Render template ``name`` (no extension); missing variables raise ConfigError naming both."""
        import jinja2

        env = self._environment()
        values = {k: (v.value if isinstance(v, Enum) else v) for k, v in variables.items()}
        try:
            template = env.get_template(name + SUFFIX)
        except jinja2.TemplateNotFound:
            raise ConfigError(f"no prompt source provides template {name!r} ({self._searched()})") from None
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(
                f"prompt template {name!r} from {self.template_origin(name)} has a syntax error "
                f"at line {exc.lineno}: {exc.message}"
            ) from None
        try:
            return str(template.render(**values)).strip() + "\n"
        except jinja2.UndefinedError as exc:
            raise ConfigError(
                f"prompt template {name!r} from {self.template_origin(name)} uses an undefined variable: "
                f"{exc.message} (given: {', '.join(sorted(values)) or 'none'})"
            ) from None

    def _environment(self) -> Any:
        with self._lock:
            if self._env is None:
                import jinja2

                def load(template: str) -> tuple[str, str, Any] | None:
                    found = self._find(template)
                    if found is None:
                        return None
                    return found[0], found[1], lambda: True

                self._env = jinja2.Environment(
                    loader=jinja2.FunctionLoader(load),
                    undefined=jinja2.StrictUndefined,
                    autoescape=False,
                    trim_blocks=True,
                    lstrip_blocks=True,
                    keep_trailing_newline=False,
                )
            return self._env

    def _searched(self) -> str:
        if not self._sources:
            return "no prompt sources are registered"
        return "searched: " + ", ".join(f"{s.name} ({owner})" for s, owner in self._sources)


def _origin(source: PromptSource, owner: str, template: str) -> str:
    where = ""
    if isinstance(source, DirectorySource):
        where = f": {source.path(template)}"
    return f"{owner} source {source.name!r} (priority {source.priority}){where}"
