"""The cyclic garbage collector paused around work that makes many objects and no cycles.

CPython's collector scans every object still alive each time it runs a full collection. In a
server, the live heap is large (the served index's records, the memos of the last build:
``router.common.memo``), and a build that allocates hundreds of thousands of records and
tuples sets off one or two full collections: at 10k skills each is 0.4-0.5 s, more than a
Reindex of one changed skill costs otherwise. The objects a build makes are freed by reference
counting (records, tuples, arrays: no cycles), so the collector is paused while it runs and
resumed after, as it was; what it would have found is collected on its next run."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (nested blocks: the outermost resumes it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
