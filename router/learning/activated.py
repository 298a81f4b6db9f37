"""Which skills this process has already counted as activated in each conversation.

Activate answers ``already_active`` (no content) when a conversation activates a skill it has
already activated; that answer is not a second activation. The recorder asks ``Activated.first``
before writing an activation row, so a repeat is neither stored, nor counted by ``stats``, nor
learned from. The memory is this process's, as the activator's own session memory is, and
bounded: the least recently used conversation is forgotten first (a forgotten one may count
one activation again: a repeat of a count, never a loss)."""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_CONVERSATIONS = 100_000


class Activated:
    """(principal, session) -> the skills already counted there; thread-safe, LRU-bounded."""

    def __init__(self, max_conversations: int = MAX_CONVERSATIONS) -> None:
        self._max = max_conversations
        self._seen: OrderedDict[tuple[str, str], set[str]] = OrderedDict()
        self._lock = threading.Lock()

    def first(self, principal: str, session: str, skill: str) -> bool:
        """Mark ``skill`` activated in ``session``; True only the first time. A call with no
        session is always a first (nothing ties two of them together)."""
        if not session:
            return True
        key = (principal, session)
        with self._lock:
            skills = self._seen.get(key)
            if skills is None:
                skills = self._seen[key] = set()
                while len(self._seen) > self._max:
                    self._seen.popitem(last=False)
            else:
                self._seen.move_to_end(key)
            if skill in skills:
                return False
            skills.add(skill)
            return True
