"""This process's own segment of the feedback folder (``router.learning.folder``).

A durable append (an Activate's or a Feedback's row) is synced before it returns, and
concurrent ones share one sync (group commit). A non-durable append (a Route's row) returns
once the row is written to the file, which already survives the process being killed; a
background thread syncs such rows every ``SYNC_INTERVAL_S`` while they keep coming, so a
burst of Routes shares one fsync and no Route wakes it. (Woken by every Route to sync right
after it, the thread's wake-up and its fsync took a Route 0.2-0.3 ms on a 2-core machine.)
After an interval with nothing to sync the thread parks, and the next write wakes it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from router.learning.folder import (
    SEGMENT_MAX_ROWS,
    SEGMENT_MAX_SECONDS,
    SEGMENT_PREFIX,
    SUFFIX,
    private_folder,
    sync_dir,
)
from router.learning.rows import Row

log = logging.getLogger(__name__)

SYNC_INTERVAL_S = 0.2  # a Route's row is on disk within this (PostgreSQL's wal_writer_delay)


class SegmentWriter:
    """Appends rows to this process's own segment (see the module doc for when they are
    synced)."""

    def __init__(self, folder: Path, *, max_rows: int = SEGMENT_MAX_ROWS,
                 max_seconds: float = SEGMENT_MAX_SECONDS,
                 on_rotate: Callable[[], None] | None = None,
                 sync_interval: float = SYNC_INTERVAL_S) -> None:
        self.folder = folder
        self._max_rows, self._max_seconds = max_rows, max_seconds
        self._on_rotate = on_rotate
        self._interval = sync_interval
        self._fd: int | None = None
        self._rows = 0
        self._opened = 0.0
        self._serial = 0
        self._written = 0  # appends written so far (a ticket each)
        self._synced = 0  # appends known to be on disk
        self._lock = threading.Lock()  # the file, the counters and the syncer's state
        self._sync_lock = threading.Lock()  # one fsync at a time
        self._syncer: threading.Thread | None = None
        self._stop = threading.Event()  # the running syncer's: close() sets it
        self._wake = threading.Event()  # set by each Route row; a parked syncer waits on it

    @property
    def unsynced(self) -> int:
        """Appends written and not yet known to be on disk."""
        with self._lock:
            return self._written - self._synced

    def append(self, rows: Sequence[Row], *, durable: bool = True) -> bool:
        """Write ``rows`` (and, when ``durable``, sync them); True when the segment was full
        and has been closed (a compaction can now take it)."""
        data = "".join(row.to_json() + "\n" for row in rows).encode("utf-8")
        with self._lock:
            fd = self._fd if self._fd is not None else self._open()
            os.write(fd, data)
            self._written += 1
            ticket = self._written
            self._rows += len(rows)
            if not durable and self._syncer is None:
                self._start_syncer()
        if durable:
            return self._sync(ticket)
        self._wake.set()  # wakes the syncer only when it is parked, waiting on it
        return False

    def _start_syncer(self) -> None:
        """A syncer with its own stop event (lock held)."""
        self._stop = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, args=(self._stop,),
                                        daemon=True, name="feedback-sync")
        self._syncer.start()

    def _sync(self, ticket: int) -> bool:
        with self._sync_lock:
            if self._synced >= ticket:
                return False  # another caller's sync covered this write
            with self._lock:
                current, target = self._fd, self._written
            if current is not None:
                os.fsync(current)
            self._synced = max(self._synced, target)
            with self._lock:
                if self._rows >= self._max_rows or time.time() - self._opened >= self._max_seconds:
                    self._close()
                    return True
        return False

    def _sync_loop(self, stop: threading.Event) -> None:
        while not stop.wait(self._interval):
            with self._lock:
                ticket = self._written
                idle = ticket <= self._synced
                if idle:
                    self._wake.clear()  # under the lock: a row written after it sets it again
            if idle:
                self._wake.wait()
                continue
            try:
                if self._sync(ticket) and self._on_rotate is not None:
                    self._on_rotate()
            except OSError as exc:
                log.warning("cannot sync feedback segment in %s: %s", self.folder, exc)

    def _open(self) -> int:
        private_folder(self.folder)
        self._serial += 1
        name = (f"{SEGMENT_PREFIX}{socket.gethostname()}-{os.getpid()}-{time.time_ns()}-"
                f"{self._serial}{SUFFIX}")
        # Locked before it gets its real name, so a compaction never takes a segment in use.
        temporary = self.folder / f".new-{name}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(temporary, self.folder / name)
        sync_dir(self.folder)
        self._fd, self._rows, self._opened = fd, 0, time.time()
        log.debug("feedback segment %s opened", name)
        return fd

    def _close(self) -> None:
        """Sync and close the segment (lock held): every write to it is on disk first."""
        if self._fd is not None:
            os.fsync(self._fd)
            self._synced = self._written
            os.close(self._fd)  # releases the flock
            self._fd = None

    def close(self) -> None:
        """Stop the syncer, then sync and close the segment (a later append opens another
        and starts another syncer)."""
        with self._lock:
            syncer, stop = self._syncer, self._stop
            self._syncer = None
        if syncer is not None:
            stop.set()
            self._wake.set()
            if syncer is not threading.current_thread():
                syncer.join()
        with self._lock:
            self._close()
