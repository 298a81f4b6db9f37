"""Build, save and load an index directory, atomically.

Layout under an index root (default ``index_data/``)::

    CURRENT                      one line: the version being served (replaced by one rename)
    versions/<version>/
        manifest.json            format, model, dimension, counts, build time, file checksums
        skills.json              the skill records (Skill.to_dict) and discovery diagnostics
        vectors.npy              normalised float32 embeddings, row i = skill i
        dense.faiss              FAISS inner-product index over vectors.npy
        lexical/                 the BM25 index (router.index.lexical)
        examples.json, .npy      example requests and gate calibration (router.index.example_store)
        encoder/                 the fine-tuned encoder, when the build adopted one
                                 (router.index.fine_tune.stage; the manifest model is then
                                 ``<base>+ft-<hash12>``)

A build writes into ``.tmp-*`` beside ``versions/``, renames it into place, then replaces
``CURRENT``; a half-written build is never pointed at. Loading verifies every checksum.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from router.access.model import ANONYMOUS
from router.access.view import View, view_of
from router.calibration.catalog_gate import CatalogGates, ViewGate
from router.calibration.gate import Calibration, ZeroShotGate
from router.calibration.settings import TunedSettings
from router.common.checkpoints import checkpoint
from router.common.stages import stage
from router.encoders.base import Embedder
from router.errors import IndexCorrupt
from router.examples.model import Example
from router.examples.scoring import ExampleIndex
from router.index import dense, digest_store
from router.index import example_store as stored_examples
from router.index.build_inputs import Carried, Stages
from router.index.fine_tune import stage as encoder_fine_tune
from router.index.fine_tune import stored as stored_encoder
from router.index.lexical import LexicalIndex, skill_document
from router.index.vectors import catalog_centroid, embed_skills, previous_vectors
from router.index.version_files import (
    COMPACT_FROM,
    build_record,
    library_versions,
    read_records,
    write_files,
    write_json,
)
from router.index.versions.layout import (
    MANIFEST,
    VERSIONS,
    IndexInfo,
    checksums,
    current_version,
    info_from_manifest,
    mismatched,
    point_current,
    read_manifest,
)
from router.skills import digests
from router.skills.catalogs import complete_order
from router.skills.model import DEFAULT_CATALOG, Diagnostic, Skill

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: the lexical index in its own files (router.index.lexical)


@dataclass(frozen=True)
class IndexSnapshot:
    """An immutable loaded index: everything a route needs, nothing that changes."""

    info: IndexInfo
    skills: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...]
    vectors: np.ndarray
    dense: Any  # a faiss.Index
    lexical: LexicalIndex
    examples: ExampleIndex | None = None  # example requests (router.examples)
    calibration: Calibration | None = None  # the gate calibrated for this catalog
    off_topic: np.ndarray | None = None  # vectors of the requests it was calibrated on
    zero_shot: ZeroShotGate | None = None  # the gate without examples, kept beside theirs
    tuning: TunedSettings | None = None  # routing settings fitted to the catalog's examples
    lexical_examples: LexicalIndex | None = None  # BM25 with examples' text, if tuning chose it
    digests: Mapping[str, digest_store.SkillDigests] | None = None  # None: from before them
    catalogs: tuple[str, ...] = (DEFAULT_CATALOG,)  # the catalog order (precedence for "*")
    gates: CatalogGates | None = None  # the gates of views of some catalogs (several held)

    # Derived once per snapshot (cached_property writes the instance dict, which a frozen
    # dataclass allows); a snapshot never changes, so neither do these.
    @cached_property
    def centroid(self) -> np.ndarray:
        """Mean of the skill vectors: a query's cosine to it is a typical unrelated score."""
        return catalog_centroid(self.vectors)

    @cached_property
    def everything(self) -> View:
        """The view of a caller that sees every catalog: per name, the skill of the first
        catalog (``catalogs``) that holds it."""
        return view_of([(s.catalog, s.name) for s in self.skills],
                       complete_order(self.catalogs, (s.catalog for s in self.skills)), ANONYMOUS)

    @property
    def positions(self) -> Mapping[str, int]:
        return self.everything.positions

    @cached_property
    def keyed(self) -> dict[str, int]:
        """Skill key (``Skill.key``: catalog and name) -> row."""
        return {s.key: i for i, s in enumerate(self.skills)}

    @cached_property
    def unroutable(self) -> frozenset[int]:
        """Rows of skills no catalog may show (``Skill.routable`` false)."""
        return frozenset(i for i, s in enumerate(self.skills) if not s.routable)

    @cached_property
    def always_on_flagged(self) -> tuple[int, ...]:
        """Rows of skills whose metadata marks them always-on."""
        return tuple(i for i, s in enumerate(self.skills) if s.always_on)

    def position(self, name: str) -> int | None:
        return self.positions.get(name)


