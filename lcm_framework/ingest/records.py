"""One parsed or rejected record to an ``Accepted`` or ``Quarantined`` item: scrub, map, number."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..transcripts.contracts import MappedRecord, TranscriptFormat
from ..transcripts.reader import ParsedRecord, RejectedRecord
from .batch import Accepted, Quarantined, with_seq
from .errors import IngestError
from .runs import Runs
from .state import Counters, IngestKeys

if TYPE_CHECKING:
    from ..scrub import Scrubber
    from ..scrub.scrubber import ScrubbedRecord

Item = Accepted | Quarantined


def map_record(fmt: TranscriptFormat, value: Any, locator: str) -> MappedRecord:
    """``fmt.map_record(value)``; a format that breaks its "never raises" contract is a typed IngestError."""
    try:
        return fmt.map_record(value)
    except Exception as exc:
        raise IngestError(f"format {fmt.identity.identifier} failed to map a record ({type(exc).__name__})",
                          locator=locator, code="format_error") from None


class RecordProcessor:
    """Turns the records of one source into items, advancing ``counters`` (ordinals, seqs, occurrences)."""

    def __init__(self, fmt: TranscriptFormat, scrubber: Scrubber, runs: Runs, keys: IngestKeys,
                 locator: str, counters: Counters) -> None:
        from ..scrub import ScrubRejected

        self.fmt, self.scrubber, self.runs, self.keys, self.locator = fmt, scrubber, runs, keys, locator
        self.counters = counters
        self._rejected = ScrubRejected

    def process(self, rec: ParsedRecord | RejectedRecord, scrubbed: ScrubbedRecord | None = None) -> Item:
        """The item of ``rec``; ``scrubbed``: its value already scrubbed with this processor's scrubber."""
        counters = self.counters
        counters.next_ordinal = rec.ordinal + 1
        if isinstance(rec, RejectedRecord):
            return Quarantined(rec.ordinal, rec.end, rec.reason.value, rec.raw_sha256)
        try:
            scrubbed = scrubbed or self.scrubber.scrub_record(rec.value, float_free=rec.float_free)
        except self._rejected as exc:
            reason = getattr(exc, "reason", "residual-secret")
            return Quarantined(rec.ordinal, rec.end, getattr(reason, "value", str(reason)), rec.raw_sha256)
        mapped = map_record(self.fmt, scrubbed.value, self.locator)
        message = None
        run = self.runs.key(mapped, counters)
        if mapped.message is not None:
            if run is None:
                message = with_seq(mapped.message, counters.next_seq)
                counters.next_seq += 1
            else:
                seq = counters.runs.get(run, 0)
                message = with_seq(mapped.message, seq)
                counters.runs[run] = seq + 1
        key = self.keys.key(scrubbed.sha256, counters.occurrence(scrubbed.sha256))
        return Accepted(rec.ordinal, rec.end, scrubbed.canonical_json, scrubbed.sha256, key,
                        scrubbed.redactions, message, run)

    def replay(self, rec: ParsedRecord | RejectedRecord, scrubbed: ScrubbedRecord | None = None) -> None:
        """Count a record of the verified prefix again (nothing is written)."""
        if isinstance(rec, ParsedRecord):
            self.process(rec, scrubbed)
        self.counters.next_ordinal = rec.ordinal + 1
