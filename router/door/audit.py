"""The audit log every door can write: one JSON object per line, per call.

``server.audit_log`` (``serve --audit-log``), ``mcp.audit_log`` and ``ops.audit_log``: a file
path, or ``-`` for standard error. The file is created 0600 (and narrowed to 0600 when it
already exists), whatever the umask, and rotated by size: past ``MAX_BYTES`` it is renamed
``PATH.1`` (the older ones shift up to ``PATH.<BACKUPS>``, the oldest dropped) and a new one
begins, 0600 too. A line holds who called, what and with which outcome, and for the calls
that hand out skills which skills at which digest; never a user's message (the doors build
the lines, ``router.service.audit`` for gRPC). Refused calls are written at a bounded rate,
with a summary line of those left out (``router.door.audit_budget``).
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from logging.handlers import RotatingFileHandler
from typing import Any

from router.door.audit_budget import RefusalBudget
from router.errors import InvalidRequest

STDERR = "-"
MAX_BYTES = 64 * 1024 * 1024  # a file's size before it is rotated
BACKUPS = 5  # rotated files kept
MODE = 0o600


class _PrivateRotatingHandler(RotatingFileHandler):
    """A ``RotatingFileHandler`` whose every file is opened 0600."""

    def _open(self) -> io.TextIOWrapper:  # type: ignore[override]
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, MODE)
        os.fchmod(fd, MODE)
        return os.fdopen(fd, "a", encoding="utf-8")


def now_iso() -> str:
    """The current time as a line's ``ts`` (ISO 8601, UTC, milliseconds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class AuditLog:
    """Writes audit lines to one destination (thread-safe: the handler holds a lock)."""

    def __init__(self, path: str, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> None:
        self.path = path
        handler: logging.Handler
        try:
            if path == STDERR:
                handler = logging.StreamHandler(sys.stderr)
            else:
                handler = _PrivateRotatingHandler(path, maxBytes=max_bytes,
                                                  backupCount=backups, encoding="utf-8")
        except OSError as exc:
            raise InvalidRequest(f"cannot open the audit log {path}: {exc}") from exc
        handler.setFormatter(logging.Formatter("%(message)s"))
        self._logger = logging.Logger(f"skill_router.audit:{path}")
        self._logger.propagate = False
        self._logger.addHandler(handler)
        self._handler = handler
        self._budget = RefusalBudget()

    def write(self, line: Mapping[str, Any]) -> None:
        """Write one line (``ts`` first when the line has none); a refused call's only within
        the refusal budget (``router.door.audit_budget``), the summary of those dropped first
        when one is due."""
        admitted = self._budget.admit(line)
        summary = self._budget.summary()
        if summary is not None:
            self._emit(summary)
        if admitted:
            self._emit(line)

    def _emit(self, line: Mapping[str, Any]) -> None:
        data = {"ts": now_iso(), **line}
        self._logger.info(json.dumps(data, ensure_ascii=False, default=str))

    def close(self) -> None:
        summary = self._budget.summary(closing=True)
        if summary is not None:
            self._emit(summary)
        self._logger.removeHandler(self._handler)
        if self.path != STDERR:
            self._handler.close()


def open_audit(path: str) -> AuditLog | None:
    """The audit log at ``path`` ("" = none); InvalidRequest when it cannot be opened."""
    return AuditLog(path) if path else None
