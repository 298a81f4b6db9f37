"""What project skills may cost the server, over a real gRPC server: a flood of new long ones
from one token is refused while another caller keeps answering; a turn waits for an embedding
slot only until its deadline; and the embedding of a turn nobody waits for stops."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import numpy as np
import pytest

from router.access.model import Principal
from router.config import Config, RoutingConfig
from router.engine import Engine
from router.engine.project_turns import EMBED_BATCH
from router.service.interceptors import CallRecord
from router.v1 import router_pb2 as pb
from tests.service.test_catalog_views import HEADER, _reader, as_
from tests.support.catalogs import three_catalogs
from tests.support.embedders import CountingEmbedder
from tests.support.servers import Served, serving


def flood(count: int, chars: int, tag: str) -> list[pb.InlineSkill]:
    return [pb.InlineSkill(name=f"{tag}-{i}", location=f"/p/{tag}-{i}/SKILL.md",
                           description=(f"Skill {tag} {i} " + "words " * chars)[:chars])
            for i in range(count)]


class GatedEmbedder(CountingEmbedder):
    """Counts texts; a batch of project skills (named ``proj ...``) waits for ``release``
    once ``entered`` is set, so a test holds a turn inside its embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if any(t.startswith("proj ") for t in texts):
            self.entered.set()
            assert self.release.wait(60)
        return super().encode(texts)

    def project_texts(self) -> int:
        return sum(t.startswith("proj ") for t in self.texts)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    engine = Engine.open(three_catalogs(tmp_path), Config(), CountingEmbedder())
    with serving(engine, caller_of=_reader) as served:
        yield served
    engine.close()


def test_a_flood_from_one_token_is_refused_while_another_caller_answers(
        served: Served) -> None:
    def one(n: int) -> grpc.StatusCode:
        try:
            as_("pay", served.stub.Route, pb.RouteRequest(message="deploy it",
                                                          project_skills=flood(256, 1024,
                                                                               f"f{n}")))
        except grpc.RpcError as error:
            assert "fewer or shorter" in (error.details() or "")
            return error.code()
        return grpc.StatusCode.OK

    with ThreadPoolExecutor(8) as pool:
        codes = [pool.submit(one, n) for n in range(8)]
        other = as_("org", served.stub.Route, pb.RouteRequest(message="write a commit message",
                                                              top_k=3))
        assert other.skills and other.index_version  # answered during the flood
    assert {c.result() for c in codes} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    assert as_("pay", served.stub.Route, pb.RouteRequest(
        message="deploy it", project_skills=flood(50, 300, "ok"))).index_version


Gated = tuple[Served, GatedEmbedder, list[CallRecord], list[grpc.ServicerContext]]


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[Gated]:
    embedder, finished, contexts = GatedEmbedder(), [], []
    config = Config(routing=RoutingConfig(project_embed_concurrency=1))
    engine = Engine.open(three_catalogs(tmp_path), config, embedder)

    def reader(context: grpc.ServicerContext) -> Principal:
        contexts.append(context)
        return _reader(context)

    with serving(engine, caller_of=reader, observer=finished.append) as served:
        yield served, embedder, finished, contexts
    embedder.release.set()
    engine.close()


def route_future(served: Served, who: str, skills: list[pb.InlineSkill],
                 timeout: float) -> grpc.Future:
    future: grpc.Future = served.stub.Route.future(
        pb.RouteRequest(message="deploy it", project_skills=skills),
        metadata=((HEADER, who),), timeout=timeout)
    return future


def wait_for(condition: Callable[[], bool]) -> None:
    until = time.monotonic() + 60
    while not condition() and time.monotonic() < until:
        time.sleep(0.01)


def routes(finished: list[CallRecord]) -> list[grpc.StatusCode]:
    """The status of each Route call the server finished, in order."""
    return [r.code for r in finished if r.method.endswith("/Route")]


def test_a_turn_waits_for_a_slot_only_until_its_deadline_and_others_answer(
        gated: Gated) -> None:
    served, embedder, finished, _ = gated
    holding = route_future(served, "pay", flood(4, 100, "proj"), timeout=60)
    assert embedder.entered.wait(60)  # the one slot is taken
    waiting = route_future(served, "int", flood(4, 100, "proj-w"), timeout=1)
    with pytest.raises(grpc.RpcError) as caught:
        waiting.result()
    assert caught.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    plain = as_("org", served.stub.Route, pb.RouteRequest(message="write a commit message"))
    assert plain.index_version  # a turn without new project skills needs no slot
    wait_for(lambda: len(routes(finished)) == 2)  # while the slot is still held
    assert set(routes(finished)) == {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.OK}
    embedder.release.set()
    assert holding.result().index_version
    assert embedder.project_texts() == 4  # the waiting turn never embedded


def test_the_embedding_of_a_turn_nobody_waits_for_stops(gated: Gated) -> None:
    served, embedder, finished, contexts = gated
    call = route_future(served, "pay", flood(4 * EMBED_BATCH, 100, "proj"), timeout=1)
    assert embedder.entered.wait(60)
    with pytest.raises(grpc.RpcError) as caught:
        call.result()  # the caller's deadline passes while its first batch is held
    assert caught.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    wait_for(lambda: not contexts[-1].is_active())  # the server saw its deadline pass too
    embedder.release.set()
    wait_for(lambda: len(routes(finished)) == 1)
    assert routes(finished) == [grpc.StatusCode.DEADLINE_EXCEEDED]
    assert embedder.project_texts() == EMBED_BATCH  # one batch of four, then it stopped
