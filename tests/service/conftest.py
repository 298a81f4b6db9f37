"""Fixtures: real gRPC servers on port 0 over small indexes built with the hash test embedder
(the helpers they use live in tests.support)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from router.engine import Engine
from router.service.server import RouterServer
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support.indexes import build_hash_index, index_folder, open_engine
from tests.support.servers import Served, serving
from tests.support.skills import DIAGNOSTICS, SKILLS, UNROUTABLE, Tree, write_tree


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hash_index(SKILLS, tmp_path_factory.mktemp("index"), DIAGNOSTICS)


@pytest.fixture(scope="session")
def engine(index_dir: Path) -> Engine:
    return open_engine(index_dir)


@pytest.fixture(scope="session")
def served(engine: Engine) -> Iterator[Served]:
    with serving(engine) as served:
        yield served


@pytest.fixture(scope="session")
def channel(served: Served) -> grpc.Channel:
    return served.channel


@pytest.fixture(scope="session")
def stub(served: Served) -> pb_grpc.SkillRouterStub:
    return served.stub


@pytest.fixture(scope="session")
def empty_stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pb_grpc.SkillRouterStub]:
    """A server whose every skill is never routed."""
    index = build_hash_index(UNROUTABLE, tmp_path_factory.mktemp("empty"), DIAGNOSTICS)
    with serving(open_engine(index)) as served:
        yield served.stub


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """A skills tree on disk with bundled files, a callable skill and hostile symlinks."""
    return write_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="session")
def tree_engine(tree: Tree) -> Engine:
    return open_engine(index_folder(tree.root, tree.index))


@pytest.fixture(scope="session")
def tree_served(tree_engine: Engine) -> Iterator[Served]:
    with serving(tree_engine, max_workers=24) as served:  # room for the 20-thread races
        yield served


@pytest.fixture(scope="session")
def tree_server(tree_served: Served) -> RouterServer:
    return tree_served.running


@pytest.fixture(scope="session")
def tree_stub(tree_served: Served) -> pb_grpc.SkillRouterStub:
    return tree_served.stub
