"""Every configuration key LCM knows: type, default, bounds, environment names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Setting:
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


def _s(key: str, kind: type, default: Any, help: str, **kw: Any) -> Setting:
    env = kw.pop("env", ())
    auto = "LCM_" + key.upper().replace(".", "_")
    return Setting(key, kind, default, help, env=(*env, auto), **kw)


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        # storage
        _s("storage.backend", str, "sqlite", "Storage backend driver name.", env=("LCM_STORAGE_BACKEND",)),
        _s("storage.busy_timeout_ms", int, 5000, "SQLite busy timeout.", minimum=0, maximum=600_000),
        _s("storage.fts_tier", str, "auto", "SQLite full-text tier.", choices=("auto", "fts5", "fts4", "like")),
        # postgresql
        _s("postgresql.url", str, None, "PostgreSQL URL (no query or fragment).", env=("LCM_POSTGRES_URL",),
           secret=True, nullable=True),
        _s("postgresql.ca_file", str, None, "CA bundle used to verify the server.", env=("LCM_POSTGRES_CA_FILE",),
           nullable=True),
        _s("postgresql.allow_plaintext_loopback", bool, False,
           "Allow an unencrypted connection, only to a loopback address or a Unix socket.",
           env=("LCM_POSTGRES_ALLOW_PLAINTEXT",)),
        _s("postgresql.pool_size", int, 5, "Maximum pooled connections.", minimum=1, maximum=100),
        _s("postgresql.acquire_timeout_s", float, 10.0, "Seconds to wait for a pooled connection.", minimum=0.1),
        _s("postgresql.idle_timeout_s", float, 300.0, "Seconds before an idle connection is closed.", minimum=1),
        _s("postgresql.statement_timeout_ms", int, 30_000, "Server statement timeout.", minimum=100),
        _s("postgresql.idle_in_transaction_timeout_ms", int, 60_000, "Server idle-in-transaction timeout.",
           minimum=100),
        _s("postgresql.schema", str, "lcm", "Schema that holds LCM's tables."),
        # summarizer
        _s("summarizer.provider", str, "auto", "Summarizer plugin; auto = litellm when a model is set, "
           "else extractive.", env=("LCM_SUMMARIZER",)),
        _s("summarizer.model", str, None, "litellm model string, e.g. openai/gpt-4o-mini.",
           env=("LCM_SUMMARY_MODEL",), nullable=True),
        _s("summarizer.api_base", str, None, "Base URL of an OpenAI-compatible or Ollama server.", nullable=True),
        _s("summarizer.timeout_s", float, 60.0, "Per-request timeout.", minimum=1),
        _s("summarizer.max_retries", int, 3, "Retries with exponential backoff.", minimum=0, maximum=10),
        _s("summarizer.concurrency", int, 4, "Concurrent summarizer requests.", minimum=1, maximum=64),
        _s("summarizer.temperature", float, 0.2, "Sampling temperature of the normal prompt.", minimum=0,
           maximum=2),
        # prompts
        _s("prompts.override_dir", str, None, "Directory whose templates replace built-ins by name.",
           nullable=True),
        # compaction (spec defaults)
        _s("compaction.fresh_tail_count", int, 8, "Recent raw messages never compacted.", minimum=0),
        _s("compaction.leaf_chunk_tokens", int, 20_000, "Maximum tokens per leaf chunk.", minimum=100),
        _s("compaction.leaf_target_tokens", int, 1_000, "Target size of a leaf summary.", minimum=50),
        _s("compaction.condensed_target_tokens", int, 1_800, "Target size of a condensed summary.", minimum=50),
        _s("compaction.leaf_min_fanout", int, 8, "Depth-0 summaries needed to condense.", minimum=2),
        _s("compaction.condensed_min_fanout", int, 4, "Depth-1+ summaries needed to condense.", minimum=2),
        _s("compaction.incremental_max_depth", int, 0, "Condensation depth after each ingest (-1: unlimited).",
           minimum=-1),
        _s("compaction.context_threshold", float, 0.75, "Share of the budget that triggers compaction.",
           minimum=0.05, maximum=1.0),
        _s("compaction.context_budget_tokens", int, 120_000, "Default assembly budget.", minimum=100),
        _s("compaction.max_rounds", int, 10, "Ignored (kept so older config files load): compact --budget now "
           "stops as soon as the context fits.", minimum=1),
        _s("compaction.truncate_tokens", int, 512, "Size of the deterministic truncation fallback.", minimum=16),
        _s("compaction.large_file_token_threshold", int, 25_000, "Blocks above this are stored as files.",
           minimum=100),
        _s("compaction.max_expand_tokens", int, 20_000, "Default token cap of expand.", minimum=100,
           env=("LCM_MAX_EXPAND_TOKENS",)),
        # security
        _s("security.sensitive_patterns", list, [], "Extra regexes (RE2) whose matches are redacted."),
        _s("security.gitleaks_config", str, None, "A gitleaks TOML file loaded as an extra rule pack.",
           nullable=True),
        # import
        _s("import.batch_size", int, 100, "Records per backfill transaction.", minimum=1, maximum=1000),
        _s("import.workers", int, 0, "Processes a large import uses (0: one per CPU for 8 MiB or more; "
           "1: in-process).", minimum=0, maximum=64),
        # memory
        _s("memory.promote_after_compaction", bool, True,
           "Promote durable insights of new summaries into memories after a compaction created some."),
        _s("memory.recall_max_tokens", int, 400, "Token cap of what a prompt's recall injects.", minimum=50),
        _s("memory.recall_min_score", float, 0.2, "Relevance (0..1) a memory or summary needs to be injected.",
           minimum=0.0, maximum=1.0),
        _s("memory.restore_count", int, 5, "Highest-confidence memories included at session start.", minimum=0),
        # daemon
        _s("daemon.port", int, 3737, "Port of the local daemon (127.0.0.1 only).", minimum=1, maximum=65535),
        _s("daemon.autostart", bool, True, "Hooks start the daemon when it is down."),
    ]
}


def parse_value(setting: Setting, raw: Any) -> Any:
    """Coerce a TOML or string value to the setting's type; ValueError with a reason when not possible."""
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
        if isinstance(raw, bool):
            raise ValueError("not an integer")
        value = _convert(int, raw)
    elif kind is float:
        if isinstance(raw, bool):
            raise ValueError("not a number")
        value = _convert(float, raw)
    elif kind is list:
        if isinstance(raw, str):
            value = [part for part in raw.split("\n") if part] if "\n" in raw else [raw] if raw else []
        elif isinstance(raw, list) and all(isinstance(v, str) for v in raw):
            value = list(raw)
        else:
            raise ValueError("not a list of text")
    else:
        if not isinstance(raw, str):
            raise ValueError("not text")
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
    except (TypeError, ValueError):
        raise ValueError("wrong type") from None
