"""The ``skill-router`` command. Each group of subcommands lives in its own module of this
package, which exposes ``register(subparsers)``; handlers return a process exit code and run
under the one error guard in ``guard``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from router.cli.guard import run_guarded

# Modules that contribute subcommands, in help order.
COMMAND_MODULES: tuple[str, ...] = (
    "router.cli.skills",  # list, validate, lint
    "router.cli.index",  # index (whole, or sharded and merged)
    "router.cli.admission",  # admission check, list, approve, revoke
    "router.cli.export",  # export --well-known
    "router.cli.tools",  # tools (callable skills as deferred tool definitions)
    "router.cli.service",  # serve, route, info
    "router.cli.activate",  # activate (a skill's content)
    "router.cli.quality",  # explain, eval
    "router.cli.ops",  # reindex, config
    "router.cli.learning",  # stats, examples
    "router.cli.feedback",  # feedback migrate
    "router.cli.mcp",  # mcp
    "router.cli.console",  # ops (the web console)
    "router.cli.encoder",  # train-encoder
)


def _version() -> str:
    """The installed package's version (``pyproject.toml``'s)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skill-router")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


class _PrintVersion(argparse.Action):
    """``--version``: the package's version, looked up only when asked for (reading the
    installed metadata is a noticeable part of a server's start)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"skill-router {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skill-router",
        description="Discover, index and route Agent Skills; serve a narrowed catalog over gRPC.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output (-v info, -vv debug)")
    parser.add_argument("--config", metavar="FILE",
                        help="YAML configuration file (env SKILL_ROUTER_* overrides)")
    parser.add_argument("--version", action=_PrintVersion, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    root = logging.getLogger()
    before = list(root.handlers)
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from router.cli.logs import quiet_repeats, use_format

    use_format("text")  # control characters in messages are escaped
    # A flood of one warning does not grow the log without bound; only the handler made here
    # is filtered (a host that set up logging before, a test runner too, keeps its own).
    quiet_repeats(handlers=[h for h in root.handlers if h not in before])
    return run_guarded(args.handler, args)

