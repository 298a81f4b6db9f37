"""A real gRPC server on port 0 over a small index built with the hash test embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from router.config import Config, ServerConfig
from router.engine import Engine
from router.index.encoders.hashing import HashEmbedder
from router.index.store import build_index
from router.service.server import RouterServer, build_server
from router.skills.model import Diagnostic, Level, Skill
from router.v1 import router_pb2_grpc as pb_grpc
from tests.service.skilltree import Tree, build_tree_index, serve_engine, write_tree

CONFIG = Config()
SERVER_CONFIG = ServerConfig(max_workers=4, grace_seconds=2.0)


def make_skill(name: str, description: str, **flags: Any) -> Skill:
    base = f"/srv/skills/{name}"
    return Skill(name=name, description=description, location=f"{base}/SKILL.md",
                 base_dir=base, content_hash=name, **flags)


PDF = "Extracts text and tables from PDF files, fills PDF forms and merges PDF documents."
SKILLS: tuple[Skill, ...] = (
    make_skill("house-style", "Applies the house writing style to every answer.",
               always_on=True),
    make_skill("pdf-tools", PDF + " Use when working with PDF files."),
    make_skill("csv-analyst", "Analyses CSV spreadsheets: summary statistics, pivots, charts."),
    make_skill("git-helper", "Writes git commit messages and explains git history."),
    make_skill("docker-deploy", "Builds Docker images and deploys containers to a cluster."),
    make_skill("pdf-legacy", PDF + " Old version.", deprecated=True),
    make_skill("pdf-disabled", PDF + " Switched off.", enabled=False),
    make_skill("pdf-manual", PDF + " Only on request.", model_invocable=False),
)
DIAGNOSTICS: tuple[Diagnostic, ...] = (
    Diagnostic(Level.WARNING, "/srv/skills/Odd/SKILL.md", "name 'odd' does not match folder"),
    Diagnostic(Level.ERROR, "/srv/skills/broken/SKILL.md", "description is missing"),
)
# Only skills that are never routed: any message gives an empty catalog.
UNROUTABLE: tuple[Skill, ...] = tuple(s for s in SKILLS if not s.routable)
FILTERED = frozenset(s.name for s in UNROUTABLE)


def make_stub(channel: grpc.Channel) -> pb_grpc.SkillRouterStub:
    return pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]


def build(skills: tuple[Skill, ...], root: Path) -> Path:
    build_index(skills, DIAGNOSTICS, HashEmbedder(), root)
    return root


def open_engine(root: Path) -> Engine:
    return Engine.open(root, CONFIG, HashEmbedder())


def start(engine: Engine) -> RouterServer:
    running = build_server(engine, SERVER_CONFIG, "127.0.0.1:0")
    running.server.start()
    return running


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(SKILLS, tmp_path_factory.mktemp("index"))


@pytest.fixture(scope="session")
def engine(index_dir: Path) -> Engine:
    return open_engine(index_dir)


@pytest.fixture(scope="session")
def running(engine: Engine) -> Iterator[RouterServer]:
    server = start(engine)
    yield server
    server.stop(0)


@pytest.fixture(scope="session")
def channel(running: RouterServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as chan:
        yield chan


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> pb_grpc.SkillRouterStub:
    return make_stub(channel)


@pytest.fixture(scope="session")
def empty_stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SkillRouterStub]:
    server = start(open_engine(build(UNROUTABLE, tmp_path_factory.mktemp("empty"))))
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as chan:
        yield make_stub(chan)
    server.stop(0)


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """A skills tree on disk with bundled files, a callable skill and hostile symlinks."""
    return write_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="session")
def tree_engine(tree: Tree) -> Engine:
    return build_tree_index(tree)


@pytest.fixture(scope="session")
def tree_server(tree_engine: Engine) -> Iterator[RouterServer]:
    server = serve_engine(tree_engine)
    yield server
    server.stop(0)


@pytest.fixture(scope="session")
def tree_stub(tree_server: RouterServer) -> Iterator[pb_grpc.SkillRouterStub]:
    with grpc.insecure_channel(f"127.0.0.1:{tree_server.port}") as chan:
        yield make_stub(chan)
