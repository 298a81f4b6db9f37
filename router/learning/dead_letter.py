"""Rows a database refuses for their content, set aside for the operator.

A row whose values the database cannot hold (``psycopg.DataError`` and the like: a NUL
character, a string the encoding lacks, a number out of range) is not an outage: it is refused
for ever, so replaying it would block everything behind it. ``SortingInsert`` wraps a store's
insert: a batch refused for its content is sent again row by row, and each row refused alone is
appended to ``dead-letter.jsonl`` in the spool's folder (one JSON row a line, as the spool and
the file store write them, with the reason and when), counted, and logged (the first one at
WARNING, later ones at DEBUG, the count in each message). The rows beside it are written.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from router.errors import InvalidRequest
from router.learning.rows import Row

log = logging.getLogger(__name__)

FILE = "dead-letter.jsonl"


class RowRefused(InvalidRequest):
    """The database refused rows for their content (never for a connection); the reason.
    A read whose parameters it refuses is the caller's bad input: INVALID_ARGUMENT."""


class SortingInsert:
    """``insert``, with the rows the database refuses for their content set aside in
    ``folder/dead-letter.jsonl`` (see the module)."""

    def __init__(self, insert: Callable[[Sequence[Row]], None], folder: str | Path) -> None:
        self._insert, self.path = insert, Path(folder) / FILE
        self._lock = threading.Lock()
        self.count = 0  # rows set aside since start

    def __call__(self, rows: Sequence[Row]) -> None:
        try:
            self._insert(rows)
            return
        except RowRefused as exc:
            if len(rows) == 1:
                self._set_aside(rows[0], str(exc))
                return
        for row in rows:  # OSError (the database gone) stops here, as for the batch
            try:
                self._insert([row])
            except RowRefused as exc:
                self._set_aside(row, str(exc))

    def _set_aside(self, row: Row, reason: str) -> None:
        line = json.dumps({"refused": reason, "at": round(time.time(), 3),
                           "row": json.loads(row.to_json())})
        with self._lock:
            self.count += 1
            count = self.count
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with os.fdopen(handle, "a", encoding="utf-8") as out:  # callers' words: 0600
                    out.write(line + "\n")
                kept = f"kept in {self.path}"
            except OSError as exc:
                kept = f"not kept: cannot write {self.path}: {exc}"
        level = logging.WARNING if count == 1 else logging.DEBUG
        log.log(level, "the feedback store refused a %s row for its content (%s): set aside, "
                "%s (%d set aside since start); the other rows are written", row.kind, reason,
                kept, count)
