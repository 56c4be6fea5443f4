"""Promoted memory: durable insights stored, deduplicated, promoted from summaries and recalled at prompt time."""
