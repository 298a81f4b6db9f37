"""The per-file digests a version records (``digests.json``, ``router.skills.digests``): load
them back with a version, and the current version's record, which a build reuses for unchanged
files (the build digests through its skill source, ``router.builder.version``)."""

from __future__ import annotations

import logging
from pathlib import Path

from router.errors import IndexUnavailable
from router.index.versions.layout import VERSIONS, current_version
from router.skills import digests
from router.skills.digests import SkillDigests

log = logging.getLogger(__name__)

__all__ = ["SkillDigests", "load", "previous_digests"]


def load(folder: Path) -> dict[str, SkillDigests] | None:
    """The digests recorded in a version folder (None: it predates them)."""
    return digests.load(folder)


def previous_digests(root: Path) -> dict[str, SkillDigests]:
    """The current version's digests under index root ``root`` (empty when none; kept from
    the build of this process that wrote or read them, ``digests.load_kept``)."""
    try:
        return digests.load_kept(root / VERSIONS / current_version(root)) or {}
    except (OSError, ValueError, KeyError, TypeError, IndexUnavailable) as exc:
        log.info("no previous digests to reuse (%s)", exc)
        return {}
