"""A call's thread searches on ``index.search_threads`` OpenMP threads, as the engine's does."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import ClassVar

import faiss

from router.engine import Engine
from router.routing.model import RouteQuery, RouteResult
from router.v1 import router_pb2 as pb
from tests.support.servers import serving


class ThreadsSeen(Engine):
    """Records FAISS's OpenMP thread count on the thread each route runs on."""

    seen: ClassVar[list[int]] = []

    def route_turn(self, query: RouteQuery, *, explain: bool = False) -> RouteResult:
        self.seen.append(int(faiss.omp_get_max_threads()))
        return super().route_turn(query, explain=explain)


def test_every_call_thread_searches_on_the_configured_thread_count(engine: Engine) -> None:
    # A count a new thread does not have (the default, read on one), so an untuned one shows.
    default: list[int] = []
    probe = threading.Thread(target=lambda: default.append(int(faiss.omp_get_max_threads())))
    probe.start()
    probe.join()
    wanted = default[0] + 1
    config = replace(engine.config, index=replace(engine.config.index, search_threads=wanted))
    tuned = ThreadsSeen(engine.snapshot, config, engine.embedder)
    try:
        with serving(tuned, max_workers=4) as served:
            for i in range(8):
                served.stub.Route(pb.RouteRequest(message=f"merge PDF documents {i}"))
        assert ThreadsSeen.seen and set(ThreadsSeen.seen) == {wanted}
    finally:
        faiss.omp_set_num_threads(engine.config.index.search_threads)  # this thread's, as before
