"""In-memory index snapshots for the pure routing tests: what a build of ``skills`` writes and
``load_index`` reads back (records sorted by name, vectors from the deterministic hash embedder,
the FAISS and BM25 indexes, example rows and the gate calibrated on the bundled off-topic
requests), made without a disk. ``tests/unit/routing/test_router.py`` checks that one routes as
the built index does."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from router.calibration.settings import FittedSettings
from router.encoders.base import Embedder
from router.encoders.hashing import HashEmbedder
from router.examples.model import Example
from router.index import dense
from router.index import example_store as stored_examples
from router.index.lexical import LexicalIndex, skill_document
from router.index.store import FORMAT_VERSION, IndexSnapshot
from router.index.vectors import embed_skills
from router.index.versions.layout import IndexInfo
from router.skills.model import Diagnostic, Skill

# Each snapshot its own version: routing caches per (path, version), as for built versions.
_VERSIONS = itertools.count(1)
# prepare() reuses the example vectors of the current version under an index root; a root
# that holds none makes it embed everything afresh, as a first build does.
_NO_INDEX = Path("/nonexistent/skill-router-index")


def snapshot_of(skills: Iterable[Skill], embedder: Embedder | None = None, *,
                examples: Sequence[Example] = (), diagnostics: Sequence[Diagnostic] = (),
                tuning: FittedSettings | None = None) -> IndexSnapshot:
    """The snapshot a build of ``skills`` (and ``examples``) would serve, with ``tuning`` as
    its fitted routing settings (none by default, as a build without a settings fit)."""
    embedder = embedder or HashEmbedder()
    ordered = sorted(skills, key=lambda s: s.name)
    vectors, _ = embed_skills(ordered, embedder, {}, False)
    documents = [skill_document(s.name, s.description) for s in ordered]
    lexical = LexicalIndex.build(documents)
    names = [s.name for s in ordered]
    learned = stored_examples.prepare(
        stored_examples.Catalog(names, vectors, documents, lexical), examples, embedder,
        _NO_INDEX)
    positions = {n: i for i, n in enumerate(names)}
    index = stored_examples.as_index(learned.selection.rows, learned.vectors, positions,
                                     vectors)
    off_topic = np.ascontiguousarray(learned.calibration_vectors[list(learned.nearest)],
                                     dtype=np.float32)
    calibration = learned.calibration
    info = IndexInfo(version=f"in-memory-{next(_VERSIONS)}", model=embedder.model_id,
                     dimension=int(embedder.dimension), skill_count=len(ordered), built_at="",
                     format_version=FORMAT_VERSION, path="",
                     calibrated_gate=calibration.min_dense if calibration else 0.0,
                     example_count=len(index) if index else 0)
    snapshot = IndexSnapshot(info=info, skills=tuple(ordered), diagnostics=tuple(diagnostics),
                             vectors=vectors, dense=dense.build(vectors), lexical=lexical,
                             examples=index, calibration=calibration, off_topic=off_topic,
                             zero_shot=learned.zero_shot, lexical_examples=learned.expanded)
    return replace(snapshot, tuning=tuning) if tuning is not None else snapshot
