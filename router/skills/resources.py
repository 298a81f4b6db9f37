"""A skill's bundled files: list them (never read), and serve one safely.

Listing walks the skill directory breadth-first within fixed bounds, skipping ``.git``,
``node_modules``, hidden files and folders, and the skill file itself (``SKILL.md``,
``skill.md``, ``manifest.json``). Symlinks are followed only when their target stays inside the
skill directory; every real directory is visited once, so links cannot loop. A file or folder
whose name is not valid UTF-8 or holds control characters cannot be named in a reply; it is left
out of the listing and reported in ``ResourceListing.skipped`` (escaped for display).

Serving takes a path relative to the skill directory, exactly as listed (it is not URL-decoded).
Paths that try to leave the directory are refused before the disk is touched: ``..`` segments,
absolute paths, drive letters, backslashes, NUL bytes, and the same shapes hidden behind
percent-encoding (decoded repeatedly, so ``%252e%252e`` counts as ``..``) are ``InvalidRequest``.
A path that does not name a regular file inside the directory - missing, a folder, hidden, or
reached through a symlink whose target is outside - is ``NotFound``; so is a hard-linked file
(more than one link: it may be a file from outside the directory), which is never listed
either. A file over the byte cap is ``TooLarge``; its size is checked before any byte is read.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from router.common.textsafe import display_path, is_unicode, printable
from router.errors import InvalidRequest, NotFound, TooLarge
from router.skills.limits import (
    RESOURCE_LIST_CAP,
    RESOURCE_MAX_BYTES,
    RESOURCE_PATH_CHARS,
    RESOURCE_WALK_DIRS,
    RESOURCE_WALK_ENTRIES,
    SKILL_DEFINITION_FILES,
    SKIP_DIRS,
)

_MAX_DECODE_ROUNDS = 8
_DEFAULT_MEDIA_TYPE = "application/octet-stream"
_MEDIA_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".csv": "text/csv",
    ".html": "text/html",
    ".js": "text/javascript",
    ".toml": "application/toml",
}


@dataclass(frozen=True)
class ResourceListing:
    """Bundled files, sorted. ``omitted`` files were left out by the cap; ``complete`` is False
    when the walk stopped at its bounds (so ``omitted`` is a lower bound)."""

    files: tuple[str, ...]
    omitted: int
    complete: bool
    skipped: tuple[str, ...] = ()  # unlistable names (not UTF-8, control characters), escaped

    @property
    def truncated(self) -> bool:
        return self.omitted > 0 or not self.complete


def _hidden_or_skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _listable(name: str) -> bool:
    return is_unicode(name) and printable(name) == name


def _servable(path: str) -> bool:
    """A regular file with one link: a hard link could carry a file from outside the skill."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def _walk(root: str, skipped: list[str]) -> tuple[list[str], bool]:
    """Relative paths of regular files under ``root`` (a real path) and whether the walk ended;
    names that cannot be listed are added to ``skipped``."""
    found: list[str] = []
    seen = {root}
    queue: deque[tuple[str, str]] = deque([(root, "")])
    entries_seen = 0
    while queue:
        if len(seen) > RESOURCE_WALK_DIRS:
            return found, False
        folder, prefix = queue.popleft()
        for entry in _entries(folder):
            entries_seen += 1
            if entries_seen > RESOURCE_WALK_ENTRIES:
                return found, False
            defines = not prefix and entry.name in SKILL_DEFINITION_FILES
            if _hidden_or_skipped(entry.name) or defines:
                continue
            if not _listable(entry.name):
                skipped.append(display_path(prefix + entry.name))
                continue
            real = os.path.realpath(entry.path)
            if not _inside(real, root):
                continue  # a symlink that leaves the skill directory
            rel = prefix + entry.name
            if os.path.isdir(real):
                if real not in seen:
                    seen.add(real)
                    queue.append((real, rel + "/"))
            elif _servable(real):
                found.append(rel)
    return found, True


def scan_resources(skill_dir: str, cap: int = RESOURCE_LIST_CAP) -> ResourceListing:
    """List the files a skill bundles, sorted, at most ``cap`` of them. Never reads a file."""
    root = os.path.realpath(skill_dir)
    if not os.path.isdir(root):
        return ResourceListing((), 0, True)
    skipped: list[str] = []
    found, complete = _walk(root, skipped)
    found.sort()
    kept = found[:max(cap, 0)]
    return ResourceListing(tuple(kept), len(found) - len(kept), complete, tuple(skipped))


