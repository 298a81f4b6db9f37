"""A small catalog with a hostile skill, indexed by ``skill-router index`` (hash model), served by
a real gRPC server on port 0, and ops consoles in front of it on port 0: one open (loopback, no
tokens) and one gated by tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from router.config import OpsConfig
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from router.engine import Engine
from router.service.server import RouterServer
from tests.support.indexes import cli_index, open_engine
from tests.support.servers import start_server
from tests.support.skills import add_skill, write_skill

HOSTILE = "hostile-skill"
HOSTILE_TEXT = ("Summarises meeting notes <script>alert(1)</script> and "
                "<img src=x onerror=alert(1)> for the team.")
PDF_SKILL = "pdf-tools"
TOKENS = ("console-token-one", "console-token-two")
SKILLS = {PDF_SKILL: "Extracts text and tables from PDF files and merges PDF documents.",
          "git-helper": "Writes git commit messages and explains git history.",
          "csv-charts": "Turns CSV spreadsheets into charts and summary tables.",
          "docker-ops": "Builds Docker images and debugs containers."}


@dataclass(frozen=True)
class Catalog:
    skills: Path
    index: Path


@pytest.fixture(scope="package")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    base = tmp_path_factory.mktemp("console")
    skills = base / "skills"
    for name, description in SKILLS.items():
        add_skill(skills, name, description)
    (skills / PDF_SKILL / "reference.md").write_text("# PDF notes\n", encoding="utf-8")
    write_skill(skills / HOSTILE, HOSTILE, f'"{HOSTILE_TEXT}"')
    cli_index(skills, base / "index")
    return Catalog(skills, base / "index")


@pytest.fixture(scope="package")
def engine(catalog: Catalog) -> Engine:
    return open_engine(catalog.index)


@pytest.fixture(scope="package")
def grpc_server(engine: Engine) -> Iterator[RouterServer]:
    server = start_server(engine, max_workers=8)
    yield server
    server.stop(0)


@pytest.fixture(scope="package")
def console(grpc_server: RouterServer) -> Iterator[str]:
    """An open console (loopback, no tokens); its base URL."""
    running = ConsoleServer(RouterLink(f"127.0.0.1:{grpc_server.port}", CallerAuth()),
                            "127.0.0.1", 0, ()).start()
    yield running.url
    running.stop()


@pytest.fixture(scope="package")
def gated_console(grpc_server: RouterServer) -> Iterator[str]:
    """A console that accepts TOKENS only; its base URL."""
    tokens = tuple(t.encode() for t in TOKENS)
    running = ConsoleServer(RouterLink(f"127.0.0.1:{grpc_server.port}", CallerAuth()),
                            "127.0.0.1", 0, tokens,
                            ops=OpsConfig(login_failures_per_minute=10_000)).start()
    yield running.url
    running.stop()
