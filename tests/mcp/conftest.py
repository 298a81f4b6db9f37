"""One skills tree on disk, indexed with the hash embedder, served in-process and by a real gRPC
server on port 0; MCP doors in front of both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from router.engine import Engine
from router.service.server import RouterServer
from tests.support.indexes import index_folder, open_engine
from tests.support.mcp_doors import http_door, write_door_tree
from tests.support.servers import start_server
from tests.support.skills import Tree


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return write_door_tree(tmp_path_factory.mktemp("mcp-tree"))


@pytest.fixture(scope="session")
def tree_engine(tree: Tree) -> Engine:
    return open_engine(index_folder(tree.root, tree.index))


@pytest.fixture(scope="session")
def grpc_server(tree_engine: Engine) -> Iterator[RouterServer]:
    server = start_server(tree_engine, max_workers=24)
    yield server
    server.stop(0)


@pytest.fixture(scope="session")
def index_door(tree_engine: Engine, tree: Tree) -> Iterator[str]:
    """The door serving the index in-process, over streamable HTTP."""
    with http_door(["--index", str(tree.index)]) as url:
        yield url


@pytest.fixture(scope="session")
def proxy_door(grpc_server: RouterServer) -> Iterator[str]:
    """The door proxying to the gRPC server, over streamable HTTP."""
    with http_door(["--target", f"127.0.0.1:{grpc_server.port}"]) as url:
        yield url


@pytest.fixture(scope="session", params=["index", "proxy"])
def door(request: pytest.FixtureRequest) -> str:
    """Each HTTP door in turn: the same behaviour is expected of both."""
    url: str = request.getfixturevalue(f"{request.param}_door")
    return url

