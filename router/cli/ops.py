"""``skill-router reindex | config``: operate a running server and inspect the configuration."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

import yaml

from router.cli.common_args import add_json_args
from router.cli.flags import DEFAULT_TARGET, add_target_args, caller_auth_from_args
from router.cli.guard import EXIT_FAILURE, EXIT_USAGE
from router.config import load_config
from router.config.store_url import masked
from router.errors import InvalidRequest, RouterError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``reindex`` and ``config`` subcommands."""
    p = sub.add_parser(
        "reindex", help="ask a running server to rebuild its index and swap it in",
        description="Calls Reindex on the server: it discovers skills again with the settings "
                    "its index was built with, re-embeds only what changed, and swaps the new "
                    "version in without dropping a call. Prints the outcome as JSON.")
    p.add_argument("--full", action="store_true", help="re-embed every skill")
    add_target_args(p, default=DEFAULT_TARGET, target_help=f"the server (default: "
                    f"{DEFAULT_TARGET})", timeout=600.0,
                    timeout_help="seconds to wait for the rebuild (default: 600)")
    p.set_defaults(handler=cmd_reindex)
    c = sub.add_parser("config", help="print the effective configuration (file + environment)")
    c.add_argument("--print", dest="print_config", action="store_true",
                   help="print every setting after SKILL_ROUTER_* environment overrides "
                        "(what the command does anyway; kept for scripts)")
    add_json_args(c, default="yaml", choices=("yaml", "json"))
    c.set_defaults(handler=cmd_config)


def cmd_reindex(args: argparse.Namespace) -> int:
    from router.client import SkillRouterClient
    from router.door.api import described

    try:
        auth = caller_auth_from_args(args)
        client = SkillRouterClient(args.target, timeout=args.timeout, retries=0,
                                   **dataclasses.asdict(auth))
    except ValueError as exc:  # an unreadable token file, a certificate without its key
        raise InvalidRequest(str(exc)) from exc
    with client:
        try:
            reply = client.reindex(full=args.full)
        except RouterError as exc:
            print(f"error: reindex on {args.target} failed: {described(exc)}", file=sys.stderr)
            return EXIT_USAGE if isinstance(exc, InvalidRequest) else EXIT_FAILURE
    print(json.dumps(reindex_reply_dict(reply), indent=2, ensure_ascii=False))
    return 0


def reindex_reply_dict(reply: Any) -> dict[str, Any]:
    """A ReindexResponse as plain JSON data."""
    return {
        "index_version": reply.index_version, "swapped": reply.swapped,
        "added": reply.added, "changed": reply.changed, "removed": reply.removed,
        "unchanged": reply.unchanged, "duration_seconds": round(reply.duration_seconds, 3),
        "diagnostics": [{"path": d.path, "message": d.message} for d in reply.diagnostics],
    }


def cmd_config(args: argparse.Namespace) -> int:
    config = load_config(getattr(args, "config", None))
    data = _masked(json.loads(json.dumps(config.to_dict())))  # tuples -> lists; no password
    if args.format == "json":
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), end="")
    return 0


def _masked(value: Any) -> Any:
    """``value`` with the password of every URL in it shown as ``***``."""
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return masked(value) if isinstance(value, str) and "://" in value else value
