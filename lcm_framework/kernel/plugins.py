"""Discover, load and index plugins.

Each entry point of ``lcm_framework.plugins`` is loaded in its own
try/except: a broken third-party plugin is reported on stderr with its
distribution and skipped (``LCM_STRICT_PLUGINS=1`` makes that fatal). A
plugin whose ``lcm_register_rule_packs`` raises is never skipped: collecting
the rule packs fails with a ScrubberError naming it, so nothing is stored
unscrubbed.
``LCM_LOAD_PLUGINS`` (comma-separated allow-list) and
``LCM_DISABLE_PLUGINS`` (block-list) choose which load. Built by a factory
so each caller (and each test) gets its own manager.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

import pluggy

from ..errors import LcmError, PluginError, ScrubberError
from . import hookspecs

if TYPE_CHECKING:
    from ..agents.contracts import AgentIntegration
    from ..config import Config, Setting
    from ..embedding import EmbedderFactory
    from ..summarize.contracts import SummarizerFactory
    from ..transcripts.contracts import TranscriptFormat
    from .extensions import Capability, CommandSpec, PromptSource, RulePack, StorageBackendInfo

GROUP = "lcm_framework.plugins"
ESSENTIAL = frozenset({"core_commands"})


IN_PROCESS = "(in-process)"
"""The distribution name of plugins handed to ``build_plugins(extra=...)``."""


@dataclass(frozen=True, slots=True)
class PluginInfo:
    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoadFailure:
    name: str
    distribution: str
    error: str


class Plugins:
    """A loaded plugin manager plus the registries the core reads."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        infos: dict[str, PluginInfo],
        failures: list[LoadFailure],
        report: Callable[[str, str, str], None],
    ):
        self.pm = pm
        self.infos = infos
        self.failures = failures
        self._report = report
        self._cache: dict[str, dict[str, tuple[Any, str]]] = {}

    @property
    def hook(self) -> Any:
        return self.pm.hook

    @property
    def rebuildable(self) -> bool:
        """Every plugin came from an entry point, so another process that calls ``build_plugins`` with
        the same environment gets the same set (a plugin registered in-process would be missing)."""
        names = {self.pm.get_name(plugin) for plugin in self.pm.get_plugins()}
        return all(name in self.infos and self.infos[name].distribution != IN_PROCESS for name in names)

    def _collect(self, kind: str, hook_name: str, key: Callable[[Any], str], *, fatal: type[LcmError] | None = None,
                 **kwargs: Any) -> dict[str, Any]:
        """Call a ``register`` hook and index results by ``key``; duplicates are a PluginError.

        A hook implementation that raises is reported and skipped, unless ``fatal`` is given: then the
        whole collection fails with that error, naming the plugin (a missing rule pack must not go unnoticed).
        """
        cache_key = kind
        if cache_key not in self._cache:
            found: dict[str, tuple[Any, str]] = {}
            hook_caller = getattr(self.pm.hook, hook_name)
            for impl in hook_caller.get_hookimpls():
                owner = self.pm.get_name(impl.plugin) or "?"
                mine: dict[str, Any] = {}

                def register(*args: Any, _mine: dict[str, Any] = mine) -> None:
                    item = args if len(args) > 1 else args[0]
                    _mine[key(item)] = item

                try:
                    impl.function(**{a: (register if a == "register" else kwargs[a]) for a in impl.argnames})
                except Exception as exc:  # one plugin's bug must not take the host down
                    info = self.infos.get(owner)
                    distribution = info.distribution if info else "?"
                    if fatal is not None:
                        detail = str(exc) if isinstance(exc, LcmError) else f"{type(exc).__name__}: {exc}"
                        what = kind.replace("_", " ")
                        raise fatal(f"plugin {owner!r} from {distribution} could not register its {what}s: "
                                    f"{detail}") from None
                    self._report(owner, distribution, f"{hook_name} failed: {exc!r}")
                    continue
                for name, item in mine.items():
                    if name in found:
                        raise PluginError(f"{kind} {name!r} registered by both {found[name][1]!r} and {owner!r}")
                    found[name] = (item, owner)
            self._cache[cache_key] = found
        return {name: item for name, (item, _owner) in self._cache[cache_key].items()}

    def provenance(self, kind: str) -> dict[str, str]:
        return {name: owner for name, (_item, owner) in self._cache.get(kind, {}).items()}

    def formats(self) -> dict[str, TranscriptFormat]:
        return self._collect("format", "lcm_register_formats", lambda f: f.identity.identifier)

    def rule_packs(self, config: Config) -> dict[str, RulePack]:
        """Packs depend on the configuration (project patterns, gitleaks file): collected anew each call.

        A plugin that fails to register its packs (a rule file it cannot read, say) is a ScrubberError, never
        a warning: scrubbing with the packs that remain would store what it should catch.
        """
        self._cache.pop("rule_pack", None)
        return self._collect("rule_pack", "lcm_register_rule_packs", lambda p: p.name, fatal=ScrubberError,
                             config=config)

    def summarizers(self) -> dict[str, SummarizerFactory]:
        return {
            name: item[1]
            for name, item in self._collect("summarizer", "lcm_register_summarizers", lambda t: t[0]).items()
        }

    def embedders(self) -> dict[str, EmbedderFactory]:
        return {name: item[1] for name, item in self._collect("embedder", "lcm_register_embedders",
                                                              lambda t: t[0]).items()}

    def prompt_sources(self) -> list[PromptSource]:
        found = self._collect("prompt_source", "lcm_register_prompt_sources", lambda s: s.name)
        return sorted(found.values(), key=lambda s: (-s.priority, s.name))

    def storage_backends(self) -> dict[str, StorageBackendInfo]:
        return self._collect("storage_backend", "lcm_register_storage_backends", lambda b: b.name)

    def capabilities(self) -> dict[str, Capability]:
        return self._collect("capability", "lcm_register_capabilities", lambda c: c.name)

    def settings(self) -> dict[str, Setting]:
        """The configuration keys plugins declare (``provenance("setting")`` names each one's plugin)."""
        return self._collect("setting", "lcm_register_settings", lambda s: s.key)

    def commands(self) -> dict[str, CommandSpec]:
        return self._collect("command", "lcm_register_commands", lambda c: c.name)

    def agents(self) -> dict[str, AgentIntegration]:
        return self._collect("agent", "lcm_register_agents", lambda a: a.name)

    def sniff_format(self, head: Sequence[Any]) -> str | None:
        """The identifier of the first registered format (in identifier order) whose ``sniff`` accepts the
        first parsed records of a file, or None."""
        return next((name for name, fmt in sorted(self.formats().items()) if fmt.sniff(head)), None)


