"""What an operator sees and does with the feedback store: the per-skill counters, the
recorded examples (each marked whether it counts now), and purges. Shared by the CLI
(``skill-router stats | examples``) and the gRPC API (SkillStats, ListExamples, PurgeExamples),
so both report the same figures.

``stats_report`` and ``recorded_examples`` are pure (rows in); ``purge`` hides the rows in the
store at once (``FeedbackStore.purge``: in the file store, one purge row in its own segment)
and compacts, as ``examples purge`` always did.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from router.config import FeedbackConfig
from router.errors import InvalidRequest, NotFound
from router.examples.model import query_key
from router.learning.joins import complete
from router.learning.policy import select_examples, visible
from router.learning.rows import ACTIVATE, DAY_SECONDS, PURGE, ROUTE, Row
from router.learning.stats import SkillStats, never_activated, skill_stats
from router.learning.store import FeedbackStore
from router.skills.model import DEFAULT_CATALOG, skill_key

if TYPE_CHECKING:
    from router.access.view import View  # numpy: not at import, the CLI starts without it

DEFAULT_MIN_ROUTED = 10


@dataclass(frozen=True)
class StatsReport:
    """Every skill's counters (by name) and the ones never activated (most routed first)."""

    skills: list[SkillStats]
    never_activated: list[SkillStats]
    min_routed: int


@dataclass(frozen=True)
class RecordedExample:
    """One example row: ``positive`` (activated) or not (reported wrong); ``learned`` when it
    counts now under the poisoning limits (``router.learning.policy``)."""

    skill: str
    positive: bool
    query: str
    session: str
    ts: float
    learned: bool


@dataclass(frozen=True)
class PurgeResult:
    purged: int  # recorded examples hidden
    compacted: bool  # a compaction ran now


def hit_rate(stats: SkillStats) -> float:
    """activated / routed; 0 when never routed."""
    return stats.activated / stats.routed if stats.routed else 0.0


def check_min_routed(min_routed: int | None) -> int:
    """The threshold to use (None: the default); InvalidRequest when negative."""
    if min_routed is None:
        return DEFAULT_MIN_ROUTED
    if min_routed < 0:
        raise InvalidRequest(f"min_routed must be 0 or more (default {DEFAULT_MIN_ROUTED}); "
                             f"got {min_routed}")
    return min_routed


def check_days(older_than_days: float | None) -> float | None:
    """``older_than_days`` if usable (None: any age); InvalidRequest when negative or not a
    finite number."""
    if older_than_days is not None and not (math.isfinite(older_than_days)
                                            and older_than_days >= 0):
        raise InvalidRequest(f"older_than_days must be 0 or more days; got {older_than_days}")
    return older_than_days


def stats_report(rows: Iterable[Row], policy: FeedbackConfig, now: float,
                 min_routed: int | None = None) -> StatsReport:
    threshold = check_min_routed(min_routed)
    stats = skill_stats(rows, policy, now)
    return StatsReport(stats, never_activated(stats, threshold), threshold)


def _matching(rows: Iterable[Row], policy: FeedbackConfig, now: float, skill: str,
              older_than_days: float | None) -> list[Row]:
    """The visible example rows of ``skill`` (every skill when empty), older than
    ``older_than_days`` when given, by skill then age."""
    found = [r for r in visible(complete(rows), policy, now) if r.is_example]
    if skill:
        found = [r for r in found if r.skill == skill]
    if older_than_days is not None:
        found = [r for r in found if r.ts < now - older_than_days * DAY_SECONDS]
    return sorted(found, key=lambda r: (r.skill, r.ts))


def recorded_examples(rows: Iterable[Row], policy: FeedbackConfig, now: float, skill: str = "",
                      older_than_days: float | None = None) -> list[RecordedExample]:
    """The recorded examples (see ``_matching``), each marked whether it counts now."""
    rows = list(rows)
    learned: set[tuple[bool, str, str]] = set()
    for example in select_examples(rows, policy, now):
        key = query_key(example.query)
        learned.update((True, name, key) for name in example.skills)
        learned.update((False, name, key) for name in example.negatives)
    out = []
    for row in _matching(rows, policy, now, skill, check_days(older_than_days)):
        positive = row.kind == ACTIVATE
        out.append(RecordedExample(row.skill, positive, row.query, row.session, row.ts,
                                   (positive, row.skill, query_key(row.query)) in learned))
    return out


