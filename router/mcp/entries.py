"""A skill as the MCP Skills extension (SEP-2640) describes it, built from the index's record
(in-process) or from ``ListSkills(include_files=True)`` (proxy), and rendered to the wire shape.

Which skills the extension serves (``skills/get`` answers) and lists (``skills/list``):

- served: enabled, defined by a ``SKILL.md`` (the extension addresses a skill by its SKILL.md;
  a ``manifest.json`` skill, or one whose file is ``skill.md``, is not served: its files stay
  readable as ``skill://`` resources and it stays activatable with ``activate_skill``), and its
  recorded files complete (within 512 files and 16 MiB: see ``router.skills.digests``);
- listed: served, not deprecated, and model-invocable, as routing shows skills; a deprecated or
  ``disable-model-invocation`` skill stays reachable by ``skills/get`` (both remain activatable
  by name, as docs/mcp.md says), a disabled one does not.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from router.mcp.uris import resource_uri
from router.skills.digests import FileDigest, SkillDigests
from router.skills.model import Skill
from router.v1 import router_pb2 as pb

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class SkillEntry:
    """An enabled indexed skill with the files the build recorded (None: no digests)."""

    name: str
    description: str
    skill_file: str  # "SKILL.md", "skill.md" or "manifest.json"
    frontmatter: Mapping[str, Any]
    files: tuple[FileDigest, ...] | None
    complete: bool
    deprecated: bool = False
    model_invocable: bool = True

    @property
    def uri(self) -> str:
        return resource_uri(self.name, SKILL_FILE)

    def refusal(self) -> str:
        """Why the extension does not serve this skill ("" when it does)."""
        if self.skill_file != SKILL_FILE:
            return (f"skill {self.name!r} is defined by {self.skill_file}, not SKILL.md, so the "
                    "Skills extension does not serve it; activate it with activate_skill")
        if not self.complete:
            return (f"skill {self.name!r} has more files than the Skills extension's per-skill "
                    "limits (512 files, 16 MiB), so no complete manifest can be published")
        return ""

    @property
    def listed(self) -> bool:
        return not self.refusal() and not self.deprecated and self.model_invocable

    def to_wire(self) -> dict[str, Any]:
        """The SEP-2640 ``Skill`` object."""
        front = dict(self.frontmatter)
        front.setdefault("name", self.name)
        front.setdefault("description", self.description)
        resources: list[dict[str, Any]] | str = "dynamic" if self.files is None else [
            {"uri": resource_uri(self.name, f.path), "digest": f.digest, "size": f.size}
            for f in self.files]
        return {"uri": self.uri, "frontmatter": front, "resources": resources}

    def file_paths(self) -> tuple[str, ...] | None:
        return None if self.files is None else tuple(f.path for f in self.files)


def _json_safe(data: Mapping[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(dict(data), ensure_ascii=False, default=str))
    return loaded


def entry_of(skill: Skill, recorded: SkillDigests | None) -> SkillEntry:
    """The entry of an indexed skill from its record and recorded digests."""
    return SkillEntry(skill.name, skill.description, os.path.basename(skill.location),
                      _json_safe(skill.frontmatter),
                      None if recorded is None else recorded.files,
                      True if recorded is None else recorded.complete,
                      skill.deprecated, skill.model_invocable)


def entry_from_proto(info: pb.SkillInfo) -> SkillEntry:
    """The entry of a ``SkillInfo`` listed with ``include_files``."""
    front = json.loads(info.frontmatter_json) if info.frontmatter_json else {}
    files = tuple(FileDigest(f.path, f.size, f.digest) for f in info.files)
    return SkillEntry(info.name, info.description, info.location.rsplit("/", 1)[-1],
                      front if isinstance(front, dict) else {},
                      files if info.files_recorded else None,
                      info.files_complete or not info.files_recorded,
                      info.deprecated, info.model_invocable)
