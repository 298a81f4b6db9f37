"""Turn raw skill folders into catalog entries, and the catalog archive into skill folders.

An entry is one JSON line of ``catalog.jsonl.gz``: ``{"name", "source", "path", "skill_md",
"files"}``. ``skill_md`` is the SKILL.md with a rewritten frontmatter (``name`` = the folder's
name, unique in the catalog; ``description`` and ``license`` as the author wrote them; other keys
dropped) and the author's body verbatim; ``files`` maps a bundled file's relative path to its text.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from scripts.realskills.sources import PERMISSIVE, RawSkill

_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)
_NOT_NAME = re.compile(r"[^a-z0-9]+")
NAME_CHARS = 56  # leaves room for a "-NN" suffix within the spec's 64


def split_frontmatter(text: str) -> tuple[dict[str, Any], str] | None:
    """``(frontmatter, body)``, or None when there is no YAML mapping with a description."""
    m = _FRONT.match(text)
    if not m:
        return None
    try:
        meta = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    desc = meta.get("description")
    if not isinstance(desc, str | int | float) or not str(desc).strip():
        return None
    return meta, m.group(2)


def slug(text: str) -> str:
    return _NOT_NAME.sub("-", text.lower()).strip("-")[:NAME_CHARS].strip("-")


def allowed(raw: RawSkill, meta: dict[str, Any]) -> bool:
    """May this skill be redistributed under its source's terms?"""
    src = raw.source
    if src.folder_licence and src.folder_licence not in raw.licence_text:
        return False
    if src.per_skill_licence:
        declared = meta.get("license")
        if not isinstance(declared, str) or not PERMISSIVE.match(declared):
            return False
        if raw.licence_text and re.search(r"proprietary|all rights reserved", raw.licence_text,
                                          re.IGNORECASE):
            return False
    return True


def entries(raws: Iterable[RawSkill]) -> Iterator[dict[str, Any]]:
    """Catalog entries: allowed, parseable, not byte-identical to an earlier one; names unique
    (the first holder keeps the plain name, later ones get ``-2``, ``-3``, ...)."""
    taken: set[str] = set()
    seen: set[str] = set()
    for raw in raws:
        parsed = split_frontmatter(raw.skill_md)
        if parsed is None:
            continue
        meta, body = parsed
        if not allowed(raw, meta):
            continue
        desc = " ".join(str(meta["description"]).split())
        digest = hashlib.sha256(f"{desc}\n{body.strip()}".encode()).hexdigest()
        base = slug(str(meta.get("name") or "")) or slug(Path(raw.folder).name)
        if digest in seen or not base:
            continue
        seen.add(digest)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        head = {"name": name, "description": desc}
        if isinstance(meta.get("license"), str):
            head["license"] = meta["license"]
        front = "".join(f"{k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in head.items())
        yield {"name": name, "source": raw.source.repo, "path": raw.folder,
               "skill_md": f"---\n{front}---\n{body}", "files": raw.files}


def write_archive(rows: Iterable[dict[str, Any]], path: Path) -> int:
    count = 0
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        for row in rows:
            out.write((json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n").encode())
            count += 1
    return count


def read_archive(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def unpack(archive: Path, out: Path) -> int:
    """Write each entry as ``out/<name>/SKILL.md`` (and its bundled files); returns the count.
    Paths that would leave the skill's folder are refused."""
    count = 0
    for row in read_archive(archive):
        folder = out / row["name"]
        _write(folder, "SKILL.md", row["skill_md"])
        for rel, text in row["files"].items():
            _write(folder, rel, text)
        count += 1
    return count


def _write(folder: Path, rel: str, text: str) -> None:
    target = (folder / rel).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise ValueError(f"{folder.name}: bundled path {rel!r} leaves the skill folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


_WORD = re.compile(r"[a-z0-9]+")


def shingles(text: str, n: int = 8) -> set[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of ``text`` (lowercase, punctuation ignored)."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def shared_span(request: str, indexed: str, n: int = 8) -> str | None:
    """The first ``n``-word run that ``request`` copies from ``indexed``, if any."""
    theirs = shingles(indexed, n)
    words = _WORD.findall(request.lower())
    for i in range(len(words) - n + 1):
        if tuple(words[i:i + n]) in theirs:
            return " ".join(words[i:i + n])
    return None
