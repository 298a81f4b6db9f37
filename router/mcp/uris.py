"""``skill://`` URIs: ``skill://<name>/<path>``, where ``<path>`` is relative to the skill
directory (the skill's own file, or a bundled file)."""

from __future__ import annotations

from urllib.parse import quote, unquote

from router.errors import InvalidRequest

SCHEME = "skill://"
URI_TEMPLATE = "skill://{name}/{+path}"


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
