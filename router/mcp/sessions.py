"""Per-MCP-session state kept by the door: the router session id it made up for the session and
the skills activated in it.

The key is the MCP session (``Mcp-Session-Id`` on HTTP, the process on stdio). The door never
forwards that key: it generates its own ``session_id`` and passes it, with the session's active
skills, on every call, so a proxied service needs no affinity between replicas. Memory is bounded
like ``router.sessions.SessionStore`` (least recently used first, idle expiry); forgetting only
means a skill's instructions may be sent a second time.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from router.sessions import SessionStore


@dataclass(frozen=True)
class SessionState:
    """What the door passes with a call. An empty ``session_id`` means "no memory"."""

    session_id: str = ""
    active_skills: tuple[str, ...] = ()


NO_SESSION = SessionState()


class DoorSessions:
    """Thread-safe map MCP session key -> generated router session id + active skills."""

    def __init__(self, max_sessions: int = 10_000, ttl_seconds: float = 3600,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._ids: OrderedDict[str, str] = OrderedDict()
        self._max = max_sessions
        self._active = SessionStore(max_sessions, ttl_seconds, clock=clock)
        self._lock = threading.Lock()

    def state(self, key: str) -> SessionState:
        """The state to pass for MCP session ``key`` (``NO_SESSION`` for an empty key)."""
        if not key:
            return NO_SESSION
        with self._lock:
            session_id = self._ids.get(key)
            if session_id is None:
                session_id = self._ids[key] = f"mcp-{uuid.uuid4().hex}"
                while len(self._ids) > self._max:
                    self._ids.popitem(last=False)
            else:
                self._ids.move_to_end(key)
        return SessionState(session_id, tuple(sorted(self._active.active(session_id))))

    def mark_active(self, state: SessionState, name: str) -> None:
        """Remember that ``name`` was activated in the session ``state`` belongs to."""
        self._active.mark_active(state.session_id, name)
