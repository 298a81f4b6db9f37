"""Which skills each conversation has already activated (in memory, bounded, expiring).

A gateway passes the same ``session_id`` on every turn of one conversation; the router then
injects a skill's instructions once per conversation instead of on every activation. Memory is
bounded two ways: at most ``max_sessions`` conversations (the least recently used is forgotten
first) and ``ttl_seconds`` of inactivity per conversation (any call touching a session renews
it). A conversation remembers at most ``max_skills_per_session`` skills; beyond that the oldest
activation is forgotten, so that skill would be injected again (a repeat, never a loss). An
empty ``session_id`` means "no memory": every activation counts as new.

Forgetting is always safe: the worst outcome is a second copy of a skill's instructions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class _Session:
    last_seen: float
    skills: dict[str, None] = field(default_factory=dict)  # insertion-ordered set


class SessionStore:
    """Thread-safe map of session id -> activated skill names, LRU-bounded and expiring."""

    def __init__(self, max_sessions: int = 10_000, ttl_seconds: float = 3600,
                 max_skills_per_session: int = 256,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_sessions < 1 or ttl_seconds <= 0 or max_skills_per_session < 1:
            raise ValueError("max_sessions, ttl_seconds and max_skills_per_session must be "
                             "positive")
        self._max_sessions = max_sessions
        self._ttl = ttl_seconds
        self._max_skills = max_skills_per_session
        self._clock = clock
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._sessions)

    def _expire(self, now: float) -> None:
        """Drop sessions idle longer than the TTL (they sit at the front: LRU order)."""
        while self._sessions:
            session_id, session = next(iter(self._sessions.items()))
            if now - session.last_seen < self._ttl:
                return
            del self._sessions[session_id]
            log.debug("session %s expired", session_id)

    def _touch(self, session_id: str, create: bool) -> _Session | None:
        now = self._clock()
        self._expire(now)
        session = self._sessions.get(session_id)
        if session is None:
            if not create:
                return None
            session = self._sessions[session_id] = _Session(now)
            while len(self._sessions) > self._max_sessions:
                evicted, _ = self._sessions.popitem(last=False)
                log.debug("session %s evicted (limit %d)", evicted, self._max_sessions)
        else:
            session.last_seen = now
            self._sessions.move_to_end(session_id)
        return session

    def mark_active(self, session_id: str, name: str) -> bool:
        """Record ``name`` as activated; True only for the first activation in the session."""
        if not session_id:
            return True
        with self._lock:
            session = self._touch(session_id, create=True)
            assert session is not None
            if name in session.skills:
                return False
            session.skills[name] = None
            while len(session.skills) > self._max_skills:
                session.skills.pop(next(iter(session.skills)))
            return True

    def is_active(self, session_id: str, name: str) -> bool:
        """Has ``name`` been activated in this session (and not forgotten since)?"""
        if not session_id:
            return False
        with self._lock:
            session = self._touch(session_id, create=False)
            return session is not None and name in session.skills

    def active(self, session_id: str) -> frozenset[str]:
        """Every skill remembered as activated in this session."""
        if not session_id:
            return frozenset()
        with self._lock:
            session = self._touch(session_id, create=False)
            return frozenset(session.skills) if session is not None else frozenset()

    def forget(self, session_id: str) -> None:
        """Drop a session's memory (e.g. when the conversation was reset)."""
        with self._lock:
            self._sessions.pop(session_id, None)
