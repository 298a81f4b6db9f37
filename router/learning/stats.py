"""Per-skill counters (seed 003's hit rate, execution success, task completion) and the
compaction of raw rows into them. Pure: rows in, rows or figures out.

Counters per skill: ``routed`` (retrieved for a request), ``shown`` (in a catalog for any
reason), ``activated``, and the Feedback outcomes ``succeeded``, ``failed``, ``wrong``,
``not_used``. Hit rate is activated / routed; execution success succeeded / (succeeded + failed).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from router.config import FeedbackConfig
from router.learning.joins import complete
from router.learning.policy import kept_rows, purged
from router.learning.rows import (
    ACTIVATE,
    COUNT,
    COUNTER_BY_OUTCOME,
    COUNTERS,
    DAY_SECONDS,
    FEEDBACK,
    PURGE,
    ROUTE,
    Row,
    unique,
)

ROUTE_KEEP_SECONDS = 3600.0  # a route row keeps its message this long, to complete a record


def tally(row: Row) -> dict[str, Counter[str]]:
    """What one raw row adds: skill -> counter -> amount."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    if row.kind == ROUTE:
        for name in row.retrieved:
            out[name]["routed"] += 1
        for name in row.shown:
            out[name]["shown"] += 1
    elif row.kind == ACTIVATE and row.skill:
        out[row.skill]["activated"] += 1
    elif row.kind == FEEDBACK and row.outcome in COUNTER_BY_OUTCOME:
        out[row.skill][COUNTER_BY_OUTCOME[row.outcome]] += 1
    return out


@dataclass(frozen=True)
class SkillStats:
    skill: str
    routed: int = 0
    shown: int = 0
    activated: int = 0
    succeeded: int = 0
    failed: int = 0
    wrong: int = 0
    not_used: int = 0


def skill_stats(rows: Iterable[Row], policy: FeedbackConfig, now: float) -> list[SkillStats]:
    """Counters per skill over the retention period, sorted by skill name."""
    cutoff = now - policy.retention_days * DAY_SECONDS
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for row in unique(rows):
        if row.kind == COUNT:
            if row.ts >= cutoff - DAY_SECONDS:  # a count row is dated at the start of its day
                totals[row.skill].update(row.counts)
        elif not row.counted and row.ts >= cutoff:
            for skill, counts in tally(row).items():
                totals[skill].update(counts)
    return [SkillStats(skill, **{k: totals[skill][k] for k in COUNTERS})
            for skill in sorted(totals)]


def never_activated(stats: Iterable[SkillStats], min_routed: int) -> list[SkillStats]:
    """Skills routed at least ``min_routed`` times and never activated: the descriptions to
    rewrite. Most routed first."""
    return sorted((s for s in stats if s.routed >= min_routed and s.activated == 0),
                  key=lambda s: (-s.routed, s.skill))


def _fold(rows: list[Row]) -> list[Row]:
    """Count rows (one per UTC day and skill) holding every count row and uncounted raw row."""
    days: dict[tuple[float, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        if row.kind == COUNT:
            days[(row.day, row.skill)].update(row.counts)
        elif not row.counted:
            for skill, counts in tally(row).items():
                days[(row.day, skill)].update(counts)
    return [Row(kind=COUNT, ts=day, skill=skill, counts=dict(counts))
            for (day, skill), counts in sorted(days.items()) if counts]


def compact_rows(rows: Iterable[Row], policy: FeedbackConfig, now: float) -> list[Row]:
    """The rows a compaction keeps: counters folded per day and skill; example rows within
    retention, not purged, of the requests the caps keep (``router.learning.policy.kept_rows``:
    a flood never evicts rows with as much support); route rows of
    the last hour (to complete records); purge rows within retention. Nothing else: activation
    and outcome rows that are not examples live on as counters only."""
    cutoff = now - policy.retention_days * DAY_SECONDS
    current = [row for row in complete(unique(rows))
               if row.ts >= cutoff or (row.kind == COUNT and row.ts >= cutoff - DAY_SECONDS)]
    purges = [row for row in current if row.kind == PURGE]
    examples = [replace(row, counted=True) for row in current
                if row.is_example and not purged(row, purges)]
    routes = [replace(row, counted=True) for row in current
              if row.kind == ROUTE and row.ts >= now - ROUTE_KEEP_SECONDS
              and not purged(row, purges)]
    kept = _fold(current) + purges + routes
    return kept + sorted(kept_rows(examples, policy), key=lambda r: r.ts)
