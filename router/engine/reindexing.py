"""Reindex of the served index: a new version built when a skill changed, swapped in, and where
the index is a bucket's, published for every replica (``router.reindex.reindexer`` builds and
reloads; the counters are its)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from router.index.build import ReindexResult, ReindexStats

if TYPE_CHECKING:
    from router.index.remote.mirror import RemoteIndex
    from router.index.store import IndexSnapshot
    from router.reindex.reindexer import Reindexer


class Reindexing:
    """The Engine's Reindex (its attributes are the Engine's)."""

    remote: RemoteIndex | None  # the bucket index_dir mirrors, if any
    _reindexer: Reindexer

    @property
    def _snapshot(self) -> IndexSnapshot:
        raise NotImplementedError

    def reindex_stats(self) -> ReindexStats:
        """A copy of the reindex and reload counters."""
        return self._reindexer.stats()

    def record_load_failure(self) -> None:
        """Count a version found on disk that could not be served."""
        self._reindexer.record_load_failure()

    def reindex(self, full: bool = False) -> ReindexResult:
        """Build a new version when a skill changed (or ``full``) and swap it in; routes in
        flight finish on their snapshot. See ``Reindexer.run``."""
        if self.remote is None:
            return self._reindexer.run(full)
        with self.remote.rebuilding(self._snapshot.skills):  # the bucket's poll waits
            result = self._reindexer.run(full)
            if result.swapped:  # every replica swaps to what one publishes
                self.remote.publish_rebuilt(result.index_version)
        return result
