"""Reading a skill's files: the bounded raw read every parser starts from, and a skill's
instructions (its body) for activation."""

from __future__ import annotations

import os
import stat

from router.errors import SkillParseError
from router.skills.limits import MANIFEST_FILE, SKILL_FILE_MAX_BYTES
from router.skills.manifest import load_manifest_json
from router.skills.parse import decode_text, split_frontmatter

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_file(path: str, max_bytes: int = SKILL_FILE_MAX_BYTES) -> bytes:
    """Read at most ``max_bytes + 1`` bytes (enough for the size check downstream).

    The file is opened without blocking and must be a regular file: a FIFO or a device put in
    a skill's place fails at once with ``SkillParseError`` instead of stalling the reader."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SkillParseError("not a regular file (a FIFO, device or folder); not read",
                                      path=path)
            size = info.st_size
            return fh.read(min(size, max_bytes) + 1 if size > 0 else max_bytes + 1)
    except OSError as exc:
        raise SkillParseError(f"cannot read file: {exc.strerror or exc}", path=path) from exc


def read_body(location: str, *, max_bytes: int = SKILL_FILE_MAX_BYTES) -> str:
    """The instructions of a skill: SKILL.md without frontmatter (trimmed), or a manifest's
    description. Raises ``SkillParseError`` when the file is unreadable or malformed."""
    data = read_file(location, max_bytes)
    if os.path.basename(location) == MANIFEST_FILE:
        doc = load_manifest_json(data, path=location, max_bytes=max_bytes)
        return str(doc.get("description") or "").strip()
    return skill_text(data, location, body_only=True, max_bytes=max_bytes)


def skill_text(data: bytes, location: str, *, body_only: bool,
               max_bytes: int = SKILL_FILE_MAX_BYTES) -> str:
    """A SKILL.md's bytes as text: whole, or its body without frontmatter (trimmed). Raises
    ``SkillParseError`` naming ``location`` when they are not valid text or frontmatter."""
    text = decode_text(data, path=location, max_bytes=max_bytes)
    if not body_only:
        return text
    try:
        return split_frontmatter(text)[1]
    except SkillParseError as exc:
        raise SkillParseError(exc.reason, path=location) from exc
