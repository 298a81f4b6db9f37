"""Reading a skill's files: the bounded raw read every parser starts from, and a skill's
instructions (its body) for activation."""

from __future__ import annotations

import os

from router.errors import SkillParseError
from router.skills.limits import MANIFEST_FILE, SKILL_FILE_MAX_BYTES
from router.skills.manifest import load_manifest_json
from router.skills.parse import decode_text, split_frontmatter


def read_file(path: str, max_bytes: int = SKILL_FILE_MAX_BYTES) -> bytes:
    """Read at most ``max_bytes + 1`` bytes (enough for the size check downstream)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
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
    text = decode_text(data, path=location, max_bytes=max_bytes)
    try:
        return split_frontmatter(text)[1]
    except SkillParseError as exc:
        raise SkillParseError(exc.reason, path=location) from exc
