"""``skill-router explain`` and ``skill-router eval``: routing quality for operators and authors."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from router.cli.common_args import add_index_arg, add_json_args
from router.cli.learning_remote import add_target_args
from router.config import Config, load_config
from router.evaluation import metrics
from router.routing.model import CatalogFormat, RouteQuery

if TYPE_CHECKING:  # the engine loads when a command runs, not to build the parser
    from router.engine import Engine
    from router.examples.model import Example


def register(sub: Any) -> None:
    p = sub.add_parser("explain", help="show every candidate's scores and why it was kept "
                                        "or dropped")
    p.add_argument("message", help="the user's message")
    add_index_arg(p)
    p.add_argument("--history", nargs="*", default=[], metavar="TURN",
                   help="earlier user turns, oldest first")
    p.add_argument("--active", nargs="*", default=[], metavar="SKILL",
                   help="skills already in the context")
    p.add_argument("--top-k", type=int, default=0, help="skills to retrieve (0 = configured)")
    p.add_argument("--max-chars", type=int, default=0,
                   help="catalog character budget (0 = configured)")
    p.add_argument("--limit", type=int, default=20, help="rows to print (default 20)")
    add_json_args(p)
    add_target_args(p)
    p.set_defaults(handler=cmd_explain)

    e = sub.add_parser("eval", help="measure routing quality on labelled requests")
    e.add_argument("--queries", required=True, metavar="FILE",
                   help="JSON lines: id, query, expected[, history]")
    src = e.add_mutually_exclusive_group(required=True)
    add_index_arg(src, "an index folder to evaluate")
    src.add_argument("--root", metavar="DIR",
                     help="a skills folder: index it (cached) and evaluate")
    e.add_argument("--cache", default="index_data/eval", metavar="DIR",
                   help="where --root indexes are kept (default: index_data/eval)")
    e.add_argument("--top-k", type=int, default=0, help="catalog size (0 = server default)")
    e.add_argument("--split", action="store_true", help="report train and validation splits")
    e.add_argument("--per-skill", type=int, default=0, metavar="N",
                   help="list the N worst-found skills and what took their place")
    e.add_argument("--tags", action="store_true", help="report per request tag")
    add_json_args(e)
    e.add_argument("--baseline", metavar="FILE",
                   help="JSON of minimum figures; exit 1 if any is not met")
    e.add_argument("--examples", action="append", default=[], metavar="FILE",
                   help="few-shot: build the --root index with these example requests "
                        '(JSON lines {"query", "skills"}; repeatable)')
    e.add_argument("--learn-from", metavar="FILE",
                   help="replay these labelled requests first (Route; an expected skill that "
                        "was shown becomes a traffic example), rebuild, then evaluate")
    e.add_argument("--draw", type=int, default=0, metavar="N",
                   help="route against N skills drawn from --root (copied into --cache): "
                        "requests for undrawn skills must get nothing (tag nothing_fits)")
    e.add_argument("--draw-seed", type=int, default=0, metavar="S", help="the draw's seed")
    e.add_argument("--no-naive", dest="naive", action="store_false",
                   help="skip the naive baselines (centroid, max-sim; same examples) shown "
                        "beside the product")
    e.add_argument("--sessions", type=int, default=0, metavar="N",
                   help="instead: what a conversation's catalogs cost under the model APIs' "
                        "prompt caches, over N sessions of each kind drawn from --queries")
    e.add_argument("--turns", type=int, default=8, metavar="T", help="turns a session")
    e.add_argument("--seed", type=int, default=0, help="the sessions' draw seed")
    e.set_defaults(handler=cmd_eval)


def _engine(args: argparse.Namespace, config: Config) -> Engine:
    from router.engine import Engine

    return Engine.open(args.index or config.index.index_dir, config)


def cmd_explain(args: argparse.Namespace) -> int:
    from router.cli import remote_turns

    shown = remote_turns.explained(args) if remote_turns.wants_target(args) else _explained(args)
    if args.format == "json":
        print(json.dumps(shown, indent=1))
        return 0
    mode = shown["example_mode"]
    examples = (f"examples: {mode}" + (", in BM25 documents" if shown["lexical_with_examples"]
                                       else "") if mode else "no examples")
    print(f"index {shown['index_version']}: routed {shown['skills']}; "
          f"gate {shown['gate']:.3f}; dense weight {shown['dense_weight']:.1f}; {examples}")
    if shown["settings_reason"]:
        print(f"settings: {shown['settings_reason']}")
    if shown["refused"]:
        print(f"refused: {shown['refused']}")
    print(f"{'name':40} {'dense':>7} {'lexical':>8} {'fused':>7}  kept  reason")
    for c in shown["candidates"]:
        example, step = c["matched_example"], c["matched_step"]
        matched = f"  (example: {example[:60]!r})" if example else ""
        matched += f"  [{c['matched_field']}]" if c["matched_field"] else ""
        matched += f"  (step: {step[:60]!r})" if step else ""
        print(f"{c['name'][:40]:40} {c['dense_score']:7.3f} {c['lexical_score']:8.3f} "
              f"{c['fused_score']:7.3f}  {'yes' if c['kept'] else 'no ':4}  {c['reason']}"
              f"{matched}")
    return 0


def _explained(args: argparse.Namespace) -> dict[str, Any]:
    """The in-process Explain of the turn, as ``explain --json`` prints it."""
    config = load_config(args.config)
    result = _engine(args, config).explain(RouteQuery(
        message=args.message, history=tuple(args.history), active_skills=tuple(args.active),
        top_k=args.top_k, max_catalog_chars=args.max_chars, format=CatalogFormat.XML))
    return {"index_version": result.index_version, "gate": result.gate,
            "dense_weight": result.dense_weight, "example_mode": result.example_mode,
            "lexical_with_examples": result.lexical_with_examples,
            "settings_reason": result.settings_reason, "refused": result.refused,
            "skills": [s.name for s in result.skills],
            "candidates": [{**asdict(c), "reason": c.reason.value}
                           for c in result.candidates[: args.limit]]}


def _eval_engine(args: argparse.Namespace, config: Config) -> tuple[Engine, list[Example]]:
    """The engine to evaluate and the examples its index was built with."""
    from router.engine import Engine
    from router.evaluation import learning, runner
    from router.examples.loading import read_example_files

    examples, problems = read_example_files(args.examples)
    for problem in problems:
        print(f"warning: {problem.path}: {problem.message}", file=sys.stderr)
    if args.index:
        return Engine.open(args.index, config), examples

    def build(with_examples: list[Example]) -> Engine:
        return Engine.open(runner.index_for_root(args.root, config, args.cache,
                                                 progress=sys.stderr.isatty(),
                                                 examples=with_examples), config)

    engine = build(examples)
    if args.learn_from:
        requests = runner.load_requests(args.learn_from)
        learned = learning.replay(engine, requests, top_k=args.top_k)
        print(f"replay of {args.learn_from}: {len(learned)} traffic examples from "
              f"{len(requests)} requests")
        examples = [*examples, *learned]
        engine = build(examples)
    return engine, examples


def cmd_eval(args: argparse.Namespace) -> int:
    from router.evaluation import learning, runner

    config = load_config(args.config)
    if args.index and (args.examples or args.learn_from):
        print("error: --examples and --learn-from build an index: use --root", file=sys.stderr)
        return 2
    requests = runner.load_requests(args.queries)
    if args.draw:
        if not args.root:
            print("error: --draw draws from a catalog folder: use --root", file=sys.stderr)
            return 2
        from router.evaluation import drawn

        picked = drawn.draw(args.root, args.draw, args.draw_seed, args.cache)
        args.root, requests = picked.root, drawn.relabel(requests, picked.names)
    engine, examples = _eval_engine(args, config)
    if args.sessions:
        return _session_costs(args, engine, requests)
    outcomes = runner.run(engine, requests, top_k=args.top_k)
    tables = _scores(outcomes, args.split)
    if examples:
        taught = _scores(learning.covered(outcomes, examples), args.split)
        tables.update({f"{k}, taught skills": v for k, v in taught.items()})
    naive = _naive(engine, requests, examples, args.split) if args.naive else {}
    tagged = runner.by_tag(outcomes) if args.tags else {}
    worst = metrics.per_skill(outcomes)[: args.per_skill]
    if args.format == "json":
        report: dict[str, Any] = {
            "queries": args.queries, "index_version": engine.info().version,
            "scores": {k: v.row() for k, v in tables.items()},
            "tags": {k: v.row() for k, v in tagged.items()},
            "per_skill": [asdict(r) for r in worst]}
        if args.naive:
            report["naive"] = {m: {k: _naive_row(v) for k, v in parts.items()}
                               for m, parts in naive.items()}
        print(json.dumps(report, indent=1))
    else:
        title = f"{args.queries} ({engine.info().skill_count} skills)"
        _print_tables(title, tables, naive, tagged, worst, outcomes)
    return _check_baseline(args.baseline, tables["all"]) if args.baseline else 0


def _session_costs(args: argparse.Namespace, engine: Engine,
                   requests: list[metrics.Labelled]) -> int:
    from router.evaluation import sessions

    tallies = sessions.run(engine, requests, args.sessions, args.turns, args.seed)
    if args.format == "json":
        print(json.dumps({k: sessions.row(t) for k, t in tallies.items()}, indent=1))
    else:
        print(sessions.table(tallies, f"{args.queries} ({engine.info().skill_count} skills), "
                                      f"{args.turns}-turn sessions; input cost per session in "
                                      "token-equivalents"))
    return 0


def _scores(outcomes: list[metrics.Outcome], split: bool) -> dict[str, metrics.Scores]:
    from router.evaluation import runner

    return runner.by_split(outcomes) if split else {"all": metrics.score(outcomes)}


def _naive(engine: Engine, requests: list[metrics.Labelled], examples: list[Example],
           split: bool) -> dict[str, dict[str, metrics.Scores]]:
    """The naive baselines' scores per method and split (taught skills too, as the product's),
    on the engine's skills and vectors with the examples its index was built with
    (``router.evaluation.naive``)."""
    from router.evaluation import learning, naive

    snapshot = engine.snapshot
    found = naive.outcomes(snapshot.skills, snapshot.vectors, engine.embedder.encode,
                           requests, examples)
    out = {}
    for method, outcomes in found.items():
        out[method] = _scores(outcomes, split)
        if examples:
            taught = _scores(learning.covered(outcomes, examples), split)
            out[method].update({f"{k}, taught skills": v for k, v in taught.items()})
    return out


def _naive_row(scores: metrics.Scores) -> dict[str, float | int]:
    from router.evaluation import naive

    return {k: v for k, v in scores.row().items() if k in naive.COLUMNS}


def _print_tables(title: str, tables: dict[str, metrics.Scores],
                  naive_scores: dict[str, dict[str, metrics.Scores]],
                  tagged: dict[str, metrics.Scores], worst: list[metrics.SkillReport],
                  outcomes: list[metrics.Outcome]) -> None:
    from router.evaluation import naive, runner

    print(runner.format_table(tables, title))
    if naive_scores:
        rows = {f"{m.replace('_', '-')} {k}": v
                for m, parts in naive_scores.items() for k, v in parts.items()}
        print(runner.format_table(rows, "naive baselines (same examples, no gate: "
                                        "'nothing' is 0 by construction)", naive.COLUMNS))
    if tagged:
        print(runner.format_table(tagged, "by tag"))
    for r in worst:
        instead = ", ".join(f"{n} x{c}" for n, c in r.instead) or "-"
        print(f"  {r.skill}: found {r.found}/{r.expected}; instead: {instead}")
    for o in metrics.false_triggers(outcomes)[:10]:
        print(f"  off-topic {o.request.id} got {list(o.ranked[:3])}: {o.request.query!r}")


def _check_baseline(path: str, scores: metrics.Scores) -> int:
    wanted = json.loads(Path(path).read_text(encoding="utf-8"))
    row = scores.row()
    failed = [f"{k} {row.get(k)} < {v}" for k, v in wanted.items()
              if isinstance(v, int | float) and float(row.get(k, 0)) < v]
    for line in failed:
        print(f"below baseline: {line}", file=sys.stderr)
    return 1 if failed else 0
