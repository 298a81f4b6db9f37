"""The repeat filter on the log (a flood of one warning is bounded, the next window says how
many were dropped, INFO lines always pass) and the doors' connection cap under the file limit."""

from __future__ import annotations

import logging

import pytest

from router.cli.logs import RepeatFilter
from router.door.httpd import DoorLimits, connection_cap
from router.errors import InvalidRequest


def record(level: int, msg: str, name: str = "uvicorn.error") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, (), None)


def test_repeated_warnings_are_bounded_and_counted() -> None:
    now = [0.0]
    quiet = RepeatFilter(repeats=3, window=60.0, clock=lambda: now[0])
    kept = [quiet.filter(record(logging.WARNING, "Invalid HTTP request received."))
            for _ in range(500)]
    assert sum(kept) == 3
    assert quiet.filter(record(logging.WARNING, "another message"))
    assert all(quiet.filter(record(logging.INFO, "call %s")) for _ in range(100))
    now[0] += 60.0
    first = record(logging.WARNING, "Invalid HTTP request received.")
    assert quiet.filter(first) and "497 more like this dropped" in first.getMessage()


def test_the_connection_cap_stays_under_half_the_file_limit() -> None:
    assert connection_cap(DoorLimits(max_connections=1000), files=256) == 128
    assert connection_cap(DoorLimits(max_connections=50), files=1 << 20) == 50
    with pytest.raises(InvalidRequest):
        DoorLimits(header_timeout=31.0)
