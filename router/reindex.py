"""Rebuild the served index from the discovery settings it was built with, then swap it in.

``skill-router index`` records its effective discovery settings in the manifest, so a reindex
needs no arguments: it discovers skills again with those settings, compares them by name and
content hash with the snapshot being served, and when something changed builds a new version
(re-using every unchanged embedding), makes it current, and swaps it into the Engine. Routes
in flight finish on the snapshot they started with.

Reindexes of one Engine are serialised: a second request waits for the running one (up to
``index.reindex_wait_seconds``) and then runs itself, usually finding nothing left to do; if the
wait runs out it fails with ``IndexUnavailable`` and a message saying a reindex is running.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from router.config import DiscoveryConfig
from router.errors import IndexUnavailable, InvalidRequest
from router.index.layout import MANIFEST, read_manifest
from router.index.retention import prune
from router.index.store import build_index, load_index
from router.learning.loading import fingerprint
from router.learning.model import Example
from router.learning.sources import example_settings, files_from_settings, gather
from router.skills.model import Diagnostic, Skill

if TYPE_CHECKING:
    from router.engine import Engine

log = logging.getLogger(__name__)

SETTINGS_KEY = "discovery"


@dataclass(frozen=True)
class Changes:
    """How a freshly discovered catalog differs from the one being served."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)


@dataclass(frozen=True)
class ReindexResult:
    index_version: str  # the version served afterwards
    changes: Changes
    duration_seconds: float
    diagnostics: tuple[Diagnostic, ...]
    swapped: bool


@dataclass
class ReindexStats:
    """Counters an operator wants to see (exported as metrics); updated under the index lock."""

    runs: int = 0
    failures: int = 0
    load_failures: int = 0  # new versions found on disk that were refused
    last_duration_seconds: float = 0.0
    last_result: ReindexResult | None = None


def discovery_settings(config: DiscoveryConfig) -> dict[str, Any]:
    """The ``settings`` a build records so a later reindex can repeat its discovery."""
    return {SETTINGS_KEY: dataclasses.asdict(config)}


def discovery_from_settings(settings: Mapping[str, Any], version: str) -> DiscoveryConfig:
    """The DiscoveryConfig recorded by ``discovery_settings``. Raises InvalidRequest if none."""
    data = settings.get(SETTINGS_KEY)
    if not isinstance(data, Mapping):
        raise InvalidRequest(
            f"index {version} records no discovery settings, so it cannot be rebuilt in place; "
            "build it once with `skill-router index` (which records them)")
    known = {f.name for f in dataclasses.fields(DiscoveryConfig)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in data.items() if k in known}
    try:
        return DiscoveryConfig(**values)
    except TypeError as exc:
        raise InvalidRequest(f"index {version}: unusable discovery settings: {exc}") from exc


def recorded_settings(version_dir: str | Path) -> dict[str, Any]:
    """The ``settings`` object from a version folder's manifest ({} when absent)."""
    try:
        manifest = read_manifest(Path(version_dir))
    except (OSError, ValueError) as exc:
        raise IndexUnavailable(f"cannot read {version_dir}/{MANIFEST}: {exc}") from exc
    settings = manifest.get("settings")
    return settings if isinstance(settings, dict) else {}


def compare(old: Sequence[Skill], new: Sequence[Skill]) -> Changes:
    """Count added / changed / removed / unchanged skills by name and content hash."""
    before = {s.name: s.content_hash for s in old}
    after = {s.name: s.content_hash for s in new}
    common = before.keys() & after.keys()
    changed = sum(1 for name in common if before[name] != after[name])
    return Changes(added=len(after.keys() - before.keys()), changed=changed,
                   removed=len(before.keys() - after.keys()), unchanged=len(common) - changed)


def reindex_engine(engine: Engine, *, full: bool = False,
                   extra_examples: Sequence[Example] = ()) -> ReindexResult:
    """Rebuild ``engine``'s index from its recorded settings and swap it in (serialised).
    ``extra_examples`` (e.g. learned from traffic) join those the recorded files give; changed
    examples alone make a new version."""
    if engine.index_dir is None:
        raise InvalidRequest("this server was started without an index folder; "
                             "it cannot rebuild its index")
    wait = engine.config.index.reindex_wait_seconds
    if not engine.index_lock.acquire(timeout=max(0.0, wait)):
        raise IndexUnavailable(f"a reindex is already running and did not finish within "
                               f"{wait:.0f}s; try again later")
    stats = engine.reindex_stats
    started = time.perf_counter()
    try:
        result = _rebuild(engine, engine.index_dir, full, started, extra_examples)
    except Exception:
        stats.failures += 1
        log.exception("reindex of %s failed; still serving %s", engine.index_dir,
                      engine.info().version)
        raise
    finally:
        stats.runs += 1
        stats.last_duration_seconds = time.perf_counter() - started
        engine.index_lock.release()
    stats.last_result = result
    return result


def _served_fingerprint(version_dir: str | Path) -> str:
    try:
        data = read_manifest(Path(version_dir)).get("examples")
    except (OSError, ValueError):
        return ""
    return str(data.get("fingerprint", "")) if isinstance(data, dict) else ""


def _rebuild(engine: Engine, index_dir: Path, full: bool, started: float,
             extra: Sequence[Example]) -> ReindexResult:
    from router.skills.discovery import discover  # the scanner loads on the first reindex

    served = engine.snapshot
    settings = recorded_settings(served.info.path)
    config = discovery_from_settings(settings, served.info.version)
    found = discover(config)
    files = files_from_settings(settings)
    examples, problems = gather(found.skills, files, extra)
    changes = compare(served.skills, found.skills)
    relearn = fingerprint(examples) != _served_fingerprint(served.info.path)
    if not (changes.any or full or relearn):
        log.info("reindex: %d skills unchanged; still serving %s", changes.unchanged,
                 served.info.version)
        return ReindexResult(served.info.version, changes, time.perf_counter() - started,
                             tuple(found.diagnostics), swapped=False)
    info = build_index(found.skills, [*found.diagnostics, *problems], engine.embedder,
                       index_dir, settings={**discovery_settings(config),
                                            **example_settings(files)},
                       reuse=not full, examples=examples)
    engine.swap(load_index(index_dir, info.version))
    prune(index_dir, engine.config.index.keep_versions)
    log.info("reindex: %s -> %s (+%d ~%d -%d, %d unchanged%s)", served.info.version,
             info.version, changes.added, changes.changed, changes.removed, changes.unchanged,
             ", examples changed" if relearn else "")
    return ReindexResult(info.version, changes, time.perf_counter() - started,
                         tuple(found.diagnostics), swapped=True)
