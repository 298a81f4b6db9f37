"""Skill embeddings for a build, reusing the current index's vectors for unchanged texts."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from router.common.memo import MEMO_ENTRIES, Memo
from router.common.stages import stage
from router.encoders.base import Embedder, document_text
from router.errors import IndexUnavailable
from router.index.versions.layout import MANIFEST, VERSIONS, current_version, read_manifest
from router.skills.model import Skill


def catalog_centroid(vectors: np.ndarray) -> np.ndarray:
    """Mean of the catalog's normalised vectors; ``query @ centroid`` is the mean cosine."""
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    return matrix.mean(axis=0) if len(matrix) else np.zeros(matrix.shape[1], dtype=np.float32)


def embedding_text(skill: Skill) -> str:
    """The text embedded for a skill: its name as words, then its description."""
    return document_text(skill.name, skill.description)


@lru_cache(maxsize=MEMO_ENTRIES)  # a catalog's texts, build after build
def text_key(model_id: str, text: str) -> str:
    """The cache key of an embedding: the model and the exact text embedded."""
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


def previous_vectors(root: Path, model_id: str) -> dict[str, np.ndarray]:
    """Embeddings of the current index keyed by (model, text), for incremental builds. Reads
    only the manifest, the records and the vectors; anything unreadable means no reuse. The
    last version read (or written, ``written_vectors``) is kept for the next build of this
    process while its files are as they were (same folder, sizes and modification times)."""
    try:
        folder = root / VERSIONS / current_version(root)
        seen = _seen(folder, model_id)
        found = _READ_BEFORE.get(seen)
        if found is None:
            found = _read_vectors(folder, model_id)
            if len(found) <= KEEP_UPTO:
                _READ_BEFORE.put(seen, found)
        return dict(found)
    except (IndexUnavailable, OSError, ValueError, KeyError, TypeError):
        return {}


def written_vectors(folder: Path, model_id: str, skills: Sequence[Skill],
                    vectors: np.ndarray) -> None:
    """Keep what a build just wrote into version ``folder`` (``skills`` and their ``vectors``,
    by ``model_id``) as ``previous_vectors`` would read it back (up to ``KEEP_UPTO`` skills:
    the rows stay in memory)."""
    try:
        seen = _seen(folder, model_id)
    except OSError:
        return
    if len(skills) > KEEP_UPTO:
        return
    rows = np.asarray(vectors).view()
    rows.flags.writeable = False
    _READ_BEFORE.put(seen, {text_key(model_id, embedding_text(s)): rows[i]
                            for i, s in enumerate(skills)})


def _seen(folder: Path, model_id: str) -> tuple[object, ...]:
    """A version's files as ``previous_vectors`` reads them: changed, they are read again."""
    return (str(folder.resolve()), model_id,
            *((f.st_size, f.st_mtime_ns) for f in (
                (folder / name).stat() for name in (MANIFEST, *_READ))))


_READ = ("skills.json", "vectors.npy")
_READ_BEFORE: Memo[tuple[object, ...], dict[str, np.ndarray]] = Memo(1)
KEEP_UPTO = 100_000  # skills (150 MB of rows at 384 dimensions)


def _read_vectors(folder: Path, model_id: str) -> dict[str, np.ndarray]:
    if read_manifest(folder).get("model") != model_id:
        return {}
    records = json.loads((folder / _READ[0]).read_text(encoding="utf-8"))["skills"]
    vectors = np.load(folder / _READ[1])
    vectors.flags.writeable = False  # rows are handed to every later build of the process
    skills = [Skill.from_dict(r) for r in records]
    if len(skills) != len(vectors):
        return {}
    return {text_key(model_id, embedding_text(s)): vectors[i] for i, s in enumerate(skills)}


def embed_skills(skills: Sequence[Skill], embedder: Embedder, cache: dict[str, np.ndarray],
           progress: bool) -> tuple[np.ndarray, int]:
    texts = [embedding_text(s) for s in skills]
    keys = [text_key(embedder.model_id, t) for t in texts]
    missing = [i for i, k in enumerate(keys) if k not in cache]
    vectors = np.zeros((len(skills), embedder.dimension), dtype=np.float32)
    stage("embedding %d skills (%d unchanged, reused)", len(missing), len(skills) - len(missing))
    if missing:
        started = time.perf_counter()
        fresh = _encode_with_progress(embedder, [texts[i] for i in missing], progress)
        seconds = time.perf_counter() - started
        stage("embedded %d skills in %.2fs (%.1f skills/s)", len(missing), seconds,
              len(missing) / seconds if seconds > 0 else float("inf"))
        for row, i in enumerate(missing):
            vectors[i] = fresh[row]
    for i, key in enumerate(keys):
        if key in cache:
            vectors[i] = cache[key]
    return vectors, len(skills) - len(missing)


def _encode_with_progress(embedder: Embedder, texts: list[str], progress: bool) -> np.ndarray:
    if not progress or getattr(embedder, "own_progress", False):  # the pipeline's own bar
        return embedder.encode(texts)
    from tqdm import tqdm

    chunk = 256
    parts = []
    with tqdm(total=len(texts), unit="skill", desc="embedding") as bar:
        for start in range(0, len(texts), chunk):
            parts.append(embedder.encode(texts[start:start + chunk]))
            bar.update(min(chunk, len(texts) - start))
    return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
