"""``skill-router serve | route | info``: serve an index and query it.

``route`` and ``info`` run in-process through the same Engine the gRPC service uses, so what
they print is what a gateway would receive.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from router.cli.auth_args import add_server_auth_args, server_auth_flags
from router.cli.common_args import add_index_arg
from router.cli.flags import add_feedback_store_arg, with_feedback_store
from router.config import Config, ServerConfig, load_config
from router.routing.model import CatalogFormat, RouteQuery

Handler = Callable[[argparse.Namespace], int]
# What ``info`` prints: the facts of a loaded index (build-time statistics are not kept), and
# the manifest's encoder fine-tuning entry when the build tuned or considered tuning.
INFO_FIELDS = ("version", "model", "dimension", "skill_count", "built_at", "format_version",
               "path", "calibrated_gate", "example_count", "tuning_json")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve``, ``route`` and ``info`` subcommands."""
    _register_serve(sub)
    _register_route(sub)
    p = sub.add_parser("info", help="print the current index's version, model and size as JSON")
    _add_index_arg(p)
    _add_target_args(p)
    p.set_defaults(handler=cmd_info)


def _add_target_args(parser: argparse.ArgumentParser) -> None:
    from router.cli.learning_remote import add_target_args

    add_target_args(parser)


def _add_index_arg(parser: argparse.ArgumentParser) -> None:
    add_index_arg(parser, remote=True)


def _register_serve(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="serve the gRPC API (with health and reflection)")
    _add_index_arg(p)
    p.add_argument("--host", help="address to listen on (default: server.host)")
    p.add_argument("--port", type=int, help="port to listen on, 0 = any free port "
                                            "(default: server.port, 50051)")
    p.add_argument("--metrics-port", type=int, help="Prometheus /metrics port, 0 = off "
                                                    "(default: server.metrics_port, 9464)")
    p.add_argument("--http-port", type=int, help="also serve the API as JSON over HTTP (the "
                   "Connect protocol: POST /router.v1.SkillRouter/<Method>) on this port of "
                   "the same host, with the same callers and TLS; 0 = off (default: "
                   "server.http_port, 0)")
    p.add_argument("--log-format", choices=("text", "json"),
                   help="log lines as text or one JSON object each (default: server.log_format)")
    p.add_argument("--poll-seconds", type=float, help="check the index folder for a new "
                   "version this often, 0 = never (default: server.index_poll_seconds, 2)")
    p.add_argument("--ops-port", type=int, help="serve the ops web console on this port, "
                   "0 = off (default: ops.port, 0; see router.console)")
    p.add_argument("--hide-paths", action="store_true", default=None,
                   help="send no absolute path of this disk to callers: locations relative to "
                        "their skills root, the index by its version (server.expose_paths: false)")
    p.add_argument("--audit-log", metavar="PATH", help="write one JSON line per call to PATH "
                   "(0600, rotated by size), - for stderr (default: server.audit_log, none)")
    add_server_auth_args(p)
    add_feedback_store_arg(p)
    p.set_defaults(handler=cmd_serve)


