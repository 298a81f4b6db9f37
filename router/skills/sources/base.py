"""Where skills come from: the ``SkillSource`` base every source implements, and the factory
that makes one by its key.

A source has two faces. **Discovery** turns its roots into ``Skill`` records and diagnostics
(a broken skill is a diagnostic, never a failed scan). **Serving** lists and reads one skill's
files when Activate, ReadResource and ListResources ask, and digests them when an index is
built. The serve-time reads every door makes go through ``read``, ``read_resource`` and
``read_skill_file`` here, which apply the rules no source may skip: the path shape check
(``..``, absolute paths, backslashes, NUL and their percent-encoded forms are
``InvalidRequest`` before the source is asked) and, after the bytes arrive, the check against
the digests the build recorded (``StaleFile`` for a changed or unrecorded file). A source
implements only the unchecked primitives (``fetch``, ``fetch_skill_file``, ``list_files``,
``digest``) and refuses, as the disk does, a missing or hidden file (``NotFound``) and one over
the byte cap (``TooLarge``).

This module never imports an implementation: ``create_source`` loads the built-in ones by
their import path on first use (``disk``: skill folders, ``router.skills.sources.disk``;
``mcp``: the tools of MCP servers, ``router.skills.sources.mcp``; ``disk+mcp``, the default:
both, one catalog, ``router.skills.sources.composite``), and ``register_source`` adds another
key (e.g. an HTTP index). The configuration chooses one (``discovery.source``); a build
resolves it once (``router.builder.plan``) and records its key in the version's manifest,
and a server serves the files of the version's source (``router.skills.sources.version_files``
when the version carries them).
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from router.config.routing import DEFAULT_SOURCE
from router.errors import InvalidRequest
from router.skills import digests
from router.skills.digests import SkillDigests
from router.skills.limits import RESOURCE_LIST_CAP, RESOURCE_MAX_BYTES, SKILL_FILE_MAX_BYTES
from router.skills.model import DiscoveryResult, Skill
from router.skills.resources import ResourceListing, check_resource_path

if TYPE_CHECKING:
    from router.common.workers import Workers
    from router.config import DiscoveryConfig

# Built-in sources by key, as "module:class or factory": imported on first use, never by this
# module.
_BUILT_IN: dict[str, str] = {"disk": "router.skills.sources.disk:DiskSource",
                              "mcp": "router.skills.sources.mcp:McpSource",
                              "disk+mcp": "router.skills.sources.composite:disk_and_mcp",
                              "registry": "router.skills.sources.registry:RegistrySource"}
_REGISTERED: dict[str, Callable[[], SkillSource]] = {}


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill as a source served it: its bytes and media type."""

    path: str  # relative to the skill directory, as the caller asked for it
    content: bytes
    media_type: str


class SkillSource(ABC):
    """Skills and their files from one kind of storage (see the module notes)."""

    key: str = ""  # the factory's name for this source

    # --- discovery ----------------------------------------------------------------------------

    @abstractmethod
    def discover(self, config: DiscoveryConfig, *, max_bytes: int = SKILL_FILE_MAX_BYTES,
                 workers: Workers | None = None) -> DiscoveryResult:
        """Every skill the configuration's roots hold, sorted by (name, catalog), with the
        shadowed ones and a diagnostic for each problem; skill files over ``max_bytes`` are
        refused."""

    def discover_beside(self, config: DiscoveryConfig, taken: Collection[str], *,
                        max_bytes: int = SKILL_FILE_MAX_BYTES,
                        workers: Workers | None = None) -> DiscoveryResult:
        """``discover`` beside another source's skills, whose names are ``taken`` (a source
        whose names may clash with them tells its own apart; by default the same as
        ``discover``)."""
        return self.discover(config, max_bytes=max_bytes, workers=workers)

    # --- the primitives a source implements (unchecked: callers use the reads below) ----------

    @abstractmethod
    def list_files(self, skill: Skill, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
        """The files ``skill`` bundles (never its skill file), sorted, at most ``cap``."""

    @abstractmethod
    def fetch(self, skill: Skill, path: str, max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        """Bundled file ``path`` of ``skill``: ``NotFound`` when it is missing, hidden or not
        the skill's own, ``TooLarge`` over ``max_bytes``."""

    @abstractmethod
    def fetch_skill_file(self, skill: Skill) -> bytes:
        """The bytes of ``skill``'s SKILL.md (or manifest.json): ``NotFound`` when it is gone,
        ``TooLarge`` over ``SKILL_FILE_MAX_BYTES``, ``SkillParseError`` when unreadable."""

    @abstractmethod
    def digest(self, skill: Skill, previous: SkillDigests | None = None) -> SkillDigests:
        """The record of ``skill``'s files a build keeps (``router.skills.digests``);
        ``previous`` may be reused for files that did not change."""

    # --- what every source shares -------------------------------------------------------------

    def digest_all(self, skills: Sequence[Skill],
                   previous: Mapping[str, SkillDigests] | None = None,
                   workers: Workers | None = None) -> dict[str, SkillDigests]:
        """``digest`` of every skill, by key (a source may spread the work over ``workers``)."""
        previous = previous or {}
        return {s.key: self.digest(s, previous.get(s.key)) for s in skills}

    def skill_file_name(self, skill: Skill) -> str:
        """The skill file's path relative to the skill directory, as its digest is recorded."""
        return os.path.basename(skill.location)

    def read_resource(self, skill: Skill, path: str, *, recorded: SkillDigests | None = None,
                      max_bytes: int = RESOURCE_MAX_BYTES) -> SkillFile:
        """Bundled file ``path`` of ``skill``, refused unless it is what the build recorded
        (``recorded`` None: an index without digests, not checked)."""
        check_resource_path(path)  # before the source is asked, whatever the source
        found = self.fetch(skill, path, max_bytes)
        digests.verify(skill.name, recorded, path, found.content)
        return found

    def read(self, skill: Skill, path: str, *, recorded: SkillDigests | None = None,
             max_bytes: int = RESOURCE_MAX_BYTES) -> bytes:
        """The bytes of bundled file ``path``; see ``read_resource``."""
        return self.read_resource(skill, path, recorded=recorded, max_bytes=max_bytes).content

    def read_skill_file(self, skill: Skill, *, recorded: SkillDigests | None = None) -> bytes:
        """The bytes of ``skill``'s skill file, refused unless the build recorded them."""
        data = self.fetch_skill_file(skill)
        digests.verify(skill.name, recorded, self.skill_file_name(skill), data)
        return data


def register_source(key: str, source: Callable[[], SkillSource]) -> None:
    """Make ``create_source(key)`` build ``source`` (a later registration replaces one)."""
    _REGISTERED[key] = source


def source_keys() -> tuple[str, ...]:
    """Every key ``create_source`` accepts, sorted."""
    return tuple(sorted({*_BUILT_IN, *_REGISTERED}))


def create_source(key: str = DEFAULT_SOURCE) -> SkillSource:
    """A new source of kind ``key``; ``InvalidRequest`` naming the known keys otherwise."""
    found = _REGISTERED.get(key)
    if found is None and key in _BUILT_IN:
        module, _, name = _BUILT_IN[key].partition(":")
        built_in: Callable[[], SkillSource] = getattr(importlib.import_module(module), name)
        found = built_in
    if found is None:
        raise InvalidRequest(f"unknown skill source {key!r}; known: {', '.join(source_keys())}")
    return found()
