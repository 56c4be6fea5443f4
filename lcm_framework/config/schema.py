"""The core configuration keys (plugins declare theirs through ``lcm_register_settings``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KINDS: tuple[type, ...] = (str, int, float, bool, list)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_UNUSABLE_TEXT = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Setting:
    """One configuration key, declared by the core or by a plugin (``lcm_register_settings``).

    ``key`` is ``section.name``; ``env`` lists extra environment variables
    (``LCM_SECTION_NAME`` is always added last); ``choices``, ``minimum`` and
    ``maximum`` validate values; a ``secret`` value is masked wherever it is shown; ``check`` vets a value
    ``lcm config set`` is about to write.
    """

    key: str
    kind: type  # str, int, float, bool or list (of str)
    default: Any
    help: str
    env: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    secret: bool = False
    nullable: bool = False
    check: Callable[[Any], None] | None = field(default=None, compare=False)
    """Run by ``lcm config set`` on a parsed value before it is written: raises ``ConfigError`` when every later
    run would fail on it (a rules file that does not load), so a typo never reaches the file."""

    def __post_init__(self) -> None:
        auto = "LCM_" + self.key.upper().replace(".", "_")
        if auto not in self.env:
            object.__setattr__(self, "env", (*self.env, auto))

    def describe_allowed(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        name = {str: "text", int: "an integer", float: "a number", bool: "true or false", list: "a list of text"}[
            self.kind
        ]
        bounds = []
        if self.minimum is not None:
            bounds.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            bounds.append(f"<= {self.maximum:g}")
        return name + (f" ({', '.join(bounds)})" if bounds else "")


def declaration_problem(setting: Setting) -> str | None:
    """Why a declared setting cannot be used (``None``: it can): bad key, kind or default."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*", setting.key):
        return f"key {setting.key!r} is not of the form section.name (lower case)"
    if setting.kind not in KINDS:
        return f"{setting.key}: kind {setting.kind!r} is not one of str, int, float, bool, list"
    if setting.default is None and setting.nullable:
        return None
    try:
        parse_value(setting, setting.default)
    except ValueError as exc:
        return f"{setting.key}: default {setting.default!r} is invalid: {exc}"
    return None


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        # storage
        Setting("storage.backend", str, "sqlite", "Storage backend driver name.", env=("LCM_STORAGE_BACKEND",)),
        # summarizer
        Setting("summarizer.provider", str, "auto", "Summarizer by name; auto lets the summarizer plugins choose "
                "(docs/summarizers.md).", env=("LCM_SUMMARIZER",)),
        Setting("summarizer.temperature", float, 0.2, "Sampling temperature of the normal prompt.", minimum=0,
                maximum=2),
        # prompts
        Setting("prompts.override_dir", str, None, "Directory whose templates replace built-ins by name.",
                nullable=True),
        # compaction (spec defaults)
        Setting("compaction.fresh_tail_count", int, 8, "Recent raw messages never compacted.", minimum=0),
        Setting("compaction.leaf_chunk_tokens", int, 20_000, "Maximum tokens per leaf chunk.", minimum=100),
        Setting("compaction.leaf_target_tokens", int, 1_000, "Target size of a leaf summary.", minimum=50),
        Setting("compaction.condensed_target_tokens", int, 1_800, "Target size of a condensed summary.", minimum=50),
        Setting("compaction.leaf_min_fanout", int, 8, "Depth-0 summaries needed to condense.", minimum=2),
        Setting("compaction.condensed_min_fanout", int, 4, "Depth-1+ summaries needed to condense.", minimum=2),
        Setting("compaction.incremental_max_depth", int, 0, "Condensation depth after each ingest (-1: unlimited).",
                minimum=-1),
        Setting("compaction.context_threshold", float, 0.75, "Share of the budget that triggers compaction.",
                minimum=0.05, maximum=1.0),
        Setting("compaction.context_budget_tokens", int, 120_000, "Default assembly budget.", minimum=100),
        Setting("compaction.max_rounds", int, 10, "Ignored (kept so older config files load): compact --budget now "
                "stops as soon as the context fits.", minimum=1),
        Setting("compaction.truncate_tokens", int, 512, "Size of the deterministic truncation fallback.", minimum=16),
        Setting("compaction.large_file_token_threshold", int, 25_000, "Blocks above this are stored as files.",
                minimum=100),
        Setting("compaction.max_expand_tokens", int, 20_000, "Default token cap of expand.", minimum=100,
                env=("LCM_MAX_EXPAND_TOKENS",)),
        # import
        Setting("import.batch_size", int, 100, "Records per backfill transaction.", minimum=1, maximum=1000),
        Setting("import.workers", int, 0, "Processes a large import uses (0: one per CPU for 8 MiB or more; "
                "1: in-process).", minimum=0, maximum=64),
        Setting("recall.embedder", str, "wordllama", "Text embedder of the semantic recall lane, by name "
                "(lcm_register_embedders; docs/recall.md)."),
        Setting("recall.semantic", str, "auto", "The semantic recall lane (vectors per message and summary, "
                "fused with the lexical ranking): on, off, or auto (on when the embedder can run here).",
                choices=("auto", "on", "off")),
        # memory
        Setting("memory.promote_after_compaction", bool, True,
                "Promote durable insights of new summaries into memories after a compaction created some."),
        Setting("memory.recall_max_tokens", int, 400, "Token cap of what a prompt's recall injects.", minimum=50),
        Setting("memory.recall_min_score", float, 0.25, "Relevance (0..1) a memory or summary needs to be injected.",
                minimum=0.0, maximum=1.0),
        Setting("memory.restore_count", int, 5, "Highest-confidence memories included at session start.", minimum=0),
        # daemon
        Setting("daemon.port", int, 3737, "Port of the local daemon (127.0.0.1 only).", minimum=1, maximum=65535),
        Setting("daemon.autostart", bool, True, "Hooks start the daemon when it is down."),
        Setting("daemon.request_timeout_s", float, 10.0, "Seconds a client has to send a request's headers, "
                "and again its body, before the daemon closes the connection.", minimum=0.1, maximum=600.0),
        Setting("daemon.transcript_wait_s", float, 60.0, "Seconds a queued hook event waits, retried, for the "
                "transcript it names (an agent may write it after the hook) before it is given up.",
                minimum=0.0, maximum=3600.0),
        # team sync (PostgreSQL passive-event inbox)
        Setting("sync.interval_s", float, 2.0, "Seconds between the daemon's background drains to the inbox.",
                minimum=0.05, maximum=3600.0),
        Setting("sync.batch", int, 200, "Events one drain step delivers, claims or acknowledges at most.",
                minimum=1, maximum=10_000),
        Setting("sync.lease_ttl_s", float, 30.0, "Seconds a machine's drain lease lives without renewal.",
                minimum=0.1, maximum=3600.0),
        Setting("sync.claim_ttl_s", float, 30.0, "Seconds a claimed inbox event stays reserved to its worker.",
                minimum=0.1, maximum=3600.0),
        Setting("sync.max_attempts", int, 5, "Failed applications before an event is quarantined.", minimum=1,
                maximum=1000),
        Setting("sync.retry_base_s", float, 2.0, "First retry delay of a failed event (doubling, at most 300 s).",
                minimum=0.0, maximum=300.0),
        Setting("sync.stuck_after_s", float, 600.0, "Age of the oldest undelivered or unapplied event from which "
                "status and doctor report the backlog as stuck.", minimum=1.0),
    ]
}


