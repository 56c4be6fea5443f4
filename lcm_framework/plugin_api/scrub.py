"""The secret scrubber for plugin commands: built from the loaded rule packs, or from given packs."""

from ..scrub import Finding, Scrubber, app_scrubber, format_samples, scrubber_from_packs
from ..scrub.audit_marks import record_audit

__all__ = ["Finding", "Scrubber", "app_scrubber", "format_samples", "record_audit", "scrubber_from_packs"]
