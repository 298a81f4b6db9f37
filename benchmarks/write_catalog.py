"""Write a synthetic skill catalog to disk as SKILL.md folders, to time a real build.

    python -m benchmarks.write_catalog 100000 /tmp/catalog-100k
    SKILL_ROUTER_DISCOVERY_MAX_DIRS=200000 skill-router index --root /tmp/catalog-100k \
        --no-project --no-home --out /tmp/index-100k

The skills are the benchmark's (``benchmarks.catalog``, seed 7): realistic "what it does;
when to use it" descriptions, all different. Descriptions are written as JSON strings, which
YAML reads as double-quoted scalars (a bare `` #`` would start a YAML comment).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks import catalog as bench_catalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of skills")
    parser.add_argument("out", type=Path, help="folder to create (must not exist)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    write(args.out, args.count, args.seed)
    print(f"wrote {args.count} skills to {args.out}")


def write(out: Path, count: int, seed: int = 7) -> None:
    """``count`` skill folders under ``out`` (created; must not exist)."""
    out.mkdir(parents=True)
    for skill in bench_catalog.catalog(count, seed):
        folder = out / skill.name
        folder.mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: {skill.name}\ndescription: {json.dumps(skill.description)}\n---\n"
            f"# {skill.name}\n\nFollow the steps for this task.\n", encoding="utf-8")


if __name__ == "__main__":
    main()
