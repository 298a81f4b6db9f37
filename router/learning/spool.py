"""The local spool of a database-backed feedback store: rows written while the database cannot
be reached (``feedback.spool_dir``, one folder per replica), replayed once it can.

The spool is a folder of segments (``router.learning.segments``: an Activate's or a Feedback's
row is synced before its call answers, a Route's within a fifth of a second; every row is in
the file before the call answers, so killing the process loses none). Each process writes its
own segment and holds a lock on it while it is open; a replay closes this process's segment
and sends every segment nobody holds (this process's, and those a dead process left) to the
database, then removes it. Rows carry their own id and the database ignores one it has, so a
replay cut short and run again never counts a row twice. The spool holds at most ``max_rows``
rows; past that a row is dropped (counted, and logged once per outage).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from router.learning.folder import SEGMENT_PREFIX, SUFFIX, parse_lines
from router.learning.rows import Row
from router.learning.segments import SegmentWriter

log = logging.getLogger(__name__)

REPLAY_BATCH = 1000  # rows sent to the database in one statement


def default_spool_dir() -> Path:
    """``$XDG_STATE_HOME/skill-router/spool`` (``~/.local/state/...`` without it)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    return Path(state) / "skill-router" / "spool"


class Spool:
    """Rows kept on local disk until ``replay`` hands them to the database."""

    def __init__(self, folder: str | Path, max_rows: int) -> None:
        self.folder = Path(folder)
        self.max_rows = max_rows
        self._writer = SegmentWriter(self.folder)
        self._lock = threading.Lock()
        self._rows = sum(len(rows) for _, rows in self._unheld())  # left by a stopped process
        self.dropped = 0
        self._warned = False

    @property
    def rows(self) -> int:
        """Rows spooled and not yet replayed (this process's and the unheld ones it found)."""
        with self._lock:
            return self._rows

    def append(self, rows: Sequence[Row], *, durable: bool) -> None:
        """Keep ``rows`` (synced first when ``durable``), or drop them when the spool is full.
        OSError when the spool cannot be written."""
        with self._lock:
            if self._rows + len(rows) > self.max_rows:
                self.dropped += len(rows)
                if not self._warned:
                    log.warning("feedback spool %s is full (%d rows): dropping rows until the "
                                "database takes them", self.folder, self.max_rows)
                    self._warned = True
                return
            self._rows += len(rows)
        self._writer.append(rows, durable=durable)

    def replay(self, insert: Callable[[Sequence[Row]], None]) -> int:
        """Send every unheld segment's rows to ``insert`` and remove the segment; the rows
        sent. OSError (from ``insert``) stops it, the segment not yet sent kept."""
        self._writer.close()  # this process's rows so far in a closed segment; new ones in a new
        sent = 0
        for path, rows in self._unheld():
            for start in range(0, len(rows), REPLAY_BATCH):
                insert(rows[start:start + REPLAY_BATCH])
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            sent += len(rows)
            with self._lock:
                self._rows = max(0, self._rows - len(rows))
                self._warned = False
        if sent:
            log.info("replayed %d spooled feedback rows from %s", sent, self.folder)
        return sent

    def _unheld(self) -> Iterator[tuple[Path, list[Row]]]:
        """Each segment no open writer holds, with its rows (read under its lock)."""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return
        for name in names:
            if not (name.startswith(SEGMENT_PREFIX) and name.endswith(SUFFIX)):
                continue
            path = self.folder / name
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue  # another process replayed it
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live process's open segment: its own to replay
                with os.fdopen(os.dup(fd), "rb") as handle:
                    rows = parse_lines(handle.read())
                yield path, rows
            finally:
                os.close(fd)

    def close(self) -> None:
        """Sync and close this process's segment (a later append opens another)."""
        self._writer.close()
