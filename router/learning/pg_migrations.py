"""The schema of the feedback store in PostgreSQL (``router.learning.pg_store``), as versioned
migrations: version n is ``MIGRATIONS[n - 1]``. ``migrate`` applies the pending ones in one
transaction under an advisory lock, so replicas starting at once apply each exactly once; every
command that opens the store runs it first. Append new versions; never edit a shipped one."""

from __future__ import annotations

import psycopg

LOCK_KEY = 0x736B726D  # pg_advisory_xact_lock key of migrations ("skrm")

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE feedback_rows (
        rid text PRIMARY KEY,
        kind text NOT NULL,
        ts double precision NOT NULL,
        session text NOT NULL DEFAULT '',
        skill text NOT NULL DEFAULT '',
        query text NOT NULL DEFAULT '',
        route_id text NOT NULL DEFAULT '',
        outcome text NOT NULL DEFAULT '',
        shown jsonb NOT NULL DEFAULT '[]',
        retrieved jsonb NOT NULL DEFAULT '[]',
        before double precision NOT NULL DEFAULT 0,
        counts jsonb NOT NULL DEFAULT '{}',
        counted boolean NOT NULL DEFAULT false,
        principal text NOT NULL DEFAULT '',
        forced boolean NOT NULL DEFAULT false
    );
    CREATE INDEX feedback_rows_route_id ON feedback_rows (route_id) WHERE kind = 'route';
    CREATE INDEX feedback_rows_session ON feedback_rows (session, ts) WHERE kind = 'route';
    CREATE TABLE feedback_owners (
        kind text NOT NULL,
        id text NOT NULL,
        principal text NOT NULL,
        PRIMARY KEY (kind, id)
    );
    """,
    """
    CREATE TABLE feedback_keys (
        name text PRIMARY KEY,
        secret bytea NOT NULL
    );
    """,
    """
    CREATE TABLE session_turns (
        session text PRIMARY KEY,
        turn integer NOT NULL,
        since double precision NOT NULL,
        ts double precision NOT NULL
    );
    CREATE TABLE session_shown (
        session text NOT NULL,
        name text NOT NULL,
        turn integer NOT NULL,
        ts double precision NOT NULL,
        PRIMARY KEY (session, name)
    );
    """,
    """
    CREATE TABLE skill_approvals (
        key text PRIMARY KEY,
        digest text NOT NULL,
        approved_by text NOT NULL,
        approved_at double precision NOT NULL,
        note text NOT NULL DEFAULT ''
    );
    """,
)


def migrate(conn: psycopg.Connection) -> list[int]:
    """Apply the pending migrations on ``conn``; the versions applied (none when current)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                     "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
        current = int(row[0]) if row else 0
        applied = []
        for version in range(current + 1, len(MIGRATIONS) + 1):
            conn.execute(MIGRATIONS[version - 1])  # type: ignore[arg-type]
            conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
            applied.append(version)
    return applied
