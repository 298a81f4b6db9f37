"""Absolute paths of the server's disk rewritten for callers (``server.expose_paths: false``).

A ``PathView`` holds known folders, each with the name a caller sees in its place; ``text``
rewrites every occurrence of one in a string, longest first, in one pass. A skill root's own
files become relative to it (``<root>/pdf-tools/SKILL.md`` -> ``pdf-tools/SKILL.md``); the root
itself becomes its last component; a version folder becomes the version's name. A folder
matches only where its path ends (``/srv/org`` is not a prefix of ``/srv/org2``). Pure: the
folders are given, nothing is read here.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# What may follow a folder's path for it to end there: a separator, the end, a character that
# is not part of a path in the texts the server writes, or a full stop ending a sentence.
_END = r"(?=$|[\s/<>\"'`,;:)\]}&|]|\.(?:\s|$))"


@dataclass(frozen=True)
class Folder:
    """``path`` (absolute) is shown as ``shown``; ``path/x`` as ``inside + x``."""

    path: str
    shown: str
    inside: str


def root_folder(path: str) -> Folder:
    """A skills root: its files are shown relative to it, itself by its last component."""
    return Folder(path, os.path.basename(path.rstrip("/")) or ".", "")


def named_folder(path: str, shown: str) -> Folder:
    """A folder shown as ``shown`` (and its files under ``shown/``)."""
    return Folder(path, shown, f"{shown}/")


@dataclass(frozen=True)
class PathView:
    """Rewrites the given folders' paths in outgoing text; no folders: text unchanged."""

    folders: tuple[Folder, ...] = ()
    _by_path: dict[str, Folder] = field(init=False, repr=False, compare=False)
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_path: dict[str, Folder] = {}
        for folder in self.folders:
            path = folder.path.rstrip("/")
            if len(path) < 2 or not os.path.isabs(path):
                continue  # "/" or a relative path: nothing of the disk to hide
            for spelling in {path, html.escape(path, quote=False), html.escape(path)}:
                by_path.setdefault(spelling, folder)
        alternatives = sorted(by_path, key=len, reverse=True)
        pattern = (re.compile("(" + "|".join(re.escape(p) for p in alternatives) + ")"
                              + _END + "(/)?") if alternatives else None)
        object.__setattr__(self, "_by_path", by_path)
        object.__setattr__(self, "_pattern", pattern)

    def text(self, value: str) -> str:
        """``value`` with every known folder's path replaced by what callers see."""
        if self._pattern is None or "/" not in value:
            return value
        return self._pattern.sub(self._replace, value)

    def _replace(self, match: re.Match[str]) -> str:
        folder = self._by_path[match.group(1)]
        return folder.inside if match.group(2) else folder.shown


EXPOSED = PathView()


def skill_folders(roots: Iterable[str], skill_dirs: Iterable[str]) -> list[Folder]:
    """Folders for skills ``roots`` and for skill folders outside every root (a followed link):
    such a folder is shown by its own name."""
    roots = [r.rstrip("/") for r in roots if r]
    found = [root_folder(r) for r in roots]
    for skill_dir in skill_dirs:
        if not any(skill_dir == r or skill_dir.startswith(r + "/") for r in roots):
            found.append(named_folder(skill_dir, os.path.basename(skill_dir.rstrip("/"))))
    return found


__all__ = ["EXPOSED", "Folder", "PathView", "named_folder", "root_folder", "skill_folders"]
