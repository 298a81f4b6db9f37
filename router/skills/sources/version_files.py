"""The skill files a version carries (``files/<sha256 hex>``, written by
``router.objectstore.skill_files.attach``) as a skill source.

``VersionFilesSource`` serves Activate, ReadResource, ListResources and the MCP door from those
copies when the served version carries them, and from ``fallback`` (the source the version was
built from) otherwise: a version published to object storage carries them, a local build does
not. Discovery and digests are the fallback's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from router.errors import NotFound, TooLarge
from router.skills.digests import SkillDigests
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult, Skill, SkillKind
from router.skills.resources import ResourceListing, media_type
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig

FILES = "files"  # under a version folder: one file per distinct recorded digest


def stored_name(digest: str) -> str:
    """``files/<hex>`` of a recorded ``sha256:<hex>`` digest."""
    return f"{FILES}/{digest.removeprefix('sha256:')}"


Served = Callable[[], tuple[str, Mapping[str, SkillDigests] | None]]


class VersionFilesSource(SkillSource):
    """The served version's ``files/`` when it has them, else ``fallback`` (see the notes).
    ``served`` returns the served version's folder and its recorded digests."""

    key = "version-files"

    def __init__(self, served: Served, fallback: SkillSource) -> None:
        self._served = served
        self.fallback = fallback

    def _carried(self, skill: Skill) -> tuple[Path, SkillDigests] | None:
        if skill.kind is SkillKind.MCP_TOOL:
            return None
        folder, recorded = self._served()
        if recorded is None or not folder or not (Path(folder) / FILES).is_dir():
            return None
        return Path(folder), recorded.get(skill.key) or SkillDigests((), complete=False)

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        return self.fallback.discover(config, max_bytes=max_bytes, workers=workers)

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.list_files(skill, cap)
        own = self.skill_file_name(skill)
        names = sorted(f.path for f in carried[1].files if f.path != own)
        return ResourceListing(tuple(names[:cap]), max(0, len(names) - cap), carried[1].complete)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.fetch(skill, path, max_bytes)
        rel = str(PurePosixPath(path))  # the skill file too, as the disk serves it
        return SkillFile(path, _read(carried, skill, rel, max_bytes), media_type(rel))

    def fetch_skill_file(self, skill: Skill) -> bytes:
        carried = self._carried(skill)
        if carried is None:
            return self.fallback.fetch_skill_file(skill)
        return _read(carried, skill, self.skill_file_name(skill), SKILL_FILE_MAX_BYTES)

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        return self.fallback.digest(skill, previous)

    def skill_file_name(self, skill: Skill) -> str:
        return self.fallback.skill_file_name(skill)


def _read(carried: tuple[Path, SkillDigests], skill: Skill, rel: str, max_bytes: int) -> bytes:
    folder, record = carried
    entry = record.get(rel)
    if entry is None:
        raise NotFound(f"no resource {rel!r} in skill {skill.name!r} of this index version")
    if entry.size > max_bytes:
        raise TooLarge(f"{rel!r} of skill {skill.name!r} is {entry.size} bytes, over the "
                       f"{max_bytes}-byte cap")
    try:
        return (folder / stored_name(entry.digest)).read_bytes()
    except OSError as exc:
        raise NotFound(f"{rel!r} of skill {skill.name!r} is not carried by this index version "
                       "(it changed before the version was published); Reindex to publish "
                       "it") from exc
