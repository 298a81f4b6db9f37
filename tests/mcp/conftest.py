"""One skills tree on disk, indexed with the hash embedder, served in-process and by a real gRPC
server on port 0; MCP doors in front of both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from router.engine import Engine
from router.service.server import RouterServer
from tests.mcp.doors import http_door
from tests.service.skilltree import Tree, build_tree_index, serve_engine, write_tree

BINARY = b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """The service tests' tree plus a small binary file bundled with pdf-tools."""
    found = write_tree(tmp_path_factory.mktemp("mcp-tree"))
    (found.root / "pdf-tools" / "assets").mkdir()
    (found.root / "pdf-tools" / "assets" / "logo.png").write_bytes(BINARY)
    return found


@pytest.fixture(scope="session")
def tree_engine(tree: Tree) -> Engine:
    return build_tree_index(tree)


@pytest.fixture(scope="session")
def grpc_server(tree_engine: Engine) -> Iterator[RouterServer]:
    server = serve_engine(tree_engine)
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


def skill_path(tree: Tree, name: str) -> Path:
    return tree.root / name
