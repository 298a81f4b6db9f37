"""Shard partials: one build's embeddings split over N processes, pods or machines, merged back.

A sharded build discovers the whole catalog in every shard (discovery is cheap; embedding is
the cost), embeds only the skills whose name hashes to its shard, and writes a *partial* under
``<out>/.shards/<fingerprint>/<N>/part-<I>/``: ``vectors.npy`` and ``partial.json`` (format,
fingerprint, model, dimension, the skill names and embedding keys, the vectors' SHA-256). The
fingerprint covers the skill list (names and content hashes), the discovery settings and the
model, so partials of one build agree and a partial from an older catalog is never merged.

A merge re-discovers the catalog, requires a complete, verified set of partials for its
fingerprint and hands their vectors to the normal build, which then encodes nothing. Partials
are written through a temporary folder and renamed into place, so a killed shard leaves no
partial at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from router.common.integrity import sha256_file
from router.errors import IndexUnavailable, InvalidRequest
from router.index.vectors import embedding_text, text_key
from router.index.versions.layout import PARTIAL_META, SHARDS_DIR
from router.skills.model import Skill

PARTIAL_FORMAT = 1
PARTIAL_VECTORS = "vectors.npy"
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` of ``count`` (0-based)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``"I/N"``, 0 <= I < N. Raises InvalidRequest with what to write instead."""
        try:
            index_text, count_text = text.split("/")
            spec = cls(int(index_text), int(count_text))
        except ValueError as exc:
            raise InvalidRequest(f"--shard takes I/N (e.g. 0/4), not {text!r}") from exc
        if not 1 <= spec.count <= MAX_SHARDS or not 0 <= spec.index < spec.count:
            raise InvalidRequest(f"--shard {text}: need 0 <= I < N <= {MAX_SHARDS}")
        return spec


def shard_of(name: str, count: int) -> int:
    """The shard a skill belongs to: stable across runs, machines and Python versions."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count


def fingerprint(skills: Sequence[Skill], settings: Mapping[str, Any], model_id: str) -> str:
    """What every partial of one build shares: the catalog, the discovery and the model."""
    listing = sorted((s.key, s.content_hash) for s in skills)
    data = json.dumps({"model": model_id, "settings": settings, "skills": listing},
                      sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(data.encode("ascii")).hexdigest()


def _build_dir(out: Path, print_: str, count: int) -> Path:
    return out / SHARDS_DIR / print_[:32] / str(count)


def write_partial(out: str | Path, spec: ShardSpec, print_: str, model_id: str,
                  skills: Sequence[Skill], vectors: np.ndarray) -> Path:
    """Write shard ``spec``'s vectors (row i = ``skills[i]``) atomically; returns its folder."""
    parent = _build_dir(Path(out), print_, spec.count)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".tmp-{spec.index}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        np.save(tmp / PARTIAL_VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
        meta = {"format": PARTIAL_FORMAT, "fingerprint": print_, "model": model_id,
                "dimension": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
                "shard": spec.index, "count": spec.count,
                "names": [s.name for s in skills],
                "keys": [text_key(model_id, embedding_text(s)) for s in skills],
                "sha256": sha256_file(tmp / PARTIAL_VECTORS)}
        (tmp / PARTIAL_META).write_text(json.dumps(meta), encoding="utf-8")
        final = parent / f"part-{spec.index}"
        shutil.rmtree(final, ignore_errors=True)  # a re-run of the shard replaces its partial
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def collect_partials(out: str | Path, skills: Sequence[Skill], print_: str,
                     model_id: str) -> dict[str, np.ndarray]:
    """Every skill's vector from a complete set of partials for ``print_``, keyed like the
    build's embedding cache. IndexUnavailable names what is missing, stale or corrupt."""
    root = Path(out) / SHARDS_DIR
    folder = root / print_[:32]
    counts = sorted(int(p.name) for p in folder.glob("*") if p.name.isdigit())
    if not counts:
        others = sorted(p.name for p in root.glob("*") if not p.name.startswith("."))
        stale = (f"; partials found for other builds ({', '.join(others)}): the catalog, the "
                 "discovery settings or the model (--model) differ from theirs" if others else "")
        raise IndexUnavailable(f"no shard partials under {root} for this catalog "
                               f"({print_[:32]}){stale}; run every shard first")
    problems: list[str] = []
    for count in counts:
        try:
            return _complete_set(folder / str(count), count, skills, print_, model_id)
        except IndexUnavailable as exc:
            problems.append(str(exc))
    raise IndexUnavailable("; ".join(problems))


def _complete_set(folder: Path, count: int, skills: Sequence[Skill], print_: str,
                  model_id: str) -> dict[str, np.ndarray]:
    known: dict[str, np.ndarray] = {}
    missing = [i for i in range(count) if not (folder / f"part-{i}" / PARTIAL_META).is_file()]
    if missing:
        raise IndexUnavailable(f"{count} shards: partial(s) {missing} missing under {folder}")
    for i in range(count):
        known.update(_read_partial(folder / f"part-{i}", i, count, print_, model_id))
    wanted = {text_key(model_id, embedding_text(s)): s.name for s in skills}
    absent = [name for key, name in wanted.items() if key not in known]
    if absent:
        raise IndexUnavailable(f"{count} shards under {folder} lack {len(absent)} skill(s), "
                               f"e.g. {absent[:3]}")
    return known


def _read_partial(part: Path, index: int, count: int, print_: str,
                  model_id: str) -> dict[str, np.ndarray]:
    try:
        meta = json.loads((part / PARTIAL_META).read_text(encoding="utf-8"))
        expected = (PARTIAL_FORMAT, print_, model_id, index, count)
        found = (meta.get("format"), meta.get("fingerprint"), meta.get("model"),
                 meta.get("shard"), meta.get("count"))
        if found != expected:
            raise IndexUnavailable(f"{part}: built for {found}, not {expected}")
        if sha256_file(part / PARTIAL_VECTORS) != meta.get("sha256"):
            raise IndexUnavailable(f"{part}: {PARTIAL_VECTORS} does not match its checksum")
        vectors = np.load(part / PARTIAL_VECTORS)
        keys = list(meta["keys"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexUnavailable(f"{part}: unreadable partial: {exc}") from exc
    if len(keys) != len(vectors):
        raise IndexUnavailable(f"{part}: {len(keys)} keys but {len(vectors)} vectors")
    return {key: vectors[row] for row, key in enumerate(keys)}


def clear_partials(out: str | Path, print_: str) -> None:
    """Remove the partials of build ``print_`` once a merge has made them part of a version
    (partials of another catalog, perhaps a sharded build still running, stay)."""
    shutil.rmtree(Path(out) / SHARDS_DIR / print_[:32], ignore_errors=True)
