"""Bounded directory walk that finds skill folders under one root.

A skill folder holds ``SKILL.md`` (``skill.md`` accepted) or ``manifest.json``; the walk never
descends into a skill folder (its subfolders are resources). Order is a depth-first walk with
entries sorted by name, so results are deterministic. ``.git``, ``node_modules`` and a few other
tool folders are skipped; ``.gitignore`` files found at or below the root apply to the folders
beneath them (deepest file decides, as in git). Limits: ``max_depth`` levels below the root and
``max_dirs`` directories listed per root; hitting either produces a warning. Directories are
tracked by real path, so symlink loops are never followed; symlinks that leave the scope's
boundary are skipped with a warning (``router.skills.links``). Unreadable folders become warnings.
A folder whose name is not valid UTF-8 is not scanned (an error when it holds a skill file: no
reply or index record could carry its path), and a ``SKILL.md`` or ``manifest.json`` that is
not a regular file (a FIFO, a device, a folder) is an error: that folder is skipped, never read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from router.common.textsafe import display_path, is_unicode
from router.skills.limits import MANIFEST_FILE, SKILL_MD_FILES, SKIP_DIRS
from router.skills.links import escapes, skipped_link
from router.skills.model import Diagnostic, Level

log = logging.getLogger(__name__)


CAP_PREFIX = "scan stopped after"  # starts the warning a scan that hit max_dirs gives


@dataclass(frozen=True)
class ScanLimits:
    max_depth: int = 6
    max_dirs: int = 2000
    honour_gitignore: bool = True
    follow_external_links: bool = False  # follow symlinks out of the boundary (router.skills.links)


@dataclass(frozen=True)
class SkillDir:
    """A folder recognised as a skill; file paths are absolute, or None when absent."""

    path: str
    real_path: str
    skill_file: str | None
    manifest_file: str | None


@dataclass(frozen=True)
class _Ignore:
    prefix: str  # the folder holding the .gitignore, with a trailing separator
    spec: Any  # pathspec.GitIgnoreSpec


_Item = tuple[str, str, int, tuple[_Ignore, ...]]  # path, real path, depth, active ignores


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str] | None) -> bool:
    try:
        return entry is not None and entry.is_file()
    except OSError:
        return False


def _special_skill_file(entries: dict[str, os.DirEntry[str]]) -> str | None:
    """The path of a skill file that exists but is not a regular file (FIFO, device, ...)."""
    for name in (*SKILL_MD_FILES, MANIFEST_FILE):
        entry = entries.get(name)
        if entry is not None and not _is_file(entry):
            return entry.path
    return None


def _holds_skill_file(path: str) -> bool:
    return any(os.path.lexists(os.path.join(path, n)) for n in (*SKILL_MD_FILES, MANIFEST_FILE))


def _skill_dir(path: str, real: str, entries: dict[str, os.DirEntry[str]]) -> SkillDir | None:
    skill = next((os.path.join(path, n) for n in SKILL_MD_FILES if _is_file(entries.get(n))), None)
    manifest = os.path.join(path, MANIFEST_FILE) if _is_file(entries.get(MANIFEST_FILE)) else None
    if skill is None and manifest is None:
        return None
    return SkillDir(path, real, skill, manifest)


class _Walker:
    def __init__(self, root: str, limits: ScanLimits, boundary: str | None = None,
                 outer: Sequence[str] = ()) -> None:
        self.root = os.path.abspath(root)
        self.limits = limits
        self.boundary = os.path.realpath(boundary or root)
        self.outer = outer  # folders above the root whose .gitignore applies too
        self.found: list[SkillDir] = []
        self.diagnostics: list[Diagnostic] = []
        self._visited: set[str] = set()
        self._too_deep: str | None = None

    def _warn(self, path: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(Level.WARNING, path, message))

    def _leaves(self, path: str) -> bool:
        """True (with a warning) if ``path`` is a link out of the boundary not to follow."""
        target = None if self.limits.follow_external_links else escapes(path, self.boundary)
        if target is not None:
            self.diagnostics.append(skipped_link(path, target, self.boundary))
        return target is not None

    def _outer_ignores(self) -> tuple[_Ignore, ...]:
        if not self.limits.honour_gitignore:
            return ()
        found = (self._load_ignore(d) for d in self.outer
                 if os.path.isfile(os.path.join(d, ".gitignore")))
        return tuple(i for i in found if i is not None)

    def run(self) -> None:
        if self._leaves(self.root):
            return
        stack: list[_Item] = [(self.root, os.path.realpath(self.root), 0,
                               self._outer_ignores())]
        listed = 0
        while stack:
            path, real, depth, ignores = stack.pop()
            if real in self._visited:
                log.debug("skipping %s: already visited (symlink loop or duplicate)", path)
                continue
            if listed >= self.limits.max_dirs:
                self._warn(self.root, f"{CAP_PREFIX} {self.limits.max_dirs} directories "
                                      "(the directory-scan cap); some skills may be missing")
                break
            self._visited.add(real)
            listed += 1
            stack.extend(self._visit(path, real, depth, ignores))
        if self._too_deep is not None:
            self._warn(self._too_deep, f"depth limit {self.limits.max_depth} reached under "
                                       f"{self.root}; deeper folders were not scanned")

    def _visit(self, path: str, real: str, depth: int,
               ignores: tuple[_Ignore, ...]) -> list[_Item]:
        try:
            with os.scandir(path) as it:
                entries = {e.name: e for e in it}
        except OSError as exc:
            self._warn(path, f"cannot read directory: {exc.strerror or exc}")
            return []
        special = _special_skill_file(entries)
        if special is not None:
            self.diagnostics.append(Diagnostic(
                Level.ERROR, display_path(special), "not a regular file (a FIFO, device, folder "
                "or broken link); skill skipped without reading it"))
            return []
        skill = _skill_dir(path, real, entries)
        if skill is not None:
            if not any(self._leaves(f) for f in (skill.skill_file, skill.manifest_file) if f):
                self.found.append(skill)
            return []
        if self.limits.honour_gitignore and _is_file(entries.get(".gitignore")):
            ignore = self._load_ignore(path)
            ignores = ignores if ignore is None else (*ignores, ignore)
        children = [entries[n] for n in sorted(entries)
                    if self._wanted(entries[n], ignores)
                    and not (entries[n].is_symlink() and self._leaves(entries[n].path))]
        if children and depth >= self.limits.max_depth:
            self._too_deep = self._too_deep or children[0].path
            return []
        return [(e.path, self._real(e, real), depth + 1, ignores) for e in reversed(children)]

    @staticmethod
    def _real(entry: os.DirEntry[str], parent_real: str) -> str:
        if entry.is_symlink():
            return os.path.realpath(entry.path)
        return os.path.join(parent_real, entry.name)

    def _wanted(self, entry: os.DirEntry[str], ignores: tuple[_Ignore, ...]) -> bool:
        if entry.name in SKIP_DIRS or not _is_dir(entry):
            return False
        for ignore in reversed(ignores):  # the deepest .gitignore with an opinion decides
            relative = entry.path[len(ignore.prefix):].replace(os.sep, "/")
            include = ignore.spec.check_file(relative + "/").include
            if include is not None:
                if include:
                    log.debug("skipping %s: matched %s.gitignore", entry.path, ignore.prefix)
                return not include and self._named_in_unicode(entry.path)
        return self._named_in_unicode(entry.path)

    def _named_in_unicode(self, path: str) -> bool:
        """True for a folder name that is valid UTF-8; otherwise report it (not scanned)."""
        if is_unicode(path):
            return True
        shown = display_path(path)
        if _holds_skill_file(path):
            self.diagnostics.append(Diagnostic(
                Level.ERROR, shown, "folder name is not valid UTF-8; skill skipped (rename the "
                "folder)"))
        else:
            self._warn(shown, "folder name is not valid UTF-8; not scanned (rename it)")
        return False

    def _load_ignore(self, folder: str) -> _Ignore | None:
        from pathspec import GitIgnoreSpec  # imported when a .gitignore is first met

        path = os.path.join(folder, ".gitignore")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                spec = GitIgnoreSpec.from_lines(fh.read().splitlines())
        except (OSError, ValueError) as exc:
            self._warn(path, f".gitignore not applied: {exc}")
            return None
        return _Ignore(os.path.join(folder, ""), spec)


def find_skill_dirs(root: str, limits: ScanLimits | None = None, *,
                    boundary: str | None = None, outer: Sequence[str] = ()
                    ) -> tuple[list[SkillDir], list[Diagnostic]]:
    """Find the skill folders under ``root`` in walk order, with scan warnings. Symlinks out
    of ``boundary`` (default ``root``) are skipped; ``.gitignore`` files in the ``outer``
    folders (above ``root``, outermost first) apply as well as those at or below it."""
    if not is_unicode(root):
        return [], [Diagnostic(Level.ERROR, display_path(root),
                               "skills root path is not valid UTF-8; not scanned")]
    walker = _Walker(root, limits or ScanLimits(), boundary, outer)
    walker.run()
    return walker.found, walker.diagnostics
