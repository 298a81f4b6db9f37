"""The console's server-side state about its callers: signed-in sessions and failed logins.

- ``SessionTable``: a login makes a random session id (``secrets.token_hex``, 256 bits) that
  lives ``ttl`` seconds and is removed at logout; the cookie holds only that id, so a cookie
  is worth nothing once its session has ended, and nothing on the client derives from the
  token. Each session keeps whose it is and the sha256 of the token it signed in with, so the
  console can end it once that token is no longer accepted (``router.console.auth``). At most
  ``max_sessions`` live at once (the oldest goes first).
- ``LoginThrottle``: a client address with ``limit`` failed logins in the last ``window``
  seconds is refused (429) until the oldest of them leaves the window.
Pure and in memory (a restart signs everybody out); each is safe to share between threads.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

Clock = Callable[[], float]
MAX_SESSIONS = 10_000
MAX_CLIENTS = 10_000  # client addresses whose failures are remembered


class SessionTable:
    """Session id -> expiry (on ``clock``), whose session it is and its token's sha256."""

    def __init__(self, ttl: float, max_sessions: int = MAX_SESSIONS,
                 clock: Clock = time.monotonic) -> None:
        self.ttl, self.max_sessions, self.clock = ttl, max_sessions, clock
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._owners: dict[str, tuple[str, bytes]] = {}
        self._lock = threading.Lock()

    def open(self, owner: str = "", digest: bytes = b"", ttl: float | None = None) -> str:
        """A new session's id, for ``owner`` (a principal's name) signed in with the token
        whose sha256 is ``digest``, living ``ttl`` seconds (default and at most the table's)."""
        session = secrets.token_hex(32)
        with self._lock:
            self._expiry[session] = self.clock() + min(self.ttl, ttl if ttl is not None
                                                       else self.ttl)
            self._owners[session] = (owner, digest)
            while len(self._expiry) > self.max_sessions:
                self._owners.pop(self._expiry.popitem(last=False)[0], None)
        return session

    def owner(self, session: str) -> str | None:
        """Whose live session ``session`` is, None when it is not live."""
        held = self.holder(session)
        return held[0] if held is not None else None

    def holder(self, session: str) -> tuple[str, bytes] | None:
        """Whose live session ``session`` is and the sha256 of the token it signed in with;
        None when it is not live."""
        return self._owners.get(session) if self.alive(session) else None

    def alive(self, session: str) -> bool:
        """Whether ``session`` was opened here and has neither expired nor been closed."""
        with self._lock:
            expiry = self._expiry.get(session)
            if expiry is None:
                return False
            if self.clock() >= expiry:
                del self._expiry[session]
                self._owners.pop(session, None)
                return False
            return True

    def close(self, session: str) -> None:
        with self._lock:
            self._expiry.pop(session, None)
            self._owners.pop(session, None)


class LoginThrottle:
    """Failed logins per client address in a sliding window."""

    def __init__(self, limit: int, window: float = 60.0, clock: Clock = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures.get(client)
        if times is None:
            times = self._failures[client] = deque()
            while len(self._failures) > MAX_CLIENTS:
                self._failures.popitem(last=False)
        while times and now - times[0] >= self.window:
            times.popleft()
        return times

    def blocked(self, client: str) -> bool:
        """Whether ``client`` has used up its failures for now."""
        with self._lock:
            return len(self._recent(client, self.clock())) >= self.limit

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            self._recent(client, now).append(now)
            self._failures.move_to_end(client)
