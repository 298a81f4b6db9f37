"""What the console shows of learning from traffic, from the SkillStats and ListExamples
answers: per-skill counters beside the skills list, a skill's recorded examples, and the purge
form's age field. Plain dicts for the templates (which escape every value); pure."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from router.v1 import router_pb2 as pb

DAY_SECONDS = 86_400.0
COUNTERS = ("routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used")
NUMERIC_SORTS = ("shown", "activated", "hit_rate")  # sorted largest first
NEVER = "never_activated"


def no_counters() -> dict[str, Any]:
    """The counters of a skill the store knows nothing of."""
    return {**dict.fromkeys(COUNTERS, 0), "hit_rate": 0.0, "hit_rate_text": "-", NEVER: False}


def counter_rows(stats: pb.SkillStatsResponse | None) -> dict[str, dict[str, Any]]:
    """Skill name -> its counters, hit rate as text ("-" when never routed) and whether it is
    among the skills routed often and never activated."""
    if stats is None:
        return {}
    never = set(stats.never_activated)
    return {s.skill: {**{c: getattr(s, c) for c in COUNTERS}, "hit_rate": s.hit_rate,
                      "hit_rate_text": f"{100.0 * s.hit_rate:.1f}%" if s.routed else "-",
                      NEVER: s.skill in never}
            for s in stats.skills}


def parse_min_routed(params: Mapping[str, str]) -> int:
    """The ``min_routed`` query field; 0 (the server's default) when absent or not a whole
    number of 1 or more."""
    try:
        value = int(params.get("min_routed", "") or 0)
    except ValueError:
        return 0
    return max(0, value)


def parse_days(text: str) -> float | None:
    """The purge form's "older than" field: None when blank (any age); ValueError with a
    message a person can act on otherwise when not a number of days, 0 or more."""
    text = text.strip()
    if not text:
        return None
    try:
        days = float(text)
    except ValueError:
        raise ValueError(f"older than must be a number of days (like 30), not {text!r}") \
            from None
    if not math.isfinite(days) or days < 0:
        raise ValueError(f"older than must be 0 or more days; got {text!r}")
    return days


def example_rows(listing: pb.ListExamplesResponse, now: float) -> list[dict[str, Any]]:
    """One row per recorded example, newest first: label, request, session, age in days."""
    rows = [{"label": "positive" if e.positive else "negative", "query": e.query,
             "session": e.session_id, "age_days": max(0.0, (now - e.recorded_at) / DAY_SECONDS),
             "learned": e.learned, "ts": e.recorded_at} for e in listing.examples]
    rows.sort(key=lambda r: -float(r["ts"]))
    return rows


def purge_summary(name: str, done: pb.PurgeExamplesResponse) -> str:
    where = ("removed from disk" if done.compacted
             else "hidden now; removed from disk at the next compaction")
    return f"purged {done.purged} examples of {name} ({where})"
