"""``skill-router stats | examples``: what the router learned from traffic, for operators.

``stats`` prints per-skill counters from the feedback store (routed, shown, activated,
succeeded, ...) and the skills routed often but never activated: their descriptions need a
rewrite. ``examples list`` shows the recorded examples; ``examples purge`` hides a skill's or
old ones at once (on every replica) and removes them from disk at the next compaction.
Each reads the store under ``--index``, or asks a running server with ``--target`` (its
SkillStats, ListExamples and PurgeExamples RPCs: ``router.cli.learning_remote``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

from router.cli.flags import add_feedback_store_arg, with_feedback_store
from router.cli.guard import EXIT_USAGE
from router.common.textsafe import printable
from router.config import Config, load_config
from router.errors import InvalidRequest
from router.learning.rows import DAY_SECONDS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``stats`` and ``examples`` subcommands."""
    p = sub.add_parser("stats", help="per-skill traffic counters and the skills never activated",
                       description="Reads the feedback store under the index folder, or "
                                   "asks a running server with --target.")
    _index_arg(p)
    p.add_argument("--min-routed", type=int, default=10, metavar="N",
                   help="list skills routed at least N times and never activated (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=cmd_stats)
    e = sub.add_parser("examples", help="list or purge the examples learned from traffic")
    actions = e.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    listing = actions.add_parser("list", help="recorded examples (positive and negative)")
    _index_arg(listing)
    listing.add_argument("--skill", metavar="NAME", help="only this skill's")
    listing.add_argument("--older-than", type=float, metavar="DAYS", help="only older ones")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(handler=cmd_examples_list)
    purge = actions.add_parser("purge", help="forget a skill's examples, or old ones")
    _index_arg(purge)
    purge.add_argument("--skill", metavar="NAME", help="forget this skill's examples")
    purge.add_argument("--older-than", type=float, metavar="DAYS",
                       help="forget examples (and stored messages) older than DAYS")
    purge.set_defaults(handler=cmd_examples_purge)


def _index_arg(p: argparse.ArgumentParser) -> None:
    from router.cli.common_args import add_index_arg
    from router.cli.learning_remote import add_target_args

    add_index_arg(p)
    add_feedback_store_arg(p)
    add_target_args(p)


def _remote(args: argparse.Namespace) -> bool:
    """True with ``--target`` (the store is read through that server's RPCs)."""
    if args.target and args.index:
        raise InvalidRequest("give --index (read the store here) or --target (ask a server), "
                             "not both")
    return bool(args.target)




def _setup(args: argparse.Namespace) -> tuple[Config, str]:
    config = with_feedback_store(load_config(getattr(args, "config", None)), args)
    return config, str(args.index or config.index.index_dir)


def cmd_stats(args: argparse.Namespace) -> int:
    from router.learning.backends import open_store
    from router.learning.review import stats_report

    if _remote(args):
        from router.cli import learning_remote

        report = learning_remote.stats(args)
    else:
        config, index_dir = _setup(args)
        report = stats_report(open_store(index_dir, config.feedback).read_rows(),
                              config.feedback, time.time(), args.min_routed)
    stats, rewrite = report.skills, report.never_activated
    if args.json:
        print(json.dumps({"skills": [asdict(s) for s in stats],
                          "never_activated": [s.skill for s in rewrite]}, indent=2))
        return 0
    columns = ("routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used")
    width = max((len(s.skill) for s in stats), default=5)
    print(f"{'skill':<{width}}  " + "  ".join(f"{c:>9}" for c in columns))
    for s in stats:
        print(f"{s.skill:<{width}}  " + "  ".join(f"{getattr(s, c):>9}" for c in columns))
    if rewrite:
        print(f"\nrouted >= {report.min_routed} times, never activated (rewrite their "
              "descriptions):")
        for s in rewrite:
            print(f"  {s.skill} (routed {s.routed})")
    return 0


def cmd_examples_list(args: argparse.Namespace) -> int:
    from router.learning.backends import open_store
    from router.learning.review import recorded_examples

    now = time.time()
    if _remote(args):
        from router.cli import learning_remote

        found, total = learning_remote.examples(args)
        if total > len(found):
            print(f"({len(found)} of {total} examples listed: the server's limit)",
                  file=sys.stderr)
    else:
        config, index_dir = _setup(args)
        found = recorded_examples(open_store(index_dir, config.feedback).read_rows(),
                                  config.feedback, now, args.skill or "", args.older_than)
    for example in found:
        label = "positive" if example.positive else "negative"
        age = (now - example.ts) / DAY_SECONDS
        if args.json:
            print(json.dumps({"skill": example.skill, "label": label, "query": example.query,
                              "session": example.session, "age_days": round(age, 2),
                              "learned": example.learned}, ensure_ascii=False))
        else:
            # user text: no control character reaches a terminal
            print(f"{example.skill}\t{label}\t{age:.1f}d\t{printable(example.session)}\t"
                  f"{printable(example.query)}")
    return 0


def cmd_examples_purge(args: argparse.Namespace) -> int:
    from router.learning.backends import open_store
    from router.learning.review import purge

    if not args.skill and args.older_than is None:
        print("error: say what to purge: --skill NAME and/or --older-than DAYS", file=sys.stderr)
        return EXIT_USAGE
    if args.older_than is not None and args.older_than < 0:
        print("error: --older-than must be 0 or more days", file=sys.stderr)
        return EXIT_USAGE
    if _remote(args):
        from router.cli import learning_remote

        done = learning_remote.purge(args)
    else:
        config, index_dir = _setup(args)
        done = purge(open_store(index_dir, config.feedback), time.time(), args.skill or "",
                     args.older_than)
    print(f"purged {done.purged} examples" + ("" if done.compacted else
          " (hidden now; removed from disk at the next compaction)"))
    return 0
