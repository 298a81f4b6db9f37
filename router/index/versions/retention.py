"""Disk retention for an index folder: keep the newest versions, drop abandoned temporaries.

Version names start with their UTC build time (``20250101T120000123456Z-ab12cd``), so sorting
names sorts by age. The current version is never removed, whatever its age. A ``.tmp-*``
folder is what a build that was killed leaves behind; one still being written by another
process is recent, so only temporaries older than ``stale_seconds`` are removed.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from router.errors import IndexUnavailable
from router.index.versions.layout import CURRENT, VERSIONS, current_version, version_names
from router.index.versions.recovery import damage

log = logging.getLogger(__name__)

STALE_TMP_SECONDS = 600.0


@dataclass(frozen=True)
class Pruned:
    """What a clean-up removed."""

    versions: tuple[str, ...]
    temporaries: tuple[str, ...]


def prune(root: str | Path, keep: int, *, stale_seconds: float = STALE_TMP_SECONDS,
          now: float | None = None) -> Pruned:
    """Remove all but the ``keep`` newest versions (never the current one) and stale
    ``.tmp-*`` build folders and ``.CURRENT.*`` files under ``root``."""
    root = Path(root)
    try:
        current = current_version(root)
    except IndexUnavailable:
        log.warning("not cleaning %s: it has no readable %s", root, CURRENT)
        return Pruned((), ())
    removed = _old_versions(root, current, max(1, keep))
    stale = _stale_temporaries(root, stale_seconds, time.time() if now is None else now)
    if removed or stale:
        log.info("cleaned %s: removed versions %s and %d stale temporaries",
                 root, ", ".join(removed) or "none", len(stale))
    return Pruned(tuple(removed), tuple(stale))


def _old_versions(root: Path, current: str, keep: int) -> list[str]:
    folder = root / VERSIONS
    names = version_names(root)
    kept = {current, *_newest_intact(root, names, current, keep)}
    removed = []
    for name in names:
        if name in kept:
            continue
        shutil.rmtree(folder / name, ignore_errors=True)
        removed.append(name)
    return removed


def _newest_intact(root: Path, names: list[str], current: str, keep: int) -> list[str]:
    """The ``keep`` newest versions that verify; a damaged one (unreadable manifest, a file
    off its checksum) never holds a slot, whatever its name. The current one counts as is."""
    intact: list[str] = []
    for name in names:
        if len(intact) >= keep:
            break
        problem = None if name == current else damage(root, name)
        if problem is None:
            intact.append(name)
        else:
            log.warning("removing damaged index version %s: %s", name, problem)
    return intact


def _stale_temporaries(root: Path, stale_seconds: float, now: float) -> list[str]:
    removed = []
    for path in root.iterdir():
        if not path.name.startswith((".tmp-", f".{CURRENT}.")):
            continue
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if age < stale_seconds:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path.name)
    return removed
