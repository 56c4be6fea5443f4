"""Agent hook handling: parse the hook JSON, post it to the daemon, fall back to the outbox.

This package is on the hook fast path: it imports no plugin, no storage
driver and no HTTP library heavier than ``http.client``.
"""
