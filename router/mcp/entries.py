"""A skill as the MCP Skills extension (SEP-2640) describes it: a door's entry
(``router.door.entries``) rendered to the wire shape.

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

from typing import Any

from router.door.entries import SkillEntry
from router.mcp.uris import resource_uri

SKILL_FILE = "SKILL.md"


def entry_uri(entry: SkillEntry) -> str:
    """The ``skill://`` URI of the entry's SKILL.md (the extension's name for the skill)."""
    return resource_uri(entry.name, SKILL_FILE)


def refusal(entry: SkillEntry) -> str:
    """Why the extension does not serve this skill ("" when it does)."""
    if entry.skill_file != SKILL_FILE:
        return (f"skill {entry.name!r} is defined by {entry.skill_file}, not SKILL.md, so the "
                "Skills extension does not serve it; activate it with activate_skill")
    if not entry.complete:
        return (f"skill {entry.name!r} has more files than the Skills extension's per-skill "
                "limits (512 files, 16 MiB), so no complete manifest can be published")
    return ""


def listed(entry: SkillEntry) -> bool:
    return not refusal(entry) and not entry.deprecated and entry.model_invocable


def to_wire(entry: SkillEntry) -> dict[str, Any]:
    """The SEP-2640 ``Skill`` object."""
    front = dict(entry.frontmatter)
    front.setdefault("name", entry.name)
    front.setdefault("description", entry.description)
    resources: list[dict[str, Any]] | str = "dynamic" if entry.files is None else [
        {"uri": resource_uri(entry.name, f.path), "digest": f.digest, "size": f.size}
        for f in entry.files]
    return {"uri": entry_uri(entry), "frontmatter": front, "resources": resources}
