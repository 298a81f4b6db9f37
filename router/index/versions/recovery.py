"""Recovering from a damaged index folder: which versions are good, what to serve at start-up
when the current one is not, and how a Reindex puts ``CURRENT`` right again.

A version is *damaged* when its manifest cannot be read or a file does not match its recorded
SHA-256. Start-up on a damaged (or missing) current version serves the newest good version
instead, with one ERROR line; a Reindex repairs the folder (see ``router.index.build``); retention
never spends a slot on a damaged version (see ``router.index.retention``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from router.errors import IndexUnavailable
from router.index.layout import (
    VERSIONS,
    current_version,
    mismatched,
    point_current,
    read_info,
    read_manifest,
    version_names,
)

if TYPE_CHECKING:
    from router.index.store import IndexSnapshot

log = logging.getLogger(__name__)


def damage(root: str | Path, version: str) -> str | None:
    """Why version ``version`` under ``root`` cannot be trusted, or None when it verifies."""
    folder = Path(root) / VERSIONS / version
    try:
        expected = read_manifest(folder).get("files")
        names = mismatched(folder, expected if isinstance(expected, dict) else {})
    except (OSError, ValueError) as exc:
        return f"cannot read {folder}: {exc}"
    if not isinstance(expected, dict) or not expected:
        return f"{folder}: the manifest lists no file checksums"
    if names:
        return f"{folder}: checksum mismatch in {', '.join(names)}"
    return None


def _older_snapshots(root: Path, skip: str | None) -> Iterator[IndexSnapshot]:
    from router.index.store import load_index

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
    from router.index.store import load_index

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


def startup_model(root: str | Path) -> str:
    """The model of the version ``load_serving_index`` will most likely serve (read from
    manifests only), so the query encoder can load while the index does."""
    try:
        return read_info(root).model
    except IndexUnavailable:
        for version in version_names(root):
            try:
                return str(read_manifest(Path(root) / VERSIONS / version)["model"])
            except (OSError, ValueError, KeyError):
                continue
        raise


def disk_problem(root: str | Path) -> str | None:
    """What is wrong with ``root``'s ``CURRENT`` and the version it names, or None."""
    try:
        return damage(root, current_version(root))
    except IndexUnavailable as exc:
        return str(exc)


def restore_current(root: str | Path, served: str, problem: str) -> bool:
    """Point ``CURRENT`` back at ``served`` if that version is intact. True if done."""
    lost = damage(root, served)
    if lost is not None:
        log.error("index folder %s is broken (%s) and the served version %s is damaged too "
                  "(%s); rebuilding", root, problem, served, lost)
        return False
    point_current(Path(root), served)
    log.error("index folder %s was broken (%s); CURRENT points at the served version %s again",
              root, problem, served)
    return True

