"""Build or unpack the real-skill catalog of eval/realskills/.

    python -m scripts.realskills build --mirrors DIR [--out eval/realskills/catalog.jsonl.gz]
    python -m scripts.realskills unpack --out index_data/realskills/skills
    python -m scripts.realskills measure [--index DIR]     (BM25 baselines, the product)
    python -m scripts.realskills dense-body [--cache FILE] (the body as dense evidence)

``build`` reads bare git clones ``DIR/<owner>+<name>/repo`` of the repositories in ``SOURCES`` at
the pinned commits (``git clone --bare https://github.com/<owner>/<name> DIR/<owner>+<name>/repo``
fetches one); ``unpack`` needs no network.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from scripts.realskills.catalog import entries, read_archive, unpack, write_archive
from scripts.realskills.sources import RawSkill, Source, read_source

log = logging.getLogger(__name__)
HERE = Path("eval/realskills")
ARCHIVE = HERE / "catalog.jsonl.gz"

# Order matters: an earlier source keeps a clashing name plain.
SOURCES = (
    Source("anthropics/skills", "9d2f1ae187231d8199c64b5b762e1bdf2244733d", "Apache-2.0",
           under=("skills/",), folder_licence="Apache License"),
    Source("obra/superpowers", "44c9b2d6e889982ac18c27d05a19fefe335194e1", "MIT"),
    Source("terrylica/cc-skills", "265421d2dad27dc034dc395a973e4c0f1acd8762", "MIT"),
    Source("yigitkonur/skills-by-yigitkonur", "5d8986b118e2d0aade6297268aa10e001d9eecc0", "MIT"),
    Source("UiPath/skills", "b1206c8b6f9a15589d1d9c30116c4d006e4e9fc2", "MIT"),
    Source("oomol-lab/skills", "d4aeb090f545dacf425fd0bde7dbd44937bfa34a", "MIT"),
    Source("agentskillexchange/skills", "2ffdadfcca8576cdf14caec9bbcda7162c393bbc", "MIT",
           under=("skills/",)),
    Source("gabrielmoreira/agent-skills-mirror", "4e7649a87f4d537d80ff59a4fcf2857c2b28ff7e",
           "per skill: MIT or Apache-2.0 declared in its frontmatter",
           under=("mirrors/repos/",), skip=("bench",), per_skill_licence=True),
)


def _raws(mirrors: Path) -> Iterator[RawSkill]:
    for source in SOURCES:
        git_dir = mirrors / source.repo.replace("/", "+") / "repo"
        log.info("reading %s", source.repo)
        yield from read_source(str(git_dir), source)


def build(mirrors: Path, out: Path) -> int:
    counts: Counter[str] = Counter()

    def counted() -> Iterator[dict[str, object]]:
        for row in entries(_raws(mirrors)):
            counts[str(row["source"])] += 1
            yield row

    total = write_archive(counted(), out)
    lines = ["| repository | commit | licence | skills |", "|---|---|---|---:|"]
    lines += [f"| [{s.repo}](https://github.com/{s.repo}) | `{s.commit}` | {s.licence} "
              f"| {counts[s.repo]:,} |" for s in SOURCES]
    lines.append(f"| all | | | {total:,} |")
    print("\n".join(lines))  # the table of SOURCES.md
    print(f"{total} skills -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description="the real-skill catalog of eval/realskills/")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the archive from bare git mirrors")
    b.add_argument("--mirrors", required=True, type=Path)
    b.add_argument("--out", type=Path, default=ARCHIVE)
    u = sub.add_parser("unpack", help="write the archive's skills as folders")
    u.add_argument("--archive", type=Path, default=ARCHIVE)
    u.add_argument("--out", required=True, type=Path)
    m = sub.add_parser("measure", help="BM25 baselines (and the product) on the requests")
    m.add_argument("--archive", type=Path, default=ARCHIVE)
    m.add_argument("--queries", type=Path, default=HERE / "queries.jsonl")
    m.add_argument("--index", type=Path, help="also the product, with this index folder")
    d = sub.add_parser("dense-body", help="the body as dense evidence, measured offline")
    d.add_argument("--archive", type=Path, default=ARCHIVE)
    d.add_argument("--queries", type=Path, default=HERE / "queries.jsonl")
    d.add_argument("--cache", type=Path, default=Path("index_data/realskills/dense-body.npz"))
    c = sub.add_parser("count", help="skills per source in the archive")
    c.add_argument("--archive", type=Path, default=ARCHIVE)
    args = parser.parse_args(argv)
    if args.command == "build":
        return build(args.mirrors, args.out)
    if args.command == "measure":
        return _measure(args.archive, args.queries, args.index)
    if args.command == "dense-body":
        return _dense_body(args.archive, args.queries, args.cache)
    if args.command == "count":
        print(Counter(str(r["source"]) for r in read_archive(args.archive)))
        return 0
    if not args.archive.is_file():
        print(f"error: {args.archive}: no such archive", file=sys.stderr)
        return 2
    return _unpack_once(args.archive, args.out)


def _measure(archive: Path, queries: Path, index: Path | None) -> int:
    from scripts.realskills import measure

    rows = list(read_archive(archive))
    lines = queries.read_text(encoding="utf-8").splitlines()
    requests = [json.loads(line) for line in lines if line.strip()]
    results = {}
    for label, body in (("BM25, name + description", 0),
                        ("BM25, name + description + body (2,000 chars)", 2000)):
        results[label] = measure.figures(measure.bm25_rankings(rows, requests, body), requests)
    if index:
        results["the product"] = measure.figures(measure.product_rankings(index, requests),
                                                 requests)
    print(measure.table(results))
    return 0


def _dense_body(archive: Path, queries: Path, cache: Path) -> int:
    from scripts.realskills import dense_body, measure

    lines = queries.read_text(encoding="utf-8").splitlines()
    requests = [json.loads(line) for line in lines if line.strip()]
    print(measure.table(dense_body.table(list(read_archive(archive)), requests, cache)))
    return 0


def _unpack_once(archive: Path, out: Path) -> int:
    """Unpack unless ``out`` already holds this very archive (a stamp beside it says so)."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    stamp = out.parent / f"{out.name}.sha256"
    if out.is_dir() and stamp.is_file() and stamp.read_text().strip() == digest:
        print(f"{out}: up to date")
        return 0
    if out.exists():
        shutil.rmtree(out)
    print(f"{unpack(archive, out)} skills -> {out}")
    stamp.write_text(digest + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
