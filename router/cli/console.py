"""``skill-router ops``: the ops web console, standalone, against any replica's gRPC API.

``--target`` and the caller flags (``--tls``, ``--ca-file``, ``--cert-file``, ``--key-file``,
``--token-file`` / ``SKILL_ROUTER_TOKEN``) say how the console reaches the service;
``--accept-token-file`` / ``--accept-token-env`` (``ops.accept_token_file``,
``ops.accept_token_env``) are the tokens its own browser callers must present, and
``--principals FILE`` (``ops.principals_file``) the principals file whose tokens it accepts too,
each caller served as its principal. Beyond loopback it refuses to start without one of them
(see ``router.console.auth``).
"""

from __future__ import annotations

import argparse
import dataclasses

from router.cli.flags import (
    DEFAULT_TARGET,
    add_accept_args,
    add_listen_args,
    add_target_args,
    caller_auth_from_args,
)
from router.config import Config, OpsConfig, load_config


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``ops`` subcommand."""
    p = sub.add_parser("ops", help="serve the ops web console for a running server",
                       description="Server-rendered pages for debugging routing: /route, "
                                   "/skills, /skills/NAME, /index. Talks to the router only "
                                   "through its gRPC API.")
    add_target_args(p, default=DEFAULT_TARGET,
                    target_help=f"the router's gRPC address (default: {DEFAULT_TARGET})",
                    timeout=10.0,
                    timeout_help="seconds per gRPC call (default: 10; Reindex waits up to 600)")
    add_listen_args(p, 8080, "address to listen on (127.0.0.1)",
                    "port to listen on, 0 = any (8080)")
    callers = p.add_argument_group("the console's own callers")
    add_accept_args(callers, "ops", "the console")
    callers.add_argument("--principals", metavar="FILE",
                         help="the principals file (as serve --principals): its tokens are "
                              "accepted, pages need the ops role, Reindex and purge admin, and "
                              "each caller is served as its principal; reloaded on SIGHUP "
                              "(ops.principals_file)")
    p.add_argument("--audit-log", metavar="PATH", help="write one JSON line per request to "
                   "PATH (0600, rotated by size), - for stderr (default: ops.audit_log, none)")
    p.set_defaults(handler=cmd_ops)


def ops_config(args: argparse.Namespace, config: Config) -> OpsConfig:
    """The configured ``ops`` section with the command-line flags applied."""
    flags = {"accept_token_file": args.accept_token_file,
             "accept_token_env": args.accept_token_env, "principals_file": args.principals,
             "audit_log": args.audit_log}
    return dataclasses.replace(config.ops, **{k: v for k, v in flags.items() if v is not None})


def cmd_ops(args: argparse.Namespace) -> int:
    from router.bearer import read_tokens
    from router.console.server import ConsoleServer, RouterLink
    from router.errors import InvalidRequest

    ops = ops_config(args, load_config(getattr(args, "config", None)))
    tokens = read_tokens(ops.accept_token_file, ops.accept_token_env,
                         env_setting="ops.accept_token_env")
    try:
        auth = caller_auth_from_args(args)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    console = ConsoleServer(RouterLink(args.target, auth, timeout=args.timeout), args.host,
                            args.port, tokens, ops=ops)
    print(f"ops console: {console.url}/route (router {args.target}"
          f"{', tokens required' if tokens or ops.principals_file else ''})", flush=True)
    console.run()
    return 0
