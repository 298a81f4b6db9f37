"""Where a recorder finds the Routes an activation may refer to.

``RouteWindow``: the last ``WINDOW`` Routes of each session answered by this process (in memory,
LRU-bounded). ``RouteDirectory``: the recent Routes of every replica, read incrementally from the
store's files (only the bytes appended since the last look), so a pod that did not answer a Route
can still complete the record of an activation that names its ``route_id``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from router.learning.rows import ROUTE, Row
from router.learning.stats import ROUTE_KEEP_SECONDS
from router.learning.store import data_files, parse_lines

WINDOW = 3  # an activation counts when the skill was shown in one of the session's last 3 Routes
MAX_SESSIONS = 10_000
MAX_ROUTES = 200_000


@dataclass(frozen=True)
class ShownRoute:
    """What a Route showed, and to whom."""

    route_id: str
    session: str
    query: str  # the retrieval text: the message without its /names
    shown: tuple[str, ...]  # retrieved for this message (always-on and active skills are
    # in every catalog of a session: activating them says nothing about the message)
    ts: float
    principal: str = ""  # the caller that routed it: it owns the route_id
    forced: bool = False  # the user named a skill in it: the model chose nothing

    @classmethod
    def from_row(cls, row: Row) -> ShownRoute:
        return cls(row.route_id, row.session, row.query, row.retrieved, row.ts, row.principal,
                   row.forced)


def pick(routes: list[ShownRoute], skill: str, preferred: str = "") -> ShownRoute | None:
    """Among ``routes`` (a session's window), the one named ``preferred`` if it showed
    ``skill``, else the most recent that did; a forced Route never counts."""
    showing = [r for r in routes if skill in r.shown and not r.forced]
    for route in showing:
        if route.route_id == preferred:
            return route
    return max(showing, key=lambda r: r.ts) if showing else None


class RouteWindow:
    """The last ``WINDOW`` Routes per session of this process."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._max = max_sessions
        self._sessions: OrderedDict[str, deque[ShownRoute]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, route: ShownRoute) -> None:
        if not route.session:
            return
        with self._lock:
            window = self._sessions.setdefault(route.session, deque(maxlen=WINDOW))
            window.append(route)
            self._sessions.move_to_end(route.session)
            while len(self._sessions) > self._max:
                self._sessions.popitem(last=False)

    def last(self, session: str) -> list[ShownRoute]:
        with self._lock:
            return list(self._sessions.get(session, ()))


class RouteDirectory:
    """Recent Routes of every process writing to ``folder``, by id and by session."""

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
