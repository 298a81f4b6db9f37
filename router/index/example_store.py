"""The example requests and gate calibration of one index version (the build's I/O edge).

Files in a version folder (checksummed with the others by the manifest):

    examples.json   {"rows": [{"query", "skill", "negative", "source", "origin"}, ...],
                     "calibration": [off-topic request, ...], "nearest": [row, ...],
                     "nearest_zero_shot": [row, ...]}  (rows of "calibration" each gate's
                     nearest-request test compares with; router.calibration.gate)
    examples.npy    float32, normalised: one row per example row, then one per calibration
                    request
    lexical-examples/  the BM25 index over skill documents expanded with their examples'
                    text, when the settings fitted at build time chose it
                    (router.calibration.settings_fit)
    gate-catalogs.npy  with several catalogs, the gate's evidence per catalog
                    (router.index.gate_store)

Embeddings are reused from the current version by (model, text), like skill embeddings. What is
stored is the build encoder's, as the skills are: a turn's vector is compared with those rows.
Every threshold is taken from requests as the encoder that serves queries embeds them, when
its vectors differ (an int8 copy; ``Carried.query``): the off-topic requests' best cosines over
the catalog (the gate's quantiles and the floor's scale), their reach to taught requests, and
the held-out example requests the settings and the gate are fitted on. The manifest records
which encoder's vectors those were (``gate.query_vectors``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from router.calibration import gate
from router.calibration.catalog_gate import CatalogEvidence
from router.calibration.gate_encoder import fits
from router.calibration.gate_fit import calibrate_gate
from router.calibration.settings import Fit, FittedSettings, Seen
from router.calibration.settings_fit import ExampleRows, fit_to_examples
from router.encoders.base import Embedder
from router.encoders.kept import encode_kept
from router.errors import IndexUnavailable
from router.examples import selection
from router.examples.loading import fingerprint
from router.examples.model import Example
from router.examples.scoring import VIEW, ExampleIndex, example_index, positive_texts
from router.index import gate_store
from router.index.gate_store import private_file
from router.index.lexical import LexicalIndex
from router.index.own_requests import Catalog, fit_own
from router.index.vectors import catalog_centroid
from router.index.versions.layout import VERSIONS, current_version, read_manifest

log = logging.getLogger(__name__)

FLOAT32 = "float32"  # the vectors of the full-precision model (torch, or its ONNX export)
QUERY_VECTORS = "query_vectors"  # manifest gate key: the query encoder's vectors it was fit on
EXAMPLES_JSON = "examples.json"
EXAMPLES_NPY = "examples.npy"
LEXICAL_EXAMPLES = "lexical-examples"

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
    tuning: FittedSettings | None = None  # routing settings fitted to the catalog
    expanded: LexicalIndex | None = None  # BM25 over documents with examples' text, if chosen
    zero_shot: gate.ZeroShotGate | None = None  # the gate without examples (with examples)
    nearest_zero_shot: tuple[int, ...] = ()  # its nearest-request test's calibration rows
    query_vectors: str = FLOAT32  # the query encoder's vectors the gate was calibrated with
    catalogs: CatalogEvidence | None = None  # per catalog, for the gates of views (several)

    def manifest(self) -> dict[str, object]:
        rows = self.selection.rows
        return {"examples": {"rows": len(rows), "negatives": sum(r.negative for r in rows),
                             "skills": len({r.skill for r in rows}),
                             "off_topic": len(self.selection.off_topic),
                             "unknown_skills": list(self.selection.unknown_skills)[:20],
                             "fingerprint": self.fingerprint},
                "gate": _gate_dict(self.calibration, self.zero_shot, self.query_vectors),
                "tuning": self.tuning.to_dict() if self.tuning else None}


def _gate_dict(calibration: gate.Calibration | None, zero_shot: gate.ZeroShotGate | None,
               query_vectors: str) -> dict[str, object] | None:
    if calibration is None:
        return None
    out: dict[str, object] = {**calibration.to_dict(), QUERY_VECTORS: query_vectors}
    if zero_shot is not None:
        out["zero_shot"] = zero_shot.to_dict()
    return out


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


def expanded_documents(documents: Sequence[str],
                       extra: Mapping[int, Sequence[str]]) -> list[str]:
    """Each skill's BM25 document with ``extra[position]`` texts appended."""
    return [" ".join([doc, *extra.get(i, ())]) for i, doc in enumerate(documents)]


