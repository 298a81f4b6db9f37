"""New versions of the served index: a Reindex (discover skills again with the settings the
served version was built with, build what changed with ``router.builder.pipeline``, swap the new
version in) and a reload (swap in a version another process made current), each counted.

One at a time: the same lock serialises rebuilds and reloads, so the two never interleave.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from router.builder.recorded import discovery_from_settings, recorded_settings
from router.config import Config
from router.encoders.base import Embedder
from router.errors import IndexUnavailable, InvalidRequest
from router.examples.sources import files_from_settings
from router.index.store import IndexSnapshot, load_index
from router.index.versions.encoder import base_of
from router.index.versions.layout import current_version
from router.reindex.result import ReindexResult, ReindexStats

if TYPE_CHECKING:
    from router.builder.plan import BuildPlan, EncoderPlan
    from router.objectstore.mirror import RemoteIndex

log = logging.getLogger(__name__)


class Reindexer:
    """Rebuilds or reloads the index under ``index_dir`` from what ``served`` returns (the
    snapshot and query encoder being served) and hands each new version to ``swap`` (a rebuilt
    one before older ones are pruned). ``remote`` returns the index in object storage
    ``index_dir`` mirrors, if any: the recipe publishes a rebuilt version there."""

    def __init__(self, index_dir: Path | None, config: Config,
                 served: Callable[[], tuple[IndexSnapshot, Embedder]],
                 swap: Callable[[IndexSnapshot], None],
                 remote: Callable[[], RemoteIndex | None] = lambda: None) -> None:
        self._index_dir = index_dir
        self._config = config
        self._served = served
        self._swap = swap
        self._remote = remote
        self.lock = threading.Lock()  # held while the served index is rebuilt or reloaded
        self._stats_lock = threading.Lock()  # guards _stats, which metrics read at any time
        self._stats = ReindexStats()
        # the build encoder of the last rebuild, with the plan it was made for: the next
        # Reindex of the process reuses it (the model loads once, its fixed requests are
        # encoded once: router.encoders.kept) instead of loading the model again
        self._encoder: tuple[EncoderPlan, Embedder] | None = None

    def stats(self) -> ReindexStats:
        """A copy of the reindex and reload counters."""
        with self._stats_lock:
            return replace(self._stats)

    def record_load_failure(self) -> None:
        """Count a version found on disk that could not be served."""
        with self._stats_lock:
            self._stats.load_failures += 1

    def reload(self, *, wait: bool = True) -> bool:
        """Swap in the current version if it changed; see ``Engine.reload``."""
        if self._index_dir is None:
            return False
        if not self.lock.acquire(blocking=wait):
            return False
        try:
            if current_version(self._index_dir) == self._served()[0].info.version:
                return False
            self._swap(load_index(self._index_dir))
            return True
        finally:
            self.lock.release()

    def run(self, full: bool = False) -> ReindexResult:
        """Discover skills again with the settings the served index was built with; when any
        changed (or ``full``), build a new version, make it current and swap it in.

        Reindexes are serialised: a second call waits for the running one (up to
        ``index.reindex_wait_seconds``), then runs itself, usually finding nothing to do; past
        that wait it raises IndexUnavailable.
        """
        if self._index_dir is None:
            raise InvalidRequest("this server was started without an index folder; "
                                 "it cannot rebuild its index")
        wait = self._config.index.reindex_wait_seconds
        if not self.lock.acquire(timeout=max(0.0, wait)):
            raise IndexUnavailable(f"a reindex is already running and did not finish within "
                                   f"{wait:.0f}s; try again later")
        started = time.perf_counter()
        failed = True
        try:
            result = self._rebuild(self._index_dir, full, started)
            failed = False
            return result
        except Exception:
            log.exception("reindex of %s failed; still serving %s", self._index_dir,
                          self._served()[0].info.version)
            raise
        finally:
            self.lock.release()
            with self._stats_lock:
                self._stats.runs += 1
                self._stats.failures += int(failed)
                self._stats.last_duration_seconds = time.perf_counter() - started
                if not failed:
                    self._stats.last_result = result

    def _build_encoder(self, plan: BuildPlan) -> Embedder:
        """``plan``'s build encoder: the one the last rebuild made when it was made for the
        same encoder plan (model, device, precision, batch size), else a new one, kept."""
        if self._encoder is None or self._encoder[0] != plan.encoder:
            self._encoder = (plan.encoder, plan.make_encoder())
        return self._encoder[1]

    def _rebuild(self, index_dir: Path, full: bool, started: float) -> ReindexResult:
        # the build's machinery is imported by the first rebuild, not when a server starts
        from router.builder.pipeline import Served
        from router.builder.recipe import Recipe, Sources

        snapshot, query = self._served()  # its query encoder: the gate is calibrated on it
        info = snapshot.info
        recorded = recorded_settings(info.path)
        discovery = discovery_from_settings(recorded, info.version)
        # embedded with the full-precision model, whatever serves queries (router.builder.plan)
        recipe = Recipe.for_index(self._config, discovery, index_dir, model=base_of(info.model),
                                  remote=self._remote())
        outcome = recipe.build(
            Sources(files=tuple(files_from_settings(recorded))), serving=query,
            embedder=self._build_encoder(recipe.plan),
            served=Served(info.version, snapshot.skills, recorded), full=full,
            before_prune=lambda built: self._swap(load_index(index_dir, built.version)))
        changes = outcome.changes
        if outcome.info is None:
            log.info("reindex: %d skills unchanged; still serving %s", changes.unchanged,
                     info.version)
            return ReindexResult(info.version, changes, time.perf_counter() - started,
                                 outcome.diagnostics, swapped=False)
        log.info("reindex: %s -> %s (+%d ~%d -%d, %d unchanged)", info.version,
                 outcome.info.version, changes.added, changes.changed, changes.removed,
                 changes.unchanged)
        return ReindexResult(outcome.info.version, changes, time.perf_counter() - started,
                             outcome.diagnostics, swapped=True)
