"""The rows of the feedback store: one JSON object per line, parsed into ``Row`` records.

Kinds:

- ``route``: a Route answered (``route_id``, ``session``, the retrieval text as ``query``, the
  ``shown`` and ``retrieved`` skill names; ``forced`` when the user named a skill in it, so it
  teaches nothing), kept briefly so any replica can complete a record;
- ``activate``: an activation of ``skill``; ``query`` is set when the recording rule made it a
  positive example (the message of the Route that showed the skill), empty otherwise, and
  ``shown`` then holds the skills that Route retrieved (the others were passed over);
- ``feedback``: an ``outcome`` for ``skill``; a ``wrong_skill`` with a ``query`` is a negative
  example;
- ``purge``: hides every row of ``skill`` (all skills when empty) older than ``before``;
- ``count``: per-skill counters of one UTC day, folded from raw rows by compaction.

Rows written for a caller carry its ``principal`` (the sha256 of its bearer token; "" for the
one anonymous principal of a server without tokens). Every row has a unique ``rid``; readers
drop repeats, so a row found in two files (a compaction interrupted between writing its output
and removing its inputs) counts once. Pure: no I/O.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from router.common.json_text import compact

ROUTE = "route"
ACTIVATE = "activate"
FEEDBACK = "feedback"
PURGE = "purge"
COUNT = "count"
KINDS = frozenset({ROUTE, ACTIVATE, FEEDBACK, PURGE, COUNT})

OUTCOMES = ("success", "failure", "wrong_skill", "not_used")
COUNTERS = ("routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used")
COUNTER_BY_OUTCOME = {"success": "succeeded", "failure": "failed", "wrong_skill": "wrong",
                      "not_used": "not_used"}
DAY_SECONDS = 86_400.0


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Row:
    """One stored fact. Fields a kind does not use keep their defaults."""

    kind: str
    ts: float
    rid: str = field(default_factory=new_id)
    session: str = ""
    skill: str = ""
    query: str = ""
    route_id: str = ""
    outcome: str = ""
    shown: tuple[str, ...] = ()
    retrieved: tuple[str, ...] = ()
    before: float = 0.0  # purge: rows older than this are hidden
    counts: Mapping[str, int] = field(default_factory=dict)  # count rows
    counted: bool = False  # already folded into count rows by a compaction
    principal: str = ""  # who wrote it (see the module doc)
    forced: bool = False  # route: the user named a skill (/name, $name): it teaches nothing

    @property
    def day(self) -> float:
        """Start of the row's UTC day, in Unix seconds."""
        return self.ts - self.ts % DAY_SECONDS

    @property
    def is_example(self) -> bool:
        """A positive (activation with a query) or negative (wrong skill with a query)."""
        if not self.query or not self.skill:
            return False
        return self.kind == ACTIVATE or (self.kind == FEEDBACK and self.outcome == "wrong_skill")

    def to_json(self) -> str:
        data: dict[str, Any] = {"kind": self.kind, "ts": round(self.ts, 6), "rid": self.rid}
        optional: dict[str, Any] = {
            "session": self.session, "skill": self.skill, "query": self.query,
            "route_id": self.route_id, "outcome": self.outcome, "shown": list(self.shown),
            "retrieved": list(self.retrieved), "before": self.before, "counts": dict(self.counts),
            "counted": self.counted, "principal": self.principal, "forced": self.forced}
        data.update({k: v for k, v in optional.items() if v})
        return compact(data)


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(v) for v in value)


def parse_row(line: str) -> Row | None:
    """A row from one line; None for a torn or foreign line (it is skipped, never fatal)."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("kind") not in KINDS:
        return None
    try:
        counts = data.get("counts") or {}
        return Row(kind=str(data["kind"]), ts=float(data["ts"]), rid=str(data["rid"]),
                   session=str(data.get("session", "")), skill=str(data.get("skill", "")),
                   query=str(data.get("query", "")), route_id=str(data.get("route_id", "")),
                   outcome=str(data.get("outcome", "")), shown=_names(data.get("shown")),
                   retrieved=_names(data.get("retrieved")),
                   before=float(data.get("before", 0.0)),
                   counts={str(k): int(v) for k, v in dict(counts).items()},
                   counted=bool(data.get("counted", False)),
                   principal=str(data.get("principal", "")),
                   forced=bool(data.get("forced", False)))
    except (KeyError, TypeError, ValueError):
        return None


def unique(rows: Iterable[Row]) -> Iterator[Row]:
    """``rows`` without repeats of a ``rid`` (the first one wins)."""
    seen: set[str] = set()
    for row in rows:
        if row.rid not in seen:
            seen.add(row.rid)
            yield row
