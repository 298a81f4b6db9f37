"""Skills as MCP resources in the SEP-2640 shape: ``skill://<name>/<path>``, where ``<path>`` is
the skill file itself (``SKILL.md``, or ``manifest.json`` for a callable skill) or a bundled file,
relative to the skill directory. Reading goes through ReadResource's rules (traversal refused,
size capped) and never activates the skill.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from router.door.backend import Backend
from router.errors import NotFound
from router.mcp.uris import SCHEME, URI_TEMPLATE, parse_uri, resource_uri
from router.skills.resources import media_type

__all__ = ["MAX_LISTED", "SCHEME", "URI_TEMPLATE", "SkillResource", "list_skill_resources",
           "parse_uri", "resource_uri"]

log = logging.getLogger(__name__)

MAX_LISTED = 10_000  # resources/list stops here; every file stays readable by its URI


@dataclass(frozen=True)
class SkillResource:
    """One listed resource."""

    uri: str
    name: str  # "<skill>/<path>"
    description: str
    mime_type: str


def list_skill_resources(backend: Backend) -> list[SkillResource]:
    """Every enabled skill's skill file and bundled files, at most ``MAX_LISTED`` in all."""
    found: list[SkillResource] = []
    for skill in backend.skills():
        try:
            paths = [skill.skill_file, *backend.list_resources(skill.name).files]
        except NotFound:  # removed since the skills were listed
            continue
        for path in paths:
            description = skill.description if path == skill.skill_file else (
                f"A file bundled with the skill {skill.name}.")
            found.append(SkillResource(resource_uri(skill.name, path), f"{skill.name}/{path}",
                                       description, media_type(path)))
            if len(found) >= MAX_LISTED:
                log.warning("resources/list stopped at %d resources", MAX_LISTED)
                return found
    return found
