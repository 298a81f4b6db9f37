"""Recovering from a damaged index folder: which versions are good, which model start-up will
serve when the current one is not, and how a Reindex puts ``CURRENT`` right again.

A version is *damaged* when its manifest cannot be read or a file does not match its recorded
SHA-256. Start-up on a damaged (or missing) current version serves the newest good version
instead (``router.index.serving``); a Reindex repairs the folder (see ``router.builder.pipeline``);
retention never spends a slot on a damaged version (see ``router.index.versions.retention``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from router.errors import IndexUnavailable
from router.index.versions.layout import (
    VERSIONS,
    current_version,
    mismatched,
    point_current,
    read_info,
    read_manifest,
    version_names,
)

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


def startup_model(root: str | Path) -> str:
    """The model of the version start-up will most likely serve
    (``router.index.serving.load_serving_index``), read from manifests only, so the query
    encoder can load while the index does."""
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

