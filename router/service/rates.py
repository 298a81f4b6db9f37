"""Rate limits on the gRPC port: each SkillRouter call takes a token of its caller's bucket
(``rate:`` on a principal, ``router.access.rates``), and of the bucket of the principal a
delegate is served as; a call that finds one empty is answered ``RESOURCE_EXHAUSTED`` with the
trailing metadata ``retry-after-ms`` (whole milliseconds until a token is back). Health is
never limited (it is not admitted through the gate at all).
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc

from router.access.rates import RETRY_AFTER_KEY, RateLimiter, retry_after_ms
from router.access.table import PrincipalTable
from router.service.interceptors import CALL_FACTS

__all__ = ["RETRY_AFTER_KEY", "check_rate"]


def _names(principal: str, delegate: str | None) -> Iterator[str]:
    if delegate is not None and delegate != principal:
        yield delegate
    yield principal


def check_rate(limiter: RateLimiter, table: PrincipalTable | None, context: grpc.ServicerContext,
               principal: str, delegate: str | None = None) -> None:
    """Take a token for the call of ``principal`` (served for ``delegate``, if any); abort it
    with RESOURCE_EXHAUSTED and ``retry-after-ms`` when a bucket is empty."""
    if table is None:
        return
    for name in _names(principal, delegate):
        entry = table.by_name(name)
        if entry is None or entry.rate is None:
            continue
        wait = limiter.take(name, entry.rate)
        if wait > 0.0:
            ms = retry_after_ms(wait)
            facts = CALL_FACTS.get()
            if facts is not None:
                facts.limited = name
            context.set_trailing_metadata(
                (*(context.trailing_metadata() or ()), (RETRY_AFTER_KEY, str(ms))))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                          f"principal {name!r} is over its rate ({entry.rate.per_second:g} "
                          f"calls a second, {entry.rate.burst} at once): retry in {ms} ms "
                          f"(trailing metadata {RETRY_AFTER_KEY})")
