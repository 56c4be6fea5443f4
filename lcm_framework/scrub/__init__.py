"""Local secret scrubbing with gitleaks-schema rule packs compiled by RE2 (rule packs come from plugins)."""

from .build import (
    app_scrubber,
    build_scrubber,
    check_protected,
    format_samples,
    protected_strings,
    scrubber_from_packs,
)
from .rules import compile_regex, shannon_entropy
from .scrubber import PIPELINE_VERSION, Finding, ScrubbedRecord, Scrubber, ScrubRejected, canonical_json

__all__ = [
    "PIPELINE_VERSION",
    "Finding",
    "ScrubRejected",
    "ScrubbedRecord",
    "Scrubber",
    "app_scrubber",
    "build_scrubber",
    "canonical_json",
    "check_protected",
    "compile_regex",
    "format_samples",
    "protected_strings",
    "scrubber_from_packs",
    "shannon_entropy",
]
