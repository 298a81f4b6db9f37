"""Helpers for the learning-from-traffic tests: a six-skill catalog indexed by
``skill-router index`` with the hash embedder, engines with a chosen feedback policy, and
what the feedback store holds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from router.cli import main
from router.client import SkillRouterClient
from router.config import Config, FeedbackConfig, IndexConfig
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.learning.file_store import FileStore
from router.learning.rows import ACTIVATE, FEEDBACK, Row
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.indexes import index_argv
from tests.support.skills import write_catalog

# Messages that route (top_k 1) to exactly one skill of ``write_catalog``'s catalog.
PDF, GIT, CSV, DOCKER, SQL = ("extract the tables from these PDF files",
                              "write git commit messages", "summarise CSV spreadsheets and charts",
                              "build Docker images and containers", "write SQL queries")
SKILL_OF = {PDF: "skill-0", GIT: "skill-1", CSV: "skill-2", DOCKER: "skill-3", SQL: "skill-4"}


def make_index(base: Path) -> Path:
    """Index ``write_catalog``'s six skills under ``base/index`` (discovery recorded)."""
    index = base / "index"
    assert main(index_argv(write_catalog(base / "skills"), index)) == 0
    return index


def open_engine(index: Path, **feedback: object) -> Engine:
    config = Config(index=IndexConfig(reindex_wait_seconds=30.0),
                    feedback=FeedbackConfig(**feedback))  # type: ignore[arg-type]
    return Engine.open(index, config, HashEmbedder())


def route(stub: pb_grpc.SkillRouterStub, message: str, session: str) -> pb.RouteResponse:
    response: pb.RouteResponse = stub.Route(pb.RouteRequest(message=message, session_id=session,
                                                            top_k=1))
    return response


def activate(stub: pb_grpc.SkillRouterStub, name: str, session: str,
             route_id: str = "") -> pb.ActivateResponse:
    response: pb.ActivateResponse = stub.Activate(pb.ActivateRequest(
        name=name, session_id=session, route_id=route_id))
    return response


def positives(index: Path) -> set[tuple[str, str, str]]:
    """(session, request, skill) of every positive example recorded."""
    return {(r.session, r.query, r.skill) for r in FileStore(index).read_rows()
            if r.kind == ACTIVATE and r.query}


def activations(index: Path) -> list[Row]:
    return [r for r in FileStore(index).read_rows() if r.kind == ACTIVATE]


def outcomes(index: Path) -> list[Row]:
    return [r for r in FileStore(index).read_rows() if r.kind == FEEDBACK]


def teach(client: SkillRouterClient, sessions: Sequence[str], message: str) -> str:
    """Route ``message`` in each session and activate the skill it retrieved; that skill."""
    name = ""
    for session in sessions:
        turn = client.route(message, session_id=session, top_k=1)
        name = next(s.name for s in turn.skills if s.reason == pb.ROUTE_REASON_RETRIEVED)
        client.activate(name, session_id=session, route_id=turn.route_id)
    return name
