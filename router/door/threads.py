"""The threads a door runs searches on. FAISS's OpenMP thread count is set per calling thread:
a thread left at the default (every core) searched on a team of OpenMP threads whose idle
members then spin-waited (libgomp's default) on other cores, about 8 ms of CPU a Route at 10k
skills on 2 cores, and routed ~40x slower on a busy 2-core machine (20 ms vs 0.5 ms). Every
door sets ``index.search_threads`` on each thread it searches on, here."""

from __future__ import annotations

import threading
from concurrent import futures

from router.index import dense


class SearchThreads:
    """``index.search_threads`` (``count``) set on each thread that calls ``set_up``, once."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._done = threading.local()

    def set_up(self) -> None:
        """Set the calling thread's FAISS thread count (a no-op after its first call)."""
        if not getattr(self._done, "set", False):
            dense.set_threads(self.count)
            self._done.set = True


def call_pool(workers: int, search_threads: int, name: str) -> futures.ThreadPoolExecutor:
    """``workers`` threads for a door's calls, each setting ``search_threads`` as it starts."""
    return futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name,
                                      initializer=SearchThreads(search_threads).set_up)
