"""A served skill with the files the build recorded, as a door lists it: built from the index's
record (in-process) or from ``ListSkills(include_files=True)`` (over gRPC). What a door makes of
it on its wire is the door's own (the MCP Skills extension: ``router.mcp.entries``)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from router.skills.digests import FileDigest, SkillDigests
from router.skills.model import Skill
from router.v1 import router_pb2 as pb


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
