"""``skill-router export --well-known DIR``: the skills discovery finds, written as a discovery
RFC 0.2.0 well-known index with their artifacts and digests (``router.skills.registry.tree``),
so an organisation publishes what it routes."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add the ``export`` subcommand."""
    from router.cli.skills import add_discovery_args

    p = sub.add_parser("export", help="write the discovered skills as a well-known index")
    add_discovery_args(p)
    p.add_argument("--well-known", required=True, metavar="DIR",
                   help="the site root to write: DIR/.well-known/agent-skills/index.json and "
                        "the artifacts beside it")
    p.add_argument("--catalog-name", metavar="NAME", default=None,
                   help="export only this catalog's skills (default: every catalog; a name "
                        "held by two catalogs is exported once, from the first)")
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from router.cli.skills import discovery_config_from_args
    from router.config import load_config
    from router.errors import InvalidRequest
    from router.skills.model import SkillKind
    from router.skills.registry.index import WELL_KNOWN
    from router.skills.registry.tree import export
    from router.skills.sources.base import create_source

    config = load_config(getattr(args, "config", None))
    found = create_source().discover(discovery_config_from_args(args, config.discovery))
    chosen: dict[str, tuple[str, str, Path]] = {}
    for skill in found.skills:
        if skill.kind is not SkillKind.SKILL_MD or skill.name in chosen:
            continue
        if args.catalog_name is None or skill.catalog == args.catalog_name:
            chosen[skill.name] = (skill.name, skill.description, Path(skill.base_dir))
    if not chosen:
        raise InvalidRequest("no skill to export: check the discovery flags and --catalog-name")
    index = export(chosen.values(), Path(args.well_known))
    print(f"exported {len(index['skills'])} skills to "  # type: ignore[arg-type]
          f"{Path(args.well_known) / WELL_KNOWN.lstrip('/')}")
    return 0
