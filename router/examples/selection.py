"""Which example requests a build keeps (pure): known skills only; curated rows whole, learned
rows capped per skill; a bound per catalog.

An example naming a skill the catalog does not hold is dropped (a removed skill loses its
examples). Curated rows (an examples file, a skill folder's evals and trigger evals: someone
wrote them down) are all kept: every (request, skill) row is evidence, and a popular skill
named by many multi-skill requests needs all of them. Rows learned from traffic are capped per
skill (``traffic_cap`` positive and ``traffic_cap`` negative queries: the most supported first
- the same query given again, by any source, counts as support - then the newest), which
bounds what one skill's traffic can teach. Requests that no skill should take
(``skills: []``) are kept apart: they calibrate the relevance gate.

Memory and build time are bounded per catalog, not per skill: ``bound`` keeps at most
``MAX_CURATED_ROWS`` curated rows (in the order the sources were read) and names, in a warning,
each file whose requests were left out past it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from router.examples.model import Example, ExampleSource, query_key
from router.skills.model import Diagnostic, Level

TRAFFIC_CAP = 20  # learned example queries per skill and polarity
# Curated (request, skill) rows one catalog's build embeds: 100,000 rows of 384 float32 are
# 150 MB, and embedding that many requests takes tens of minutes on 2 CPU cores.
MAX_CURATED_ROWS = 100_000


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


def curated(example: Example) -> bool:
    """Whether a person wrote the example down (every source but traffic)."""
    return example.source is not ExampleSource.TRAFFIC


def bound(examples: Sequence[Example], limit: int = MAX_CURATED_ROWS,
          ) -> tuple[list[Example], list[Diagnostic]]:
    """The examples with at most ``limit`` curated (request, skill) rows, in input order,
    and a warning for each source file whose requests were left out past the bound."""
    kept: list[Example] = []
    cut: Counter[str] = Counter()
    rows = 0
    for ex in examples:
        size = len(ex.skills) + len(ex.negatives)
        if curated(ex) and size and rows + size > limit:
            cut[ex.origin or ex.source.value] += 1
            continue
        rows += size if curated(ex) else 0
        kept.append(ex)
    problems = [Diagnostic(Level.WARNING, origin,
                           f"{count} example requests left out: a catalog's curated examples "
                           f"are bounded at {limit:,} (request, skill) rows; the rows read "
                           "before this file's reached it")
                for origin, count in cut.items()]
    return kept, problems


def select(examples: Sequence[Example], names: Collection[str],
           traffic_cap: int = TRAFFIC_CAP) -> Selection:
    """The rows a build embeds, sorted by skill, polarity, then rank (see module doc)."""
    support: Counter[tuple[str, bool, str]] = Counter()
    latest: dict[tuple[str, bool, str], tuple[int, Row]] = {}
    learned_only: dict[tuple[str, bool, str], bool] = {}
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
                learned_only[key] = learned_only.get(key, True) and not curated(ex)
    ranked = sorted(latest, key=lambda k: (k[0], k[1], -support[k], -latest[k][0]))
    kept: list[Row] = []
    per: Counter[tuple[str, bool]] = Counter()
    for key in ranked:
        if not learned_only[key]:
            kept.append(latest[key][1])
        elif per[key[:2]] < traffic_cap:
            per[key[:2]] += 1
            kept.append(latest[key][1])
    return Selection(tuple(kept), tuple(off_topic.values()), tuple(sorted(unknown)))
