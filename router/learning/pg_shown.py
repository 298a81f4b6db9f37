"""What each conversation has been shown, in the PostgreSQL feedback store: every replica reads
and writes one memory, so a turn answered by another replica reveals nothing the session was
already shown (``router.learning.shown``).

``session_turns`` holds each session's turn count, when its memory starts (``since``: its first
turn, or its last ``context_reset``) and its last turn; ``session_shown`` one row per skill
shown, with the turn and the time it was first shown. A turn's start is one statement on the
turn's path; what the turn showed is written off it, by one writer thread, in order, within
moments (a later turn of this process, or a recall, waits for what it queued). Times are the
database's, so the replicas' clocks never disagree. While the database cannot be reached, this
process's own memory answers (a repeat reveal at worst, never a failed turn).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from router.learning.shown import SESSION_SECONDS, LocalShown, Seen, ShownMemory

log = logging.getLogger(__name__)

Execute = Callable[[str, Mapping[str, Any]], list[tuple[Any, ...]]]
PRUNE_EVERY = 1024  # turns between two removals of expired sessions (by this process)

_NOW = "extract(epoch from clock_timestamp())"
_MEMORY = """
    coalesce((SELECT json_agg(json_build_array(x.name, x.turn) ORDER BY x.ts, x.turn, x.name)
              FROM (SELECT name, turn, ts FROM session_shown
                    WHERE session = %(s)s AND ts >= t.since
                    ORDER BY ts DESC, turn DESC, name LIMIT %(limit)s) x), '[]')::text"""
BEGIN = f"""
    WITH t AS (
        INSERT INTO session_turns AS o (session, turn, since, ts)
        VALUES (%(s)s, 1, {_NOW}, {_NOW})
        ON CONFLICT (session) DO UPDATE SET
            turn = CASE WHEN o.ts < {_NOW} - %(ttl)s THEN 1 ELSE o.turn + 1 END,
            since = CASE WHEN o.ts < {_NOW} - %(ttl)s OR %(reset)s THEN {_NOW} ELSE o.since END,
            ts = {_NOW}
        RETURNING turn, since),
    r AS (
        INSERT INTO session_shown AS v (session, name, turn, ts)
        SELECT %(s)s, n, t.turn, {_NOW} FROM t, unnest(%(names)s::text[]) n
        ON CONFLICT (session, name) DO UPDATE SET turn = EXCLUDED.turn, ts = EXCLUDED.ts
        WHERE v.ts < (SELECT since FROM t))
    SELECT t.turn, {_MEMORY} FROM t"""
ADD = f"""
    INSERT INTO session_shown AS v (session, name, turn, ts)
    SELECT t.session, n, t.turn, {_NOW} FROM session_turns t, unnest(%(names)s::text[]) n
    WHERE t.session = %(s)s AND t.ts >= {_NOW} - %(ttl)s
    ON CONFLICT (session, name) DO UPDATE SET turn = EXCLUDED.turn, ts = EXCLUDED.ts
    WHERE v.ts < (SELECT since FROM session_turns WHERE session = EXCLUDED.session)"""
RECALL = f"""
    SELECT t.turn, {_MEMORY} FROM session_turns t
    WHERE t.session = %(s)s AND t.ts >= {_NOW} - %(ttl)s"""
PRUNE = (f"DELETE FROM session_shown s USING session_turns t WHERE s.session = t.session "
         f"AND (t.ts < {_NOW} - %(ttl)s OR s.ts < t.since)",
         f"DELETE FROM session_turns WHERE ts < {_NOW} - %(ttl)s")


def _seen(row: tuple[Any, ...], limit: int) -> Seen:
    pairs = json.loads(row[1])
    return Seen(int(row[0]), {str(name): int(turn) for name, turn in pairs[-limit:]})


class PgShown(ShownMemory):
    """The memory in the database ``execute`` reaches (one statement, its rows)."""

    def __init__(self, execute: Execute, limit: int,
                 ttl_seconds: float = SESSION_SECONDS) -> None:
        super().__init__(limit, ttl_seconds)
        self._execute = execute
        self._local = LocalShown(limit, ttl_seconds)  # while the database is away
        self._turns = 0
        self._writes: queue.Queue[tuple[str, dict[str, object]]] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()

    def _write(self, sql: str, params: dict[str, object]) -> None:
        """Queue one statement for the writer thread (started on first use)."""
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._drain, name="shown-skills",
                                                daemon=True)
                self._writer.start()
        self._writes.put((sql, params))

    def _drain(self) -> None:
        while True:
            sql, params = self._writes.get()
            try:
                self._execute(sql, params)
            except OSError as exc:
                log.debug("shown skills kept in this process: %s", exc)
            finally:
                self._writes.task_done()

    def flush(self) -> None:
        """Wait until what this process queued is written (or given up)."""
        self._writes.join()

    def _params(self, session: str, **more: object) -> dict[str, object]:
        return {"s": session, "ttl": self.ttl, "limit": self.limit, **more}

    def begin(self, session: str, reset: bool = False,
              revealed: Sequence[str] = ()) -> Seen:
        if not session:
            return Seen()
        local = self._local.begin(session, reset, revealed)
        self.flush()  # this process's earlier turns first (written moments after each)
        try:
            rows = self._execute(BEGIN, self._params(session, reset=reset,
                                                     names=list(dict.fromkeys(revealed))))
        except OSError as exc:
            log.debug("shown-skill memory of %s from this process: %s", session, exc)
            return local
        self._turns += 1
        if self._turns % PRUNE_EVERY == 0:
            for statement in PRUNE:
                self._write(statement, self._params(session))
        seen = _seen(rows[0], self.limit)
        for name in revealed:  # the statement's own rows are not in its snapshot
            seen.shown.setdefault(name, seen.turn)
        return seen

    def add(self, session: str, names: Sequence[str]) -> None:
        if not session or not names:
            return
        self._local.add(session, names)
        self._write(ADD, self._params(session, names=list(dict.fromkeys(names))))

    def recall(self, session: str) -> Seen:
        if not session:
            return Seen()
        self.flush()
        try:
            rows = self._execute(RECALL, self._params(session))
        except OSError:
            return self._local.recall(session)
        return _seen(rows[0], self.limit) if rows else Seen()
