"""Build the (request -> tool) pairs file from the source repositories given."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from router.encoders.tools_model.rows import Row, file_digest, read_rows

from . import apibank, apibench, bfcl, nestful, skills, toolalpaca
from .common import (
    SourceError,
    SourceTree,
    assign_splits,
    cap_per_tool,
    dedupe,
    is_validation_tool,
    tool_key,
)
from .overlap import EvalSetError, EvalSets, drop_overlap, load_eval_sets


@dataclass(frozen=True)
class Source:
    name: str
    option: str
    rows: Callable[[SourceTree], Iterator[Row]]
    cap: int = 0  # at most this many rows per tool set; 0: no cap


SOURCES = (
    Source("bfcl", "gorilla", bfcl.rows),
    Source("apibench", "gorilla", apibench.rows, apibench.PER_API),
    Source("nestful", "nestful", nestful.rows),
    Source("toolalpaca", "toolalpaca", toolalpaca.rows),
    Source("apibank", "apibank", apibank.rows),
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.encoder_pairs",
        description="Build request -> tool pairs for the encoder from public tool-use datasets. "
        "Each source is a plain checkout or a bare git directory (read at HEAD).",
    )
    parser.add_argument("--gorilla", type=Path,
                        help="github.com/ShishirPatil/gorilla (BFCL, APIBench)")
    parser.add_argument("--nestful", type=Path, help="github.com/IBM/NESTFUL")
    parser.add_argument("--toolalpaca", type=Path, help="github.com/tangqiaoyu/ToolAlpaca")
    parser.add_argument("--apibank", type=Path,
                        help="github.com/AlibabaResearch/DAMO-ConvAI (its api-bank folder is read)")
    parser.add_argument("--keep-pairs", type=Path, default=None, metavar="FILE",
                        help="the rows of an earlier pairs file, kept (the tool pairs of "
                        "pairs.jsonl.gz, whose SOURCES.md names their commits)")
    parser.add_argument("--skills", type=Path, action="append", default=[],
                        help="a public SKILL.md collection (repeatable; MIT or Apache-2.0, never "
                        "an evaluation catalog or a benchmark)")
    parser.add_argument("--eval-skills", type=Path, action="append", default=[], required=True,
                        help="a folder of */SKILL.md whose descriptions must stay out (repeatable)")
    parser.add_argument("--eval-queries", type=Path, action="append", default=[], required=True,
                        help="a JSONL file whose 'query' lines must stay out (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="the .jsonl.gz to write")
    return parser.parse_args(argv)


def _check_not_eval(root: Path, eval_paths: Sequence[Path]) -> None:
    """Refuse a source inside an evaluation set's folder (Seal-Tools is never a source)."""
    resolved = root.resolve()
    for path in eval_paths:
        guarded = path.resolve().parent
        if resolved == guarded or guarded in resolved.parents:
            raise SourceError(f"{root}: inside the evaluation set {guarded}; not a source")


def build(trees: dict[str, SourceTree], sets: EvalSets, log: io.TextIOBase | None = None,
          skill_trees: Sequence[SourceTree] = (),
          kept_rows: Sequence[Row] = ()) -> list[Row]:
    """All rows of the sources given (tool sets, kept rows, then skill collections in the order
    given): overlap-filtered, deduped, capped and split."""
    out = log if log is not None else sys.stdout
    rows: list[Row] = []
    for source in SOURCES:
        tree = trees.get(source.option)
        if tree is None:
            continue
        raw = list(source.rows(tree))
        kept, counts = drop_overlap(raw, sets)
        unique = dedupe(kept)
        capped = cap_per_tool(unique, source.cap) if source.cap else unique
        print(f"{source.name}: {len(raw)} read; overlap dropped {counts.request} by request, "
              f"{counts.tool_description} by tool description "
              f"({counts.distractors_removed} distractors removed); "
              f"dedupe dropped {len(kept) - len(unique)}; cap dropped {len(unique) - len(capped)}",
              file=out)
        rows += capped
    if kept_rows:
        kept, counts = drop_overlap(kept_rows, sets)
        print(f"kept pairs: {len(kept_rows)} read; overlap dropped {counts.request} by request, "
              f"{counts.tool_description} by tool description "
              f"({counts.distractors_removed} distractors removed)", file=out)
        rows += kept
    seen = skills.Seen()
    for tree in skill_trees:
        label, taken = skills.label_of(tree.root), skills.SkillCounts()
        found = skills.rows(tree, label, sets, seen, taken)
        kept, overlap = drop_overlap(found, sets)
        unique = dedupe(kept)
        print(f"skills {label}: {taken.line()}; overlap dropped {overlap.request} by request; "
              f"dedupe dropped {len(kept) - len(unique)}", file=out)
        rows += unique
    before = len(rows)
    rows = assign_splits(dedupe(rows))
    print(f"across sources: dedupe dropped {before - len(rows)}", file=out)
    return sorted(rows, key=lambda r: (r.source, r.id))


def summary(rows: Sequence[Row]) -> list[str]:
    lines: list[str] = []
    for name in [*sorted({r.source for r in rows}), "all"]:
        mine = [r for r in rows if name in ("all", r.source)]
        tools = {tool_key(t): t for r in mine for t in r.tools}
        held = sum(1 for t in tools.values() if is_validation_tool(t))
        train = sum(1 for r in mine if r.split == "train")
        lines.append(f"{name}: rows {len(mine)}, tools {len(tools)} ({held} held back), "
                     f"train {train}, validation {len(mine) - train}")
    return lines


def write(rows: Sequence[Row], path: Path) -> None:
    """Gzipped JSON lines, byte-identical for identical rows (no time or name in the header)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                               compresslevel=9) as zipped:
        for row in rows:
            zipped.write((json.dumps(row.as_json(), ensure_ascii=False) + "\n").encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    roots = {s.option: getattr(args, s.option) for s in SOURCES if getattr(args, s.option)}
    if not roots and not args.skills and not args.keep_pairs:
        print("give at least one source: --gorilla, --nestful, --toolalpaca, --apibank or "
              "--skills",
              file=sys.stderr)
        return 2
    try:
        sets = load_eval_sets(args.eval_skills, args.eval_queries)
        for root in [*roots.values(), *args.skills]:
            _check_not_eval(root, [*args.eval_skills, *args.eval_queries])
        trees = {option: SourceTree(root) for option, root in roots.items()}
        skill_trees = [SourceTree(root) for root in args.skills]
        for option, tree in [*sorted(trees.items()), *(("skills", t) for t in skill_trees)]:
            print(f"--{option} {tree.root} at {tree.commit() or '(no commit recorded)'}")
        print(f"evaluation sets: {len(sets.requests)} requests, "
              f"{len(sets.descriptions)} skill descriptions from {'; '.join(sets.files)}")
        kept_rows: list[Row] = []
        if args.keep_pairs:
            kept_rows = read_rows(args.keep_pairs)
            print(f"--keep-pairs {args.keep_pairs} ({file_digest(args.keep_pairs)})")
        rows = build(trees, sets, skill_trees=skill_trees, kept_rows=kept_rows)
    except (SourceError, EvalSetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write(rows, args.out)
    for line in summary(rows):
        print(line)
    print(f"wrote {len(rows)} rows to {args.out} ({args.out.stat().st_size} bytes)")
    return 0
