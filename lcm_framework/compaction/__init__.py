"""Compaction into the summary DAG: leaf passes, condensation, escalation, modes, serialization."""

from ..summarize.truncation import TRUNCATION_MARKER
from .engine import CompactionEngine, PassResult
from .escalation import Outcome
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
