"""Log output for the server: plain text, or one JSON object per line.

JSON lines carry ``ts`` (ISO 8601, UTC), ``level``, ``logger`` and ``msg``; the per-call line
written by the interceptor adds ``request_id``, ``method``, ``code`` and ``ms``. A record with
an exception adds ``exc``. Text lines escape control characters and line breaks in the message
(a skill or file name holding ``\n`` cannot forge a log line); JSON escapes them by itself.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from router.common.textsafe import is_unicode, printable
from router.errors import InvalidRequest

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Attributes a call log line may carry (set through ``extra=``).
CALL_FIELDS = ("request_id", "method", "code", "ms")


class TextFormatter(logging.Formatter):
    """``TEXT_FORMAT`` lines whose message shows control characters as escapes (a traceback,
    added after the message, keeps its line breaks)."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = printable(record.message)
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """Formats a record as a single-line JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in CALL_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                data[name] = value
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        line = json.dumps(data, ensure_ascii=False, default=str)
        # A lone surrogate (a file name that is not UTF-8) could not be written: escape it.
        return line if is_unicode(line) else json.dumps(data, default=str)


def formatter_for(name: str) -> logging.Formatter:
    if name not in FORMATS:
        raise InvalidRequest(f"unknown log format {name!r}; use one of {', '.join(FORMATS)}")
    return JsonFormatter() if name == "json" else TextFormatter()


def use_format(name: str, logger: logging.Logger | None = None) -> None:
    """Give every handler of ``logger`` (default: the root logger) the format ``name``."""
    target = logger or logging.getLogger()
    formatter = formatter_for(name)
    for handler in target.handlers:
        handler.setFormatter(formatter)
