"""Every door sets FAISS's thread count on each thread it searches on, once a thread."""

from __future__ import annotations

import threading

import pytest

from router.door import threads
from router.door.threads import SearchThreads


def test_each_thread_is_set_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(threads.dense, "set_threads",
                        lambda n: calls.append((threading.current_thread().name, n)))
    pool = SearchThreads(3)
    pool.set_up()
    pool.set_up()
    worker = threading.Thread(target=lambda: (pool.set_up(), pool.set_up()), name="worker")
    worker.start()
    worker.join()
    assert calls == [(threading.current_thread().name, 3), ("worker", 3)]
