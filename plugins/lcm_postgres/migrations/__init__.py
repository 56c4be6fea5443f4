"""Ordered SQL migrations with their SHA-256 manifest and expected schema inventories (data only)."""
