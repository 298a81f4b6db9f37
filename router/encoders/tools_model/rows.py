"""The committed training pairs (``data/encoder/pairs.jsonl.gz``): one JSON object per request,
``{"id", "source", "request", "tools": [{"name", "description"}], "distractors": [...],
"split": "train" | "validation"}`` (``scripts/encoder_pairs`` writes it with these types'
``as_json``; its SOURCES.md says from where). Pure apart from ``read_rows``."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from router.encoders.base import document_text
from router.encoders.training import Pair
from router.errors import InvalidRequest

SPLITS = ("train", "validation")


class BadPairsFile(InvalidRequest):
    """A pairs file that cannot be read: the line and what is wrong with it (the command line
    prints it as one ``error:`` line)."""


@dataclass(frozen=True, order=True)
class Tool:
    name: str
    description: str

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description}

    @property
    def document(self) -> str:
        """What the index embeds for a skill of this name and description."""
        return document_text(self.name, self.description)


@dataclass(frozen=True)
class Row:
    id: str
    source: str
    request: str
    tools: tuple[Tool, ...]
    distractors: tuple[Tool, ...] = ()
    split: str = "train"

    def as_json(self) -> dict[str, object]:
        """The row as a line of the pairs file (``parse_row`` reads it back)."""
        return {"id": self.id, "source": self.source, "request": self.request,
                "tools": [t.as_json() for t in self.tools],
                "distractors": [t.as_json() for t in self.distractors], "split": self.split}


def read_rows(path: str | Path) -> list[Row]:
    """Every row of a pairs file (``.jsonl`` or ``.jsonl.gz``), in file order."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:  # type: ignore[operator]
        return [parse_row(line, f"{path}:{n}") for n, line in enumerate(lines, 1)
                if line.strip()]


def parse_row(line: str, where: str) -> Row:
    try:
        raw = json.loads(line)
        tools = tuple(_tools(raw["tools"]))
        row = Row(str(raw["id"]), str(raw["source"]), str(raw["request"]).strip(), tools,
                  tuple(_tools(raw.get("distractors", []))), str(raw["split"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise BadPairsFile(f"{where}: not a pairs row ({exc})") from exc
    if not row.request or not row.tools or row.split not in SPLITS:
        raise BadPairsFile(f"{where}: a row needs a request, tools and a split in {SPLITS}")
    return row


def _tools(raw: Iterable[dict[str, str]]) -> Iterable[Tool]:
    for t in raw:
        yield Tool(str(t["name"]), " ".join(str(t["description"]).split()))


def capped(rows: Sequence[Row], per_source: int, seed: int = 0) -> list[Row]:
    """At most ``per_source`` rows of each source (0: all), the kept ones chosen by a seeded
    hash of their ids, so the same file and cap keep the same rows; file order kept."""
    if per_source <= 0:
        return list(rows)
    by_source: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_source[row.source].append(row)
    kept: set[str] = set()
    for group in by_source.values():
        ranked = sorted(group, key=lambda r: _hash(f"{seed}\x00{r.id}"))
        kept.update(r.id for r in ranked[:per_source])
    return [r for r in rows if r.id in kept]


def to_pairs(rows: Sequence[Row], negatives: dict[str, Tool] | None = None) -> list[Pair]:
    """One pair per (request, needed tool); the request's other tools in ``Pair.also`` (never
    in its batch); ``negatives``: a row id's mined negative, an explicit third column."""
    pairs = []
    for row in rows:
        rights = {t.document for t in row.tools}
        negative = (negatives or {}).get(row.id)
        for tool in row.tools:
            pairs.append(Pair(row.request, tool.document, tool.document,
                              negative.document if negative else "",
                              negative.document if negative else "",
                              frozenset(rights - {tool.document})))
    return pairs


def file_digest(path: str | Path) -> str:
    """sha256 of the pairs file's bytes (recorded with a trained model)."""
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
