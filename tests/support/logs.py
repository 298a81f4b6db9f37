"""The server's per-call log lines, captured as JSON for a test to read."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from router.cli.logs import JsonFormatter

CALL_LOGGER = "router.service.interceptors"


@contextmanager
def call_log_lines() -> Iterator[list[dict[str, Any]]]:
    """Capture the per-call log at INFO; the yielded list fills with the JSON lines on exit."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger(CALL_LOGGER)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    lines: list[dict[str, Any]] = []
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
        lines.extend(json.loads(line) for line in stream.getvalue().splitlines())
