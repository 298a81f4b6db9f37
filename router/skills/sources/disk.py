"""Skills in folders on disk: the scan of ``router.skills.discovery`` and the files under each
skill's directory, served with the traversal rules of ``router.skills.resources``.

``Skill.location`` is the absolute path of the skill file and ``Skill.base_dir`` its folder.
Only this source opens them; the activation code asks it.

The tools of the configured MCP servers (``discovery.mcp_servers``) are discovered beside the
folders and served, as ``SkillKind.MCP_TOOL`` skills, by ``router.skills.sources.mcp``: this
source hands them on, so one source serves an index of both. The skills of the configured
registries (``discovery.registries``) are fetched into their cache folder by
``router.skills.sources.registry`` and then are folders on disk like any other.
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
from router.skills.model import DiscoveryResult, Skill, SkillKind
from router.skills.resources import ResourceListing, read_resource, scan_resources
from router.skills.sources.base import SkillFile, SkillSource
from router.skills.sources.mcp import McpSource

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig


class DiskSource(SkillSource):
    """Skill folders under the configured roots (the project, home, organisation and bundled
    scopes and the named catalogs)."""

    key = "disk"
    tools = McpSource()  # the MCP servers' tools, served beside the folders

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        # the scanner (walk, .gitignore rules) loads on the first scan, not with a server
        from router.skills.discovery import discover

        found = discover(config, max_bytes=max_bytes, workers=workers)
        if config.registries:  # the registries' skills, unpacked into their cache, on disk
            from router.skills.sources.registry import discover_registries

            fetched = discover_registries(config, {s.key for s in found.skills})
            found = DiscoveryResult(tuple(sorted((*found.skills, *fetched.skills),
                                                 key=lambda s: (s.name, s.catalog))),
                                    found.shadowed, (*found.diagnostics, *fetched.diagnostics))
        if not config.mcp_servers:
            return found
        listed = self.tools.discover_beside(config, {s.name for s in found.skills})
        skills = sorted((*found.skills, *listed.skills), key=lambda s: (s.name, s.catalog))
        return DiscoveryResult(tuple(skills), found.shadowed,
                               (*found.diagnostics, *listed.diagnostics))

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        if skill.kind is SkillKind.MCP_TOOL:
            return self.tools.list_files(skill, cap)
        return scan_resources(skill.base_dir, cap)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        if skill.kind is SkillKind.MCP_TOOL:
            return self.tools.fetch(skill, path, max_bytes)
        content, media_type = read_resource(skill.base_dir, path, max_bytes)
        return SkillFile(path, content, media_type)

    def skill_file_name(self, skill: Skill) -> str:
        if skill.kind is SkillKind.MCP_TOOL:
            return self.tools.skill_file_name(skill)
        return super().skill_file_name(skill)

    def fetch_skill_file(self, skill: Skill) -> bytes:
        if skill.kind is SkillKind.MCP_TOOL:
            return self.tools.fetch_skill_file(skill)
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
        if skill.kind is SkillKind.MCP_TOOL:
            return self.tools.digest(skill, previous)
        return digests.skill_digests(skill, previous)

    def digest_all(self, skills: Sequence[Skill],
                   previous: Mapping[str, SkillDigests] | None = None,
                   workers: Workers | None = None) -> dict[str, SkillDigests]:
        folders = [s for s in skills if s.kind is not SkillKind.MCP_TOOL]
        found = digests.compute_all(folders, previous, workers)
        found.update((s.key, self.tools.digest(s)) for s in skills
                     if s.kind is SkillKind.MCP_TOOL)
        return found
