"""Portable records: a versioned, backend-neutral JSON Lines stream of projects and memories."""
