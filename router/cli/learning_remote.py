"""``skill-router stats | examples --target HOST:PORT``: the same figures and the same purge as
on the host, through a running server's SkillStats, ListExamples and PurgeExamples RPCs (for an
operator without a shell on a replica). The answers come back as ``router.learning.review``'s
records, so the commands print them exactly as they print the store's."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import TypeVar

from router.cli import flags
from router.errors import InvalidRequest, RouterError
from router.learning.review import PurgeResult, RecordedExample, StatsReport
from router.learning.stats import SkillStats

T = TypeVar("T")
COUNTERS = ("routed", "shown", "activated", "succeeded", "failed", "wrong", "not_used")


def add_target_args(parser: argparse.ArgumentParser) -> None:
    flags.add_target_args(parser, default=None,
                          target_help="ask this running server instead of reading --index",
                          timeout=30.0,
                          timeout_help="seconds to wait for the server with --target "
                                       "(default: 30)")


def _call(args: argparse.Namespace, what: str, call: Callable[..., T]) -> T:
    """``call(client)`` against ``args.target``; a refusal becomes InvalidRequest (exit 2) when
    the request was unusable, RouterError (exit 1) otherwise."""
    from router.client import SkillRouterClient
    from router.door.api import described

    try:
        client = SkillRouterClient(args.target, timeout=args.timeout, retries=0,
                                   **dataclasses.asdict(flags.caller_auth_from_args(args)))
    except ValueError as exc:  # an unreadable token file, a certificate without its key
        raise InvalidRequest(str(exc)) from exc
    with client:
        try:
            return call(client)
        except RouterError as exc:
            message = f"{what} on {args.target} failed: {described(exc)}"
            if isinstance(exc, InvalidRequest):
                raise InvalidRequest(message) from None
            raise RouterError(message) from None


def stats(args: argparse.Namespace) -> StatsReport:
    reply = _call(args, "SkillStats", lambda c: c.skill_stats(min_routed=args.min_routed))
    skills = [SkillStats(s.skill, **{k: getattr(s, k) for k in COUNTERS}) for s in reply.skills]
    by_name = {s.skill: s for s in skills}
    return StatsReport(skills, [by_name[name] for name in reply.never_activated
                                if name in by_name], reply.min_routed)


def examples(args: argparse.Namespace) -> tuple[list[RecordedExample], int]:
    """The examples the server listed (at most its default limit) and how many matched."""
    reply = _call(args, "ListExamples", lambda c: c.list_examples(
        skill=args.skill or "", older_than_days=args.older_than))
    return [RecordedExample(e.skill, e.positive, e.query, e.session_id, e.recorded_at,
                            e.learned) for e in reply.examples], reply.total


def purge(args: argparse.Namespace) -> PurgeResult:
    reply = _call(args, "PurgeExamples", lambda c: c.purge_examples(
        skill=args.skill or "", older_than_days=args.older_than))
    return PurgeResult(reply.purged, reply.compacted)
