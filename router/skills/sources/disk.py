"""Skills in folders on disk: the scan of ``router.skills.discovery`` and the files under each
skill's directory, served with the traversal rules of ``router.skills.resources``.

``Skill.location`` is the absolute path of the skill file and ``Skill.base_dir`` its folder.
Only this source opens them; the activation code asks it.

The skills of the configured registries (``discovery.registries``) are fetched into their cache
folder by ``router.skills.sources.registries`` and then are folders on disk like any other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from router.errors import NotFound, TooLarge
from router.skills import digests
from router.skills.digests import SkillDigests
from router.skills.files import read_file
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult, Skill
from router.skills.resources import ResourceListing, read_resource, scan_resources
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig


class DiskSource(SkillSource):
    """Skill folders under the configured roots (the project, home, organisation and bundled
    scopes and the named catalogs)."""

    key = "disk"

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        # the scanner (walk, .gitignore rules) loads on the first scan, not with a server
        from router.skills.discovery import discover

        found = discover(config, max_bytes=max_bytes, workers=workers)
        if not config.registries:
            return found
        from router.skills.sources.registries import discover_registries  # fetched onto disk

        fetched = discover_registries(config, {s.key for s in found.skills})
        return DiscoveryResult(tuple(sorted((*found.skills, *fetched.skills),
                                            key=lambda s: (s.name, s.catalog))),
                               found.shadowed, (*found.diagnostics, *fetched.diagnostics))

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        return scan_resources(skill.base_dir, cap)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        content, media_type = read_resource(skill.base_dir, path, max_bytes)
        return SkillFile(path, content, media_type)

    def fetch_skill_file(self, skill: Skill) -> bytes:
        try:
            size = os.stat(skill.location).st_size
        except OSError as exc:
            raise NotFound(f"skill {skill.name!r} is no longer on disk at {skill.location}; "
                           "reindex") from exc
        if size > SKILL_FILE_MAX_BYTES:
            raise TooLarge(f"SKILL.md of {skill.name!r} is {size} bytes; the limit is "
                           f"{SKILL_FILE_MAX_BYTES}")
        return read_file(skill.location)

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        return digests.skill_digests(skill, previous)

    def digest_all(self, skills: Sequence[Skill],
                   previous: Mapping[str, SkillDigests] | None = None,
                   workers: Workers | None = None) -> dict[str, SkillDigests]:
        return digests.compute_all(skills, previous, workers)
