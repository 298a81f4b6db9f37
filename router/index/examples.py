"""The example requests and gate calibration of one index version (the build's I/O edge).

Files in a version folder (checksummed with the others by the manifest):

    examples.json   {"rows": [{"query", "skill", "negative", "source", "origin"}, ...],
                     "calibration": [off-topic request, ...]}
    examples.npy    float32, normalised: one row per example row, then one per calibration
                    request

Embeddings are reused from the current version by (model, text), like skill embeddings.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from router.errors import IndexUnavailable
from router.examples import gate, selection
from router.examples.model import Example
from router.examples.scoring import ExampleIndex, best_cosines, example_index
from router.index.encoders.base import Embedder
from router.index.layout import VERSIONS, current_version, read_manifest

log = logging.getLogger(__name__)

EXAMPLES_JSON = "examples.json"
EXAMPLES_NPY = "examples.npy"


@dataclass(frozen=True)
class Learned:
    """What a build adds for examples and the gate."""

    selection: selection.Selection
    vectors: np.ndarray  # rows of selection.rows
    calibration_texts: tuple[str, ...]
    calibration_vectors: np.ndarray
    calibration: gate.Calibration | None
    fingerprint: str
    nearest: tuple[int, ...] = ()  # calibration rows the nearest-request test compares with

    def manifest(self) -> dict[str, object]:
        rows = self.selection.rows
        return {"examples": {"rows": len(rows), "negatives": sum(r.negative for r in rows),
                             "skills": len({r.skill for r in rows}),
                             "off_topic": len(self.selection.off_topic),
                             "unknown_skills": list(self.selection.unknown_skills)[:20],
                             "fingerprint": self.fingerprint},
                "gate": self.calibration.to_dict() if self.calibration else None}


def previous_text_vectors(root: Path, model_id: str) -> dict[str, np.ndarray]:
    """The current version's example and calibration embeddings by text ({} if none)."""
    try:
        folder = root / VERSIONS / current_version(root)
        if read_manifest(folder).get("model") != model_id:
            return {}
        data = json.loads((folder / EXAMPLES_JSON).read_text(encoding="utf-8"))
        vectors = np.load(folder / EXAMPLES_NPY)
    except (IndexUnavailable, OSError, ValueError, KeyError, TypeError):
        return {}
    texts = [r["query"] for r in data.get("rows", [])] + list(data.get("calibration", []))
    if len(texts) != len(vectors):
        return {}
    return dict(zip(texts, vectors, strict=True))


def _embed(texts: Sequence[str], embedder: Embedder,
           cache: Mapping[str, np.ndarray]) -> np.ndarray:
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    missing = sorted({t for t in texts if t not in cache})
    fresh = dict(zip(missing, embedder.encode(missing), strict=True)) if missing else {}
    for i, text in enumerate(texts):
        out[i] = cache[text] if text in cache else fresh[text]
    return out


def prepare(names: Sequence[str], skill_vectors: np.ndarray, examples: Sequence[Example],
            embedder: Embedder, root: Path, fingerprint: str) -> Learned:
    """Select and embed the examples, then calibrate the gate against this catalog."""
    chosen = selection.select(examples, set(names))
    if chosen.unknown_skills:
        log.warning("examples name %d skills the catalog does not hold (ignored): %s",
                    len(chosen.unknown_skills), ", ".join(chosen.unknown_skills[:10]))
    cache = previous_text_vectors(root, embedder.model_id)
    calibration_texts = tuple(dict.fromkeys([*gate.bundled_requests(), *chosen.off_topic]))
    vectors = _embed([r.query for r in chosen.rows] + list(calibration_texts), embedder, cache)
    rows = vectors[: len(chosen.rows)]
    null = vectors[len(chosen.rows):]
    positions = {n: i for i, n in enumerate(names)}
    index = as_index(chosen.rows, rows, positions, skill_vectors)
    best = best_cosines(null, skill_vectors, index)
    calibration = gate.calibrate(best, catalog_requests=len(chosen.off_topic))
    # Requests this catalog reaches above its own gate (a travel request where a travel
    # policy skill exists) are not what an off-topic turn looks like here.
    nearest = tuple(i for i, b in enumerate(best.tolist())
                    if calibration is None or b < calibration.min_dense)
    return Learned(chosen, rows, calibration_texts, null, calibration, fingerprint, nearest)


def as_index(rows: Sequence[selection.Row], vectors: np.ndarray,
             positions: Mapping[str, int], skill_vectors: np.ndarray) -> ExampleIndex | None:
    keep = [i for i, r in enumerate(rows) if r.skill in positions]
    if not keep:
        return None
    return example_index(
        [rows[i].query for i in keep],
        np.array([positions[rows[i].skill] for i in keep], dtype=np.int64),
        np.array([rows[i].negative for i in keep], dtype=bool), vectors[keep], skill_vectors)


def write(folder: Path, learned: Learned) -> None:
    data = {"rows": [r.to_dict() for r in learned.selection.rows],
            "calibration": list(learned.calibration_texts), "nearest": list(learned.nearest)}
    (folder / EXAMPLES_JSON).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    width = learned.calibration_vectors.shape[1]
    stacked = np.vstack([learned.vectors.reshape(-1, width),
                         learned.calibration_vectors]).astype(np.float32)
    np.save(folder / EXAMPLES_NPY, stacked)


def load(folder: Path, positions: Mapping[str, int], skill_vectors: np.ndarray,
         ) -> tuple[ExampleIndex | None, np.ndarray | None]:
    """The version's example index and its off-topic request vectors (None, None for a
    version built without them)."""
    path = folder / EXAMPLES_JSON
    if not path.is_file():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = [selection.Row.from_dict(r) for r in data.get("rows", [])]
    vectors = np.load(folder / EXAMPLES_NPY)
    if len(vectors) != len(rows) + len(data.get("calibration", [])):
        raise ValueError(f"{EXAMPLES_NPY} has {len(vectors)} rows, {EXAMPLES_JSON} lists "
                         f"{len(rows)} examples and the calibration requests")
    null = vectors[len(rows):]
    nearest = data.get("nearest")
    if isinstance(nearest, list):
        null = null[[int(i) for i in nearest if 0 <= int(i) < len(null)]]
    null = np.ascontiguousarray(null, dtype=np.float32)
    return as_index(rows, vectors[: len(rows)], positions, skill_vectors), null
