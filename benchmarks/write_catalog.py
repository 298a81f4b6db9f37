"""Write a synthetic skill catalog to disk as SKILL.md folders, to time a real build.

    python -m benchmarks.write_catalog 100000 /tmp/catalog-100k [--workers 8]
    SKILL_ROUTER_DISCOVERY_MAX_DIRS=200000 skill-router index --root /tmp/catalog-100k \
        --no-project --no-home --out /tmp/index-100k

The skills are the benchmark's (``benchmarks.catalog``, seed 7): realistic "what it does;
when to use it" descriptions, all different. Descriptions are written as JSON strings, which
YAML reads as double-quoted scalars (a bare `` #`` would start a YAML comment). ``--workers N``
writes the folders from N forked processes (the same folders; a million took 45.7 s from 14
processes on a 16-core host).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from collections.abc import Sequence
from pathlib import Path

from benchmarks import catalog as bench_catalog
from router.skills.model import Skill

_SKILLS: Sequence[Skill] = ()  # what the forked writers inherit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="number of skills")
    parser.add_argument("out", type=Path, help="folder to create (must not exist)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=1, help="processes writing folders")
    args = parser.parse_args()
    write(args.out, args.count, args.seed, workers=args.workers)
    print(f"wrote {args.count} skills to {args.out}")


def write(out: Path, count: int, seed: int = 7, *, workers: int = 1) -> None:
    """``count`` skill folders under ``out`` (created; must not exist), from ``workers``
    forked processes (the catalog is made once, before they start)."""
    global _SKILLS
    out.mkdir(parents=True)
    skills = bench_catalog.catalog(count, seed)
    if workers <= 1 or len(skills) < 2:
        _write_folders(out, skills)
        return
    step = -(-len(skills) // (workers * 8))
    jobs = [(str(out), start, start + step) for start in range(0, len(skills), step)]
    _SKILLS = skills
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            pool.map(_write_range, jobs, chunksize=1)
    finally:
        _SKILLS = ()


def _write_range(job: tuple[str, int, int]) -> None:
    out, start, stop = job
    _write_folders(Path(out), _SKILLS[start:stop])


def _write_folders(out: Path, skills: Sequence[Skill]) -> None:
    for skill in skills:
        folder = out / skill.name
        folder.mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: {skill.name}\ndescription: {json.dumps(skill.description)}\n---\n"
            f"# {skill.name}\n\nFollow the steps for this task.\n", encoding="utf-8")


if __name__ == "__main__":
    main()
