"""Keep the router's evaluation sets out of the training pairs.

A text near-duplicates another when their normalised forms are equal or their word 5-gram sets
have a Jaccard similarity of at least 0.5 (a text shorter than five words is one "gram": it then
matches only an equal text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from router.encoders.tools_model.rows import Row

from .common import normalise_text

NGRAM = 5
JACCARD = 0.5
_COPY_SUFFIX = re.compile(r"-\d+$")


def shingles(text: str, n: int = NGRAM) -> frozenset[str]:
    words = normalise_text(text).split()
    if len(words) <= n:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))


class NearDuplicateIndex:
    """Texts to match against: exact normalised form, or 5-gram Jaccard >= ``JACCARD``."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._exact: set[str] = set()
        self._grams: list[frozenset[str]] = []
        self._by_gram: dict[str, list[int]] = {}
        self._seen: dict[str, bool] = {}
        for text in texts:
            self.add(text)

    def __len__(self) -> int:
        return len(self._grams)

    def add(self, text: str) -> None:
        norm = normalise_text(text)
        if not norm:
            return
        self._exact.add(norm)
        self._seen.clear()
        grams = shingles(norm)
        for gram in grams:
            self._by_gram.setdefault(gram, []).append(len(self._grams))
        self._grams.append(grams)

    def matches(self, text: str) -> bool:
        norm = normalise_text(text)
        if not norm:
            return False
        if norm not in self._seen:
            self._seen[norm] = norm in self._exact or self._near(shingles(norm))
        return self._seen[norm]

    def _near(self, grams: frozenset[str]) -> bool:
        candidates = sorted({i for g in grams for i in self._by_gram.get(g, ())})
        return any(
            len(grams & self._grams[i]) / len(grams | self._grams[i]) >= JACCARD
            for i in candidates
        )


@dataclass
class EvalSets:
    requests: NearDuplicateIndex = field(default_factory=NearDuplicateIndex)
    descriptions: NearDuplicateIndex = field(default_factory=NearDuplicateIndex)
    names: set[str] = field(default_factory=set)  # name_key of every skill folder's name
    files: list[str] = field(default_factory=list)


def name_key(name: str) -> str:
    """A skill name as compared with the evaluation skills' names: normalised, a fork's ``-2``
    suffix dropped."""
    return normalise_text(_COPY_SUFFIX.sub("", name))


class EvalSetError(ValueError):
    """An evaluation path given cannot be read as skills or queries."""


def skill_description(skill_md: Path) -> str:
    """The ``description`` of a SKILL.md's YAML frontmatter ("" when it has none)."""
    text = skill_md.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return ""
    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise EvalSetError(f"{skill_md}: frontmatter is not YAML: {exc}") from exc
    value = front.get("description") if isinstance(front, dict) else None
    return value if isinstance(value, str) else ""


def manifest_description(manifest: Path) -> str:
    """The ``description`` of a callable skill's manifest.json ("" when it has none)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvalSetError(f"{manifest}: not JSON: {exc}") from exc
    value = data.get("description") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def load_eval_sets(skill_dirs: Sequence[Path], query_files: Sequence[Path]) -> EvalSets:
    """Folder names and descriptions of ``<dir>/*/SKILL.md`` and ``<dir>/*/manifest.json``, and
    the ``query`` of
    every line of the JSONL files."""
    sets = EvalSets()
    for folder in skill_dirs:
        found = sorted(folder.glob("*/SKILL.md"))
        manifests = sorted(folder.glob("*/manifest.json"))
        if not found and not manifests:
            raise EvalSetError(f"{folder}: no */SKILL.md inside (give a folder of skill folders)")
        for skill_md in found:
            sets.names.add(name_key(skill_md.parent.name))
            desc = skill_description(skill_md)
            if desc:
                sets.descriptions.add(desc)
        for manifest in manifests:
            sets.names.add(name_key(manifest.parent.name))
            desc = manifest_description(manifest)
            if desc:
                sets.descriptions.add(desc)
        sets.files.append(f"{folder}/*/SKILL.md ({len(found)}), */manifest.json ({len(manifests)})")
    for path in query_files:
        if not path.is_file():
            raise EvalSetError(f"{path}: no such file (give a JSONL file with a 'query' per line)")
        count = 0
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalSetError(f"{path}:{number}: not JSON: {exc}") from exc
            query = item.get("query") if isinstance(item, dict) else None
            if isinstance(query, str) and query.strip():
                sets.requests.add(query)
                count += 1
        sets.files.append(f"{path} ({count})")
    return sets


@dataclass
class OverlapCounts:
    request: int = 0
    tool_description: int = 0
    distractors_removed: int = 0


def drop_overlap(rows: Iterable[Row], sets: EvalSets) -> tuple[list[Row], OverlapCounts]:
    """Rows minus those whose request or a needed tool's description near-duplicates the eval
    sets; a distractor that does is removed from its row (the row stays)."""
    counts = OverlapCounts()
    kept: list[Row] = []
    for row in rows:
        if sets.requests.matches(row.request):
            counts.request += 1
            continue
        if any(sets.descriptions.matches(t.description) for t in row.tools):
            counts.tool_description += 1
            continue
        others = tuple(t for t in row.distractors if not sets.descriptions.matches(t.description))
        counts.distractors_removed += len(row.distractors) - len(others)
        kept.append(replace(row, distractors=others) if others != row.distractors else row)
    return kept, counts
