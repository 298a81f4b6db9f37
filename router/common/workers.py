"""Worker processes for the per-skill work of a large build.

A build reads and parses every SKILL.md, digests every skill file, reads the skill folders'
example files and splits every skill's text into BM25 words: pure Python, about 0.35 ms a
skill, so at 1M skills it is minutes on one core. ``Workers.map`` splits such a list over
``index.build_workers`` processes in chunks of at most ``CHUNK`` items and returns the results
in input order, so the build is the same, record for record and diagnostic for diagnostic, as
the serial one. Lists shorter than ``PARALLEL_FROM`` (and any list when ``processes`` is 1) are
done in this process: below a few thousand skills starting the processes costs more than it
saves.

The processes are started with ``spawn`` (never ``fork``: the build may already hold torch and
OpenMP threads), once, when the first list long enough arrives, and kept for the rest of the
build. A work function must be a module-level function (or a ``functools.partial`` of one) that
takes a list and returns a list of the same length. An exception it raises is raised here as
it would have been serially; a worker process that dies (killed, out of memory) is logged and
its work, and any after it, is done in this process instead. Workers ignore Ctrl-C (the build
process handles it) and exit when the build process is gone. As with any ``spawn`` start, a
program that builds with workers must guard its entry point (``if __name__ == "__main__":``),
as ``skill-router`` and ``python -m`` modules do.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from types import TracebackType
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_FROM = 4000  # shorter lists are done in the build process
CHUNK = 256  # items per task at most (smaller when that leaves a worker idle)
_TASKS_PER_WORKER = 4  # chunks are made small enough for this many per worker
_WATCH_SECONDS = 1.0  # how often a worker checks that the build process is still there


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_SECONDS)
    os._exit(1)  # the build process is gone: nobody will read what this one makes


def init_worker(parent: int) -> None:
    """Prepare a worker process: it ignores Ctrl-C and exits when ``parent`` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()


class Workers:
    """Process-parallel ``map`` for one build; ``processes`` 0 is one per usable CPU, 1 runs
    everything in this process. Use it as a context manager (the processes end on exit)."""

    def __init__(self, processes: int = 1, *, parallel_from: int | None = None) -> None:
        if processes < 0:
            raise ValueError(f"processes must be >= 0, not {processes}")
        self.processes = processes or usable_cpus()
        self.parallel_from = PARALLEL_FROM if parallel_from is None else parallel_from
        self._pool: ProcessPoolExecutor | None = None
        self._broken = False

    @classmethod
    @contextmanager
    def using(cls, workers: Workers | int) -> Iterator[Workers]:
        """``workers`` itself (the caller closes it), or a new ``Workers(workers)`` closed on
        exit."""
        if isinstance(workers, Workers):
            yield workers
            return
        with cls(workers) as made:
            yield made

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    @property
    def started(self) -> bool:
        """Are worker processes running (a long enough list came, and none has died)?"""
        return self._pool is not None

    def parallel(self, count: int) -> bool:
        """Would a list of ``count`` items be split over processes?"""
        return self.processes > 1 and count >= self.parallel_from and not self._broken

    def map(self, work: Callable[[list[T]], list[R]], items: Sequence[T]) -> list[R]:
        """``work`` applied to ``items`` (in chunks, over the processes when the list is long
        enough); the results are in the order of ``items``."""
        items = list(items)
        if not self.parallel(len(items)):
            return work(items)
        size = max(1, min(CHUNK, -(-len(items) // (self.processes * _TASKS_PER_WORKER))))
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        pool = self._start()
        futures = [pool.submit(work, chunk) for chunk in chunks]
        out: list[R] = []
        try:
            for done, future in enumerate(futures):
                try:
                    part = future.result()
                except BrokenProcessPool as exc:
                    return out + self._finish_here(work, chunks[done:], exc)
                out.extend(part)
        finally:
            for future in futures:
                future.cancel()
        return out

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.processes, mp_context=multiprocessing.get_context("spawn"),
                initializer=init_worker, initargs=(os.getpid(),))
        return self._pool

    def _finish_here(self, work: Callable[[list[T]], list[R]], chunks: list[list[T]],
                     exc: BaseException) -> list[R]:
        log.warning("a build worker process stopped (%s); the rest of the build runs in this "
                    "process", exc)
        self._broken = True
        self.close()
        return [result for chunk in chunks for result in work(chunk)]

