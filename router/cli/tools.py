"""``skill-router tools``: every callable skill of an index (or of a caller's view of a running
server, ``--target``) as the tool definitions a gateway declares once, deferred, for the model
APIs' tool search: ``--format anthropic`` or ``openai`` (``router.routing.tool_search``), one
JSON list on stdout. The names are the ones the Route tool search formats answer with."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from router.cli.guard import EXIT_OK
from router.routing.model import CatalogFormat

FORMATS = {"anthropic": CatalogFormat.ANTHROPIC_TOOL_REFERENCES,
           "openai": CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT}
Tool = tuple[str, str, Mapping[str, Any]]  # API name, description, parameters


def register(sub: Any) -> None:
    """Add the ``tools`` subcommand."""
    from router.cli.common_args import add_index_arg
    from router.cli.learning_remote import add_target_args

    p = sub.add_parser("tools", help="print every callable skill as deferred tool definitions "
                                     "for the Anthropic or OpenAI tool search")
    p.add_argument("--format", choices=sorted(FORMATS), default="anthropic",
                   help="anthropic (name, description, input_schema) or openai (type function, "
                        "name, description, parameters); defer_loading: true in both "
                        "(default: anthropic)")
    add_index_arg(p)
    add_target_args(p)
    p.set_defaults(handler=cmd_tools)


def _from_index(folder: str) -> list[Tool]:
    """Every callable skill of the index, one per name as a caller of every catalog sees it."""
    from router.index.serving import load_serving_index

    snap = load_serving_index(folder)
    held = [snap.skills[p] for p in sorted(snap.everything.positions.values())]
    return [(s.api_name, s.description, s.parameters) for s in held
            if s.parameters is not None and s.routable]


def _from_target(args: argparse.Namespace) -> list[Tool]:
    """Every callable skill of the caller's view on the server (ListSkills)."""
    from router.cli.learning_remote import _call

    reply = _call(args, "ListSkills", lambda c: c.list_skills())
    return [(s.tool_name, s.description, json.loads(s.parameters_json)) for s in reply.skills
            if s.parameters_json and s.enabled and not s.deprecated and s.model_invocable]


def cmd_tools(args: argparse.Namespace) -> int:
    from router.config import load_config
    from router.routing.tool_search import declaration

    if args.target:
        tools = _from_target(args)
    else:
        tools = _from_index(args.index or load_config(getattr(args, "config", None))
                            .index.index_dir)
    fmt = FORMATS[args.format]
    print(json.dumps([declaration(name, text, params, fmt) for name, text, params in tools],
                     ensure_ascii=False, indent=2))
    return EXIT_OK
