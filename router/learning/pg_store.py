"""The feedback store in PostgreSQL (``feedback.store_url`` = ``postgresql://user@host/db``),
shared by every replica that names the database.

Rows live in ``feedback_rows`` (a column per ``Row`` field; JSON for the name lists and the
counters); who owns a session or a route id in ``feedback_owners``, whose primary key makes the
first claimant win atomically on every replica. Every write commits before it returns, so
``find_route`` and ``session_routes`` read the database and are never stale. Compaction runs
under ``router.learning.stats.compact_rows`` while holding an advisory lock (one compactor at a
time). The schema is migrated on open (``router.learning.pg_migrations``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.learning.pg_migrations import migrate
from router.learning.routes import WINDOW, ShownRoute
from router.learning.rows import PURGE, ROUTE, Row
from router.learning.stats import ROUTE_KEEP_SECONDS, compact_rows
from router.learning.store import FeedbackStore

COMPACT_LOCK = 0x736B7263  # pg_try_advisory_lock key of compaction ("skrc")
COLUMNS = ("rid", "kind", "ts", "session", "skill", "query", "route_id", "outcome", "shown",
           "retrieved", "before", "counts", "counted", "principal", "forced")
SELECT = f"SELECT {', '.join(COLUMNS)} FROM feedback_rows"
INSERT = (f"INSERT INTO feedback_rows ({', '.join(COLUMNS)}) VALUES "
          f"({', '.join(['%s'] * len(COLUMNS))}) ON CONFLICT (rid) DO NOTHING")
CONNECT_TIMEOUT = 2  # seconds: a database down answers quickly


def safe_location(url: str) -> str:
    """``url`` without its password: ``postgresql://user@host:port/db``."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(an invalid URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def _values(row: Row) -> tuple[Any, ...]:
    return (row.rid, row.kind, round(row.ts, 6), row.session, row.skill, row.query,
            row.route_id, row.outcome, Jsonb(list(row.shown)), Jsonb(list(row.retrieved)),
            row.before, Jsonb(dict(row.counts)), row.counted, row.principal, row.forced)


def _row(record: tuple[Any, ...]) -> Row:
    data = dict(zip(COLUMNS, record, strict=True))
    return Row(kind=data["kind"], ts=float(data["ts"]), rid=data["rid"], session=data["session"],
               skill=data["skill"], query=data["query"], route_id=data["route_id"],
               outcome=data["outcome"], shown=tuple(str(n) for n in data["shown"]),
               retrieved=tuple(str(n) for n in data["retrieved"]), before=float(data["before"]),
               counts={str(k): int(v) for k, v in dict(data["counts"]).items()},
               counted=bool(data["counted"]), principal=data["principal"],
               forced=bool(data["forced"]))


class PgStore(FeedbackStore):
    """The rows in the database ``url`` names; its schema migrated on open."""

    def __init__(self, url: str, policy: FeedbackConfig | None = None,
                 max_connections: int = 8) -> None:
        super().__init__(policy if policy is not None else FeedbackConfig())
        self._location = safe_location(url)
        self._url, self._max = url, max_connections
        self._lock = threading.Lock()
        self._pool: ConnectionPool | None = None
        with self._connection() as conn:
            migrate(conn)

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
        except (psycopg.Error, PoolTimeout, OSError) as exc:  # either's message may quote it
            raise OSError(f"feedback store {self._location} cannot be used: "
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

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._connection() as conn:
            cursor = conn.execute(sql, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def append(self, row: Row, *, durable: bool = True) -> None:
        self._execute(INSERT, _values(row))
        if row.kind == ROUTE and row.route_id and row.principal:
            self._execute("INSERT INTO feedback_owners VALUES ('route', %s, %s) "
                          "ON CONFLICT DO NOTHING", (row.route_id, row.principal))

    def read_rows(self) -> list[Row]:
        return [_row(r) for r in self._execute(SELECT)]

    def compact(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._connection() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (COMPACT_LOCK,)).fetchone()
            if not got or not got[0]:
                return False
            try:
                with conn.transaction():
                    rows = [_row(r) for r in conn.execute(SELECT + " FOR UPDATE")]
                    kept = compact_rows(rows, self.policy, now)
                    conn.execute("DELETE FROM feedback_rows WHERE rid = ANY(%s)",
                                 ([r.rid for r in rows],))
                    with conn.cursor() as cursor:
                        cursor.executemany(INSERT, [_values(r) for r in kept])
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (COMPACT_LOCK,))
        return True

    def purge(self, skill: str, before: float, now: float) -> bool:
        self.append(Row(kind=PURGE, ts=now, skill=skill, before=before))
        return self.compact(now)

    def find_route(self, route_id: str) -> ShownRoute | None:
        if not route_id:
            return None
        found = self._execute(SELECT + " WHERE kind = 'route' AND route_id = %s AND ts >= %s "
                              "ORDER BY ts DESC LIMIT 1",
                              (route_id, time.time() - ROUTE_KEEP_SECONDS))
        return ShownRoute.from_row(_row(found[0])) if found else None

    def session_routes(self, session: str) -> list[ShownRoute]:
        found = self._execute(SELECT + " WHERE kind = 'route' AND session = %s "
                              "ORDER BY ts DESC LIMIT %s", (session, WINDOW))
        return [ShownRoute.from_row(_row(r)) for r in reversed(found)]

    def claim_session(self, session_id: str, principal: str) -> str:
        if not session_id:
            return principal
        routed = self._execute("SELECT principal FROM feedback_rows WHERE kind = 'route' "
                               "AND session = %s ORDER BY ts DESC LIMIT 1", (session_id,))
        claimant = str(routed[0][0]) if routed else principal
        won = self._execute("INSERT INTO feedback_owners VALUES ('session', %s, %s) "
                            "ON CONFLICT DO NOTHING RETURNING principal",
                            (session_id, claimant))
        if won:
            return str(won[0][0])
        # Another statement: it sees the row of a claim that committed while ours waited.
        owner = self._execute("SELECT principal FROM feedback_owners WHERE kind = 'session' "
                              "AND id = %s", (session_id,))
        return str(owner[0][0]) if owner else claimant

    def close(self) -> None:
        self._close_quietly()  # a later call opens the pool again

    def _close_quietly(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
