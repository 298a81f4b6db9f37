"""Activations completed from their Route when traffic is read.

A replica records an activation with the request of the Route it names (``route_id``) when it
can find that Route (``router.learning.recorder``). Another replica's Route may reach the shared
store a moment after the Activate that names it (its row is sent off the answer's path), so an
activation row can arrive with its ``route_id`` and no request. ``complete`` joins such rows to
the Route row of that id when the rows are read, under the recorder's own rules: the same
principal, the same session, the skill among those the Route retrieved, and not a Route whose
user named the skill (a forced one). Pure: rows in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from router.learning.rows import ACTIVATE, FEEDBACK, ROUTE, Row


def _learns(row: Row) -> bool:
    """An activation or a wrong-skill outcome that names a Route and has no request yet."""
    if row.query or not row.route_id or not row.skill or row.counted:
        return False
    return row.kind == ACTIVATE or (row.kind == FEEDBACK and row.outcome == "wrong_skill")


def _fits(row: Row, route: Row) -> bool:
    return (not route.forced and route.principal == row.principal
            and (not row.session or row.session == route.session)
            and row.skill in route.retrieved)


def complete(rows: Iterable[Row]) -> list[Row]:
    """``rows``, each activation (or wrong-skill outcome) that names a Route of ``rows`` it
    fits given that Route's request, session and (an activation) what it showed."""
    rows = list(rows)
    routes = {r.route_id: r for r in rows if r.kind == ROUTE and r.route_id}
    if not routes:
        return rows
    out = []
    for row in rows:
        route = routes.get(row.route_id) if _learns(row) else None
        if route is not None and _fits(row, route):
            row = replace(row, query=route.query, session=route.session,
                          shown=route.retrieved if row.kind == ACTIVATE else row.shown)
        out.append(row)
    return out
