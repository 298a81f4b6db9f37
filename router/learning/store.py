"""The feedback store: where the rows of served traffic are kept (``router.learning.rows``),
behind one base that every backend implements.

The recorder appends a row for each Route, Activate and Feedback, and asks the store for the
Routes an activation names and for who owns a session; the build reads the rows and compacts
them; operators read, purge and compact them (``router.learning.review``). The store also keeps
the admins' approvals of quarantined skills (``router.learning.approvals``), which the build
reads. Backends: the folder
under the index (``router.learning.file_store``); ``router.learning.backends.open_store`` opens
the one the configuration names. Every backend runs the one contract suite
(``tests/support/feedback_contract.py``).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from router.admission.policy import Approval
from router.config import FeedbackConfig
from router.errors import Unavailable
from router.learning.routes import ShownRoute
from router.learning.rows import Row, new_id
from router.learning.shown import LocalShown, ShownMemory, Started

log = logging.getLogger(__name__)


class StoreUnavailable(Unavailable, OSError):
    """The shared storage cannot be reached: an OSError to the recorder (which then keeps the
    row elsewhere or logs it), UNAVAILABLE to an operator's call."""


@dataclass(frozen=True)
class Backlog:
    """What a store holds back from its shared storage (the metrics' ``feedback_spooled_rows``,
    ``feedback_dropped_rows`` and ``feedback_store_unreachable``)."""

    spooled: int = 0  # rows in the local spool, waiting for the database
    dropped: int = 0  # rows dropped since start, the spool being full
    unreachable: bool = False
    set_aside: int = 0  # rows the database refused for their content (a dead-letter file)


class FeedbackStore(ABC):
    """Rows of traffic shared by every replica, kept and bounded under ``policy``
    (retention, the per-skill and per-principal caps: ``router.learning.stats.compact_rows``).
    Thread-safe."""

    remote = False  # whether reaching it is a round trip (a database), not this process

    def __init__(self, policy: FeedbackConfig) -> None:
        self.policy = policy

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the rows are kept, for messages (never a credential)."""

    def new_route_id(self, principal: str) -> str:
        """A new Route's id (``principal``'s Route)."""
        return new_id()

    def route_made_for(self, route_id: str, principal: str) -> bool | None:
        """Whether ``route_id`` was made for ``principal``, as the id itself tells
        (``router.learning.route_ids``); None when it does not tell (then the stored Route
        does)."""
        return None

    def backlog(self) -> Backlog:
        """Rows waiting for the shared storage (none for a store that writes it directly)."""
        return Backlog()

    @abstractmethod
    def append(self, row: Row, *, durable: bool = True) -> None:
        """Store ``row``: readable by this process once this returns; with ``durable`` also
        by every replica and on stable storage, kept if this process is then killed (else
        within a fraction of a second: ``flush``). OSError when it cannot be stored."""

    def flush(self) -> None:
        """Make every row appended so far readable by every replica now (a store whose rows
        are shared as they are appended has nothing to do)."""
        return None

    @abstractmethod
    def read_rows(self) -> list[Row]:
        """Every stored row, each once."""

    @abstractmethod
    def compact(self, now: float | None = None) -> bool:
        """Fold and bound the stored rows under ``policy`` as of ``now`` (default: the
        clock); False when another process is at it (it is then left to later)."""

    def compact_in_background(self) -> None:
        """``compact`` in a daemon thread; a failure is logged."""

        def run() -> None:
            try:
                self.compact()
            except OSError as exc:
                log.warning("feedback compaction of %s failed: %s", self.location, exc)

        threading.Thread(target=run, name="feedback-compaction", daemon=True).start()

    @abstractmethod
    def purge(self, skill: str, before: float, now: float) -> bool:
        """Hide the rows of ``skill`` (every skill's when empty) older than ``before`` from
        every reader at once, and compact as of ``now``; True when that compaction ran (the
        rows are then gone from storage, else at a later one)."""

    @abstractmethod
    def find_route(self, route_id: str) -> ShownRoute | None:
        """The Route ``route_id`` made by any replica while its row is kept
        (``router.learning.stats.ROUTE_KEEP_SECONDS``); None when unknown."""

    @abstractmethod
    def session_routes(self, session: str) -> list[ShownRoute]:
        """The session's last ``router.learning.routes.WINDOW`` Routes known, oldest first:
        this process's, and the other replicas' as of the last ``find_route``."""

    @abstractmethod
    def claim_session(self, session_id: str, principal: str) -> str:
        """The owner of ``session_id`` once ``principal`` claims it: the principal that owns
        it already (by an earlier claim, or by the session's recent Routes known as
        ``session_routes`` knows them), else ``principal``, who owns it from now on. An empty
        id is nobody's: ``principal`` (the rules: ``router.access.ownership``)."""

    def shown_memory(self, limit: int, ttl_seconds: float) -> ShownMemory:
        """What each session was shown (``router.learning.shown``), kept where this store
        shares it with the other replicas: this process's memory for a store that shares
        nothing of it."""
        return LocalShown(limit, ttl_seconds)

    def open_turn(self, memory: ShownMemory, session_id: str, principal: str, reset: bool,
                  revealed: Sequence[str]) -> Started | None:
        """Claim ``session_id`` for ``principal`` and start its turn in ``memory`` (this
        store's ``shown_memory``) at once, where the store can do both in one exchange; None
        where it cannot (then ``claim_session`` and ``memory.begin`` do it in turn)."""
        return None

    @abstractmethod
    def read_approvals(self) -> list[Approval]:
        """Every approval of a quarantined skill (``router.admission.policy``), by key."""

    @abstractmethod
    def put_approval(self, approval: Approval) -> None:
        """Keep ``approval``, replacing its skill's earlier one (one approval a skill: a new
        digest needs a new approval, and the old one then admits nothing). OSError when it
        cannot be stored."""

    @abstractmethod
    def drop_approval(self, key: str) -> bool:
        """Drop the approval of skill ``key``; False when it had none."""

    @abstractmethod
    def close(self) -> None:
        """Put what this process appended on stable storage and release it (a later append
        opens it again)."""
