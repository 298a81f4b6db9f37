"""``skill-router mcp``: the MCP front door over stdio or streamable HTTP, serving an index
in-process (``--index``) or proxying to a running gRPC service (``--target``).

Over HTTP the door authenticates its own callers with the tokens it *accepts*
(``--accept-token-file``/``--accept-token-env``, see ``router.mcp.auth``); ``--token-file`` is
the one it *presents* to ``--target``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import sys
from typing import TYPE_CHECKING

from router.cli.flags import (
    add_accept_args,
    add_feedback_store_arg,
    add_listen_args,
    add_target_args,
    caller_auth_from_args,
    with_feedback_store,
)
from router.config import Config, McpConfig, load_config
from router.door.listen import address, bind
from router.errors import InvalidRequest, RouterError

if TYPE_CHECKING:  # building the command line imports nothing heavy
    from router.door.backend import Backend
    from router.mcp.auth import HttpAccess

log = logging.getLogger(__name__)

DEFAULT_HTTP_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``mcp`` subcommand."""
    p = sub.add_parser("mcp", help="serve the MCP tools search_skills, activate_skill and "
                                   "read_skill_resource (stdio or streamable HTTP)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--index", metavar="INDEX", help="serve this index in-process, a "
                        "folder or s3://BUCKET/PREFIX (default: index.index_dir)")
    # with --target: the deadline, TLS and the bearer token for the gRPC service
    add_target_args(p, default=None, into=source,
                    target_help="proxy to a running skill-router gRPC service instead",
                    timeout=5.0, timeout_help="with --target: deadline of each gRPC call in "
                                              "seconds (default: 5)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default; stdout carries only MCP messages) or streamable "
                        "HTTP at /mcp")
    add_listen_args(p, DEFAULT_HTTP_PORT, "HTTP address (default: 127.0.0.1)",
                    f"HTTP port (default: {DEFAULT_HTTP_PORT})")
    p.add_argument("--hide-paths", action="store_true",
                   help="with --index: send no absolute path of this disk to callers "
                        "(server.expose_paths: false; with --target the server decides)")
    p.add_argument("--audit-log", metavar="PATH", help="write one JSON line per call to PATH "
                   "(0600, rotated by size), - for stderr (default: mcp.audit_log, none)")
    _add_door_auth_args(p)
    add_feedback_store_arg(p)  # with --index
    p.set_defaults(handler=cmd_mcp)


def _add_door_auth_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "the HTTP door's own callers (--token-file above is what the door presents to "
        "--target; these are the tokens it accepts)")
    add_accept_args(group, "mcp", "the door")
    group.add_argument("--principals", metavar="FILE",
                       help="the principals file (as serve --principals): its tokens are "
                            "accepted and each caller is served as its principal; reloaded on "
                            "SIGHUP (mcp.principals_file)")
    group.add_argument("--allow-unauthenticated", action="store_true", default=None,
                       help="listen beyond loopback with no accepted token, for a door behind "
                            "an authenticating proxy; without it such a door refuses to start "
                            "(mcp.allow_unauthenticated)")
    group.add_argument("--allowed-host", action="append", metavar="HOST",
                       help="a Host header to accept besides loopback and --host: NAME (any "
                            "port) or NAME:PORT; repeat for more (mcp.allowed_hosts), e.g. the "
                            "name a load balancer forwards")
    group.add_argument("--resource-url", metavar="URL",
                       help="the door's /mcp URL as hosts reach it, named by its OAuth "
                            "protected resource metadata when the principals file has an oidc "
                            "section (mcp.resource_url; default: the URL each request came to)")


def mcp_config(args: argparse.Namespace, config: Config) -> McpConfig:
    """The configured ``mcp`` section with the command-line flags applied."""
    flags = {"accept_token_file": args.accept_token_file,
             "accept_token_env": args.accept_token_env,
             "principals_file": args.principals,
             "allow_unauthenticated": args.allow_unauthenticated,
             "allowed_hosts": tuple(args.allowed_host) if args.allowed_host else None,
             "resource_url": getattr(args, "resource_url", None)}
    return dataclasses.replace(config.mcp, **{k: v for k, v in flags.items() if v is not None})


def open_backend(args: argparse.Namespace, config: Config) -> Backend:
    """The proxy for ``--target``, else an Engine on the index, warmed up."""
    if args.target:
        from router.client import SkillRouterClient
        from router.door.proxy import GrpcBackend

        auth = caller_auth_from_args(args)
        return GrpcBackend(SkillRouterClient(args.target, timeout=args.timeout,
                                             **dataclasses.asdict(auth)))
    from router.door.backend import EngineBackend
    from router.engine import Engine
    from router.objectstore.mirror import served_index

    index_dir, remote = served_index(args.index or config.index.index_dir, config)
    engine = Engine.open(index_dir, config)
    engine.remote = remote  # an s3:// index: new versions fetched as `serve` does
    engine.warm_up()
    if config.server.index_poll_seconds > 0:  # pick up new index versions, as `serve` does
        from router.door.poller import IndexPoller

        IndexPoller(engine, config.server.index_poll_seconds).start()
    from router.door.path_policy import PathPolicy

    expose = config.server.expose_paths and not args.hide_paths
    return EngineBackend(engine, PathPolicy(expose, engine.index_dir))


def audited(backend: Backend, path: str) -> Backend:
    """``backend`` writing its calls to the audit log at ``path`` ("" = none)."""
    if not path:
        return backend
    from router.door.audit import AuditLog
    from router.mcp.audit import AuditedBackend

    return AuditedBackend(backend, AuditLog(path))


def _authentication(access: HttpAccess) -> str:
    if access.principals is not None:
        return "principals"
    return "bearer tokens" if access.tokens else "no caller authentication"


def cmd_mcp(args: argparse.Namespace) -> int:
    from router.mcp.server import SkillDoor

    config = with_feedback_store(load_config(getattr(args, "config", None)), args)
    access, listener = None, None
    if args.transport == "http":  # who may call it, settled before anything loads
        from router.mcp.auth import http_access

        access = http_access(args.host, mcp_config(args, config))
        listener = bind(args.host, args.port)  # a taken port: one error line, before loading
    elif any(v is not None for v in (args.accept_token_file, args.accept_token_env,
                                     args.allow_unauthenticated, args.allowed_host,
                                     args.principals)):
        raise InvalidRequest("--accept-token-file, --accept-token-env, --principals, "
                             "--allowed-host and --allow-unauthenticated apply to --transport "
                             "http only (a stdio door serves the one host that started it)")
    try:
        # Nothing but MCP messages may reach stdout, even while the model loads.
        with contextlib.redirect_stdout(sys.stderr):
            backend = audited(open_backend(args, config), args.audit_log or config.mcp.audit_log)
    except (RouterError, OSError, ValueError) as exc:
        if listener is not None:
            listener.close()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    principals = access.principals if access is not None else None
    door = SkillDoor(backend, principals=principals)
    if principals is not None:
        import signal

        signal.signal(signal.SIGHUP, lambda signum, frame: principals.reload())
    try:
        if access is None:
            import anyio

            from router.mcp.stdio import run_stdio

            anyio.run(run_stdio, door)
        else:
            from router.mcp.http import PATH, serve_http

            assert listener is not None
            where = address(args.host, listener.getsockname()[1])
            print(f"skill-router MCP listening on http://{where}{PATH} "
                  f"({_authentication(access)})", file=sys.stderr, flush=True)
            serve_http(door, access, args.host, listener)
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()
    return 0
