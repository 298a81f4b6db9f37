"""Retrieval metrics over labelled requests (pure).

R@k       mean over on-topic requests of |top-k ∩ expected| / |expected|
MRR@10    mean reciprocal rank of the first expected skill within the top 10
all@k     share of on-topic requests whose expected skills are all in the top k
nothing   share of off-topic requests (expected = []) that got no retrieved skill
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Labelled:
    """One request of an eval set."""

    id: str
    query: str
    expected: tuple[str, ...]
    history: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What the router returned for one request: ranked skills (always-on excluded), and the
    always-on skills shown with them (an expected always-on skill counts as found first)."""

    request: Labelled
    ranked: tuple[str, ...]
    catalog_chars: int = 0
    full_chars: int = 0
    latency_ms: float = 0.0
    always_on: tuple[str, ...] = ()

    def top(self, k: int) -> tuple[str, ...]:
        """The first ``k`` ranked skills, after any expected always-on ones."""
        first = tuple(n for n in self.always_on if n in self.request.expected)
        return first + tuple(n for n in self.ranked if n not in first)[:k]


@dataclass(frozen=True)
class Scores:
    requests: int
    on_topic: int
    off_topic: int
    recall_at: dict[int, float]
    mrr10: float
    all_at5: float
    nothing_rate: float  # off-topic requests correctly given nothing
    empty_on_topic: float  # on-topic requests wrongly given nothing
    catalog_chars: float = 0.0  # mean injected characters
    full_chars: float = 0.0  # mean characters of the unrouted full catalog
    p50_ms: float = 0.0
    p99_ms: float = 0.0

    def row(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"n": self.requests}
        out.update({f"R@{k}": round(v, 3) for k, v in self.recall_at.items()})
        out.update({"MRR@10": round(self.mrr10, 3), "complete@5": round(self.all_at5, 3),
                    "off-topic n": self.off_topic, "nothing": round(self.nothing_rate, 3),
                    "empty on-topic": round(self.empty_on_topic, 3),
                    "chars": round(self.catalog_chars), "full chars": round(self.full_chars),
                    "p50 ms": round(self.p50_ms, 2), "p99 ms": round(self.p99_ms, 2)})
        return out


def split_of(request_id: str, validation_share: float = 0.4) -> str:
    """A fixed 60/40 train/validation split by a hash of the id, so a request never changes
    sides between runs."""
    h = int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:4], "big")
    return "validation" if h / 2**32 < validation_share else "train"


def _recall(o: Outcome, k: int) -> float:
    return len(set(o.top(k)) & set(o.request.expected)) / len(o.request.expected)


def _rr(o: Outcome) -> float:
    for i, name in enumerate(o.top(10)):
        if name in o.request.expected:
            return 1.0 / (i + 1)
    return 0.0


def score(outcomes: Sequence[Outcome], ks: Sequence[int] = (1, 3, 5)) -> Scores:
    on = [o for o in outcomes if o.request.expected]
    off = [o for o in outcomes if not o.request.expected]
    n_on = max(len(on), 1)
    return Scores(
        requests=len(outcomes), on_topic=len(on), off_topic=len(off),
        recall_at={k: sum(_recall(o, k) for o in on) / n_on for k in ks},
        mrr10=sum(_rr(o) for o in on) / n_on,
        all_at5=sum(set(o.request.expected) <= set(o.top(5)) for o in on) / n_on,
        nothing_rate=(sum(not o.ranked for o in off) / len(off)) if off else 0.0,
        empty_on_topic=sum(not o.ranked for o in on) / n_on,
        catalog_chars=_mean([o.catalog_chars for o in outcomes]),
        full_chars=_mean([o.full_chars for o in outcomes]),
        p50_ms=_percentile([o.latency_ms for o in outcomes], 50),
        p99_ms=_percentile([o.latency_ms for o in outcomes], 99),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Miss:
    """An expected skill not in the top k, and what took its place (for skill authors)."""

    skill: str
    request_id: str
    query: str
    rank: int | None  # 1-based rank within what was returned, None if absent
    instead: tuple[str, ...]


def misses(outcomes: Sequence[Outcome], k: int = 5) -> list[Miss]:
    out = []
    for o in outcomes:
        for name in o.request.expected:
            if name not in o.top(k):
                rank = o.ranked.index(name) + 1 if name in o.ranked else None
                out.append(Miss(name, o.request.id, o.request.query, rank, o.top(k)))
    return out


@dataclass(frozen=True)
class SkillReport:
    """How often a skill was found when expected, and what was shown instead."""

    skill: str
    expected: int
    found: int
    instead: tuple[tuple[str, int], ...]


def per_skill(outcomes: Sequence[Outcome], k: int = 5, top: int = 3) -> list[SkillReport]:
    """Worst-found skills first."""
    from collections import Counter

    stats: dict[str, tuple[int, int, Counter[str]]] = {}
    for o in outcomes:
        for name in o.request.expected:
            n, found, instead = stats.get(name, (0, 0, Counter()))
            hit = name in o.top(k)
            if not hit:
                instead.update(x for x in o.top(k) if x not in o.request.expected)
            stats[name] = (n + 1, found + hit, instead)
    reports = [SkillReport(name, n, f, tuple(c.most_common(top)))
               for name, (n, f, c) in stats.items()]
    return sorted(reports, key=lambda r: (r.found / r.expected, r.skill))


def false_triggers(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Off-topic requests that still got skills (should-not-trigger failures)."""
    return [o for o in outcomes if not o.request.expected and o.ranked]
