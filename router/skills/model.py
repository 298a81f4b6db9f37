"""Plain data records for skills and discovery diagnostics (no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Scope(StrEnum):
    """Where a skill was found. Precedence between scopes is configurable."""

    PROJECT = "project"
    USER = "user"
    ORG = "org"
    BUNDLED = "bundled"


DEFAULT_CATALOG = "default"  # the catalog of the discovery flags (--root, --bundled, scopes)
PROJECT_CATALOG = "project"  # reserved: skills a gateway sends with the turn


def skill_key(catalog: str, name: str) -> str:
    """The key of a skill's records (vectors, digests, examples, counters): its name in the
    default catalog (as before catalogs), ``catalog/name`` in any other."""
    return name if catalog == DEFAULT_CATALOG else f"{catalog}/{name}"


def key_parts(key: str) -> tuple[str, str]:
    """(catalog, name) of a record key (``skill_key``'s inverse)."""
    catalog, sep, name = key.partition("/")
    return (catalog, name) if sep else (DEFAULT_CATALOG, key)


class Level(StrEnum):
    WARNING = "warning"
    ERROR = "error"


class SkillKind(StrEnum):
    SKILL_MD = "skill_md"  # a folder with SKILL.md (agentskills.io)
    MANIFEST = "manifest"  # a folder with manifest.json (callable skill, JSON-Schema parameters)
    MCP_TOOL = "mcp_tool"  # a tool an MCP server lists (router.skills.sources.mcp): no folder


@dataclass(frozen=True)
class Diagnostic:
    """One problem found while discovering or parsing. Errors mean the skill was skipped."""

    level: Level
    path: str
    message: str
    catalog: str = DEFAULT_CATALOG  # the catalog whose scan found it

    def to_dict(self) -> dict[str, str]:
        out = {"level": self.level.value, "path": self.path, "message": self.message}
        if self.catalog != DEFAULT_CATALOG:
            out["catalog"] = self.catalog
        return out


@dataclass(frozen=True)
class Skill:
    """A loaded skill. ``location`` is the absolute path of SKILL.md or manifest.json."""

    name: str
    description: str
    location: str
    base_dir: str
    scope: Scope = Scope.BUNDLED
    kind: SkillKind = SkillKind.SKILL_MD
    model_invocable: bool = True
    user_invocable: bool = True
    enabled: bool = True
    deprecated: bool = False
    always_on: bool = False
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    frontmatter: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] | None = None  # JSON Schema, manifest skills only
    content_hash: str = ""  # sha256 hex of the raw file bytes
    catalog: str = DEFAULT_CATALOG  # the named catalog it was found in
    tool_name: str = ""  # an MCP tool's name as the model APIs see it ("" = the skill's name)
    annotations: Mapping[str, Any] = field(default_factory=dict)  # an MCP tool's annotations

    @property
    def key(self) -> str:
        """Unique in an index: (catalog, name) as one string (``skill_key``)."""
        return skill_key(self.catalog, self.name)

    @property
    def api_name(self) -> str:
        """The tool name the model APIs see for a callable skill (router.skills.mcp_tools)."""
        return self.tool_name or self.name

    @property
    def routable(self) -> bool:
        """May this skill appear in a model-facing catalog?"""
        return self.enabled and not self.deprecated and self.model_invocable

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by ``skill-router list --format json`` and the index records
        (an MCP tool's ``tool_name`` and ``annotations`` only when it has them)."""
        tool: dict[str, Any] = {"tool_name": self.tool_name} if self.tool_name else {}
        if self.annotations:
            tool["annotations"] = dict(self.annotations)
        return {
            "name": self.name,
            "description": self.description,
            "location": self.location,
            "base_dir": self.base_dir,
            "scope": self.scope.value,
            "kind": self.kind.value,
            "model_invocable": self.model_invocable,
            "user_invocable": self.user_invocable,
            "enabled": self.enabled,
            "deprecated": self.deprecated,
            "always_on": self.always_on,
            "license": self.license,
            "compatibility": self.compatibility,
            "allowed_tools": list(self.allowed_tools),
            "metadata": dict(self.metadata),
            "frontmatter": dict(self.frontmatter),
            "parameters": dict(self.parameters) if self.parameters is not None else None,
            "content_hash": self.content_hash,
            "catalog": self.catalog,
            **tool,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Skill:
        params = data.get("parameters")
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            location=str(data["location"]),
            base_dir=str(data["base_dir"]),
            scope=Scope(data.get("scope", Scope.BUNDLED.value)),
            kind=SkillKind(data.get("kind", SkillKind.SKILL_MD.value)),
            model_invocable=bool(data.get("model_invocable", True)),
            user_invocable=bool(data.get("user_invocable", True)),
            enabled=bool(data.get("enabled", True)),
            deprecated=bool(data.get("deprecated", False)),
            always_on=bool(data.get("always_on", False)),
            license=str(data.get("license", "")),
            compatibility=str(data.get("compatibility", "")),
            allowed_tools=tuple(data.get("allowed_tools", ())),
            metadata=dict(data.get("metadata") or {}),
            frontmatter=dict(data.get("frontmatter") or {}),
            parameters=dict(params) if params is not None else None,
            content_hash=str(data.get("content_hash", "")),
            catalog=str(data.get("catalog", DEFAULT_CATALOG)),
            tool_name=str(data.get("tool_name", "")),
            annotations=dict(data.get("annotations") or {}),
        )


@dataclass(frozen=True)
class Shadowed:
    """A skill hidden by another of the same name (higher-precedence scope or scan order)."""

    name: str
    location: str
    shadowed_by: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "location": self.location, "shadowed_by": self.shadowed_by}


@dataclass(frozen=True)
class DiscoveryResult:
    skills: tuple[Skill, ...] = ()
    shadowed: tuple[Shadowed, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "skills": [s.to_dict() for s in self.skills],
            "shadowed": [s.to_dict() for s in self.shadowed],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
