"""Where a scan may go: symbolic links that lead out of a scope are not followed.

The boundary is the folder a scope owns: an organisation or bundled root itself, the project
directory for project skills, the home directory for user skills. A link (to a skill folder,
to a folder holding skills, or a ``SKILL.md`` / ``manifest.json`` itself) whose target lies
outside it is skipped with a warning, unless ``discovery.follow_external_links`` is set; so
``skills/r -> /`` never walks the host and ``skills/x -> /elsewhere`` is never indexed (nor
its files served) by accident.
"""

from __future__ import annotations

import os

from router.skills.model import Diagnostic, Level

SETTING = "discovery.follow_external_links"


def inside(path: str, boundary: str) -> bool:
    """True if real path ``path`` is ``boundary`` (a real path) or below it."""
    return path == boundary or path.startswith(boundary.rstrip(os.sep) + os.sep)


def escapes(path: str, boundary: str) -> str | None:
    """The real target of ``path`` when it is a symlink leading outside ``boundary``."""
    try:
        if not os.path.islink(path):
            return None
    except OSError:
        return None
    target = os.path.realpath(path)
    return None if inside(target, boundary) else target


def skipped_link(path: str, target: str, boundary: str) -> Diagnostic:
    return Diagnostic(Level.WARNING, path,
                      f"symlink leads outside {boundary} (to {target}); skipped: set "
                      f"{SETTING}: true to follow links out of a skills scope")