def purge(store: FeedbackStore, now: float, skill: str = "",
          older_than_days: float | None = None) -> PurgeResult:
    """Hide ``skill``'s example rows (every skill's when empty), or those older than
    ``older_than_days``, on every replica at once; compact now when no other process is.
    InvalidRequest when neither is given."""
    if not skill and older_than_days is None:
        raise InvalidRequest("say what to purge: a skill and/or older_than_days")
    days = check_days(older_than_days)
    hidden = len(_matching(store.read_rows(), store.policy, now, skill, days))
    return PurgeResult(hidden, store.purge(skill, now - (days or 0.0) * DAY_SECONDS, now))


class Review:
    """``store`` as an Engine reports it (None: a server without an index folder, which keeps
    no store); ``enabled``: whether traffic is being recorded.

    Each method takes the caller's ``view`` (``router.access.view``; None: every catalog) and
    answers within its bounds: the records of skills of its catalogs its deny globs spare. A
    ``catalog`` outside a bounded view is NotFound, as one the index lacks is for it."""

    def __init__(self, store: FeedbackStore | None, enabled: bool) -> None:
        self.store, self.enabled = store, enabled

    def _store(self) -> FeedbackStore:
        if self.store is None:
            raise InvalidRequest("this server was started without an index folder; it keeps "
                                 "no feedback store")
        return self.store

    def stats(self, min_routed: int | None = None, catalog: str = "",
              view: View | None = None) -> StatsReport:
        """``skill-router stats``; ``catalog``: only that catalog's skills (records are keyed
        ``catalog/name``, plain names for the catalog ``default``)."""
        held = _bounds(view, catalog)
        store = self._store()
        report = stats_report(store.read_rows(), store.policy, time.time(), min_routed)
        if not catalog and held is None:
            return report

        def shown(key: str) -> bool:
            return (not catalog or in_catalog(key, catalog)) and (held is None or held(key))

        return StatsReport([s for s in report.skills if shown(s.skill)],
                           [s for s in report.never_activated if shown(s.skill)],
                           report.min_routed)

    def examples(self, skill: str = "", older_than_days: float | None = None,
                 catalog: str = "", view: View | None = None) -> list[RecordedExample]:
        """``skill-router examples list``; ``catalog`` with ``skill``: that catalog's skill of
        that name, without: only that catalog's skills."""
        held = _bounds(view, catalog)
        store = self._store()
        found = recorded_examples(store.read_rows(), store.policy, time.time(),
                                  skill_key(catalog or DEFAULT_CATALOG, skill) if skill else "",
                                  older_than_days)
        return [e for e in found if (skill or not catalog or in_catalog(e.skill, catalog))
                and (held is None or held(e.skill))]

    def purge(self, skill: str = "", older_than_days: float | None = None,
              catalog: str = "", view: View | None = None) -> PurgeResult:
        """``skill-router examples purge``; ``catalog`` names the catalog of ``skill``, without
        one: only that catalog's skills are purged. Within a bounded view, a purge of every
        skill forgets each held skill's rows (the routes' stored messages, which no catalog
        owns, only a purge of every skill by a caller of every catalog forgets)."""
        held = _bounds(view, catalog)
        key = skill_key(catalog or DEFAULT_CATALOG, skill) if skill else ""
        if key or (held is None and not catalog):
            if held is not None and not held(key):
                check_days(older_than_days)
                return PurgeResult(0, False)  # as for a skill nobody recorded
            return purge(self._store(), time.time(), key, older_than_days)
        if older_than_days is None:
            raise InvalidRequest("say what to purge: a skill and/or older_than_days")
        store = self._store()  # one catalog's skills, or those of a bounded view: one by one
        keys = sorted({r.skill for r in visible(store.read_rows(), store.policy, time.time())
                       if r.skill and r.kind not in (ROUTE, PURGE)
                       and (not catalog or in_catalog(r.skill, catalog))
                       and (held is None or held(r.skill))})
        done = [purge(store, time.time(), k, older_than_days) for k in keys]
        return PurgeResult(sum(d.purged for d in done), any(d.compacted for d in done))


def _bounds(view: View | None, catalog: str) -> Callable[[str], bool] | None:
    """Whether a record key is within ``view`` (None: every key is); NotFound for a
    ``catalog`` outside a bounded view."""
    if view is None or view.whole:
        return None
    if catalog and catalog not in view.catalogs:
        raise NotFound(f"no catalog {catalog!r} in this caller's view (its catalogs: "
                       f"{', '.join(view.catalogs) or 'none'})")
    return view.holds_key


def in_catalog(key: str, catalog: str) -> bool:
    """Is the record key ``key`` (``Skill.key``) of a skill of ``catalog``?"""
    if catalog == DEFAULT_CATALOG:
        return "/" not in key
    return key.startswith(catalog + "/")
