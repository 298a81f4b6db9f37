"""How a ``Row`` is kept in PostgreSQL (``router.learning.pg_store``): its columns, the
statements that write and claim, and the URL shown without its password. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from router.learning.pg_url import pg_target
from router.learning.rows import ROUTE, Row

COLUMNS = ("rid", "kind", "ts", "session", "skill", "query", "route_id", "outcome", "shown",
           "retrieved", "before", "counts", "counted", "principal", "forced")
SELECT = f"SELECT {', '.join(COLUMNS)} FROM feedback_rows"
INSERT = (f"INSERT INTO feedback_rows ({', '.join(COLUMNS)}) VALUES "
          f"({', '.join(['%s'] * len(COLUMNS))}) ON CONFLICT (rid) DO NOTHING")
OWNER = "INSERT INTO feedback_owners VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"
# The session's owner after a claim, in one round trip: the claimant when it is the first,
# else the owner the database has (a claim committed while this one waited is read by
# ``OWNER_OF``, in a statement of its own).
CLAIM = ("WITH won AS (INSERT INTO feedback_owners VALUES ('session', %s, %s) "
         "ON CONFLICT DO NOTHING RETURNING principal) SELECT principal FROM won UNION ALL "
         "SELECT principal FROM feedback_owners WHERE kind = 'session' AND id = %s LIMIT 1")
OWNER_OF = "SELECT principal FROM feedback_owners WHERE kind = 'session' AND id = %s"


def safe_location(url: str) -> str:
    """``url`` without its password: ``postgresql://user@host:port/db`` (the user info taken
    off up to the URL's last ``@`` first: ``router.learning.pg_url``)."""
    return pg_target(url).location


def values(row: Row) -> tuple[Any, ...]:
    return (row.rid, row.kind, round(row.ts, 6), row.session, row.skill, row.query,
            row.route_id, row.outcome, Jsonb(list(row.shown)), Jsonb(list(row.retrieved)),
            row.before, Jsonb(dict(row.counts)), row.counted, row.principal, row.forced)


def row_of(record: tuple[Any, ...]) -> Row:
    data = dict(zip(COLUMNS, record, strict=True))
    return Row(kind=data["kind"], ts=float(data["ts"]), rid=data["rid"], session=data["session"],
               skill=data["skill"], query=data["query"], route_id=data["route_id"],
               outcome=data["outcome"], shown=tuple(str(n) for n in data["shown"]),
               retrieved=tuple(str(n) for n in data["retrieved"]), before=float(data["before"]),
               counts={str(k): int(v) for k, v in dict(data["counts"]).items()},
               counted=bool(data["counted"]), principal=data["principal"],
               forced=bool(data["forced"]))


def owners(rows: Sequence[Row]) -> list[tuple[str, str, str]]:
    """The owners a Route's row settles, oldest first: its route id's and its session's (the
    first principal wins: ``ON CONFLICT DO NOTHING``)."""
    found = []
    for row in sorted((r for r in rows if r.kind == ROUTE and r.principal), key=lambda r: r.ts):
        if row.route_id:
            found.append(("route", row.route_id, row.principal))
        if row.session:
            found.append(("session", row.session, row.principal))
    return found
