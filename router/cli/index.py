"""``skill-router index``: discover skills and build a new index version, in one process or
sharded over many (``--shard I/N`` on each worker, then ``--merge``)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

from router.cli.flags import add_feedback_store_arg, with_feedback_store
from router.common.textsafe import printable
from router.config import FINE_TUNE_MODES, load_config, replace, worker_count
from router.errors import InvalidRequest
from router.skills.model import Diagnostic


def register(sub: Any) -> None:
    """Add the ``index`` subcommand."""
    from router.cli.skills import add_discovery_args

    p = sub.add_parser("index", help="discover skills and build a new index version")
    add_discovery_args(p)
    p.add_argument("--out", metavar="DIR|s3://BUCKET/PREFIX",
                   help="index folder to write, or object storage to publish the version to "
                        "(default: index.index_dir, 'index_data')")
    p.add_argument("--model", help="embedding model name or path (default: index.model; "
                                   "'hash' is a fast test embedder)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--shard", metavar="I/N",
                      help="embed only shard I of N (0-based) into a partial under --out; "
                           "the index itself is not changed")
    mode.add_argument("--merge", action="store_true",
                      help="assemble the partials of every shard into a new current version")
    p.add_argument("--examples", action="append", default=[], metavar="FILE",
                   help='example requests, JSON lines {"query": ..., "skills": [names]} '
                        "(repeatable; recorded, so a Reindex of this index re-reads them; "
                        "a later `index` run uses only the files it is given)")
    p.add_argument("--allow-partial-scan", action="store_const", const=True, default=None,
                   help="index what was found when a scan hits a directory cap (default: "
                        "fail; recorded, so a Reindex of this index allows it too)")
    p.add_argument("--fine-tune-encoder", choices=FINE_TUNE_MODES, default=None,
                   help="fine-tune a copy of the embedding model on the examples and keep it "
                        "with the version: auto (enough examples; adopted only if it wins on "
                        "held-out requests), on (any examples, always adopted), off "
                        "(default: index.fine_tune_encoder, 'auto')")
    p.add_argument("--device", default=None, metavar="auto|cpu|cuda|cuda:N",
                   help="where to embed (and fine-tune): auto (CUDA when torch sees a device, "
                        "else the CPU), cpu, cuda, cuda:N (default: index.device, 'auto'); "
                        "a shard takes it too. Serving is unchanged (ONNX on the CPU)")
    p.add_argument("--precision", choices=("fp32", "fp16"), default=None,
                   help="embedding precision: fp32, or fp16 on CUDA only (default: "
                        "index.precision, 'fp32'); vectors stay interchangeable with CPU fp32")
    p.add_argument("--build-workers", default=None, metavar="N",
                   help="processes that share the reading, digesting and BM25 work of a large "
                        "catalog: 0 = one per usable CPU, 1 = none besides this one (default: "
                        "index.build_workers, 0); a shard takes it too. Same index either way")
    p.add_argument("--tokenize-workers", default=None, metavar="N",
                   help="processes that tokenize the texts ahead of the model: 0 = one per "
                        "usable CPU less one on CUDA, none on the CPU; 1 = none (default: "
                        "index.tokenize_workers, 0). Same vectors either way")
    p.add_argument("--allow-empty", action="store_true",
                   help="write the index even when no skill is found (default: that fails)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no stage lines or progress bar on stderr, only the summary and "
                        "diagnostics")
    add_feedback_store_arg(p)
    p.set_defaults(handler=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    from router.builder.recipe import Recipe, Sources
    from router.builder.shards import ShardSpec
    from router.cli.skills import discovery_config_from_args
    from router.common.checkpoints import checkpoint
    from router.common.stages import show_stages
    from router.skills.scan_plan import allow_partial

    show_stages(quiet=args.quiet)  # stage lines on stderr: a build is never silent for long
    config = with_feedback_store(load_config(getattr(args, "config", None)), args)
    if args.fine_tune_encoder is not None:
        config = replace(config, index=replace(config.index,
                                               fine_tune_encoder=args.fine_tune_encoder))
    if args.build_workers is not None:
        config = replace(config, index=replace(
            config.index, build_workers=worker_count(args.build_workers, "--build-workers")))
    if args.tokenize_workers is not None:
        config = replace(config, index=replace(config.index, tokenize_workers=worker_count(
            args.tokenize_workers, "--tokenize-workers")))
    out = args.out or config.index.index_dir  # s3://: built in its mirror, then published
    spec = ShardSpec.parse(args.shard) if args.shard else None
    started = time.perf_counter()
    discovery = allow_partial(discovery_config_from_args(args, config.discovery),
                              args.allow_partial_scan)
    # before anything is read or written: an unusable --device / --precision stops here
    recipe = Recipe.for_index(config, discovery, out, model=args.model, device=args.device,
                              precision=args.precision,
                              progress=sys.stderr.isatty() and not args.quiet)
    recipe = dataclasses.replace(recipe, plan=dataclasses.replace(
        recipe.plan, allow_empty=args.allow_empty or spec is not None))
    checkpoint("starting")
    if spec is not None:
        shard = recipe.shard(spec)  # in a bucket, sent there for the merge
        _report(f"shard {spec.index}/{spec.count}: {shard.skills} of {shard.total} skills "
                f"({shard.reused} embeddings reused)", started, shard.path, shard.diagnostics)
        return 0
    sources = Sources(files=tuple(args.examples))
    # the recipe reads traffic, makes the gate's query encoder, builds, exports it, publishes
    outcome = (recipe.merge(sources, export=True) if args.merge
               else recipe.build(sources, export=True))
    info = outcome.info
    if info is None:  # only a build given the served skills may skip writing
        raise InvalidRequest("nothing was built")
    _report(f"index {info.version}: {info.skill_count} skills, {len(outcome.diagnostics)} "
            "diagnostics", started, recipe.remote.url if recipe.remote else info.path,
            outcome.diagnostics)
    return 0


def _report(what: str, started: float, path: object,
            diagnostics: tuple[Diagnostic, ...]) -> None:
    """The one summary line on stdout (the embedding rate is the embedding stage's line: the
    model's load and the other stages would hide it), then every diagnostic on stderr."""
    seconds = time.perf_counter() - started
    print(f"{what} in {seconds:.2f}s -> {path}")
    for diagnostic in diagnostics:
        print(printable(f"{diagnostic.level.value}: {diagnostic.path}: {diagnostic.message}"),
              file=sys.stderr)
