"""How a database-backed feedback store writes: a Route's row off the answer's path, an
Activate's or a Feedback's before the call answers, and every row to the local spool while the
database cannot be reached.

- **Route rows** (``durable=False``) wait in memory and a background thread sends them in one
  statement every ``SYNC_INTERVAL_S`` while they keep coming (the file store's syncer does the
  same), so recording a Route costs the answer no round trip. A Route's row is in the database
  within that interval; until then this process finds it (``local_route``), and another replica
  answering an Activate for it learns from it when traffic is read (``router.learning.joins``).
- **Activate and Feedback rows** are committed before the call answers.
- **Database down**: the first write that fails marks it down; from then on every row goes
  straight to the spool (``router.learning.spool``) with no attempt at the database, so no
  call waits on it. Only the background thread tries the database again (after 1 s, doubling
  up to ``MAX_RETRY_SECONDS``); once it answers, the spool is replayed and writes go to the
  database again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from router.learning.routes import RouteWindow, ShownRoute
from router.learning.rows import ROUTE, Row
from router.learning.segments import SYNC_INTERVAL_S
from router.learning.spool import Spool
from router.learning.store import StoreUnavailable

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 8.0
RECENT_ROUTES = 10_000  # this process's last Routes, found without the database

Insert = Callable[[Sequence[Row]], None]  # one statement; OSError when the database fails


class Unreachable(StoreUnavailable):
    """The database is marked down: the call did not try it."""


class PgWriter:
    """Writes rows through ``insert``, spooling them to ``spool`` while it fails."""

    def __init__(self, insert: Insert, spool: Spool, *, interval: float = SYNC_INTERVAL_S,
                 probe: Callable[[], object] | None = None) -> None:
        self._insert, self.spool, self._interval = insert, spool, interval
        self._probe = probe  # a cheap check that the database answers again
        self._lock = threading.Lock()
        self._pending: list[Row] = []
        self._recent: OrderedDict[str, Row] = OrderedDict()  # route id -> row
        self._sessions = RouteWindow()  # the same Routes by session
        self._down_since = 0.0
        self._retry_at = 0.0
        self._backoff = FIRST_RETRY_SECONDS
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        if spool.rows:
            self._start()  # a stopped process's rows: replayed in the background

    @property
    def down(self) -> bool:
        """Whether the database is marked unreachable."""
        with self._lock:
            return self._down_since > 0

    def check_up(self) -> None:
        """Unreachable when the database is marked down (a call then answers without it)."""
        with self._lock:
            retry = self._retry_at - time.monotonic() if self._down_since else None
        if retry is not None:
            raise Unreachable(f"the database is unreachable; trying again in "
                              f"{max(retry, 0.0):.0f} s, rows kept in {self.spool.folder}")

    def append(self, row: Row, *, durable: bool) -> None:
        """Store ``row`` (see the module doc); OSError only when the spool fails too."""
        if row.kind == ROUTE and row.route_id:
            with self._lock:
                self._recent[row.route_id] = row
                while len(self._recent) > RECENT_ROUTES:
                    self._recent.popitem(last=False)
            self._sessions.add(ShownRoute.from_row(row))
        if not durable:
            with self._lock:
                self._pending.append(row)
                started = self._thread is not None
            if not started:
                self._start()
            self._wake.set()
            return
        if not self.down:
            try:
                self._insert([row])
                return
            except OSError as exc:
                self.mark_down(exc)
        self.spool.append([row], durable=True)

    def local_route(self, route_id: str) -> Row | None:
        """The row of a Route this process answered recently (in the database or not)."""
        with self._lock:
            return self._recent.get(route_id)

    def local_session(self, session: str) -> list[ShownRoute]:
        """This process's last Routes of ``session`` (``router.learning.routes.WINDOW``)."""
        return self._sessions.last(session)

    def mark_down(self, exc: OSError) -> None:
        """Mark the database unreachable after ``exc``: calls skip it until it answers."""
        with self._lock:
            first = not self._down_since
            if first:
                self._down_since = time.monotonic()
                self._backoff = FIRST_RETRY_SECONDS
            self._retry_at = time.monotonic() + self._backoff
        if first:
            log.warning("feedback store unreachable (%s): rows go to the spool %s until it "
                        "answers", exc, self.spool.folder)
        self._start()
        self._wake.set()

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._loop, args=(self._stop,), daemon=True,
                                            name="feedback-writer")
            self._thread.start()

    def _loop(self, stop: threading.Event) -> None:
        while not stop.wait(self._interval):
            with self._lock:
                idle = not self._pending and not self._down_since and not self.spool.rows
                if idle:
                    self._wake.clear()
            if idle:
                self._wake.wait()
                continue
            self._step()

    def _step(self) -> None:
        """Send the pending rows, or spool them; try the database again when it is due."""
        with self._lock:
            rows, self._pending = self._pending, []
            due = self._down_since and time.monotonic() >= self._retry_at
        if due:
            self._recover()
        try:
            if not self.down:
                if rows:
                    self._insert(rows)
                    rows = []
                if self.spool.rows:
                    self.spool.replay(self._insert)
        except OSError as exc:
            self.mark_down(exc)
        if rows:
            try:
                self.spool.append(rows, durable=False)
            except OSError as exc:
                log.error("cannot spool %d feedback rows: %s", len(rows), exc)

    def _recover(self) -> None:
        """Try the database; mark it up when it answers (the caller then replays the spool),
        else try again later."""
        try:
            if self._probe is not None:
                self._probe()
        except OSError:
            with self._lock:
                self._backoff = min(self._backoff * 2, MAX_RETRY_SECONDS)
                self._retry_at = time.monotonic() + self._backoff
            return
        with self._lock:
            down_for = time.monotonic() - self._down_since
            self._down_since = 0.0
        log.warning("feedback store answers again after %.0f s: replaying %d spooled rows",
                    down_for, self.spool.rows)

    def flush(self) -> None:
        """Send (or spool) the pending rows now."""
        self._step()

    def close(self) -> None:
        """Stop the thread, send or spool what is pending, close the spool's segment."""
        with self._lock:
            thread, stop = self._thread, self._stop
            self._thread = None
        if thread is not None:
            stop.set()
            self._wake.set()
            if thread is not threading.current_thread():
                thread.join()
        self._step()
        self.spool.close()
