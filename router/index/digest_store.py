"""The index build's digest stage: record every skill's per-file digests (``digests.json``) in
the version folder being written, reusing the current version's record for unchanged files
(``router.skills.digests``), each skill's files digested by the skill source they came from
(``router.skills.sources.base``; the disk unless told otherwise); and load them back with a
version."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from router.errors import IndexUnavailable
from router.index.versions.layout import VERSIONS, current_version
from router.skills import digests
from router.skills.digests import SkillDigests
from router.skills.model import Skill
from router.skills.sources.base import SkillSource, create_source

log = logging.getLogger(__name__)

__all__ = ["SkillDigests", "files_fingerprint", "load", "previous_digests", "record"]


def load(folder: Path) -> dict[str, SkillDigests] | None:
    """The digests recorded in a version folder (None: it predates them)."""
    return digests.load(folder)


def previous_digests(root: Path) -> dict[str, SkillDigests]:
    """The current version's digests under index root ``root`` (empty when none)."""
    try:
        return digests.load(root / VERSIONS / current_version(root)) or {}
    except (OSError, ValueError, KeyError, TypeError, IndexUnavailable) as exc:
        log.info("no previous digests to reuse (%s)", exc)
        return {}


def files_fingerprint(skills: Sequence[Skill], root: str | Path,
                      source: SkillSource | None = None) -> str:
    """The fingerprint of ``skills``' files (``digests.fingerprint``), hashing only files whose
    size or modification time differ from the current version's record: a Reindex whose skills
    are unchanged still builds when a bundled file changed, so its new digest is recorded."""
    source = source or create_source()
    return digests.fingerprint(source.digest_all(skills, previous_digests(Path(root))))


def record(folder: Path, root: Path, skills: Sequence[Skill], *, reuse: bool = True,
           source: SkillSource | None = None) -> None:
    """Digest ``skills`` (from ``source``, the disk when None) into ``folder`` (a ``.tmp-*``
    version folder, before its checksums)."""
    source = source or create_source()
    digests.write(folder, source.digest_all(skills, previous_digests(root) if reuse else None))