def _split(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def build_plugins(
    env: Mapping[str, str] | None = None,
    *,
    extra: Iterable[tuple[str, object]] = (),
    stderr: Any = None,
) -> Plugins:
    """Load every allowed plugin from entry points (plus ``extra`` (name, object) pairs, for tests)."""
    environ = os.environ if env is None else env
    err = stderr or sys.stderr
    strict = environ.get("LCM_STRICT_PLUGINS", "").lower() in {"1", "true", "yes"}
    allow = _split(environ.get("LCM_LOAD_PLUGINS"))
    deny = _split(environ.get("LCM_DISABLE_PLUGINS")) or set()

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    infos: dict[str, PluginInfo] = {}
    failures: list[LoadFailure] = []

    def fail(name: str, dist: str, error: str) -> None:
        failures.append(LoadFailure(name, dist, error))
        if strict:
            raise PluginError(f"plugin {name!r} from {dist} failed: {error}")
        print(f"lcm: warning: skipping plugin {name!r} from {dist}: {error}", file=err)

    eps: list[EntryPoint] = sorted(entry_points(group=GROUP), key=lambda ep: ep.name)
    candidates: list[tuple[str, str, str, Callable[[], object]]] = []
    for ep in eps:
        if ep.name not in ESSENTIAL and ((allow is not None and ep.name not in allow) or ep.name in deny):
            continue
        dist = ep.dist.name if ep.dist else "unknown"
        version = ep.dist.version if ep.dist else "?"
        candidates.append((ep.name, dist, version, ep.load))
    for name, obj in extra:
        candidates.append((name, IN_PROCESS, "-", _constant(obj)))

    for name, dist, version, load in candidates:
        try:
            plugin = load()
        except Exception as exc:  # a broken plugin must not take the host down
            fail(name, dist, f"import failed: {type(exc).__name__}: {exc}")
            continue
        try:
            unknown = _unknown_hooks(plugin, pm)
            if unknown:
                raise PluginError(f"implements unknown hook(s): {', '.join(unknown)}")
            pm.register(plugin, name=name)
        except (pluggy.PluginValidationError, PluginError, ValueError) as exc:
            fail(name, dist, f"invalid hook implementation: {exc}")
            continue
        hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or []))
        infos[name] = PluginInfo(name, dist, version, hooks)
    return Plugins(pm, infos, failures, fail)


def _constant(obj: object) -> Callable[[], object]:
    return lambda: obj


def _unknown_hooks(plugin: object, pm: pluggy.PluginManager) -> list[str]:
    names = []
    for attr in dir(plugin):
        is_impl = attr.startswith("lcm_") and pm.parse_hookimpl_opts(plugin, attr) is not None
        if is_impl and not hasattr(pm.hook, attr):
            names.append(attr)
    return names
