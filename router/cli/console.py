"""``skill-router ops``: the ops web console, standalone, against any replica's gRPC API.

``--target`` and the caller flags (``--tls``, ``--ca-file``, ``--cert-file``, ``--key-file``,
``--token-file`` / ``SKILL_ROUTER_TOKEN``) say how the console reaches the service;
``--accept-token-file`` / ``--accept-token-env`` (``ops.accept_token_file``,
``ops.accept_token_env``) are the tokens its own browser callers must present. Beyond loopback
it refuses to start without them (see ``router.console.auth``).
"""

from __future__ import annotations

import argparse

from router.config import load_config
from router.door.flags import (
    DEFAULT_TARGET,
    add_accept_args,
    add_listen_args,
    add_target_args,
    caller_auth_from_args,
)


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
    add_accept_args(p.add_argument_group("the console's own callers"), "ops", "the console")
    p.set_defaults(handler=cmd_ops)


def cmd_ops(args: argparse.Namespace) -> int:
    from router.bearer import read_tokens
    from router.console.server import ConsoleServer, RouterLink
    from router.errors import InvalidRequest

    ops = load_config(getattr(args, "config", None)).ops
    tokens = read_tokens(args.accept_token_file or ops.accept_token_file,
                         args.accept_token_env or ops.accept_token_env,
                         env_setting="ops.accept_token_env")
    try:
        auth = caller_auth_from_args(args)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from exc
    console = ConsoleServer(RouterLink(args.target, auth, timeout=args.timeout), args.host,
                            args.port, tokens, ops=ops)
    print(f"ops console: {console.url}/route (router {args.target}"
          f"{', tokens required' if tokens else ''})", flush=True)
    console.run()
    return 0
