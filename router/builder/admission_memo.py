"""What admission read and found of each skill, kept between builds in one process, so a
Reindex after one skill changed reads and checks that skill alone.

A skill's text (``router.admission.model.SkillText``: its skill file's body, its bundled text
files, its folder's digest) and the findings of the per-skill checks depend on its files only.
They are kept under a key made of the skill's identity and the digest of every one of its
files (path, size and content digest; not the modification time), as the build just recorded
them (``router.skills.digests``): a file changed, added or
removed makes another key, and a skill whose digests left files out (past their bounds) is
never kept. The catalog-wide measures (imitation, hubs, the content scan's cache) run on the
whole catalog as before. ``MEMO_SKILLS`` skills are kept, the least recently used dropped.
"""

from __future__ import annotations

from collections.abc import Hashable

from router.admission.model import Finding, SkillText
from router.common.memo import Memo
from router.skills.digests import SkillDigests
from router.skills.model import Skill

MEMO_SKILLS = 200_000

Read = tuple[SkillText, tuple[Finding, ...]]


def memo_key(skill: Skill, origin: str, digests: SkillDigests | None) -> Hashable | None:
    """The key of ``skill`` as its files are now; None when they are not all known."""
    if digests is None or not digests.complete or not digests.files:
        return None
    # the files' content only: a modification time that moved (a file touched, or first
    # recorded without one as too recent to trust) does not change what admission reads
    return (skill.key, skill.location, skill.base_dir, skill.kind, skill.name,
            skill.description, skill.content_hash, origin,
            tuple((f.path, f.size, f.digest) for f in digests.files))


class ReadMemo(Memo[Hashable, Read]):
    """Each skill's text and per-skill findings by ``memo_key`` (thread-safe; a None key, a
    skill whose files are not all known, is never kept)."""

    def __init__(self, size: int = MEMO_SKILLS) -> None:
        super().__init__(size)

    def get(self, key: Hashable | None) -> Read | None:
        return None if key is None else super().get(key)

    def put(self, key: Hashable | None, value: Read) -> None:
        if key is not None:
            super().put(key, value)


MEMO = ReadMemo()  # this process's
