"""Build a version of the index under an index root and make it current, atomically: embed
the skills (reusing unchanged embeddings), fine-tune the encoder when asked
(``router.builder.fine_tune.stage``), build FAISS and BM25, select and embed the examples and
calibrate the gate (``router.index.example_store``), record every skill's file digests through
the build's skill source, write the files (``router.index.store`` describes the layout and
loads them back).

A build writes into ``.tmp-*`` beside ``versions/``, renames it into place, then replaces
``CURRENT``; a half-written build is never pointed at.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from router.builder.admission_kept import compact_manifest
from router.builder.fine_tune import stage as encoder_fine_tune
from router.builder.inputs import Carried, Stages
from router.builder.recorded import ADMISSION_KEY
from router.common.checkpoints import checkpoint
from router.common.stages import stage
from router.encoders.base import Embedder
from router.examples.model import Example
from router.index import codebooks, dense, digest_store
from router.index import example_store as stored_examples
from router.index.body import body_excerpt
from router.index.lexical import LexicalIndex, skill_document
from router.index.own_requests import Catalog
from router.index.store import FORMAT_VERSION
from router.index.vectors import (
    embed_skills,
    embedding_text,
    previous_vectors,
    text_key,
    written_vectors,
)
from router.index.version_files import (
    COMPACT_FROM,
    build_record,
    library_versions,
    write_files,
    write_json,
)
from router.index.versions import encoder as stored_encoder
from router.index.versions.layout import (
    MANIFEST,
    VERSIONS,
    IndexInfo,
    checksums,
    point_current,
)
from router.skills import digests
from router.skills.catalogs import complete_order
from router.skills.model import Diagnostic, Skill
from router.skills.sources.base import SkillSource, create_source

log = logging.getLogger(__name__)


def build_index(skills: Sequence[Skill], diagnostics: Sequence[Diagnostic],
                embedder: Embedder, root: str | Path, *, examples: Sequence[Example] = (),
                stages: Stages | None = None, carried: Carried | None = None) -> IndexInfo:
    """Embed ``skills`` and write a new version under ``root``; make it current atomically.

    ``examples`` (from every source) are selected, embedded and stored with the version, and
    the relevance gate is calibrated against the catalog (``router.calibration.gate_fit``).
    ``stages`` may fit the routing settings to them (``router.calibration.settings_fit``) and
    replace the encoder with one fine-tuned on them, stored in the version
    (``router.builder.fine_tune.stage``; every vector of the version is then that model's).
    ``carried`` (``router.builder.inputs.Carried``): ``reuse`` takes the current version's
    embedding of any unchanged text instead of encoding it again; ``known`` adds embeddings
    made elsewhere (a sharded build's partials), keyed by ``vectors.text_key``; ``settings``
    (e.g. the discovery settings) are kept in the manifest; ``digested``: the skills' file
    digests already computed against the current version's record (``build`` fingerprints
    them), recorded as they are when ``reuse``, so the files are not read twice; ``workers``
    split the BM25 words of a large catalog over processes; ``query``: the encoder that will
    serve queries, when its vectors differ (the gate is calibrated on them).
    """
    root = Path(root)
    (root / VERSIONS).mkdir(parents=True, exist_ok=True)
    carried = carried or Carried()
    staging = stored_encoder.new_staging(root)
    try:
        return _build(skills, diagnostics, embedder, examples, stages or Stages(), carried,
                      encoder_fine_tune.Place(root, staging, carried.reuse))
    finally:
        stored_encoder.discard(staging)


def _build(skills: Sequence[Skill], diagnostics: Sequence[Diagnostic], embedder: Embedder,
           examples: Sequence[Example], stages: Stages, carried: Carried,
           place: encoder_fine_tune.Place) -> IndexInfo:
    progress, reuse, digested, root = stages.progress, carried.reuse, carried.digested, place.root
    started = time.perf_counter()
    source = carried.source or create_source()  # a version built alone: the default source
    ordered = sorted(skills, key=lambda s: (s.name, s.catalog))
    catalogs = complete_order(carried.catalogs, (s.catalog for s in ordered))
    fine_tuned = encoder_fine_tune.stage(ordered, examples, embedder, stages.fine_tune, place,
                                         progress=progress)
    placed = build_record(embedder)
    embedder = fine_tuned.embedder
    cache = previous_vectors(root, embedder.model_id) if reuse else {}
    books = codebooks.kept(root, cache, [text_key(embedder.model_id, embedding_text(s))
                                         for s in ordered])  # the graph's, when few changed
    cache.update(fine_tuned.known)
    cache.update(carried.known or {})
    mark = time.perf_counter()
    vectors, reused = embed_skills(ordered, embedder, cache, progress)
    log.info("embedded %d skills (%d reused) in %.2fs on %s", len(ordered), reused,
             time.perf_counter() - mark, "/".join(placed.values()))
    mark = time.perf_counter()
    documents = [skill_document(s.name, s.description,
                                body_excerpt(carried.bodies.get(s.key, ""), stages.body_chars))
                 for s in ordered]
    stage("building BM25 and the vector graph; %scalibrating the relevance gate (%d examples)",
          "fitting the routing settings; " if stages.fit_settings else "", len(examples))
    # the FAISS graph (native, GIL released) is built on a thread while BM25 and the examples
    # run here: at 1M skills each takes about a minute, so overlapping them saves one
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="faiss-build") as pool:
        graph = pool.submit(partial(dense.build, vectors, trained=books.index))
        lexical = LexicalIndex.build(documents, carried.workers)
        learned = stored_examples.prepare(
            Catalog([s.key for s in ordered], vectors, documents, lexical,
                    [carried.bodies.get(s.key, "") for s in ordered],
                    stages.body_chars),
            examples, embedder, root, fit_settings=stages.fit_settings, query=carried.query,
            trained=fine_tuned.trained)
        dense_index = graph.result()
    log.info("BM25, examples and FAISS in %.2fs", time.perf_counter() - mark)
    built_at = datetime.now(UTC)
    stamp = built_at.isoformat()
    version = built_at.strftime("%Y%m%dT%H%M%S%fZ") + "-" + uuid.uuid4().hex[:6]
    tmp = root / f".tmp-{version}"
    stage("writing version %s", version)
    tmp.mkdir()
    try:
        write_files(tmp, ordered, diagnostics, vectors, lexical, dense_index)
        stored_examples.write(tmp, learned)
        if reuse and digested is not None and digested.keys() == {s.key for s in ordered}:
            digests.write(tmp, digested)
        else:
            _record_digests(tmp, root, ordered, source, reuse=reuse)
        stored_encoder.place(fine_tuned.source, place.staging, tmp)
        manifest = {
            "format_version": FORMAT_VERSION, "version": version,
            "model": embedder.model_id, "dimension": int(embedder.dimension),
            "skill_count": len(ordered), "built_at": stamp,
            "content_hashes": {s.key: s.content_hash for s in ordered},
            "catalogs": list(catalogs),
            "libraries": library_versions(), "settings": dict(carried.settings),
            "build": placed, "source": source.key,
            **learned.manifest(), encoder_fine_tune.RECORD: fine_tuned.record,
            **books.written(dense_index, version),
            "files": checksums(tmp),
        }
        compact = len(ordered) > COMPACT_FROM  # the verdict records' kept texts spliced in
        write_json(tmp / MANIFEST, manifest, compact=compact,
                   text=compact_manifest(manifest, ADMISSION_KEY) if compact else None)
        checkpoint("writing")
        final = root / VERSIONS / version
        os.rename(tmp, final)
        checkpoint("renaming")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    point_current(root, version)
    written_vectors(final, embedder.model_id, ordered, vectors)  # for the next build
    seconds = time.perf_counter() - started
    log.info("built index %s: %d skills (%d embeddings reused) in %.2fs",
             version, len(ordered), reused, seconds)
    return IndexInfo(version=version, model=embedder.model_id, dimension=int(embedder.dimension),
                     skill_count=len(ordered), built_at=stamp,
                     format_version=FORMAT_VERSION, path=str(final),
                     reused_embeddings=reused, build_seconds=seconds, source=source.key)


def _record_digests(folder: Path, root: Path, skills: Sequence[Skill], source: SkillSource,
                    *, reuse: bool) -> None:
    """Digest ``skills`` through ``source`` (the build's) into ``folder`` (a ``.tmp-*`` version
    folder, before its checksums)."""
    previous = digest_store.previous_digests(root) if reuse else None
    digests.write(folder, source.digest_all(skills, previous))
