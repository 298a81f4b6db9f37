"""The index directory a build writes (``router.builder.version``) and its loading.

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
                                 (router.builder.fine_tune.stage; the manifest model is then
                                 ``<base>+ft-<hash12>``)

A build (``router.builder.version``) writes into ``.tmp-*`` beside ``versions/``, renames it
into place, then replaces ``CURRENT``; a half-written build is never pointed at. Loading
verifies every checksum.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from router.access.model import ANONYMOUS
from router.access.view import View, view_of
from router.calibration.catalog_gate import CatalogGates, ViewGate
from router.calibration.gate import Calibration, ZeroShotGate
from router.calibration.settings import TunedSettings
from router.errors import IndexCorrupt
from router.examples.scoring import ExampleIndex
from router.index import dense, digest_store
from router.index import example_store as stored_examples
from router.index.lexical import LexicalIndex
from router.index.vectors import catalog_centroid
from router.index.version_files import read_records
from router.index.versions.layout import (
    VERSIONS,
    IndexInfo,
    current_version,
    info_from_manifest,
    mismatched,
    read_manifest,
)
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
