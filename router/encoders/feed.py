"""Tokenizer worker processes that keep a GPU build's model fed.

One core tokenizes about 15,000 catalog texts a second (docs/performance.md), so a GPU that
embeds several times that waits on a build process that tokenizes for it. ``TokenizerPool``
spreads a build's chunks over ``workers`` processes, each tokenizing and padding whole chunks
on one core (``router.encoders.token_batches``: numpy and ``tokenizers`` only, never torch),
and hands the planned chunks back in input order. At most ``ahead`` chunks are submitted and
not yet taken, so memory stays bounded whatever the catalog's size (a chunk of ``FEED_CHUNK``
texts is a few MB of padded ids).

The processes are started with ``spawn`` (the build process holds torch and its threads: no
``fork``), ignore Ctrl-C and exit when the build process is gone. A worker that raises passes
its exception to the build; a worker that dies (killed, out of memory) stops the build with
``TokenizerStopped``, never a hang. The pool ends with the block that holds it, work not
started cancelled.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType

from router.common.workers import init_worker as watch_parent
from router.common.workers import usable_cpus
from router.encoders.token_batches import PlannedBatch, TokenizerSpec, init_worker, worker_plan
from router.errors import Internal

log = logging.getLogger(__name__)

FEED_CHUNK = 8192  # texts a worker tokenizes per task (8 CUDA batches of 1024)
AHEAD_PER_WORKER = 2  # chunks in flight per worker process

Work = Callable[[Sequence[str], int], list[PlannedBatch]]


class TokenizerStopped(Internal):
    """A tokenizer worker process died before its chunk was done; the build stops."""


def worker_count(setting: int, on_cuda: bool) -> int:
    """Tokenizer processes for a build: ``setting`` when it is not 0; 0 is one per usable
    CPU less one (the build process feeds the model) on CUDA, and none on the CPU, where the
    model itself takes the cores. 1 (none) tokenizes on a thread of the build process."""
    if setting > 0:
        return setting
    return max(1, usable_cpus() - 1) if on_cuda else 1


def _start_worker(spec: TokenizerSpec, parent: int) -> None:
    watch_parent(parent)
    init_worker(spec)


class TokenizerPool:
    """``workers`` tokenizer processes planning chunks ahead of the model; a context manager
    (the processes end on exit). ``work`` plans one chunk in a worker (a module-level
    function; the default tokenizes with the spec)."""

    def __init__(self, spec: TokenizerSpec, workers: int, *, ahead: int | None = None,
                 work: Work = worker_plan) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self.workers = workers
        self.ahead = max(1, ahead if ahead is not None else AHEAD_PER_WORKER * workers)
        self.submitted = 0  # chunks handed to the workers so far
        self.taken = 0  # planned chunks handed back so far
        self._spec = spec
        self._work = work
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> TokenizerPool:
        log.debug("tokenizing on %d worker processes, %d chunks in flight at most",
                  self.workers, self.ahead)
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(self._spec, os.getpid()))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def planned(self, texts: Sequence[str], spans: Sequence[tuple[int, int]],
                batch_size: int) -> Iterator[list[PlannedBatch]]:
        """The planned chunk of each span of ``texts``, in order."""
        if self._pool is None:
            raise RuntimeError("TokenizerPool is used outside its with block")
        pool = self._pool
        pending: deque[Future[list[PlannedBatch]]] = deque()
        todo = iter(spans)
        try:
            while True:
                while len(pending) < self.ahead and (span := next(todo, None)) is not None:
                    pending.append(pool.submit(self._work, texts[span[0]:span[1]], batch_size))
                    self.submitted += 1
                if not pending:
                    return
                planned = pending.popleft().result()
                self.taken += 1
                yield planned
        except BrokenProcessPool as exc:
            raise TokenizerStopped(
                f"a tokenizer worker process stopped before its chunk was done ({exc}); the "
                f"build is stopped. index.tokenize_workers 1 tokenizes in the build process"
            ) from exc
        finally:
            for future in pending:
                future.cancel()
