"""The feedback store in the index folder, ``<index_dir>/feedback/``, shared by every replica
that mounts it (``router.learning.folder`` describes the files, their locks and compaction).

Each process appends to its own segment (``router.learning.segments``: a Route's row is synced
within a fifth of a second, an Activate's or a Feedback's before the call answers) and compacts
the store when a segment fills. The Routes of other replicas are read from their segments as
they are needed (``RouteDirectory``); who owns a session is kept in this process's memory,
falling back to the session's recent Routes in the store (``router.access.ownership.Owners``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path

from router.access.ownership import Owners
from router.admission.approvals import read_file, replaced, write_file
from router.admission.policy import Approval
from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.learning.folder import (
    compact_folder,
    data_files,
    feedback_dir,
    parse_lines,
    private_folder,
    read_folder,
)
from router.learning.routes import WINDOW, ShownRoute
from router.learning.rows import PURGE, ROUTE, Row
from router.learning.segments import SegmentWriter
from router.learning.stats import ROUTE_KEEP_SECONDS
from router.learning.store import FeedbackStore

MAX_ROUTES = 200_000  # recent Routes of every replica remembered
APPROVALS = "approvals.json"  # the approvals of quarantined skills (router.admission.approvals)


class FileStore(FeedbackStore):
    """The rows under ``<index_dir>/feedback/``; nothing is created there before the first
    append."""

    def __init__(self, index_dir: str | Path, policy: FeedbackConfig | None = None) -> None:
        super().__init__(policy if policy is not None else FeedbackConfig())
        self.folder = feedback_dir(index_dir)
        self._writer = SegmentWriter(self.folder, on_rotate=self.compact_in_background)
        self._directory = RouteDirectory(self.folder)
        self._owners = Owners(self._directory.owner)  # who created each session id

    @classmethod
    def open(cls, url: str, index_dir: Path | None, policy: FeedbackConfig) -> FileStore:
        """The store of ``index_dir`` (``router.learning.backends``): ``url`` is "" or
        ``file:``, naming no other place."""
        if url.partition(":")[2]:
            raise InvalidRequest(f"the file feedback store is the index folder's; give no "
                                 f"path in its URL (got {url!r})")
        if index_dir is None:
            raise InvalidRequest("the file feedback store lives in an index folder: give one")
        return cls(index_dir, policy)

    @property
    def location(self) -> str:
        return str(self.folder)

    def append(self, row: Row, *, durable: bool = True) -> None:
        if self._writer.append([row], durable=durable):
            self.compact_in_background()  # the segment filled: a compaction can take it
        if row.kind == ROUTE:
            self._directory.add(ShownRoute.from_row(row))

    def read_rows(self) -> list[Row]:
        return read_folder(self.folder)

    def compact(self, now: float | None = None) -> bool:
        return compact_folder(self.folder, self.policy, now)

    def purge(self, skill: str, before: float, now: float) -> bool:
        writer = SegmentWriter(self.folder)  # its own segment, closed: compacted at once
        try:
            writer.append([Row(kind=PURGE, ts=now, skill=skill, before=before)])
        finally:
            writer.close()
        return self.compact(now)

    def find_route(self, route_id: str) -> ShownRoute | None:
        if not route_id:
            return None
        found = self._directory.find(route_id)
        self._directory.refresh()
        return found or self._directory.find(route_id)

    def session_routes(self, session: str) -> list[ShownRoute]:
        return self._directory.last(session)

    def claim_session(self, session_id: str, principal: str) -> str:
        return self._owners.claim(session_id, principal)

    def read_approvals(self) -> list[Approval]:
        return read_file(self.folder / APPROVALS)

    def put_approval(self, approval: Approval) -> None:
        with self._approvals_locked() as path:
            write_file(path, replaced(read_file(path), approval))

    def drop_approval(self, key: str) -> bool:
        with self._approvals_locked() as path:
            found = read_file(path)
            kept = [a for a in found if a.key != key]
            if len(kept) < len(found):
                write_file(path, kept)
            return len(kept) < len(found)

    @contextlib.contextmanager
    def _approvals_locked(self) -> Iterator[Path]:
        """The approvals file, while no other process changes it."""
        private_folder(self.folder)
        fd = os.open(self.folder / ".approvals.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield self.folder / APPROVALS
        finally:
            os.close(fd)

    def close(self) -> None:
        self._writer.close()


class RouteDirectory:
    """Recent Routes of every process writing to ``folder``, by id and by session, read
    incrementally (only the bytes appended since the last look)."""

    def __init__(self, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self._folder = folder
        self._clock = clock
        self._offsets: dict[Path, int] = {}
        self._routes: OrderedDict[str, ShownRoute] = OrderedDict()
        self._by_session: dict[str, list[ShownRoute]] = {}  # newest WINDOW, oldest first
        self._lock = threading.Lock()

    def add(self, route: ShownRoute) -> None:
        with self._lock:
            self._remember(route)

    def _remember(self, route: ShownRoute) -> None:
        if route.route_id in self._routes:
            return
        self._routes[route.route_id] = route
        if route.session:
            window = self._by_session.setdefault(route.session, [])
            window.append(route)
            window.sort(key=lambda r: r.ts)
            del window[:-WINDOW]
        while len(self._routes) > MAX_ROUTES:
            self._forget(self._routes.popitem(last=False)[1])

    def _forget(self, route: ShownRoute) -> None:
        self._routes.pop(route.route_id, None)
        window = self._by_session.get(route.session)
        if window is not None and route in window:
            window.remove(route)
            if not window:
                del self._by_session[route.session]

    def refresh(self) -> None:
        """Read what was appended to the store since the last refresh."""
        with self._lock:
            files = data_files(self._folder)
            for path in set(self._offsets) - set(files):
                del self._offsets[path]
            for path in files:
                for row in self._tail(path):
                    if row.kind == ROUTE and row.route_id:
                        self._remember(ShownRoute.from_row(row))
            cutoff = self._clock() - ROUTE_KEEP_SECONDS
            while self._routes:  # roughly oldest first: stop at the first recent one
                oldest = next(iter(self._routes.values()))
                if oldest.ts >= cutoff:
                    break
                self._forget(oldest)

    def _tail(self, path: Path) -> list[Row]:
        offset = self._offsets.get(path, 0)
        with contextlib.suppress(FileNotFoundError), path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
            complete = data[:data.rfind(b"\n") + 1]
            self._offsets[path] = offset + len(complete)
            return parse_lines(complete)
        return []

    def find(self, route_id: str) -> ShownRoute | None:
        with self._lock:
            return self._routes.get(route_id)

    def owner(self, session: str) -> str | None:
        """The principal of the session's Routes known here (None: none known)."""
        with self._lock:
            window = self._by_session.get(session)
            return window[-1].principal if window else None

    def last(self, session: str) -> list[ShownRoute]:
        """The session's last ``WINDOW`` Routes known, oldest first."""
        with self._lock:
            return list(self._by_session.get(session, ()))
