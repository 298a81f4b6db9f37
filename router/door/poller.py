"""Pick up index versions written by a batch job: poll ``CURRENT`` and reload when it moves.

A version that fails to load (corrupt, partial, built for another model or format) is refused
with one log line naming it and the reason; the server keeps serving its last good snapshot
and does not retry that version, but loads the next one that appears.
An engine serving an ``s3://`` index (``engine.remote``) first brings its local mirror up to
the bucket's ``CURRENT`` (``router.objectstore.mirror``: fetched and verified first).
"""

from __future__ import annotations

import logging
import threading

from router.engine import Engine
from router.errors import IndexUnavailable
from router.index.versions.layout import current_version

log = logging.getLogger(__name__)


class IndexPoller:
    """A daemon thread that calls ``engine.reload()`` every ``interval`` seconds."""

    def __init__(self, engine: Engine, interval: float) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self._engine = engine
        self._interval = interval
        self._stop = threading.Event()
        self._refused: str | None = None
        self._last_error: str | None = None
        self._thread = threading.Thread(target=self._run, name="skill-router-index-poll",
                                        daemon=True)

    def start(self) -> IndexPoller:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self._interval + 5.0)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.check()

    def check(self) -> bool:
        """Reload once if a new, not yet refused version is current. True if swapped."""
        index_dir = self._engine.index_dir
        if index_dir is None:
            return False
        try:
            if self._engine.remote is not None:  # fetched and verified before CURRENT moves
                self._engine.remote.sync()
            version = current_version(index_dir)
            if version in (self._refused, self._engine.info().version):
                return False
            self._refused = version  # until it loads; a failed load is not retried
            swapped = self._engine.reload(wait=False)
            self._refused = self._last_error = None
            return swapped
        except IndexUnavailable as exc:
            self._refuse(str(exc))
        except Exception as exc:  # the poller must outlive any surprise
            log.exception("index poll of %s failed", index_dir)
            self._refuse(repr(exc))
        return False

    def _refuse(self, reason: str) -> None:
        if reason == self._last_error:
            return
        self._last_error = reason
        self._engine.record_load_failure()
        log.error("refused new index version %s: %s; still serving %s",
                  self._refused or "(none)", reason, self._engine.info().version)
