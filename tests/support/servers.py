"""A real gRPC server on a loopback port (0: any free one) for an Engine, and stubs on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc

from router.config import ServerConfig
from router.engine import Engine
from router.service.interceptors import CallObserver
from router.service.server import RouterServer, build_server
from router.service.servicer import CallerReader
from router.v1 import router_pb2_grpc as pb_grpc


def make_stub(channel: grpc.Channel) -> pb_grpc.SkillRouterStub:
    return pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]


def server_config(*, max_workers: int = 8, grace: float = 1.0, **fields: Any) -> ServerConfig:
    """The tests' server settings; ``fields`` are other ``ServerConfig`` fields."""
    return ServerConfig(max_workers=max_workers, grace_seconds=grace, **fields)


def start_server(engine: Engine, *, port: int = 0, observer: CallObserver | None = None,
                 caller_of: CallerReader | None = None, http_port: int | None = None,
                 **settings: Any) -> RouterServer:
    """A started server for ``engine`` on ``127.0.0.1:port``; the caller stops it.
    ``settings`` go to ``server_config`` (max_workers, grace, max_request_bytes, ...);
    ``observer`` sees every finished call (``ServiceMetrics.observe``); ``caller_of`` reads
    each call's caller (default: as the server's settings say); ``http_port`` opens the JSON
    door there too (0: any free port)."""
    running = build_server(engine, server_config(**settings), f"127.0.0.1:{port}",
                           observer=observer, caller_of=caller_of, http_port=http_port)
    running.start()
    return running


@dataclass(frozen=True)
class Served:
    running: RouterServer
    channel: grpc.Channel
    stub: pb_grpc.SkillRouterStub


@contextmanager
def serving(engine: Engine, **options: Any) -> Iterator[Served]:
    """``start_server(engine, **options)`` with a channel and a stub on it; stopped on exit."""
    running = start_server(engine, **options)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield Served(running, channel, make_stub(channel))
    finally:
        running.stop(0)
