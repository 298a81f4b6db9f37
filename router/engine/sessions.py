"""Everything the router keeps per session, behind one interface: ``SessionState``.

A gateway passes the same ``session_id`` on every turn of one conversation. What the router
keeps for it, and nowhere else:

- **owner**: the principal whose call first named the session (``claim``; the rules:
  ``router.access.ownership``). Kept by the feedback store when there is one, so that every
  replica sharing it decides alike (``FeedbackStore.claim_session``: the file store from this
  process's claims and the Routes in its folder, PostgreSQL in its ``feedback_owners`` table);
  without a store, in this process's memory.
- **activated skills**: the skills an Activate (or a ``/name`` Route) already injected, so a
  skill's instructions go out once a conversation (``mark_active``, ``is_active``, ``active``;
  bounded and expiring: ``router.engine.activated.SessionStore``), in this process.
- **project-skill names**: the names sent as project skills on the session's latest turn, so an
  Activate of one says that activation stays with the gateway (``remember_project``,
  ``project_names``), in this process, for the last ``PROJECT_SESSIONS`` sessions.
- **what the session was shown**: its reveals, always-on and activated skills, each with the
  turn it was first shown on (``begin_turn``, ``record_shown``, ``shown``; bounded per session
  and expiring: ``router.learning.shown``). Kept where the owner is: the PostgreSQL store's
  tables for the fleet (``router.learning.pg_shown``), else this process's memory.

A Route's turn starts with ``open_turn``: the claim, then the turn begun when the caller owns
the session. With the PostgreSQL store that is one statement (the claim folded in only while
the owner is not known here), so a turn costs the fleet one round trip, and ``opening``
sends it as the turn starts and reads its answer when the turn reveals: the round trip runs
while the turn is encoded and ranked instead of before.

A new piece: its methods on ``SessionState`` beside the others, kept by ``KeptSessionState``
(in memory, or where the store shares it with the fleet), read and written in a stage of
``router.engine.turn``; its behaviour pinned for every implementation by
``tests/support/session_state_contract.py``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from router.access.ownership import Owners
from router.engine.activated import SessionStore
from router.learning.shown import LocalShown, Seen, Started
from router.learning.store import FeedbackStore

OPENERS = 8  # turns opened at once in the background (the PostgreSQL store's connections)
PROJECT_SESSIONS = 4096  # (principal name, session) pairs whose project skill names are kept


@dataclass(frozen=True)
class SessionLimits:
    """How much is kept per process (the activated skills: ``SessionStore``'s bounds)."""

    max_sessions: int = 10_000
    ttl_seconds: float = 3600
    max_skills_per_session: int = 256
    project_sessions: int = PROJECT_SESSIONS
    max_shown_per_session: int = 256  # routing.max_shown_per_session


class SessionState(ABC):
    """The per-session state of one Engine (thread-safe). An empty ``session_id`` is no
    session: it is owned by whoever asks and remembers nothing."""

    # owner

    @abstractmethod
    def claim(self, session_id: str, principal: str) -> str:
        """The owner of ``session_id`` once ``principal`` claims it: the principal that owns it
        already, else ``principal``, who owns it from now on."""

    # activated skills

    @abstractmethod
    def mark_active(self, session_id: str, name: str) -> bool:
        """Record ``name`` as activated; True only for its first activation in the session."""

    @abstractmethod
    def is_active(self, session_id: str, name: str) -> bool:
        """Whether ``name`` was activated in the session (and not forgotten since)."""

    @abstractmethod
    def active(self, session_id: str) -> frozenset[str]:
        """Every skill remembered as activated in the session."""

    # project-skill names

    @abstractmethod
    def remember_project(self, principal: str, session_id: str, names: Iterable[str]) -> None:
        """The names sent as project skills on ``principal``'s latest turn of the session
        (none: forget them)."""

    @abstractmethod
    def project_names(self, principal: str, session_id: str) -> frozenset[str]:
        """The names ``remember_project`` kept for the session (empty when none)."""

    # what the session was shown

    @abstractmethod
    def begin_turn(self, session_id: str, reset: bool = False,
                   revealed: Sequence[str] = ()) -> Seen:
        """Start the session's next turn (forgotten first on ``reset``; ``revealed`` added
        on it); what the session was shown as the turn starts."""

    @abstractmethod
    def record_shown(self, session_id: str, names: Sequence[str]) -> None:
        """``names`` shown on the session's current turn (a name remembered keeps its
        turn); past the bound the oldest are forgotten."""

    @abstractmethod
    def shown(self, session_id: str) -> Seen:
        """What the session was shown, changing nothing."""

    def close(self) -> None:
        """Write what is still waiting to be kept (what sessions were shown)."""
        return None

    # a Route's turn

    def open_turn(self, session_id: str, principal: str, reset: bool = False,
                  revealed: Sequence[str] = ()) -> Started:
        """``claim`` the session for ``principal`` and, when it is theirs, ``begin_turn``
        (nothing of another's session changes). A state that keeps both in one place does
        both in one exchange."""
        owner = self.claim(session_id, principal)
        if owner != principal or not session_id:
            return Started(owner, None)
        return Started(owner, self.begin_turn(session_id, reset, revealed))

    def opening(self, session_id: str, principal: str, reset: bool = False,
                revealed: Sequence[str] = ()) -> Future[Started]:
        """``open_turn``, done by the time the future is read: here at once; where the state
        is a round trip away, in the background while the turn is routed."""
        return done(self.open_turn(session_id, principal, reset, revealed))


class KeptSessionState(SessionState):
    """The owner kept by ``store`` (or in memory without one); the rest in this process."""

    def __init__(self, store: FeedbackStore | None,
                 limits: SessionLimits | None = None) -> None:
        limits = limits or SessionLimits()
        self._store = store
        self._owners = Owners()  # who created each session id, when there is no store
        self._activated = SessionStore(limits.max_sessions, limits.ttl_seconds,
                                       limits.max_skills_per_session)
        self._project_sessions = limits.project_sessions
        self._names: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # opens turns with a remote store
        bound, ttl = limits.max_shown_per_session, limits.ttl_seconds
        self._shown = (store.shown_memory(bound, ttl) if store is not None
                       else LocalShown(bound, ttl, max_sessions=limits.max_sessions))

    def claim(self, session_id: str, principal: str) -> str:
        if self._store is not None:
            return self._store.claim_session(session_id, principal)
        return self._owners.claim(session_id, principal)

    def mark_active(self, session_id: str, name: str) -> bool:
        return self._activated.mark_active(session_id, name)

    def is_active(self, session_id: str, name: str) -> bool:
        return self._activated.is_active(session_id, name)

    def active(self, session_id: str) -> frozenset[str]:
        return self._activated.active(session_id)

    def remember_project(self, principal: str, session_id: str, names: Iterable[str]) -> None:
        if not session_id:
            return
        held, key = frozenset(names), (principal, session_id)
        with self._lock:
            if held:
                self._names[key] = held
                self._names.move_to_end(key)
                while len(self._names) > self._project_sessions:
                    self._names.popitem(last=False)
            else:
                self._names.pop(key, None)

    def project_names(self, principal: str, session_id: str) -> frozenset[str]:
        with self._lock:
            return self._names.get((principal, session_id), frozenset())

    def begin_turn(self, session_id: str, reset: bool = False,
                   revealed: Sequence[str] = ()) -> Seen:
        return self._shown.begin(session_id, reset, revealed)

    def record_shown(self, session_id: str, names: Sequence[str]) -> None:
        self._shown.add(session_id, names)

    def shown(self, session_id: str) -> Seen:
        return self._shown.recall(session_id)

    def close(self) -> None:
        self._shown.flush()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def opening(self, session_id: str, principal: str, reset: bool = False,
                revealed: Sequence[str] = ()) -> Future[Started]:
        if self._store is None or not self._store.remote:
            return super().opening(session_id, principal, reset, revealed)
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(OPENERS, thread_name_prefix="session-turns")
            pool = self._pool
        return pool.submit(self.open_turn, session_id, principal, reset, tuple(revealed))

    def open_turn(self, session_id: str, principal: str, reset: bool = False,
                  revealed: Sequence[str] = ()) -> Started:
        if self._store is not None:  # PostgreSQL: the claim and the turn in one statement
            started = self._store.open_turn(self._shown, session_id, principal, reset,
                                            revealed)
            if started is not None:
                return started
        return super().open_turn(session_id, principal, reset, revealed)


def done(value: Started) -> Future[Started]:
    """A future already holding ``value``."""
    future: Future[Started] = Future()
    future.set_result(value)
    return future


def open_session_state(store: FeedbackStore | None,
                       limits: SessionLimits | None = None) -> SessionState:
    """The session state of an Engine whose feedback store is ``store`` (None: no store)."""
    return KeptSessionState(store, limits)
