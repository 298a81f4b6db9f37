"""Per-MCP-session state kept by the door: the router session id it made up for the session,
the skills activated in it, and the ``route_id`` of its latest search.

The key is the MCP session (``Mcp-Session-Id`` on HTTP, the process on stdio). The door never
forwards that key: it generates its own ``session_id`` and passes it, with the session's active
skills and latest ``route_id``, on every call, so a proxied service needs no affinity between
replicas and an activation is tied to the search that showed the skill (learning from traffic).
Memory is bounded like ``router.engine.activated.SessionStore`` (least recently used first,
idle expiry); forgetting only means a skill's instructions may be sent a second time.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from router.door.context import NO_SESSION, CallSession
from router.engine.activated import SessionStore


@dataclass
class _Door:
    session_id: str
    route_id: str = ""


class DoorSessions:
    """Thread-safe map MCP session key -> generated router session id, active skills and the
    latest route id."""

    def __init__(self, max_sessions: int = 10_000, ttl_seconds: float = 3600,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._doors: OrderedDict[str, _Door] = OrderedDict()
        self._max = max_sessions
        self._active = SessionStore(max_sessions, ttl_seconds, clock=clock)
        self._lock = threading.Lock()

    def _door(self, key: str) -> _Door:
        door = self._doors.get(key)
        if door is None:
            door = self._doors[key] = _Door(f"mcp-{uuid.uuid4().hex}")
            while len(self._doors) > self._max:
                self._doors.popitem(last=False)
        else:
            self._doors.move_to_end(key)
        return door

    def state(self, key: str) -> CallSession:
        """The state to pass for MCP session ``key`` (``NO_SESSION`` for an empty key)."""
        if not key:
            return NO_SESSION
        with self._lock:
            door = self._door(key)
            session_id, route_id = door.session_id, door.route_id
        return CallSession(session_id, tuple(sorted(self._active.active(session_id))),
                            route_id)

    def routed(self, key: str, route_id: str) -> None:
        """Remember the ``route_id`` of the session's latest search."""
        if key and route_id:
            with self._lock:
                self._door(key).route_id = route_id

    def mark_active(self, state: CallSession, name: str) -> None:
        """Remember that ``name`` was activated in the session ``state`` belongs to."""
        self._active.mark_active(state.session_id, name)