def list_resources(skill_dir: str, cap: int = RESOURCE_LIST_CAP) -> tuple[list[str], bool]:
    """``(relative POSIX paths, truncated)`` for a skill's bundled files; see ``scan_resources``."""
    listing = scan_resources(skill_dir, cap)
    return list(listing.files), listing.truncated


def _decoded_forms(rel: str) -> list[str]:
    forms = [rel]
    for _ in range(_MAX_DECODE_ROUNDS):
        decoded = unquote(forms[-1], errors="strict") if "%" in forms[-1] else forms[-1]
        if decoded == forms[-1]:
            return forms
        forms.append(decoded)
    raise InvalidRequest("resource path is percent-encoded too many times")


def _check_shape(form: str) -> None:
    if "\x00" in form:
        raise InvalidRequest("resource path contains a NUL byte")
    if "\\" in form:
        raise InvalidRequest("resource path contains a backslash; use '/' between folders")
    if form.startswith("/") or (len(form) > 1 and form[1] == ":" and form[0].isalpha()):
        raise InvalidRequest("resource path must be relative to the skill directory, "
                             "not absolute")
    if ".." in form.split("/"):
        raise InvalidRequest("resource path must not contain '..'; it must stay inside the "
                             "skill directory")


def check_resource_path(rel: str) -> PurePosixPath:
    """Refuse path shapes that could leave the skill directory; return the path's parts."""
    if not isinstance(rel, str) or not rel.strip():
        raise InvalidRequest("resource path is empty: give a path relative to the skill "
                             "directory, as listed in <skill_resources>")
    if len(rel) > RESOURCE_PATH_CHARS:
        raise InvalidRequest(f"resource path is longer than {RESOURCE_PATH_CHARS} characters")
    try:
        forms = _decoded_forms(rel)
    except UnicodeDecodeError as exc:
        raise InvalidRequest("resource path has invalid percent-encoding") from exc
    for form in forms:
        _check_shape(form)
    path = PurePosixPath(rel)
    if not path.parts:
        raise InvalidRequest("resource path names the skill directory itself, not a file")
    return path


def resolve_resource(skill_dir: str, rel: str) -> Path:
    """The real path of bundled file ``rel``; refuses anything outside ``skill_dir``."""
    parts = check_resource_path(rel).parts
    try:
        root = Path(skill_dir).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise NotFound("the skill directory is missing; reindex") from exc
    current = root
    for part in parts:
        if _hidden_or_skipped(part):
            raise NotFound(f"no resource {rel!r} in this skill (hidden files are not served)")
        current = current / part
        try:
            if current.is_symlink():
                current = current.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise NotFound(f"no resource {rel!r} in this skill") from exc
        if not current.is_relative_to(root):
            raise NotFound(f"no resource {rel!r} in this skill (it points outside the skill "
                           "directory)")
    if not current.is_file():
        raise NotFound(f"no resource {rel!r} in this skill")
    return current


def media_type(path: str | Path) -> str:
    """The media type for a file name; ``application/octet-stream`` when unknown."""
    suffix = PurePosixPath(str(path)).suffix.lower()
    known = _MEDIA_TYPES.get(suffix)
    if known:
        return known
    guessed, _ = mimetypes.guess_type(PurePosixPath(str(path)).name, strict=False)
    return guessed or _DEFAULT_MEDIA_TYPE


def _read_capped(path: Path, max_bytes: int, rel: str) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise NotFound(f"no resource {rel!r} in this skill") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotFound(f"no resource {rel!r} in this skill")
        if info.st_nlink > 1:
            raise NotFound(f"resource {rel!r} is not served: it is hard-linked, so its content "
                           "may belong to a file outside the skill directory")
        if info.st_size > max_bytes:
            raise TooLarge(f"resource {rel!r} is {info.st_size} bytes; the limit is "
                           f"{max_bytes}")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise TooLarge(f"resource {rel!r} is larger than {max_bytes} bytes")
    return data


def read_resource(skill_dir: str, rel: str,
                  max_bytes: int = RESOURCE_MAX_BYTES) -> tuple[bytes, str]:
    """``(content, media_type)`` of bundled file ``rel``; see the module notes for refusals."""
    path = resolve_resource(skill_dir, rel)
    return _read_capped(path, max_bytes, rel), media_type(path)
