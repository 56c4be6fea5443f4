"""Timestamps as integer microseconds since the Unix epoch (UTC), strictly increasing per process."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

_lock = threading.Lock()
_last = 0
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def now_us() -> int:
    """Wall-clock microseconds, never equal to or below the previous value returned in this process."""
    global _last
    with _lock:
        value = max(time.time_ns() // 1000, _last + 1)
        _last = value
        return value


def to_us(value: datetime) -> int:
    """A datetime as epoch microseconds; naive values are taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def opt_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def opt_dt(value: int | None) -> datetime | None:
    return None if value is None else from_us(value)
