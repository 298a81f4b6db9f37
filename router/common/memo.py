"""A bounded, thread-safe memo of a pure function's results in this process, so a build that
follows another (a Reindex after one skill changed) redoes a catalog's per-text work only for
the texts that changed: the same text gives the same result, whichever build asks.

Values must not be changed by their callers (tuples, frozensets, arrays only read). At most
``size`` entries are kept, the least recently used dropped; a catalog larger than that simply
misses more often.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MEMO_ENTRIES = 100_000
FileIdentity = tuple[int, int, int, int]  # device, inode, size, modification time (ns)
_every: weakref.WeakSet[Memo[Any, Any]] = weakref.WeakSet()


class Memo(Generic[K, V]):
    """Results by key, the least recently used dropped past ``size``."""

    def __init__(self, size: int = MEMO_ENTRIES) -> None:
        self._size = size
        self._held: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        _every.add(self)

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._held[key] = value
            self._held.move_to_end(key)
            while len(self._held) > self._size:
                self._held.popitem(last=False)

    def of(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, else ``make()`` (kept)."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found

    def many(self, keys: Iterable[K], make: Callable[[list[K]], list[V]]) -> list[V]:
        """The value of each of ``keys``: those not kept made by one ``make`` call on the
        missing keys (in order, each once), then kept."""
        keys = list(keys)
        found = [self.get(key) for key in keys]
        missing = list(dict.fromkeys(k for k, v in zip(keys, found, strict=True) if v is None))
        if missing:
            made = dict(zip(missing, make(missing), strict=True))
            for key, value in made.items():
                self.put(key, value)
            found = [made[k] if v is None else v for k, v in zip(keys, found, strict=True)]
        return [v for v in found if v is not None]

    def clear(self) -> None:
        with self._lock:
            self._held.clear()

    def __len__(self) -> int:
        return len(self._held)


def forget_all() -> None:
    """Empty every memo of this process (as a new process starts)."""
    for memo in list(_every):
        memo.clear()


def file_identity(path: str | os.PathLike[str]) -> FileIdentity:
    """A file as it is on disk, to key what a process kept of reading it: its device, inode,
    size and modification time (a file replaced or rewritten gets another). OSError if it is
    not there."""
    found = os.stat(path)
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def file_key(path: str | os.PathLike[str]) -> tuple[str, FileIdentity]:
    """``file_identity`` with the path: for what is kept only while the file stays where it
    was read."""
    return os.fspath(path), file_identity(path)
