"""Compaction into the summary DAG: leaf passes, condensation, escalation, modes, serialization."""

from .engine import CompactionEngine, PassResult
from .escalation import TRUNCATION_MARKER, Outcome
from .locking import CompactionBusy
from .settings import CompactionReport, CompactionSettings, Mode

__all__ = [
    "TRUNCATION_MARKER",
    "CompactionBusy",
    "CompactionEngine",
    "CompactionReport",
    "CompactionSettings",
    "Mode",
    "Outcome",
    "PassResult",
]
