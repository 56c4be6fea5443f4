"""The public plugin API: the only part of ``lcm_framework`` a plugin (built-in, contrib or third-party) imports.

This package holds what every plugin needs, cheap to import at start-up; the submodules group the rest
by job and import only what that job needs:

================================  ======================================================================
``lcm_framework.plugin_api``      ``hookimpl``, the registration records, the error types, private dirs
``...plugin_api.formats``         transcript format contracts, message inputs, format helpers
``...plugin_api.storage``         storage contracts, records, typed errors for adapters, query terms
``...plugin_api.sqlite``          safe SQLite file helpers (private files, quick_check, corrupt codes)
``...plugin_api.summarize``       summarizer contracts, token counting, truncation, prompt templates
``...plugin_api.output``          command output: --json, JSON, aligned tables, terminal-safe text
``...plugin_api.app``             the application handle commands and capabilities receive, config files
``...plugin_api.recall``          recall and memory operations for agent-facing capabilities
``...plugin_api.recall_arguments``  the recall tools' arguments, described once
``...plugin_api.scrub``           the scrubber built from the loaded rule packs, audit marks
``...plugin_api.agents``          the agent integration contract and the agent-file installing helpers
================================  ======================================================================

Anything else in ``lcm_framework`` is internal and may change without notice; ``tests/core/test_boundaries.py``
fails when a plugin imports it. ``docs/plugins.md`` ("The plugin API") lists every export.
"""

from ..config.schema import Setting
from ..errors import (
    ConfigError,
    ConflictError,
    DataValidationError,
    LcmError,
    NestedTransactionError,
    NotFoundError,
    ScrubberError,
    StorageClosedError,
    StorageError,
    StorageUnavailableError,
    SummarizerError,
    SummarizerUnavailableError,
    UnsupportedCapabilityError,
)
from ..kernel.extensions import (
    Allowlist,
    Argument,
    Capability,
    CommandSpec,
    PromptSource,
    Rule,
    RulePack,
    StorageBackendInfo,
)
from ..kernel.hookspecs import hookimpl
from ..safe_paths import atomic_write_private, ensure_private_dir

__all__ = [
    "Allowlist",
    "Argument",
    "Capability",
    "CommandSpec",
    "ConfigError",
    "ConflictError",
    "DataValidationError",
    "LcmError",
    "NestedTransactionError",
    "NotFoundError",
    "PromptSource",
    "Rule",
    "RulePack",
    "ScrubberError",
    "Setting",
    "StorageBackendInfo",
    "StorageClosedError",
    "StorageError",
    "StorageUnavailableError",
    "SummarizerError",
    "SummarizerUnavailableError",
    "UnsupportedCapabilityError",
    "atomic_write_private",
    "ensure_private_dir",
    "hookimpl",
]
