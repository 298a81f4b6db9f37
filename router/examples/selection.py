"""Which example requests a build keeps (pure): known skills only, a cap per skill.

An example naming a skill the catalog does not hold is dropped (a removed skill loses its
examples). Per skill at most ``cap`` positive and ``cap`` negative queries are kept: the most
supported first (the same query given again, by any source, counts as support), then the
newest (later in the input). Requests that no skill should take (``skills: []``) are kept apart:
they calibrate the relevance gate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from router.examples.model import Example, ExampleSource, query_key

DEFAULT_CAP = 20  # example queries per skill and polarity


@dataclass(frozen=True)
class Row:
    """One kept example query of one skill (``negative``: it should not take the query)."""

    query: str
    skill: str
    negative: bool
    source: ExampleSource
    origin: str

    def to_dict(self) -> dict[str, object]:
        return {"query": self.query, "skill": self.skill, "negative": self.negative,
                "source": self.source.value, "origin": self.origin}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Row:
        return cls(str(data["query"]), str(data["skill"]), bool(data["negative"]),
                   ExampleSource(str(data["source"])), str(data.get("origin", "")))


@dataclass(frozen=True)
class Selection:
    rows: tuple[Row, ...] = ()
    off_topic: tuple[str, ...] = ()  # requests no skill should take
    unknown_skills: tuple[str, ...] = field(default=())  # names no skill in the catalog has


def select(examples: Sequence[Example], names: Collection[str],
           cap: int = DEFAULT_CAP) -> Selection:
    """The rows a build embeds, sorted by skill, polarity, then rank (see module doc)."""
    support: Counter[tuple[str, bool, str]] = Counter()
    latest: dict[tuple[str, bool, str], tuple[int, Row]] = {}
    unknown: set[str] = set()
    off_topic: dict[str, str] = {}
    for order, ex in enumerate(examples):
        if not ex.skills and not ex.negatives:
            off_topic.setdefault(query_key(ex.query), ex.query)
        for negative, group in ((False, ex.skills), (True, ex.negatives)):
            for skill in group:
                if skill not in names:
                    unknown.add(skill)
                    continue
                key = (skill, negative, query_key(ex.query))
                support[key] += 1
                latest[key] = (order, Row(ex.query, skill, negative, ex.source, ex.origin))
    ranked = sorted(latest, key=lambda k: (k[0], k[1], -support[k], -latest[k][0]))
    kept: list[Row] = []
    per: Counter[tuple[str, bool]] = Counter()
    for key in ranked:
        if per[key[:2]] < cap:
            per[key[:2]] += 1
            kept.append(latest[key][1])
    return Selection(tuple(kept), tuple(off_topic.values()), tuple(sorted(unknown)))
