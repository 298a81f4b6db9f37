"""The one index-build pipeline: discover -> build (with the settings that repeat it) -> prune.

``skill-router index``, the Reindex RPC (through ``Engine.reindex``) and ``skill-router eval``
all build through ``build``, each with the ``router.builder.plan.BuildPlan`` its recipe gathers
(``router.builder.recipe``); a sharded build (``build_shard`` on N workers, then
``merge_shards``) takes the same plan and ends in the same ``build`` with every embedding
already made.

A build records its effective discovery settings in the manifest,
so a reindex needs no arguments: it discovers skills again with those settings and, given the
skills being served, builds only when something changed (re-using every unchanged embedding).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from router.builder import shards
from router.builder.admission_reuse import Prior
from router.builder.admitting import admit_found
from router.builder.bodies import bodies_for
from router.builder.inputs import Carried
from router.builder.plan import BuildPlan
from router.builder.recorded import SETTINGS_KEY as SETTINGS_KEY  # re-exported, as are
from router.builder.recorded import Changes as Changes  # the next four: the build's callers
from router.builder.recorded import discovery_from_settings as discovery_from_settings
from router.builder.recorded import discovery_settings as discovery_settings
from router.builder.recorded import recorded_settings as recorded_settings
from router.builder.version import build_index
from router.common.collector import paused
from router.common.stages import stage
from router.common.workers import Workers
from router.config import DiscoveryConfig
from router.encoders.base import Embedder
from router.errors import InvalidRequest
from router.examples.loading import fingerprint
from router.examples.sources import example_settings, gather
from router.index.digest_store import previous_digests
from router.index.example_store import QUERY_VECTORS, vectors_of
from router.index.vectors import embed_skills, previous_vectors
from router.index.versions.layout import IndexInfo
from router.index.versions.recovery import disk_problem, restore_current
from router.index.versions.retention import prune
from router.skills import digests as file_digests
from router.skills.catalogs import catalog_order
from router.skills.model import Diagnostic, DiscoveryResult, Skill

log = logging.getLogger(__name__)

EXAMPLES_FINGERPRINT = "examples_fingerprint"  # settings key: what the examples said
FILES_FINGERPRINT = "files_fingerprint"  # settings key: every skill file's digest



def compare(old: Sequence[Skill], new: Sequence[Skill]) -> Changes:
    """Count added / changed / removed / unchanged skills by key (catalog and name) and
    content hash."""
    before = {s.key: s.content_hash for s in old}
    after = {s.key: s.content_hash for s in new}
    common = before.keys() & after.keys()
    changed = sum(1 for name in common if before[name] != after[name])
    return Changes(added=len(after.keys() - before.keys()), changed=changed,
                   removed=len(before.keys() - after.keys()), unchanged=len(common) - changed)


@dataclass(frozen=True)
class Served:
    """The index being served: its version, its skills and its manifest settings."""

    version: str
    skills: Sequence[Skill]
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class BuildOutcome:
    """What a pipeline run did. ``info`` is None when nothing changed and nothing was built."""

    info: IndexInfo | None
    changes: Changes
    diagnostics: tuple[Diagnostic, ...]


def build(plan: BuildPlan, out: str | Path, *, served: Served | None = None,
          full: bool = False, known: Mapping[str, np.ndarray] | None = None,
          before_prune: Callable[[IndexInfo], None] | None = None,
          embedder: Embedder | None = None) -> BuildOutcome:
    """Discover skills as ``plan`` says (from its ``source``) and build a new current version
    under ``out``.

    Example requests come from the skill folders (``evals/evals.json``, trigger-eval files),
    from the plan's ``example_files`` (JSON lines; their paths are recorded, so a Reindex
    re-reads them) and its ``extra_examples`` (e.g. learned from traffic); a problem in any of
    them is a diagnostic. Their fingerprint is an input: changed examples alone make a new
    version. The plan's ``inputs`` are further settings the build depends on (e.g. the
    fingerprint of the examples learned from traffic), recorded in the manifest beside the
    discovery settings.

    Given the ``served`` index, nothing is built when no skill was added, changed or removed,
    every input is as recorded and the folder is sound (unless ``full``): a ``CURRENT`` that is
    missing or names a damaged version is pointed back at the served version when that is
    intact, and otherwise a new version is built without reusing embeddings. ``full``
    re-embeds every skill instead of re-using unchanged embeddings; ``known`` supplies
    embeddings made elsewhere (see ``merge_shards``). ``before_prune`` runs once the new
    version is current and before old versions are pruned (a server swaps it in there).
    The routing settings are fitted to the catalog from its examples when the plan says so
    (``router.calibration.settings_fit``; otherwise the defaults are served), and the encoder
    may be fine-tuned on them (``router.builder.fine_tune.stage``; its mode is an input when the
    encoder can be tuned). The plan's ``workers`` share the per-skill work of a large catalog
    (``router.common.workers``; same result). ``embedder`` replaces the plan's encoder
    (a test's, or one already made by the caller). The cyclic garbage collector is paused
    while the build runs (``router.common.collector``).
    """
    embedder = embedder or plan.make_encoder()
    with paused(), Workers.using(plan.workers) as pool:  # the build makes no cycles
        found = _discover(plan, pool)
        examples, problems = gather(found.skills, plan.example_files, plan.extra_examples, pool)
        # every skill file's digest, once: fingerprinted here, recorded by the build (1M skills)
        digested = plan.source.digest_all(found.skills, previous_digests(Path(out)), pool)
        files = file_digests.fingerprint(digested)
        # the served verdicts reused when admission's inputs are as recorded (not on ``full``)
        admitted = admit_found(found, plan.admission, embedder, examples, out, plan.source,
                               plan.feedback, prior=Prior(
                                   known, served.settings if served and not full else None,
                                   files, digested))
        found, known = admitted.found, {**admitted.vectors, **(known or {})}
        diagnostics = (*found.diagnostics, *problems)
        inputs = {**plan.inputs, **example_settings(plan.example_files), **admitted.record,
                  EXAMPLES_FINGERPRINT: fingerprint(examples), FILES_FINGERPRINT: files}
        # the query vectors the gate is calibrated on: another query encoder, another gate
        inputs[QUERY_VECTORS] = vectors_of(plan.query if plan.query is not None else embedder)
        inputs.update(plan.stages.recorded(embedder))
        changes = compare(served.skills if served else (), found.skills)
        damaged = served is not None and _unrepaired(out, served.version)
        if served is not None and not (changes.any or full or damaged
                                       or _inputs_differ(served, inputs)):
            return BuildOutcome(None, changes, diagnostics)
        carried = Carried({**discovery_settings(plan.discovery), **inputs},
                          reuse=not (full or damaged), known=known, digested=digested,
                          workers=pool, catalogs=catalog_order(plan.discovery.catalogs),
                          query=plan.query, source=plan.source,
                          bodies=bodies_for(found.skills, admitted.bodies, plan.source))
        info = build_index(found.skills, diagnostics, embedder, out, examples=examples,
                           stages=plan.stages, carried=carried)
    if before_prune is not None:
        before_prune(info)
    prune(out, plan.keep_versions)
    return BuildOutcome(info, changes, diagnostics)


def _unrepaired(out: str | Path, served_version: str) -> bool:
    """True when the folder's CURRENT is missing or damaged and could not be pointed back at
    the served version (which is then rebuilt from scratch)."""
    problem = disk_problem(out)
    return problem is not None and not restore_current(out, served_version, problem)


def _inputs_differ(served: Served, inputs: Mapping[str, Any]) -> bool:
    return any(served.settings.get(key) != value for key, value in inputs.items())


def _discover(plan: BuildPlan, workers: Workers | None = None) -> DiscoveryResult:
    from router.skills.scan_plan import check_complete

    stage("discovering skills")
    found = plan.source.discover(plan.discovery, workers=workers)
    stage("discovered %d skills (%d diagnostics)", len(found.skills), len(found.diagnostics))
    if not found.skills and not plan.allow_empty:
        raise InvalidRequest(f"no skills found in {_scanned(plan.discovery)}; give the "
                             "folder with --root DIR, or --allow-empty to build an empty index")
    # a cut-short scan is an error unless allowed
    check_complete(plan.discovery, found.diagnostics)
    return found


def _scanned(config: DiscoveryConfig) -> str:
    """Where a discovery looked, for a message."""
    where = [f"project {config.project_dir}"] if config.project_dir else []
    where += [f"home {config.home_dir}"] if config.home_dir else []
    where += [*config.org_roots, *config.bundled_roots, *config.catalogs, *config.mcp_servers]
    return ", ".join(where) or "no scope (every scope is off)"


@dataclass(frozen=True)
class ShardOutcome:
    path: Path  # the partial written
    skills: int  # skills in this shard
    reused: int  # of those, embeddings taken from the current index
    total: int  # skills in the whole catalog
    diagnostics: tuple[Diagnostic, ...]


def build_shard(plan: BuildPlan, out: str | Path, spec: shards.ShardSpec, *,
                embedder: Embedder | None = None) -> ShardOutcome:
    """Embed shard ``spec`` of the catalog into a partial under ``out`` (the index is not
    touched). Unchanged skills reuse the current index's embeddings, like a normal build.
    The plan's ``workers`` share the discovery of a large catalog, as in ``build``."""
    embedder = embedder or plan.make_encoder()
    with Workers.using(plan.workers) as pool:
        found = _discover(plan, pool)
    print_ = shards.fingerprint(found.skills, discovery_settings(plan.discovery),
                                embedder.model_id)
    mine = sorted((s for s in found.skills if shards.shard_of(s.key, spec.count) == spec.index),
                  key=lambda s: (s.name, s.catalog))
    cache = previous_vectors(Path(out), embedder.model_id)
    vectors, reused = embed_skills(mine, embedder, cache, plan.stages.progress)
    path = shards.write_partial(out, spec, print_, embedder.model_id, mine, vectors)
    log.info("shard %d/%d: %d of %d skills (%d embeddings reused) -> %s", spec.index,
             spec.count, len(mine), len(found.skills), reused, path)
    return ShardOutcome(path, len(mine), reused, len(found.skills), tuple(found.diagnostics))


def merge_shards(plan: BuildPlan, out: str | Path, *,
                 embedder: Embedder | None = None) -> BuildOutcome:
    """Assemble the partials of every shard into a normal new version under ``out`` (made
    current by the same atomic switch as any build), then remove the partials. A missing,
    stale or corrupt partial raises IndexUnavailable and leaves the current index as it was.
    The plan's ``workers`` as in ``build``."""
    embedder = embedder or plan.make_encoder()
    with Workers.using(plan.workers) as pool:
        found = _discover(plan, pool)
        print_ = shards.fingerprint(found.skills, discovery_settings(plan.discovery),
                                    embedder.model_id)
        known = shards.collect_partials(out, found.skills, print_, embedder.model_id)
        outcome = build(dataclasses.replace(plan, workers=pool), out, known=known,
                        embedder=embedder)
    shards.clear_partials(out, print_)
    return outcome