def _register_route(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("route", help="route one message (in-process, or on a running server "
                                     "with --target) and print the catalog")
    p.add_argument("message", help="the user's message")
    _add_index_arg(p)
    p.add_argument("--format", choices=[f.value for f in CatalogFormat],
                   default=CatalogFormat.XML.value, help="catalog format (default: xml)")
    p.add_argument("--top-k", type=int, default=0, help="skills to retrieve (0 = configured)")
    p.add_argument("--history", nargs="*", default=[], metavar="TURN",
                   help="earlier turns, oldest first")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    _add_target_args(p)
    p.set_defaults(handler=cmd_route)


def _config(args: argparse.Namespace) -> Config:
    return with_feedback_store(load_config(getattr(args, "config", None)), args)


def _index_dir(args: argparse.Namespace, config: Config) -> str:
    """The index folder to open: ``--index``, else the configured one; an ``s3://`` index is
    its local mirror, brought up to the bucket's current version (``route``, ``info``)."""
    from router.objectstore.mirror import served_index

    return served_index(str(args.index or config.index.index_dir), config)[0]


def cmd_serve(args: argparse.Namespace) -> int:
    from router.cli.logs import use_format
    from router.door.listen import MAKE_RUN, check_free
    from router.encoders.factory import loading_in_background
    from router.index.query_encoder import serving_embedder
    from router.service.auth import check_open_bind

    config = _config(args)
    server_config = _server_config(args, config)
    check_open_bind(server_config)  # before the model and the index load
    check_free(server_config.host, server_config.port, also=MAKE_RUN)  # a taken port: now
    check_free(server_config.host, server_config.http_port, flag="--http-port",
               also="make run HTTP_PORT=N")
    from router.console.embedded import EmbeddedConsole

    console = EmbeddedConsole(server_config, config.ops, args.ops_port)
    use_format(server_config.log_format)
    if args.verbose == 0:
        logging.getLogger().setLevel(logging.INFO)  # a server's log is its access log
    from router.objectstore.mirror import served_index

    index_dir, remote = served_index(str(args.index or config.index.index_dir), config)
    # Start-up time is time to the first answered Route: the query model loads from here on,
    # overlapping the imports below and the index load.
    with loading_in_background(serving_embedder(index_dir, config.index)) as embedder:
        from router.engine import Engine
        from router.service.server import Endpoints, serve

        engine = Engine.open(index_dir, config, embedder)
        engine.prime()  # while the model still loads
    engine.remote = remote  # the poller fetches new versions, a Reindex publishes there
    engine.warm_up()  # the first real turn is then as fast as any other
    info = engine.info()
    if info.skill_count == 0:  # served anyway (a Reindex may fill it), but never silently
        logging.getLogger(__name__).warning(
            "serving index %s with 0 skills: every Route answers an empty catalog; index a "
            "skills folder with `skill-router index --root DIR`", info.version)

    def ready(where: Endpoints) -> None:
        metrics = where.metrics_url or "off"
        print(f"skill-router listening on {where.address} (index {info.version}, "
              f"{info.skill_count} skills); health: grpc.health.v1 on {where.address}, "
              f"metrics: {metrics}, reflection: on", flush=True)
        if where.json_url:
            from router.door.api import SERVICE_NAME

            print(f"JSON (Connect protocol): {where.json_url}/{SERVICE_NAME}/Route", flush=True)
        console.start(where.address)
        if console.url:
            print(f"ops console: {console.url}/route", flush=True)

    try:
        serve(engine, server_config, ready=ready)
    finally:
        console.stop()
    return 0


def _server_config(args: argparse.Namespace, config: Config) -> ServerConfig:
    """The configured server section with the command-line flags applied."""
    flags = {"host": args.host, "port": args.port, "metrics_port": args.metrics_port,
             "http_port": args.http_port,
             "log_format": args.log_format, "index_poll_seconds": args.poll_seconds,
             "expose_paths": False if args.hide_paths else None, "audit_log": args.audit_log,
             **server_auth_flags(args)}
    return dataclasses.replace(config.server,
                               **{k: v for k, v in flags.items() if v is not None})


def cmd_route(args: argparse.Namespace) -> int:
    from router.cli import remote_turns
    from router.engine import Engine

    if remote_turns.wants_target(args):
        reply = remote_turns.route(args)
        if args.json:
            print(json.dumps(remote_turns.as_json(reply), indent=2, ensure_ascii=False))
        elif reply.catalog_text:
            print(reply.catalog_text)
        return 0
    config = _config(args)
    engine = Engine.open(_index_dir(args, config), config)
    query = RouteQuery(message=args.message, history=tuple(args.history), top_k=args.top_k,
                       format=CatalogFormat(args.format))
    result = engine.route(query)
    if args.json:
        print(json.dumps(_jsonable(result), indent=2, ensure_ascii=False))
    elif result.catalog_text:
        print(result.catalog_text)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Load and verify the index (checksums included) without loading the model; with
    ``--target``, the facts of the index a running server serves."""
    from router.cli import remote_turns
    from router.index.store import load_index
    from router.index.versions.layout import read_manifest

    if remote_turns.wants_target(args):  # the index the server serves
        print(json.dumps(remote_turns.info(args, INFO_FIELDS), indent=2, ensure_ascii=False))
        return 0
    config = _config(args)
    loaded = load_index(_index_dir(args, config)).info
    info = _jsonable(loaded)
    shown = {key: info[key] for key in INFO_FIELDS if key in info}
    tuned = read_manifest(Path(loaded.path)).get("fine_tune")  # encoder fine-tuning, its runs
    if tuned:
        shown["fine_tune"] = tuned
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    return 0


def _jsonable(record: Any) -> Any:
    """A dataclass as plain JSON data (enums become their string values)."""
    return json.loads(json.dumps(dataclasses.asdict(record), default=str))
