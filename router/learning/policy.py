"""Which recorded rows become learned examples: retention, purges, and the poisoning limits.

The rules, applied to the rows of the feedback store (pure: no I/O):

1. Rows older than ``retention_days`` and rows hidden by a purge are ignored.
2. Within one session, the latest label of a (request, skill) pair wins: an activation then a
   ``WRONG_SKILL`` report for the same request and skill leaves only the negative. A session is
   its principal's (``router.access.ownership``): the same id from two principals is two.
3. One session contributes at most ``max_per_session`` labels (its newest), across all skills.
4. One principal teaches one skill at most ``max_per_principal`` requests per label: the first
   it taught (a later flood from it displaces none of them).
5. Support: a skill's positives count only once positives for that skill come from at least
   ``min_sessions`` distinct sessions (likewise its negatives). One session, however busy,
   cannot make a skill learn anything. Rows without a session id never count.
6. A (request, skill) pair labelled both ways keeps the label more sessions gave (none on a tie).
7. At most ``max_rows_per_skill`` examples per skill and label: those with the most support
   (distinct sessions), then the earliest. A new request replaces a kept one only with more
   support than it has, so filling the cap evicts nothing.

Identical requests (compared case- and space-insensitively) become one example listing every
skill that should take it (``skills``), every skill reported wrong for it (``negatives``) and
every other skill the Routes of its counted activations showed and the model passed over
(``passed_over``: weak negatives for encoder fine-tuning only).
Compaction keeps the rows of the pairs rules 2-4, 6 and 7 keep (``kept_rows``), so it evicts
nothing the selection would keep.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.examples.model import Example, ExampleSource, query_key
from router.learning.joins import complete
from router.learning.rows import ACTIVATE, DAY_SECONDS, PURGE, ROUTE, Row

ORIGIN = "traffic"
POSITIVE, NEGATIVE = "positive", "negative"


def check_policy(policy: FeedbackConfig) -> FeedbackConfig:
    """``policy`` if its bounds are usable; InvalidRequest saying which one is not."""
    for key in ("max_rows_per_skill", "min_sessions", "max_per_session", "max_per_principal",
                "spool_max_rows"):
        if getattr(policy, key) < 1:
            raise InvalidRequest(f"config feedback.{key} must be 1 or more; "
                                 f"got {getattr(policy, key)}")
    if policy.retention_days <= 0:
        raise InvalidRequest(f"config feedback.retention_days must be positive; "
                             f"got {policy.retention_days}")
    return policy


def purged(row: Row, purges: Sequence[Row]) -> bool:
    """Is ``row`` hidden by one of ``purges``? Count rows (no user text) never are; a route
    row (a message, no skill) only by a purge of every skill."""
    if row.kind in (PURGE, "count"):
        return False
    for purge in purges:
        if row.ts < purge.before and (not purge.skill or
                                      (row.kind != ROUTE and row.skill == purge.skill)):
            return True
    return False


def visible(rows: Iterable[Row], policy: FeedbackConfig, now: float) -> list[Row]:
    """The rows within retention and not purged."""
    cutoff = now - policy.retention_days * DAY_SECONDS
    kept = [row for row in rows if row.ts >= cutoff]
    purges = [row for row in kept if row.kind == PURGE]
    return [row for row in kept if not purged(row, purges)]


@dataclass
class _Pair:
    """The label of one (request, skill) pair and the sessions that gave it."""

    query: str  # as last seen
    ts: float
    sessions: set[str]
    first: float  # when it was first given
    passed: set[str] = field(default_factory=set)  # shown beside the skill activated


def _session(row: Row) -> str:
    """The session of ``row``, qualified by its principal (ids are the callers' own)."""
    return f"{row.principal}\x00{row.session}"


def _session_labels(rows: Iterable[Row], policy: FeedbackConfig) -> list[tuple[Row, str]]:
    """Rules 2 and 3: each session's latest label per pair, at most its newest N labels."""
    latest: dict[tuple[str, str, str], tuple[Row, str]] = {}
    for row in sorted((r for r in rows if r.is_example and r.session), key=lambda r: r.ts):
        label = POSITIVE if row.kind == ACTIVATE else NEGATIVE
        latest[(_session(row), query_key(row.query), row.skill)] = (row, label)
    by_session: dict[str, list[tuple[Row, str]]] = defaultdict(list)
    for row, label in latest.values():
        by_session[_session(row)].append((row, label))
    kept: list[tuple[Row, str]] = []
    for labels in by_session.values():
        labels.sort(key=lambda item: item[0].ts, reverse=True)
        kept.extend(labels[:policy.max_per_session])
    return kept


def _per_principal(labels: list[tuple[Row, str]],
                   policy: FeedbackConfig) -> list[tuple[Row, str]]:
    """Rule 4: the first ``max_per_principal`` requests each principal taught each skill."""
    first: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for row, label in labels:
        seen = first[(row.principal, label, row.skill)]
        norm = query_key(row.query)
        seen[norm] = min(row.ts, seen.get(norm, row.ts))
    allowed = {(group, norm) for group, seen in first.items()
               for norm in sorted(seen, key=seen.__getitem__)[:policy.max_per_principal]}
    return [(row, label) for row, label in labels
            if ((row.principal, label, row.skill), query_key(row.query)) in allowed]


def _pairs(labels: Iterable[tuple[Row, str]]) -> dict[tuple[str, str, str], _Pair]:
    """(label, skill, normalised request) -> the sessions agreeing on it."""
    pairs: dict[tuple[str, str, str], _Pair] = {}
    for row, label in labels:
        key = (label, row.skill, query_key(row.query))
        pair = pairs.setdefault(key, _Pair(row.query, row.ts, set(), row.ts))
        pair.sessions.add(_session(row))
        pair.first = min(pair.first, row.ts)
        pair.passed.update(row.shown if label == POSITIVE else ())
        if row.ts >= pair.ts:
            pair.query, pair.ts = row.query, row.ts
    return pairs


def _supported(pairs: dict[tuple[str, str, str], _Pair],
               min_sessions: int) -> dict[tuple[str, str, str], _Pair]:
    """Rules 5 and 6."""
    support: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (label, skill, _), pair in pairs.items():
        support[(label, skill)] |= pair.sessions
    kept = {}
    for key, pair in pairs.items():
        label, skill, norm = key
        other = pairs.get((NEGATIVE if label == POSITIVE else POSITIVE, skill, norm))
        if other is not None and len(other.sessions) >= len(pair.sessions):
            continue
        if len(support[(label, skill)]) >= min_sessions:
            kept[key] = pair
    return kept


def _capped(pairs: dict[tuple[str, str, str], _Pair],
            policy: FeedbackConfig) -> dict[tuple[str, str, str], _Pair]:
    """Rule 7: per (label, skill) the ``max_rows_per_skill`` pairs with the most support, the
    earliest first among equals."""
    grouped: dict[tuple[str, str], list[tuple[str, _Pair]]] = defaultdict(list)
    for (label, skill, norm), pair in pairs.items():
        grouped[(label, skill)].append((norm, pair))
    kept = {}
    for (label, skill), items in grouped.items():
        items.sort(key=lambda item: (-len(item[1].sessions), item[1].first, item[0]))
        for norm, pair in items[:policy.max_rows_per_skill]:
            kept[(label, skill, norm)] = pair
    return kept


def kept_rows(examples: Sequence[Row], policy: FeedbackConfig) -> list[Row]:
    """The example rows (visible ones) a compaction keeps: those of the pairs rules 2-4, 6
    and 7 keep, whatever their support so far; at most ``max_rows_per_skill`` (the newest) of
    each (kind, skill, request)."""
    labels = _per_principal(_session_labels(examples, policy), policy)
    keep = {(skill, norm) for _, skill, norm in _capped(_supported(_pairs(labels), 1), policy)}
    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for row in examples:
        if row.is_example and (row.skill, query_key(row.query)) in keep:
            groups[(row.kind, row.skill, query_key(row.query))].append(row)
    return [row for group in groups.values()
            for row in sorted(group, key=lambda r: r.ts, reverse=True)[:policy.max_rows_per_skill]]


def select_examples(rows: Iterable[Row], policy: FeedbackConfig, now: float,
                    known: Collection[str] | None = None) -> list[Example]:
    """The learned examples that count, sorted by request; ``known`` (optional) drops
    skills no longer in the catalog."""
    labels = _session_labels(visible(complete(rows), policy, now), policy)
    if known is not None:
        labels = [(row, label) for row, label in labels if row.skill in known]
    labels = _per_principal(labels, policy)
    pairs = _capped(_supported(_pairs(labels), policy.min_sessions), policy)
    merged: dict[str, tuple[str, set[str], set[str], set[str]]] = {}
    for (label, skill, norm), pair in sorted(pairs.items(), key=lambda item: item[1].ts):
        _, good, bad, passed = merged.setdefault(norm, (pair.query, set(), set(), set()))
        (good if label == POSITIVE else bad).add(skill)
        passed.update(pair.passed)
        merged[norm] = (pair.query, good, bad, passed)
    return [Example(query=query, skills=tuple(sorted(good)), negatives=tuple(sorted(bad)),
                    source=ExampleSource.TRAFFIC, origin=ORIGIN,
                    passed_over=tuple(sorted(n for n in passed - good - bad
                                             if known is None or n in known)))
            for _, (query, good, bad, passed) in sorted(merged.items())]