def build_index(skills: Sequence[Skill], diagnostics: Sequence[Diagnostic],
                embedder: Embedder, root: str | Path, *, examples: Sequence[Example] = (),
                stages: Stages | None = None, carried: Carried | None = None) -> IndexInfo:
    """Embed ``skills`` and write a new version under ``root``; make it current atomically.

    ``examples`` (from every source) are selected, embedded and stored with the version, and
    the relevance gate is calibrated against the catalog (``router.calibration.gate_fit``).
    ``stages`` may fit the routing settings to them (``router.calibration.settings_fit``) and
    replace the encoder with one fine-tuned on them, stored in the version
    (``router.index.fine_tune.stage``; every vector of the version is then that model's).
    ``carried`` (``router.index.build_inputs.Carried``): ``reuse`` takes the current version's
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
    ordered = sorted(skills, key=lambda s: (s.name, s.catalog))
    catalogs = complete_order(carried.catalogs, (s.catalog for s in ordered))
    fine_tuned = encoder_fine_tune.stage(ordered, examples, embedder, stages.fine_tune, place,
                                         progress=progress)
    placed = build_record(embedder)
    embedder = fine_tuned.embedder
    cache = previous_vectors(root, embedder.model_id) if reuse else {}
    cache.update(fine_tuned.known)
    cache.update(carried.known or {})
    vectors, reused = embed_skills(ordered, embedder, cache, progress)
    documents = [skill_document(s.name, s.description) for s in ordered]
    stage("building BM25 and the vector graph; %scalibrating the relevance gate (%d examples)",
          "fitting the routing settings; " if stages.fit_settings else "", len(examples))
    # the FAISS graph (native, GIL released) is built on a thread while BM25 and the examples
    # run here: at 1M skills each takes about a minute, so overlapping them saves one
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="faiss-build") as pool:
        graph = pool.submit(dense.build, vectors)
        lexical = LexicalIndex.build(documents, carried.workers)
        learned = stored_examples.prepare(
            stored_examples.Catalog([s.key for s in ordered], vectors, documents, lexical),
            examples, embedder, root, fit_settings=stages.fit_settings, query=carried.query,
            trained=fine_tuned.trained)
        dense_index = graph.result()
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
            digest_store.record(tmp, root, ordered, reuse=reuse)
        stored_encoder.place(fine_tuned.source, place.staging, tmp)
        manifest = {
            "format_version": FORMAT_VERSION, "version": version,
            "model": embedder.model_id, "dimension": int(embedder.dimension),
            "skill_count": len(ordered), "built_at": stamp,
            "content_hashes": {s.key: s.content_hash for s in ordered},
            "catalogs": list(catalogs),
            "libraries": library_versions(), "settings": dict(carried.settings),
            "build": placed,
            **learned.manifest(), encoder_fine_tune.RECORD: fine_tuned.record,
            "files": checksums(tmp),
        }
        write_json(tmp / MANIFEST, manifest, compact=len(ordered) > COMPACT_FROM)
        checkpoint("writing")
        final = root / VERSIONS / version
        os.rename(tmp, final)
        checkpoint("renaming")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    point_current(root, version)
    seconds = time.perf_counter() - started
    log.info("built index %s: %d skills (%d embeddings reused) in %.2fs",
             version, len(ordered), reused, seconds)
    return IndexInfo(version=version, model=embedder.model_id, dimension=int(embedder.dimension),
                     skill_count=len(ordered), built_at=stamp,
                     format_version=FORMAT_VERSION, path=str(final),
                     reused_embeddings=reused, build_seconds=seconds)


def load_index(root: str | Path, version: str | None = None, *,
               verify: bool = True) -> IndexSnapshot:
    """Load ``version`` (default: the current one). Raises IndexCorrupt on any mismatch."""
    root = Path(root)
    version = version or current_version(root)
    folder = root / VERSIONS / version
    try:
        manifest = read_manifest(folder)
        if manifest.get("format_version") != FORMAT_VERSION:
            raise IndexCorrupt(f"{folder}: index format {manifest.get('format_version')!r}, "
                               f"this build reads {FORMAT_VERSION}; rebuild the index")
        # Checksums (native code, off the GIL) are computed while the records are parsed;
        # a mismatch is reported before any binary file is handed to numpy or FAISS.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-verify") as pool:
            verifying = pool.submit(_verify, folder, manifest) if verify else None
            try:
                skills, diagnostics = read_records(folder / "skills.json")
            finally:
                if verifying is not None:
                    verifying.result()  # a mismatch takes precedence over a parse error
        vectors = np.load(folder / "vectors.npy")
        index = dense.load(folder / "dense.faiss")
        lexical = LexicalIndex.load(folder / "lexical")
        stored = stored_examples.load(folder, manifest, {s.key: i for i, s in enumerate(skills)},
                                      vectors)
        examples = stored.examples
        recorded = digest_store.load(folder)
        calibration = Calibration.from_dict(manifest.get("gate"))
        info = replace(info_from_manifest(manifest, version, folder),
                       example_count=len(examples) if examples else 0,
                       calibrated_gate=calibration.min_dense if calibration else 0.0,
                       tuning_json=json.dumps(stored.tuning.to_dict()) if stored.tuning else "")
    except IndexCorrupt:
        raise
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise IndexCorrupt(f"{folder}: cannot load index: {exc}") from exc
    if len(skills) != vectors.shape[0] or index.ntotal != len(skills):
        raise IndexCorrupt(f"{folder}: {len(skills)} skills but {vectors.shape[0]} vectors")
    return IndexSnapshot(info=info, skills=skills, diagnostics=diagnostics, vectors=vectors,
                         dense=index, lexical=lexical, examples=examples,
                         calibration=calibration, off_topic=stored.off_topic, digests=recorded,
                         tuning=stored.tuning, lexical_examples=stored.lexical,
                         zero_shot=stored.zero_shot,
                         catalogs=tuple(manifest.get("catalogs") or (DEFAULT_CATALOG,)),
                         gates=None if stored.catalogs is None or stored.null is None else
                         CatalogGates(ViewGate(calibration, stored.off_topic, stored.zero_shot),
                                      stored.null, stored.catalogs))


def _verify(folder: Path, manifest: dict[str, Any]) -> None:
    expected = manifest.get("files")
    if not isinstance(expected, dict) or not expected:
        raise IndexCorrupt(f"{folder}: manifest lists no file checksums")
    names = mismatched(folder, expected)
    if names:
        raise IndexCorrupt(f"{folder}: checksum mismatch in {', '.join(names)}")
