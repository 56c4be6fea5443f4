"""Reviewed SQL scripts for administrators (data only)."""