def vectors_of(embedder: Embedder) -> str:
    """What an encoder's vectors are (``float32``, or an int8 copy's
    ``int8-<weights>/<recipe>``, ``router.encoders.int8.vectors_name``)."""
    return str(getattr(embedder, "vectors", FLOAT32))


def _fit(index: ExampleIndex | None, catalog: Catalog, embedder: Embedder,
         held_out: np.ndarray | None,
         trained: frozenset[str]) -> tuple[Fit | None, LexicalIndex | None]:
    """The settings fit (judged on no request in ``trained``, those the encoder was fine-tuned
    on), and the BM25 index expanded with every example when it chose one."""
    if index is None:
        return None, None
    _, skill_vectors, documents, plain = catalog[:4]

    def lexical_for(extra: Mapping[int, Sequence[str]]) -> LexicalIndex:
        if not extra and plain is not None:
            return plain
        return LexicalIndex.build(expanded_documents(documents, extra))

    rows = ExampleRows(index.queries, index.skill, index.negative, index.vectors, held_out)
    fit = fit_to_examples(skill_vectors, catalog_centroid(skill_vectors), rows,
                          embedder.encode, lexical_for, seen=Seen(embedder.model_id, trained))
    if fit is None or not fit.settings.expand_lexical:
        return fit, None
    return fit, lexical_for(positive_texts(index))


def prepare(catalog: Catalog, examples: Sequence[Example], embedder: Embedder, root: Path, *,
            fit_settings: bool = False, query: Embedder | None = None,
            trained: frozenset[str] = frozenset()) -> Learned:
    """Select and embed the examples, fit the routing settings to the catalog when
    ``fit_settings`` (``router.calibration.settings_fit``; judged on no request in
    ``trained``, those the encoder was fine-tuned on) and calibrate the gate against it
    (``router.calibration.gate_fit``), on ``query``'s vectors (module doc). Where the examples
    fit nothing (none, or too few), the catalog's own requests do
    (``router.index.own_requests``)."""
    names, skill_vectors, _, lexical = catalog[:4]
    chosen = selection.select(examples, set(names))
    if chosen.unknown_skills:
        log.warning("examples name %d skills the catalog does not hold (ignored): %s",
                    len(chosen.unknown_skills), ", ".join(chosen.unknown_skills[:10]))
    cache = previous_text_vectors(root, embedder.model_id)
    calibration_texts = tuple(dict.fromkeys([*gate.bundled_requests(), *chosen.off_topic]))
    vectors = _embed([r.query for r in chosen.rows] + list(calibration_texts), embedder, cache)
    rows = vectors[: len(chosen.rows)]
    null = vectors[len(chosen.rows):]  # the off-topic requests as turns are compared with them
    if query is not None and (query.model_id != embedder.model_id
                              or vectors_of(query) == vectors_of(embedder)):
        query = None  # the same vectors (or another model: a fine-tuned one serves its own)
    asked = None if query is None else encode_kept(query, calibration_texts)  # ... as turns
    positions = {n: i for i, n in enumerate(names)}
    index = as_index(chosen.rows, rows, positions, skill_vectors)
    held_out = None if query is None or index is None else encode_kept(query, index.queries)
    fit, expanded = _fit(index, catalog, query or embedder, held_out,
                         trained) if fit_settings else (None, None)
    words = gate_store.best_bm25(calibration_texts, expanded or lexical)
    own, own_tuning = fit_own(catalog, query or embedder, fusion=fit_settings and fit is None,
                              gate=fit is None and fits(embedder.model_id))
    fitted = calibrate_gate(null, skill_vectors, index, words, len(chosen.off_topic), fit, asked,
                            own)
    per_catalog = None if fitted.calibration is None else gate_store.measure(
        names, skill_vectors, index, fit.settings.example_mode if fit else VIEW,
        null if asked is None else asked, calibration_texts, expanded or lexical)
    return Learned(chosen, rows, calibration_texts, null, fitted.calibration,
                   fingerprint(examples), fitted.nearest, fit.settings if fit else own_tuning,
                   expanded, fitted.zero_shot, fitted.nearest_zero_shot,
                   vectors_of(query or embedder), per_catalog)


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
            "calibration": list(learned.calibration_texts), "nearest": list(learned.nearest),
            "nearest_zero_shot": list(learned.nearest_zero_shot),
            **gate_store.write(folder, learned.catalogs)}
    # the rows hold requests learned from users' traffic, the vectors their embeddings and the
    # expanded BM25 index their words: owner-only, like the feedback store
    with private_file(folder / EXAMPLES_JSON, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, ensure_ascii=False))
    width = learned.calibration_vectors.shape[1]
    stacked = np.vstack([learned.vectors.reshape(-1, width),
                         learned.calibration_vectors]).astype(np.float32)
    with private_file(folder / EXAMPLES_NPY, "wb") as binary:
        np.save(binary, stacked)
    if learned.expanded is not None:
        words = folder / LEXICAL_EXAMPLES
        words.mkdir(mode=0o700)
        learned.expanded.save(words)
        for path in words.rglob("*"):  # written inside the 0700 folder, before the rename
            os.chmod(path, 0o700 if path.is_dir() else 0o600)


