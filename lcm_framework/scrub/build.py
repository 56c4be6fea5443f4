"""Build the effective scrubber from the rule packs plugins register, and refuse unsafe rule sets.

Everything is checked here, before any source is opened: every regex must
compile with RE2, and no rule may redact a key or discriminator of the
format plugins' representative records (``protected_samples``), either in
isolation or through the residual scan of a complete record.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ScrubberError
from ..kernel.extensions import RulePack
from .rules import compile_packs, rules_digest
from .scrubber import Scrubber, ScrubRejected

if TYPE_CHECKING:
    from ..config import Config
    from ..kernel.plugins import Plugins

DISCRIMINATOR_KEYS = frozenset({"type", "role", "subtype"})
"""String values under these keys are protected like keys (``user``, ``tool_result``, ``input_text`` ...)."""


def build_scrubber(
    config: Config,
    plugins: Plugins,
    *,
    protected_samples: Sequence[Any] = (),
    extra_packs: Sequence[RulePack] = (),
) -> Scrubber:
    """The scrubber of every registered rule pack plus ``extra_packs``, verified against the samples.

    Fails closed: a plugin that cannot register its packs (``Plugins.rule_packs``) or no rule pack at all
    (the scrubber plugin failed to load, or is disabled) is a ScrubberError, never an empty rule set.
    """
    packs = list(plugins.rule_packs(config).values())
    if not packs and not extra_packs:
        raise ScrubberError(no_packs_message(plugins))
    names = {p.name for p in packs}
    for pack in extra_packs:
        if pack.name in names:
            raise ScrubberError(f"rule pack {pack.name!r} is defined twice")
        names.add(pack.name)
        packs.append(pack)
    return scrubber_from_packs(packs, protected_samples=protected_samples)


def no_packs_message(plugins: Plugins) -> str:
    """Why no rule pack is registered, naming the plugins that failed to load (one of them may be the scrubber)."""
    failed = "; ".join(f"plugin {f.name!r} from {f.distribution} failed to load: {f.error}" for f in plugins.failures)
    cause = failed or ("no loaded plugin registers one (is the built-in scrubber plugin disabled by "
                       "LCM_DISABLE_PLUGINS or left out of LCM_LOAD_PLUGINS?)")
    return f"no secret-scrubbing rule pack is active: {cause}; LCM stores nothing until one is (`lcm plugins --all`)"


def scrubber_from_packs(packs: Sequence[RulePack], *, protected_samples: Sequence[Any] = ()) -> Scrubber:
    """A scrubber of exactly ``packs``; ScrubberError when a rule would redact structure of a sample."""
    scrubber = Scrubber(compile_packs(packs), rules_digest(packs), sample_keys(protected_samples))
    for sample in protected_samples:
        check_protected(scrubber, sample)
    return scrubber


def _members(sample: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of the objects in ``sample``, at any depth."""
    stack = [sample]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield from node.items()
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def protected_strings(sample: Any) -> list[str]:
    """Every key of ``sample`` plus the string values of its discriminator keys."""
    found: dict[str, None] = {}
    for key, child in _members(sample):
        found[key] = None
        if key in DISCRIMINATOR_KEYS and isinstance(child, str):
            found[child] = None
    return list(found)


def sample_keys(samples: Sequence[Any]) -> set[str]:
    """Every object key of the samples."""
    return {key for sample in samples for key, _ in _members(sample)}


def check_protected(scrubber: Scrubber, sample: Any) -> None:
    """ScrubberError naming the rule when it would redact structure of ``sample``."""
    for text in protected_strings(sample):
        _, counts = scrubber.scrub_text(text)
        if counts:
            rule = scrubber.findings(text)
            name = rule[0].rule_id if rule else ", ".join(sorted(counts))
            raise ScrubberError(
                f"rule {name} would redact the structural key or discriminator {text!r} that transcript "
                "formats need; narrow the pattern (test it with `lcm sensitive test`)"
            )
    try:
        scrubber.scrub_record(sample)
    except ScrubRejected as exc:
        raise ScrubberError(
            f"the rules would refuse a representative transcript record ({exc.reason.value}): "
            "a pattern matches its structure; narrow the pattern (test it with `lcm sensitive test`)"
        ) from None


def format_samples(plugins: Plugins) -> list[Any]:
    """The structural samples of every registered transcript format."""
    return [sample for fmt in plugins.formats().values() for sample in fmt.structural_samples()]


def app_scrubber(config: Config, plugins: Plugins, *, extra_packs: Sequence[RulePack] = ()) -> Scrubber:
    """``build_scrubber`` protected by the samples of every registered format (what ``lcm import`` uses)."""
    return build_scrubber(config, plugins, protected_samples=format_samples(plugins), extra_packs=extra_packs)
