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

import threading
from collections import OrderedDict
from collections.abc import Hashable

from router.admission.model import Finding, SkillText
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


class ReadMemo:
    """Each skill's text and per-skill findings by ``memo_key`` (thread-safe)."""

    def __init__(self, size: int = MEMO_SKILLS) -> None:
        self._size = size
        self._held: OrderedDict[Hashable, Read] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable | None) -> Read | None:
        if key is None:
            return None
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
            return found

    def put(self, key: Hashable | None, read: Read) -> None:
        if key is None:
            return
        with self._lock:
            self._held[key] = read
            self._held.move_to_end(key)
            while len(self._held) > self._size:
                self._held.popitem(last=False)

    def __len__(self) -> int:
        return len(self._held)


MEMO = ReadMemo()  # this process's
