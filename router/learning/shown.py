"""What each conversation has been shown: its reveals, its always-on skills and the skills it
activated (the memory behind ``RouteResponse.reveal_text``).

``ShownMemory`` is the interface; ``LocalShown`` keeps it in this process (the store in the
index folder, or no store), ``router.learning.pg_shown.PgShown`` in the PostgreSQL feedback
store, where every replica reads and writes the same memory. A session remembers at most
``limit`` skills (past it the oldest are forgotten, and may be revealed again) and is forgotten
``ttl_seconds`` after its last turn, like the rest of a session. An empty session id remembers
nothing. Turns are numbered from 1 per session; a name remembers the turn it was first shown on.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

SESSION_SECONDS = 3600.0  # a session idle this long is forgotten (as its activations are)
MAX_SESSIONS = 10_000  # sessions one process remembers (the least recently used go first)


@dataclass(frozen=True)
class Seen:
    """A session's memory at one turn: the turn's number (0 = no session) and each skill it was
    shown, oldest first, with the turn it was first shown on."""

    turn: int = 0
    shown: dict[str, int] = field(default_factory=dict)

    def pairs(self) -> tuple[tuple[str, int], ...]:
        return tuple(self.shown.items())


NOTHING = Seen()


@dataclass(frozen=True)
class Started:
    """A session claimed and its turn started: its owner, and its memory as the turn starts
    (None: the session is another principal's, and nothing of it changed)."""

    owner: str
    seen: Seen | None


class ShownMemory(ABC):
    """The per-session memory of what the model was shown. Thread-safe."""

    def __init__(self, limit: int, ttl_seconds: float = SESSION_SECONDS) -> None:
        if limit < 1 or ttl_seconds <= 0:
            raise ValueError("the shown-skill memory needs a positive limit and lifetime")
        self.limit = limit
        self.ttl = ttl_seconds

    @abstractmethod
    def begin(self, session: str, reset: bool = False,
              revealed: Sequence[str] = ()) -> Seen:
        """Start the session's next turn: forget it first when ``reset``, add ``revealed``
        (the gateway's record) on this turn; its memory as the turn starts."""

    @abstractmethod
    def add(self, session: str, names: Sequence[str]) -> None:
        """Remember ``names`` as shown on the session's current turn (a name already
        remembered keeps its turn)."""

    @abstractmethod
    def recall(self, session: str) -> Seen:
        """The session's memory, changing nothing."""

    def flush(self) -> None:
        """Write what waits to be written (a memory kept elsewhere; nothing here)."""
        return None


@dataclass
class _Session:
    last_seen: float
    turn: int = 0
    shown: dict[str, int] = field(default_factory=dict)  # insertion order: oldest first


class LocalShown(ShownMemory):
    """The memory in this process, LRU-bounded in sessions."""

    def __init__(self, limit: int, ttl_seconds: float = SESSION_SECONDS,
                 clock: Callable[[], float] = time.monotonic,
                 max_sessions: int = MAX_SESSIONS) -> None:
        super().__init__(limit, ttl_seconds)
        self._clock = clock
        self._max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, session: str, now: float) -> _Session | None:
        found = self._sessions.get(session)
        if found is not None and now - found.last_seen >= self.ttl:
            del self._sessions[session]
            return None
        return found

    def _remember(self, held: _Session, names: Sequence[str]) -> None:
        for name in names:
            if name not in held.shown:
                held.shown[name] = held.turn
        while len(held.shown) > self.limit:
            held.shown.pop(next(iter(held.shown)))

    def begin(self, session: str, reset: bool = False,
              revealed: Sequence[str] = ()) -> Seen:
        if not session:
            return NOTHING
        with self._lock:
            now = self._clock()
            held = self._get(session, now)
            if held is None:
                held = self._sessions[session] = _Session(now)
                while len(self._sessions) > self._max_sessions:
                    self._sessions.popitem(last=False)
            if reset:
                held.shown.clear()
            held.turn += 1
            held.last_seen = now
            self._sessions.move_to_end(session)
            self._remember(held, revealed)
            return Seen(held.turn, dict(held.shown))

    def add(self, session: str, names: Sequence[str]) -> None:
        if not session or not names:
            return
        with self._lock:
            held = self._get(session, self._clock())
            if held is not None:
                self._remember(held, names)

    def recall(self, session: str) -> Seen:
        if not session:
            return NOTHING
        with self._lock:
            held = self._get(session, self._clock())
            return Seen(held.turn, dict(held.shown)) if held is not None else NOTHING
