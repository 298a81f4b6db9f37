"""Skills as MCP resources in the SEP-2640 shape: ``skill://<name>/<path>``, where ``<path>`` is
the skill file itself (``SKILL.md``, or ``manifest.json`` for a callable skill) or a bundled file,
relative to the skill directory. Reading goes through ReadResource's rules (traversal refused,
size capped) and never activates the skill.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from router.errors import InvalidRequest, NotFound
from router.skills.resources import media_type

if TYPE_CHECKING:
    from router.mcp.backend import Backend

log = logging.getLogger(__name__)

SCHEME = "skill://"
URI_TEMPLATE = "skill://{name}/{+path}"
MAX_LISTED = 10_000  # resources/list stops here; every file stays readable by its URI


@dataclass(frozen=True)
class SkillResource:
    """One listed resource."""

    uri: str
    name: str  # "<skill>/<path>"
    description: str
    mime_type: str


def resource_uri(skill: str, path: str) -> str:
    """The URI of ``path`` (relative to the skill directory) in skill ``skill``."""
    return f"{SCHEME}{quote(skill, safe='')}/{quote(path, safe='/')}"


def parse_uri(uri: str) -> tuple[str, str]:
    """``(skill name, path)`` of a ``skill://`` URI; the path is percent-decoded once, and is
    then checked exactly as a ReadResource path is."""
    if not uri.startswith(SCHEME):
        raise InvalidRequest(f"not a skill resource: {uri!r} (expected skill://<name>/<path>)")
    name, sep, path = uri[len(SCHEME):].partition("/")
    if not name or not sep or not path:
        raise InvalidRequest(f"resource URI {uri!r} names no file: use skill://<name>/<path>, "
                             "e.g. skill://<name>/SKILL.md")
    return unquote(name), unquote(path)


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
