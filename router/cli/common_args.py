"""Arguments spelt the same in every command: ``--index INDEX`` and ``--json`` (``--format json``
too, where a command has always taken it)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

INDEX_METAVAR = "INDEX"
DEFAULT_INDEX = "default: index.index_dir from the configuration, 'index_data'"


def add_index_arg(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str = "",
                  *, remote: bool = False) -> None:
    """``--index INDEX``: the index folder (``remote``: or ``s3://BUCKET/PREFIX``)."""
    where = "index folder, or s3://BUCKET/PREFIX" if remote else "index folder"
    parser.add_argument("--index", metavar=INDEX_METAVAR,
                        help=what or f"the {where} ({DEFAULT_INDEX})")


def add_json_args(parser: argparse.ArgumentParser, *, default: str = "table",
                  choices: Sequence[str] = ("table", "json")) -> None:
    """``--json``, and ``--format`` among ``choices`` (``--format json`` is ``--json``); the
    command reads ``args.format``."""
    parser.add_argument("--json", dest="format", action="store_const", const="json",
                        help="print JSON (the same as --format json)")
    parser.add_argument("--format", choices=tuple(choices), default=default,
                        help=f"output format (default: {default}; --json is --format json)")
