"""MCP servers as a skill source: each configured server's tools, one callable skill a tool,
in the catalog named after the server (``router.skills.mcp_tools`` for the names).

Discovery lists every server of ``discovery.mcp_servers`` (``mcp_servers``); a server that
fails is a diagnostic and the rest of the build goes on. A Reindex repeats the discovery the
index recorded, so it lists the servers again.

Serving answers from the record the build kept, never from the server: a tool skill's one
file is ``tool.json`` (``mcp_tools.tool_document``: the listed name, description, input
schema and annotations), which the build digests and the activator may read; it bundles no
other file (``list_files`` is empty, ``fetch`` is ``NotFound``). Activate gives, as for any
callable skill, the description and the schema the model calls the tool with, named with its
tool name. The router never calls a tool: the gateway does, on the server it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from router.errors import NotFound
from router.skills import digests
from router.skills.digests import FileDigest, SkillDigests
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.mcp_tools import TOOL_FILE, parse_specs, tool_document, tool_skills
from router.skills.model import DiscoveryResult, Skill
from router.skills.resources import ResourceListing
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from collections.abc import Collection

    from router.common.workers import Workers
    from router.config import DiscoveryConfig


class McpSource(SkillSource):
    """The tools of the configured MCP servers (see the module notes)."""

    key = "mcp"

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        return self.discover_beside(config, ())

    def discover_beside(self, config: DiscoveryConfig, taken: Collection[str], *,
                        max_bytes: int = SKILL_FILE_MAX_BYTES,
                        workers: Workers | None = None) -> DiscoveryResult:
        """Discovery with ``taken``, the skill names another source's skills hold (a tool of
        such a name is told apart by its server); nothing to list without servers."""
        if not config.mcp_servers:
            return DiscoveryResult((), (), ())
        from router.skills.mcp_servers import list_tools

        specs = parse_specs(config.mcp_servers)
        listed, failed = list_tools(specs, config.mcp_timeout_seconds)
        skills, problems = tool_skills(listed, taken)
        ordered = tuple(sorted(skills, key=lambda s: (s.name, s.catalog)))
        return DiscoveryResult(ordered, (), (*failed, *problems))

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        return ResourceListing((), 0, True)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        raise NotFound(f"skill {skill.name!r} is a tool of MCP server "
                       f"{skill.catalog!r} and bundles no files")

    def fetch_skill_file(self, skill: Skill) -> bytes:
        return tool_document(skill)

    def skill_file_name(self, skill: Skill) -> str:
        return TOOL_FILE

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        data = tool_document(skill)
        return SkillDigests((FileDigest(TOOL_FILE, len(data), digests.sha256_digest(data)),))
