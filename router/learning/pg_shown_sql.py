"""The statements of the shown-skill memory in PostgreSQL (``router.learning.pg_shown``). Pure.

A turn's start is one statement: the session's next turn counted (``session_turns``), the
names it adds written (``session_shown``: the gateway's ``revealed_skills`` on this turn, and
what this process showed on the previous turn and had not written yet), and the session's
memory read back. ``START_CLAIMING`` also claims the session (``feedback_owners``) for a
session whose owner this process does not know yet, and starts the turn only when the caller
owns it, so a turn of one round trip is also the first of a conversation.

The memory is a convenience, not a record: its statements commit without waiting for the
write-ahead log to reach the disk (``synchronous_commit`` off for their transaction alone,
set inside the statement), so a turn costs a round trip and not a disk flush. A database that
crashes may forget the last moments of it (a skill revealed again, at worst). A claim is a
record: the statement that claims commits as every other write does.
"""

from __future__ import annotations

_NOW = "extract(epoch from clock_timestamp())"
# Evaluated by the statements that name it: their own transaction commits asynchronously.
_ASYNC = "a AS (SELECT set_config('synchronous_commit', 'off', true) AS off)"
_MEMORY = """
    coalesce((SELECT json_agg(json_build_array(x.name, x.turn) ORDER BY x.ts, x.turn, x.name)
              FROM (SELECT name, turn, ts FROM session_shown
                    WHERE session = %(s)s AND ts >= t.since
                    ORDER BY ts DESC, turn DESC, name LIMIT %(limit)s) x), '[]')::text"""


def _turn(source: str) -> str:
    """The CTEs ``t`` (the turn counted, one row per row of ``source``) and ``r`` (its names:
    ``back`` 0 for this turn's, 1 for the previous turn's, dropped when the turn forgets
    them: a reset, or a session that expired and starts again at turn 1)."""
    return f"""
    t AS (
        INSERT INTO session_turns AS o (session, turn, since, ts)
        SELECT %(s)s, 1, {_NOW}, {_NOW} FROM {source}
        ON CONFLICT (session) DO UPDATE SET
            turn = CASE WHEN o.ts < {_NOW} - %(ttl)s THEN 1 ELSE o.turn + 1 END,
            since = CASE WHEN o.ts < {_NOW} - %(ttl)s OR %(reset)s THEN {_NOW} ELSE o.since END,
            ts = {_NOW}
        RETURNING turn, since),
    r AS (
        INSERT INTO session_shown AS v (session, name, turn, ts)
        SELECT %(s)s, n.name, t.turn - n.back, {_NOW}
        FROM t, unnest(%(names)s::text[], %(back)s::int[]) AS n(name, back)
        WHERE n.back = 0 OR (t.turn - n.back >= 1 AND NOT %(reset)s)
        ON CONFLICT (session, name) DO UPDATE SET turn = EXCLUDED.turn, ts = EXCLUDED.ts
        WHERE v.ts < (SELECT since FROM t))"""


# The turn of a session whose owner is known: (turn, memory).
START = f"WITH {_ASYNC}, {_turn('a')} SELECT t.turn, {_MEMORY} FROM t"
# The claim and the turn: (owner, turn or NULL when the owner is another, memory). No row
# when a claim committed by another replica meanwhile is not in this statement's snapshot
# (then the owner is read in a statement of its own).
START_CLAIMING = f"""
    WITH won AS (INSERT INTO feedback_owners VALUES ('session', %(s)s, %(p)s)
                 ON CONFLICT DO NOTHING RETURNING principal),
    w AS (SELECT principal FROM won UNION ALL
          SELECT principal FROM feedback_owners WHERE kind = 'session' AND id = %(s)s
          LIMIT 1),
    {_turn('w WHERE w.principal = %(p)s')}
    SELECT w.principal, t.turn, {_MEMORY} FROM w LEFT JOIN t ON true"""
# What this process showed, for many sessions at once: each name on its session's current
# turn (nothing for a session expired meanwhile; a name remembered keeps its turn).
ADD = f"""
    WITH {_ASYNC}
    INSERT INTO session_shown AS v (session, name, turn, ts)
    SELECT t.session, n.name, t.turn, {_NOW}
    FROM a, unnest(%(sessions)s::text[], %(names)s::text[]) AS n(session, name)
    JOIN session_turns t ON t.session = n.session
    WHERE t.ts >= {_NOW} - %(ttl)s
    ON CONFLICT (session, name) DO UPDATE SET turn = EXCLUDED.turn, ts = EXCLUDED.ts
    WHERE v.ts < (SELECT since FROM session_turns WHERE session = EXCLUDED.session)"""
RECALL = f"""
    SELECT t.turn, {_MEMORY} FROM session_turns t
    WHERE t.session = %(s)s AND t.ts >= {_NOW} - %(ttl)s"""
PRUNE = (f"WITH {_ASYNC} DELETE FROM session_shown s USING session_turns t, a "
         f"WHERE s.session = t.session AND (t.ts < {_NOW} - %(ttl)s OR s.ts < t.since)",
         f"WITH {_ASYNC} DELETE FROM session_turns USING a WHERE ts < {_NOW} - %(ttl)s")
