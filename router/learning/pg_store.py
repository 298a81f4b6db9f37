"""The feedback store in PostgreSQL (``feedback.store_url`` = ``postgresql://user@host/db``),
shared by every replica that names the database.

Rows live in ``feedback_rows`` (a column per ``Row`` field; JSON for the name lists and the
counters); who owns a session or a route id in ``feedback_owners``, whose primary key makes the
first claimant win atomically on every replica; approvals in ``skill_approvals``
(``router.learning.pg_approvals``). An Activate's or a Feedback's row commits before
its call answers; a Route's is sent within a fifth of a second, off the answer's path; while the
database cannot be reached every row goes to the local spool and is replayed when it answers
again (``router.learning.pg_writer``). Compaction runs
under ``router.learning.stats.compact_rows`` while holding an advisory lock (one compactor at a
time). The schema is migrated on open (``router.learning.pg_migrations``).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from router.access.ownership import Owners
from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.learning import route_ids
from router.learning.dead_letter import RowRefused, SortingInsert
from router.learning.pg_approvals import PgApprovals
from router.learning.pg_migrations import migrate
from router.learning.pg_rows import (
    CLAIM,
    INSERT,
    OWNER,
    OWNER_OF,
    SELECT,
    owners,
    row_of,
    values,
)
from router.learning.pg_rows import safe_location as safe_location  # re-exported
from router.learning.pg_turn import open_turn
from router.learning.pg_url import pg_target, redact
from router.learning.pg_writer import PgWriter
from router.learning.routes import WINDOW, ShownRoute
from router.learning.rows import PURGE, Row, new_id
from router.learning.shown import ShownMemory, Started
from router.learning.spool import Spool, default_spool_dir
from router.learning.stats import ROUTE_KEEP_SECONDS, compact_rows
from router.learning.store import Backlog, FeedbackStore, StoreUnavailable

COMPACT_LOCK = 0x736B7263  # pg_try_advisory_lock key of compaction ("skrc")
CONNECT_TIMEOUT = 1  # seconds: a call finds a database gone within this, then skips it


class PgStore(PgApprovals, FeedbackStore):
    """The rows in the database ``url`` names; its schema migrated on open."""
    remote = True  # every call a round trip

    def __init__(self, url: str, policy: FeedbackConfig | None = None,
                 max_connections: int = 8) -> None:
        super().__init__(policy if policy is not None else FeedbackConfig())
        target = pg_target(url)  # the user info off before anything parses the URL
        self._location = target.location
        self._url, self._max = target.conninfo, max_connections
        self._lock = threading.Lock()
        self._pool: ConnectionPool | None = None
        self._owners = Owners()  # who claimed a session while the database was down
        self._key: bytes | None = None  # route ids' MAC key (router.learning.route_ids)
        self._settled = Owners()  # owners the database decided: they never change
        folder = spool_folder(self.policy, self._location)
        self._sorting = SortingInsert(self._insert, folder)  # rows refused for their content
        self._writer = PgWriter(self._sorting, Spool(folder, self.policy.spool_max_rows),
                                probe=self.migrate)
        self.applied: list[int] = []  # the migrations this opening applied
        try:
            self.applied = self.migrate()
        except OSError as exc:  # serve anyway: migrated once the database answers
            self._writer.mark_down(exc)

    def schema_version(self) -> int:
        """The schema version the database is at."""
        found = self._execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
        return int(found[0][0]) if found else 0

    def copy_rows(self, rows: Sequence[Row]) -> int:
        """Insert ``rows`` (another store's), skipping those the database has; how many were
        new."""
        added = 0
        for start in range(0, len(rows), 1000):
            batch = rows[start:start + 1000]
            with self._connection() as conn, conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(INSERT, [values(row) for row in batch])
                added += max(cursor.rowcount, 0)
                settled = owners(batch)
                if settled:
                    cursor.executemany(OWNER, settled)
        return added

    def migrate(self) -> list[int]:
        """Apply the pending schema migrations and read the route id key (made by the first
        replica to open the database); the versions applied (OSError when the database cannot
        be used)."""
        with self._connection() as conn:
            applied = migrate(conn)
            conn.execute("INSERT INTO feedback_keys VALUES ('route_id', %s) "
                         "ON CONFLICT DO NOTHING", (secrets.token_bytes(32),))
            found = conn.execute("SELECT secret FROM feedback_keys WHERE name = 'route_id'"
                                 ).fetchone()
        self._key = bytes(found[0]) if found else None
        return applied

    def new_route_id(self, principal: str) -> str:
        key = self._key
        return route_ids.mint(key, principal) if key is not None else new_id()

    def route_made_for(self, route_id: str, principal: str) -> bool | None:
        key = self._key
        return route_ids.made_for(key, route_id, principal) if key is not None else None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection (the pool opened on first use, and again after ``close``);
        OSError naming the store, never its password, when the database cannot be used."""
        try:
            with self._lock:
                if self._pool is None:
                    pool = ConnectionPool(self._url, min_size=1, max_size=self._max, open=False,
                                          kwargs={"autocommit": True,
                                                  "connect_timeout": CONNECT_TIMEOUT},
                                          timeout=CONNECT_TIMEOUT + 1)
                    try:
                        pool.open(wait=True, timeout=CONNECT_TIMEOUT + 1)
                    except BaseException:
                        pool.close()
                        raise
                    self._pool = pool
                pool = self._pool
            with pool.connection() as conn:
                yield conn
        except psycopg.DataError as exc:  # the values, not the database: never an outage
            raise RowRefused(f"{type(exc).__name__}: "
                             f"{redact(str(exc).splitlines()[0] if str(exc) else '')}") from None
        except (psycopg.Error, PoolTimeout, OSError) as exc:  # either's message may quote it
            if isinstance(exc, psycopg.OperationalError | PoolTimeout | OSError):
                self._close_quietly()  # the connections are gone: opened afresh next time
            raise StoreUnavailable(f"feedback store {self._location} cannot be used: "
                                   f"{type(exc).__name__}") from None

    @classmethod
    def open(cls, url: str, index_dir: object, policy: FeedbackConfig) -> PgStore:
        """The store of ``url`` (``router.learning.backends``); the index folder is unused."""
        if "://" not in url:
            raise InvalidRequest("a PostgreSQL feedback store URL is "
                                 "postgresql://user@host:port/database")
        return cls(url, policy)

    @property
    def location(self) -> str:
        return self._location

    def _execute(self, sql: str, params: tuple[Any, ...] | Mapping[str, Any] = ()
                 ) -> list[tuple[Any, ...]]:
        """One statement's rows; OSError at once while the database is marked down."""
        self._writer.check_up()
        try:
            with self._connection() as conn:
                cursor = conn.execute(sql, params)  # type: ignore[arg-type]
                return cursor.fetchall() if cursor.description else []
        except OSError as exc:
            self._writer.mark_down(exc)
            raise

    def _insert(self, rows: Sequence[Row]) -> None:
        """``rows`` and the owners of their route ids, in one transaction (a row the database
        has already is skipped: a replay never counts one twice)."""
        with self._connection() as conn, conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(INSERT, [values(row) for row in rows])
            settled = owners(rows)
            if settled:
                cursor.executemany(OWNER, settled)

    def append(self, row: Row, *, durable: bool = True) -> None:
        self._writer.append(row, durable=durable)

    def backlog(self) -> Backlog:
        spool = self._writer.spool
        return Backlog(spooled=spool.rows, dropped=spool.dropped, unreachable=self._writer.down,
                       set_aside=self._sorting.count)

    def flush(self) -> None:
        self._writer.flush()

    def read_rows(self) -> list[Row]:
        self.flush()  # this process's Routes too
        return [row_of(r) for r in self._execute(SELECT)]

    def compact(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        self.flush()
        self._writer.check_up()
        with self._connection() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (COMPACT_LOCK,)).fetchone()
            if not got or not got[0]:
                return False
            try:
                with conn.transaction():
                    rows = [row_of(r) for r in conn.execute(SELECT + " FOR UPDATE")]
                    kept = compact_rows(rows, self.policy, now)
                    conn.execute("DELETE FROM feedback_rows WHERE rid = ANY(%s)",
                                 ([r.rid for r in rows],))
                    with conn.cursor() as cursor:
                        cursor.executemany(INSERT, [values(r) for r in kept])
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (COMPACT_LOCK,))
        return True

    def purge(self, skill: str, before: float, now: float) -> bool:
        self._writer.check_up()  # a purge is never spooled: the operator learns it failed
        self._insert([Row(kind=PURGE, ts=now, skill=skill, before=before)])
        return self.compact(now)

    def find_route(self, route_id: str) -> ShownRoute | None:
        if not route_id:
            return None
        since = time.time() - ROUTE_KEEP_SECONDS
        local = self._writer.local_route(route_id)
        if local is not None:
            return ShownRoute.from_row(local) if local.ts >= since else None
        try:
            found = self._execute(SELECT + " WHERE kind = 'route' AND route_id = %s AND ts >= %s"
                                  " ORDER BY ts DESC LIMIT 1", (route_id, since))
        except OSError:
            return None  # the database is down: only this process's Routes are known
        return ShownRoute.from_row(row_of(found[0])) if found else None

    def session_routes(self, session: str) -> list[ShownRoute]:
        try:
            found = [row_of(r) for r in self._execute(
                SELECT + " WHERE kind = 'route' AND session = %s ORDER BY ts DESC LIMIT %s",
                (session, WINDOW))]
        except OSError:
            found = []
        mine = self._writer.local_session(session)  # those not yet sent, and when it is down
        merged = {r.route_id: r for r in [*map(ShownRoute.from_row, found), *mine]}
        return sorted(merged.values(), key=lambda r: r.ts)[-WINDOW:]

    def claim_session(self, session_id: str, principal: str) -> str:
        if not session_id:
            return principal
        known = self._settled.owner(session_id)
        if known is not None:  # decided in the database once, for good: no round trip a turn
            return known
        try:
            owner = self._claim(session_id, principal)
        except OSError:  # decided here until the database answers again (docs: Running a fleet)
            return self._owners.claim(session_id, principal)
        return self._settled.claim(session_id, owner)

    def _claim(self, session_id: str, principal: str) -> str:
        if self._writer.spool.rows and not self._writer.down:  # its owners reach it first
            self._writer.flush()
        mine = self._writer.local_session(session_id)  # this replica's Routes not yet sent
        claimant = max(mine, key=lambda r: r.ts).principal if mine else principal
        won = self._execute(CLAIM, (session_id, claimant, session_id))
        if won:
            return str(won[0][0])
        owner = self._execute(OWNER_OF, (session_id,))  # sees a claim committed meanwhile
        return str(owner[0][0]) if owner else claimant

    def open_turn(self, memory: ShownMemory, session: str, who: str, reset: bool,
                  revealed: Sequence[str]) -> Started | None:  # router.learning.pg_turn
        return open_turn(memory, self._settled, self._writer, session, who, reset, revealed)

    def shown_memory(self, limit: int, ttl_seconds: float) -> ShownMemory:
        from router.learning.pg_shown import PgShown

        return PgShown(self._execute, limit, ttl_seconds)

    def close(self) -> None:
        self._writer.close()  # what is waiting sent, or spooled
        self._close_quietly()  # a later call opens the pool again

    def _close_quietly(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def spool_folder(policy: FeedbackConfig, location: str) -> str:
    """This store's spool: a folder per database under ``feedback.spool_dir`` (its default:
    ``router.learning.spool.default_spool_dir``), so one replica's spool of two databases never
    mixes their rows."""
    root = policy.spool_dir or str(default_spool_dir())
    return f"{root}/{hashlib.sha256(location.encode()).hexdigest()[:16]}"
