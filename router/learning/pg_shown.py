"""What each conversation has been shown, in the PostgreSQL feedback store: every replica reads
and writes one memory, so a turn answered by another replica reveals nothing the session was
already shown (``router.learning.shown``).

``session_turns`` holds each session's turn count, when its memory starts (``since``: its first
turn, or its last ``context_reset``) and its last turn; ``session_shown`` one row per skill
shown, with the turn and the time it was first shown. A turn's start is one statement on the
turn's path, which also writes what this process showed on the session's previous turn and
had not written yet, and claims the session when its owner is not known yet
(``router.learning.pg_shown_sql``); what a turn shows is written after it has answered
(``router.learning.shown_writes``). Times are the database's, so the replicas' clocks never
disagree. While the database cannot be reached, this process's own memory answers (a repeat
reveal at worst, never a failed turn).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from router.learning.pg_shown_sql import ADD, PRUNE, RECALL, START, START_CLAIMING
from router.learning.shown import SESSION_SECONDS, LocalShown, Seen, ShownMemory, Started
from router.learning.shown_writes import ShownWrites

log = logging.getLogger(__name__)

Execute = Callable[[str, Mapping[str, Any]], list[tuple[Any, ...]]]
PRUNE_EVERY = 1024  # turns between two removals of expired sessions (by this process)


def _seen(turn: int, memory: str, limit: int, earlier: Sequence[str],
          revealed: Sequence[str]) -> Seen:
    """The memory read back, with the names the statement wrote itself (not in its own
    snapshot): ``earlier`` on the previous turn (unless the session starts again), then
    ``revealed`` on this one; the newest ``limit`` kept."""
    shown = {str(name): int(first) for name, first in json.loads(memory)}
    if turn > 1:
        for name in earlier:
            shown.setdefault(name, turn - 1)
    for name in revealed:
        shown.setdefault(name, turn)
    return Seen(turn, dict(list(shown.items())[-limit:]))


class PgShown(ShownMemory):
    """The memory in the database ``execute`` reaches (one statement, its rows)."""

    def __init__(self, execute: Execute, limit: int,
                 ttl_seconds: float = SESSION_SECONDS) -> None:
        super().__init__(limit, ttl_seconds)
        self._execute = execute
        self._local = LocalShown(limit, ttl_seconds)  # while the database is away
        self._turns = 0
        self._writes = ShownWrites(self._write)

    def _write(self, names: dict[str, list[str]], chores: list[str]) -> None:
        params = self._params("")
        if names:
            pairs = [(s, n) for s, held in names.items() for n in held]
            self._execute(ADD, {**params, "sessions": [s for s, _ in pairs],
                                "names": [n for _, n in pairs]})
        for statement in chores:
            self._execute(statement, params)

    def flush(self) -> None:
        """Write what this process has waiting now (or give it up)."""
        self._writes.flush()

    def _params(self, session: str, **more: object) -> dict[str, object]:
        return {"s": session, "ttl": self.ttl, "limit": self.limit, **more}

    def _start(self, sql: str, session: str, reset: bool, revealed: Sequence[str],
               **more: object) -> tuple[list[tuple[Any, ...]], list[str], list[str]]:
        """Run a turn's start; its rows, the earlier names it wrote, the revealed ones.
        OSError (the earlier names handed back) when the database fails."""
        earlier = self._writes.take(session)
        kept = [] if reset else earlier  # a reset forgets them
        names = [n for n in dict.fromkeys(revealed) if n not in kept]
        try:  # the earlier names first: the memory is in the order things were shown
            rows = self._execute(sql, self._params(
                session, reset=reset, names=[*kept, *names],
                back=[1] * len(kept) + [0] * len(names), **more))
        except BaseException:  # the names waiting are the writer's again, whatever failed
            self._writes.give_back(session, earlier)
            raise
        self._turns += 1
        if self._turns % PRUNE_EVERY == 0:
            for statement in PRUNE:
                self._writes.chore(statement)
        return rows, kept, names

    def begin(self, session: str, reset: bool = False,
              revealed: Sequence[str] = ()) -> Seen:
        if not session:
            return Seen()
        local = self._local.begin(session, reset, revealed)
        try:
            rows, earlier, names = self._start(START, session, reset, revealed)
        except OSError as exc:
            log.debug("shown-skill memory of %s from this process: %s", session, exc)
            return local
        return _seen(int(rows[0][0]), rows[0][1], self.limit, earlier, names)

    def begin_claimed(self, session: str, principal: str, reset: bool = False,
                      revealed: Sequence[str] = ()) -> Started | None:
        """Claim ``session`` for ``principal`` and, when it is theirs, start its turn, in one
        statement. None when the database could not say who owns it (nothing started: claim
        it on its own); OSError when it cannot be reached."""
        rows, earlier, names = self._start(START_CLAIMING, session, reset, revealed,
                                           p=principal)
        if not rows:
            self._writes.give_back(session, earlier)
            return None
        owner, turn, memory = rows[0]
        if turn is None:  # another's session: the statement changed nothing of it
            self._writes.give_back(session, earlier)
            return Started(str(owner), None)
        self._local.begin(session, reset, revealed)
        return Started(str(owner), _seen(int(turn), memory, self.limit, earlier, names))

    def add(self, session: str, names: Sequence[str]) -> None:
        if not session or not names:
            return
        self._local.add(session, names)
        self._writes.add(session, names)

    def recall(self, session: str) -> Seen:
        if not session:
            return Seen()
        self.flush()
        try:
            rows = self._execute(RECALL, self._params(session))
        except OSError:
            return self._local.recall(session)
        return _seen(int(rows[0][0]), rows[0][1], self.limit, (), ()) if rows else Seen()
