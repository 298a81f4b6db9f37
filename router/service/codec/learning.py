"""Protobuf conversions for the learning calls: SkillStats, ListExamples, PurgeExamples.

Plain field copies between ``router.learning.review``'s records and the wire messages; an unset
``optional`` field becomes None. No checks beyond the list cap, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from router.errors import InvalidRequest
from router.learning.review import PurgeResult, RecordedExample, StatsReport, hit_rate
from router.v1 import router_pb2 as pb

DEFAULT_LIMIT = 1000


def days_from_proto(request: pb.ListExamplesRequest | pb.PurgeExamplesRequest) -> float | None:
    return request.older_than_days if request.HasField("older_than_days") else None


def min_routed_from_proto(min_routed: int) -> int | None:
    """0 (unset) means the server's default."""
    return min_routed or None


def limit_from_proto(limit: int) -> int:
    """The list cap (0: the default); InvalidRequest when negative."""
    if limit < 0:
        raise InvalidRequest(f"limit must be 0 (the default, {DEFAULT_LIMIT}) or more; "
                             f"got {limit}")
    return limit or DEFAULT_LIMIT


def stats_to_proto(report: StatsReport, enabled: bool) -> pb.SkillStatsResponse:
    return pb.SkillStatsResponse(
        skills=[pb.SkillCounters(skill=s.skill, routed=s.routed, shown=s.shown,
                                 activated=s.activated, succeeded=s.succeeded, failed=s.failed,
                                 wrong=s.wrong, not_used=s.not_used, hit_rate=hit_rate(s))
                for s in report.skills],
        never_activated=[s.skill for s in report.never_activated],
        min_routed=report.min_routed, feedback_enabled=enabled)


def examples_to_proto(examples: Sequence[RecordedExample], limit: int,
                      enabled: bool, *, with_sessions: bool = False) -> pb.ListExamplesResponse:
    """The listed examples, with their session ids only ``with_sessions``: for a caller given
    the ``ops`` role by the principals file, a known operator (a token of the token file or an
    anonymous caller is not; ``skill-router examples list --index DIR``, reading the store on
    disk, shows them too)."""
    return pb.ListExamplesResponse(
        examples=[pb.RecordedExample(skill=e.skill, positive=e.positive, query=e.query,
                                     session_id=e.session if with_sessions else "",
                                     recorded_at=e.ts, learned=e.learned)
                  for e in examples[:limit]],
        total=len(examples), feedback_enabled=enabled)


def purge_to_proto(result: PurgeResult) -> pb.PurgeExamplesResponse:
    return pb.PurgeExamplesResponse(purged=result.purged, compacted=result.compacted)
