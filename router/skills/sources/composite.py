"""Several sources as one: a catalog whose skills come from more than one kind of storage.

Discovery asks the ``primary`` source first, then each source of ``by_kind`` beside it (told
the names found so far, so a clashing name is told apart by the source that adds it), and
merges what they found, sorted by (name, catalog). Serving hands each skill to the source of
its kind (``Skill.kind``), the primary one for every other kind, so no source needs to know
of another. ``disk_and_mcp`` is the default source (key ``disk+mcp``): skill folders on disk
(``router.skills.sources.disk``) with the tools of the configured MCP servers beside them
(``router.skills.sources.mcp``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from router.skills.digests import SkillDigests
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult, Skill, SkillKind
from router.skills.resources import ResourceListing
from router.skills.sources.base import SkillFile, SkillSource

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig


class CompositeSource(SkillSource):
    """``primary`` and the sources of ``by_kind`` as one source (see the module notes)."""

    def __init__(self, key: str, primary: SkillSource,
                 by_kind: Mapping[SkillKind, SkillSource]) -> None:
        self.key = key
        self.primary = primary
        self.by_kind = dict(by_kind)

    def source_of(self, skill: Skill) -> SkillSource:
        """The source that serves ``skill``."""
        return self.by_kind.get(skill.kind, self.primary)

    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        found = self.primary.discover(config, max_bytes=max_bytes, workers=workers)
        for source in self.by_kind.values():
            beside = source.discover_beside(config, {s.name for s in found.skills},
                                            max_bytes=max_bytes, workers=workers)
            if not (beside.skills or beside.shadowed or beside.diagnostics):
                continue
            skills = sorted((*found.skills, *beside.skills), key=lambda s: (s.name, s.catalog))
            found = DiscoveryResult(tuple(skills), (*found.shadowed, *beside.shadowed),
                                    (*found.diagnostics, *beside.diagnostics))
        return found

    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        return self.source_of(skill).list_files(skill, cap)

    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        return self.source_of(skill).fetch(skill, path, max_bytes)

    def fetch_skill_file(self, skill: Skill) -> bytes:
        return self.source_of(skill).fetch_skill_file(skill)

    def skill_file_name(self, skill: Skill) -> str:
        return self.source_of(skill).skill_file_name(skill)

    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        return self.source_of(skill).digest(skill, previous)

    def digest_all(self, skills: Sequence[Skill],
                   previous: Mapping[str, SkillDigests] | None = None,
                   workers: Workers | None = None) -> dict[str, SkillDigests]:
        """Each source digests its own skills together (the primary one's first), so a source
        that spreads the work over ``workers`` does so for all of them."""
        found = self.primary.digest_all([s for s in skills if s.kind not in self.by_kind],
                                        previous, workers)
        for kind, source in self.by_kind.items():
            found.update(source.digest_all([s for s in skills if s.kind is kind], previous,
                                           workers))
        return found


def disk_and_mcp() -> CompositeSource:
    """The default source: skill folders on disk with the configured MCP servers' tools."""
    from router.skills.sources.disk import DiskSource
    from router.skills.sources.mcp import McpSource

    return CompositeSource("disk+mcp", DiskSource(), {SkillKind.MCP_TOOL: McpSource()})
