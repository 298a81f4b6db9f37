"""The race harness: many threads released together on one call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def race(workers: int, fn: Callable[[], T], *, timeout: float = 30.0) -> list[T]:
    """Run ``fn`` in ``workers`` threads that start together (a barrier releases them at once);
    return every worker's result, in no particular order. A worker's exception is raised here."""
    barrier = threading.Barrier(workers, timeout=timeout)

    def together() -> T:
        barrier.wait()
        return fn()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(together) for _ in range(workers)]
        return [future.result(timeout=timeout) for future in futures]
