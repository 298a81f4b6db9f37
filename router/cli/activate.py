"""``skill-router activate NAME``: a skill's activation content (the ``<skill_content>`` block
a gateway puts in the model's context) on stdout, in-process like ``route``, or from a running
server with ``--target`` (its Activate RPC, as the caller the caller flags name)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from router.cli.common_args import add_index_arg
from router.cli.guard import EXIT_OK


def register(sub: Any) -> None:
    """Add the ``activate`` subcommand."""
    from router.cli.learning_remote import add_target_args

    p = sub.add_parser("activate", help="print a skill's activation content (in-process, or "
                                        "from a running server with --target)")
    p.add_argument("name", help="the skill's name (as a catalog shows it)")
    add_index_arg(p, remote=True)
    p.add_argument("--session-id", metavar="ID", default="",
                   help="the conversation (with --target: a second activation there answers "
                        "already active, with no content)")
    p.add_argument("--frontmatter", action="store_true",
                   help="keep the SKILL.md frontmatter in the content")
    p.add_argument("--json", action="store_true",
                   help="print the whole answer (content, resources, skill folder) as JSON")
    add_target_args(p)
    p.set_defaults(handler=cmd_activate)


def cmd_activate(args: argparse.Namespace) -> int:
    from router.cli import remote_turns

    if remote_turns.wants_target(args):
        reply = remote_turns.activate(args)
        shown, content = remote_turns.as_json(reply), reply.content
    else:
        shown = _in_process(args)
        content = shown["content"]
    if args.json:
        print(json.dumps(shown, indent=2, ensure_ascii=False))
    elif content:
        print(content, end="" if content.endswith("\n") else "\n")
    else:
        print(f"{args.name} is already active in session {args.session_id}", file=sys.stderr)
    return EXIT_OK


def _in_process(args: argparse.Namespace) -> dict[str, Any]:
    from router.cli.service import _config, _index_dir
    from router.engine import Engine

    config = _config(args)  # a try from the shell is nobody's traffic: nothing is recorded
    config = dataclasses.replace(config, feedback=dataclasses.replace(config.feedback,
                                                                      enabled=False))
    engine = Engine.open(_index_dir(args, config), config)
    done = engine.activate(args.name, args.session_id, include_frontmatter=args.frontmatter)
    return dataclasses.asdict(done)
