"""Helpers for the operations tests: a skills folder on disk, indexed by ``skill-router index``
(so the discovery settings are recorded) with the hash embedder, served on port 0."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from router.config import Config, IndexConfig, ServerConfig
from router.engine import Engine
from router.index.encoders.hashing import HashEmbedder
from router.service.metrics import ServiceMetrics
from router.service.server import RouterServer, build_server
from router.v1 import router_pb2_grpc as pb_grpc

REPO = Path(__file__).resolve().parents[2]
SKILL_MD = "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n"
TOPICS = ("PDF files and tables", "git commit messages", "CSV spreadsheets and charts",
          "Docker images and containers", "SQL queries and schemas", "email drafts and replies")


def write_skill(root: Path, name: str, description: str) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, description=description),
                                     encoding="utf-8")


def write_catalog(root: Path, count: int = len(TOPICS)) -> Path:
    """``count`` skills named ``skill-<i>`` about rotating topics under ``root``."""
    for i in range(count):
        write_skill(root, f"skill-{i}", f"Handles {TOPICS[i % len(TOPICS)]} (variant {i}).")
    return root


def index_argv(skills: Path, out: Path) -> list[str]:
    return ["index", "--bundled", str(skills), "--no-project", "--no-home", "--out", str(out),
            "--model", "hash"]


def run_index(skills: Path, out: Path) -> str:
    """Run ``skill-router index`` in a subprocess; return its stdout."""
    done = subprocess.run([sys.executable, "-m", "router.cli", *index_argv(skills, out)],
                          cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout


def engine_for(index: Path, *, wait_seconds: float = 30.0, keep: int = 3) -> Engine:
    config = Config(index=IndexConfig(reindex_wait_seconds=wait_seconds, keep_versions=keep))
    return Engine.open(index, config, HashEmbedder())


@dataclass(frozen=True)
class Served:
    running: RouterServer
    metrics: ServiceMetrics
    stub: pb_grpc.SkillRouterStub
    channel: grpc.Channel


@contextmanager
def serving(engine: Engine, **server: object) -> Iterator[Served]:
    """A started server for ``engine`` with metrics on its own registry, and a stub."""
    config = ServerConfig(max_workers=8, grace_seconds=1.0, **server)  # type: ignore[arg-type]
    metrics = ServiceMetrics(engine)
    running = build_server(engine, config, "127.0.0.1:0", observer=metrics.observe)
    running.server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]
            yield Served(running, metrics, stub, channel)
    finally:
        running.stop(0)


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that were free a moment ago."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()