def parse_value(setting: Setting, raw: Any) -> Any:
    """Coerce a TOML or string value to the setting's type; ValueError with a reason when not possible.

    The type alone refuses what no key can use: a float that is not finite (``nan``, ``inf``), an integer
    outside 64 bits or a fraction given for one, text holding U+0000 or a lone surrogate."""
    if raw is None:
        if setting.nullable:
            return None
        raise ValueError("a value is required")
    kind = setting.kind
    value: Any
    if kind is bool:
        if isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and raw.strip().lower() in {"1", "true", "yes", "on"}:
            value = True
        elif isinstance(raw, str) and raw.strip().lower() in {"0", "false", "no", "off"}:
            value = False
        else:
            raise ValueError("not a boolean")
    elif kind is int:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise ValueError("not an integer")
        value = _convert(int, raw)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError("out of range (64-bit integers only)")
    elif kind is float:
        if isinstance(raw, bool):
            raise ValueError("not a number")
        value = _convert(float, raw)
        if not math.isfinite(value):
            raise ValueError("not a finite number")
    elif kind is list:
        if isinstance(raw, str):
            value = [part for part in raw.split("\n") if part] if "\n" in raw else [raw] if raw else []
        elif isinstance(raw, list) and all(isinstance(v, str) for v in raw):
            value = list(raw)
        else:
            raise ValueError("not a list of text")
        if any(_UNUSABLE_TEXT.search(v) for v in value):
            raise ValueError("holds U+0000 or a lone surrogate")
    else:
        if not isinstance(raw, str):
            raise ValueError("not text")
        if _UNUSABLE_TEXT.search(raw):
            raise ValueError("holds U+0000 or a lone surrogate")
        value = raw
    if setting.choices and value not in setting.choices:
        raise ValueError("not an allowed choice")
    if setting.minimum is not None and value < setting.minimum:
        raise ValueError("too small")
    if setting.maximum is not None and value > setting.maximum:
        raise ValueError("too large")
    return value


def _convert(fn: Callable[[Any], Any], raw: Any) -> Any:
    try:
        return fn(raw)
    except OverflowError:  # float(10**400), int(inf)
        raise ValueError("out of range") from None
    except (TypeError, ValueError):
        raise ValueError("wrong type") from None
