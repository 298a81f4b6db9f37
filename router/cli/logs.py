"""Log output for the server: plain text, or one JSON object per line.

JSON lines carry ``ts`` (ISO 8601, UTC), ``level``, ``logger`` and ``msg``; the per-call line
written by the interceptor adds ``request_id``, ``method``, ``code`` and ``ms``. A record with
an exception adds ``exc``. Text lines escape control characters and line breaks in the message
(a skill or file name holding ``\n`` cannot forge a log line); JSON escapes them by itself.

``RepeatFilter`` (on the CLI's handlers) keeps a flood of identical warnings or errors from
growing the log without bound: past ``REPEATS`` lines of one logger, level and message template
in a ``REPEAT_WINDOW``-second window the rest are dropped, and the first line of the next window
says how many were.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from router.common.textsafe import is_unicode, printable
from router.errors import InvalidRequest

FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Attributes a call log line may carry (set through ``extra=``).
CALL_FIELDS = ("request_id", "method", "code", "ms")
REPEATS = 10  # identical warnings or errors kept per window
REPEAT_WINDOW = 60.0  # seconds
MAX_KEYS = 1024  # message templates remembered (least recently seen forgotten first)


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


class RepeatFilter(logging.Filter):
    """Drops WARNING-and-above records past ``repeats`` of one (logger, level, template) per
    ``window`` seconds; INFO and below (the per-call lines) always pass."""

    def __init__(self, repeats: int = REPEATS, window: float = REPEAT_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.repeats, self.window, self.clock = repeats, window, clock
        self._seen: OrderedDict[tuple[str, int, str], list[float]] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self.clock()
        entry = self._seen.pop(key, None)  # [window start, kept, dropped]
        if entry is None or now - entry[0] >= self.window:
            dropped = int(entry[2]) if entry is not None else 0
            entry = [now, 0.0, 0.0]
            if dropped:
                record.msg = f"{record.msg} ({dropped} more like this dropped)"
        self._seen[key] = entry
        while len(self._seen) > MAX_KEYS:
            self._seen.popitem(last=False)
        if entry[1] >= self.repeats:
            entry[2] += 1
            return False
        entry[1] += 1
        return True


def quiet_repeats(logger: logging.Logger | None = None,
                  handlers: Sequence[logging.Handler] | None = None) -> None:
    """Put a ``RepeatFilter`` on every handler of ``logger`` (default: the root logger), or
    on ``handlers`` only when given."""
    for handler in (handlers if handlers is not None
                    else (logger or logging.getLogger()).handlers):
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(RepeatFilter())