@dataclass(frozen=True)
class Stored:
    """What a version holds for examples: their index, the off-topic request vectors, the
    tuned settings, the BM25 index expanded with examples and the zero-shot gate kept beside
    the examples' (each None when absent)."""

    examples: ExampleIndex | None = None
    off_topic: np.ndarray | None = None
    tuning: FittedSettings | None = None
    lexical: LexicalIndex | None = None
    zero_shot: gate.ZeroShotGate | None = None
    null: np.ndarray | None = None  # every calibration request's vector (with catalogs)
    catalogs: CatalogEvidence | None = None  # per catalog (router.index.gate_store)


def load(folder: Path, manifest: Mapping[str, Any], positions: Mapping[str, int],
         skill_vectors: np.ndarray) -> Stored:
    """The version's examples, off-topic vectors, tuned settings, expanded BM25 index and
    zero-shot gate."""
    tuning = FittedSettings.from_dict(manifest.get("tuning"))
    lexical = None
    if (folder / LEXICAL_EXAMPLES).is_dir():
        lexical = LexicalIndex.load(folder / LEXICAL_EXAMPLES)
    path = folder / EXAMPLES_JSON
    if not path.is_file():
        return Stored(tuning=tuning, lexical=lexical)
    data = json.loads(path.read_text(encoding="utf-8"))
    examples, null = _load_rows(folder, data, positions, skill_vectors)
    nearest = data.get("nearest")
    off_topic = _rows(null, nearest if isinstance(nearest, list) else None)
    recorded = manifest.get("gate")
    record: Any = recorded.get("zero_shot") if isinstance(recorded, dict) else None
    zero = gate.Calibration.from_dict(record)
    zero_shot = None if zero is None else gate.ZeroShotGate(
        zero, _rows(null, data.get("nearest_zero_shot") or []), float(record.get("taught", -1.0)))
    per_catalog = gate_store.load(folder, data, len(null))
    return Stored(examples, off_topic, tuning, lexical, zero_shot,
                  None if per_catalog is None else _rows(null, None), per_catalog)


def _rows(null: np.ndarray, keep: list[Any] | None) -> np.ndarray:
    """The calibration rows ``keep`` lists (all of them for None)."""
    if keep is not None:
        null = null[[int(i) for i in keep if 0 <= int(i) < len(null)]]
    return np.ascontiguousarray(null, dtype=np.float32)


def _load_rows(folder: Path, data: Mapping[str, Any], positions: Mapping[str, int],
               skill_vectors: np.ndarray) -> tuple[ExampleIndex | None, np.ndarray]:
    rows = [selection.Row.from_dict(r) for r in data.get("rows", [])]
    vectors = np.load(folder / EXAMPLES_NPY)
    if len(vectors) != len(rows) + len(data.get("calibration", [])):
        raise ValueError(f"{EXAMPLES_NPY} has {len(vectors)} rows, {EXAMPLES_JSON} lists "
                         f"{len(rows)} examples and the calibration requests")
    return as_index(rows, vectors[: len(rows)], positions, skill_vectors), vectors[len(rows):]
