"""What a Route showed (``ShownRoute``), and where a recorder finds the Routes an activation
may refer to.

``RouteWindow``: the last ``WINDOW`` Routes of each session answered by this process (in memory,
LRU-bounded). The recent Routes of every replica are the feedback store's
(``FeedbackStore.find_route``), so a pod that did not answer a Route can still complete the
record of an activation that names its ``route_id``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass

from router.learning.rows import Row

WINDOW = 3  # an activation counts when the skill was shown in one of the session's last 3 Routes
MAX_SESSIONS = 10_000


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
