"""``skill-router mcp``: the MCP front door over stdio or streamable HTTP, serving an index
in-process (``--index``) or proxying to a running gRPC service (``--target``)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import sys
from typing import TYPE_CHECKING

from router.cli.caller import add_caller_args, caller_auth_from_args
from router.config import load_config
from router.errors import RouterError

if TYPE_CHECKING:  # building the command line imports nothing heavy
    from router.mcp.backend import Backend

log = logging.getLogger(__name__)

DEFAULT_HTTP_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``mcp`` subcommand."""
    p = sub.add_parser("mcp", help="serve the MCP tools search_skills, activate_skill and "
                                   "read_skill_resource (stdio or streamable HTTP)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--index", metavar="DIR", help="serve this index in-process "
                        "(default: index.index_dir from the configuration)")
    source.add_argument("--target", metavar="HOST:PORT",
                        help="proxy to a running skill-router gRPC service instead")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default; stdout carries only MCP messages) or streamable "
                        "HTTP at /mcp")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT,
                   help=f"HTTP port (default: {DEFAULT_HTTP_PORT})")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="with --target: deadline of each gRPC call in seconds (default: 5)")
    add_caller_args(p)  # with --target: TLS and the bearer token for the gRPC service
    p.set_defaults(handler=cmd_mcp)


def open_backend(args: argparse.Namespace) -> Backend:
    """The proxy for ``--target``, else an Engine on the index, warmed up."""
    if args.target:
        from router.client import SkillRouterClient
        from router.mcp.proxy import GrpcBackend

        auth = caller_auth_from_args(args)
        return GrpcBackend(SkillRouterClient(args.target, timeout=args.timeout,
                                             **dataclasses.asdict(auth)))
    from router.engine import Engine
    from router.mcp.backend import EngineBackend

    config = load_config(getattr(args, "config", None))
    engine = Engine.open(args.index or config.index.index_dir, config)
    engine.warm_up()
    if config.server.index_poll_seconds > 0:  # pick up new index versions, as `serve` does
        from router.service.poller import IndexPoller

        IndexPoller(engine, config.server.index_poll_seconds).start()
    return EngineBackend(engine)


def cmd_mcp(args: argparse.Namespace) -> int:
    from router.mcp.server import SkillDoor

    try:
        # Nothing but MCP messages may reach stdout, even while the model loads.
        with contextlib.redirect_stdout(sys.stderr):
            backend = open_backend(args)
    except (RouterError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    door = SkillDoor(backend)
    try:
        if args.transport == "stdio":
            import anyio

            from router.mcp.stdio import run_stdio

            anyio.run(run_stdio, door)
        else:
            print(f"skill-router MCP listening on http://{args.host}:{args.port}/mcp",
                  file=sys.stderr, flush=True)
            door.run("streamable-http", host=args.host, port=args.port)
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()
    return 0
