"""The snapshot a server starts on: the current version, or, when it is missing or damaged, the
newest version that loads. Which versions are damaged is ``router.index.versions.recovery``;
this module loads them (``router.index.store``), so it sits above the versions on disk."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from router.errors import IndexUnavailable
from router.index.store import IndexSnapshot, load_index
from router.index.versions.layout import current_version, version_names

log = logging.getLogger(__name__)


def _older_snapshots(root: Path, skip: str | None) -> Iterator[IndexSnapshot]:
    for version in version_names(root):
        if version == skip:
            continue
        try:
            yield load_index(root, version)
        except IndexUnavailable as exc:
            log.warning("not serving %s either: %s", version, exc)


def load_serving_index(root: str | Path) -> IndexSnapshot:
    """The current version, or, when it is missing or damaged, the newest version that loads
    (with an ERROR line saying so). Raises the original error when none loads."""
    root = Path(root)
    try:
        return load_index(root)
    except IndexUnavailable as exc:
        try:
            bad: str | None = current_version(root)
        except IndexUnavailable:
            bad = None
        for snapshot in _older_snapshots(root, bad):
            log.error("cannot serve the current index of %s (%s); serving the newest good "
                      "version %s instead: run a Reindex or `skill-router index` to repair it",
                      root, exc, snapshot.info.version)
            return snapshot
        raise
