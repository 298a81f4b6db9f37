"""The test PostgreSQL server starts, answers, and lets a test create its own database."""

from __future__ import annotations

import uuid

import psycopg

from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)


def test_server_answers_and_databases_can_be_created(postgres_dsn: str) -> None:  # noqa: F811
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_dsn + "postgres", autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(postgres_dsn + name) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == (name,)
    with psycopg.connect(postgres_dsn + "postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}"')
