"""Rate limits per principal: ``rate: {per_second: N, burst: M}`` on a principal of the
principals file, a token bucket per principal in each process (so per replica: N replicas
behind a balancer let a principal through up to N times its rate).

A bucket holds at most ``burst`` tokens (default: ``per_second`` rounded up, at least 1),
starts full and refills at ``per_second``; a call takes one token, and a call that finds none
is refused with the time until one is back (``RateLimiter.take``). The clock is injected, so
the arithmetic is tested without waiting. Pure (no I/O).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import yaml

RATE_FIELDS = ("per_second", "burst")
RETRY_AFTER_KEY = "retry-after-ms"  # the trailing metadata of a refusal: ms until a token
MAX_BUCKETS = 10_000  # distinct (principal, rate) pairs kept; the oldest dropped past it

Problem = Callable[[yaml.Node, str], None]


@dataclass(frozen=True)
class Rate:
    """A principal's allowance: ``per_second`` calls a second on average, ``burst`` at once."""

    per_second: float
    burst: int


def parse_rate(node: yaml.Node, problem: Problem) -> Rate | None:
    """The ``rate`` mapping of a principal; ``problem(node, message)`` for each fault."""
    if not isinstance(node, yaml.MappingNode):
        problem(node, "rate must be a mapping: {per_second: N, burst: M}")
        return None
    given = {str(k.value): v for k, v in node.value}
    unknown = sorted(set(given) - set(RATE_FIELDS))
    if unknown or "per_second" not in given:
        problem(node, "rate takes per_second (calls a second, > 0) and optionally burst (calls "
                      "at once, >= 1)" + (f"; not {', '.join(unknown)}" if unknown else ""))
        return None
    per_second = _number(given["per_second"])
    if per_second is None or not per_second > 0 or math.isinf(per_second):
        problem(given["per_second"], "rate.per_second must be a number above 0")
        return None
    burst = max(1, math.ceil(per_second))
    if "burst" in given:
        value = _number(given["burst"])
        if value is None or value < 1 or value != int(value):
            problem(given["burst"], "rate.burst must be a whole number of calls, at least 1")
            return None
        burst = int(value)
    return Rate(per_second, burst)


def _number(node: yaml.Node) -> float | None:
    if not isinstance(node, yaml.ScalarNode):
        return None
    try:
        return float(node.value)
    except ValueError:
        return None


class RateLimiter:
    """The buckets of one process, one per (principal name, rate); thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[tuple[str, Rate], list[float]] = {}  # [tokens, last refill]
        self._lock = threading.Lock()

    def take(self, name: str, rate: Rate) -> float:
        """Take a token of ``name``'s bucket: 0.0 when there was one, else the seconds until
        one is back (the call is refused; nothing is taken)."""
        with self._lock:
            now = self._clock()
            key = (name, rate)
            bucket = self._buckets.pop(key, None) or [float(rate.burst), now]
            bucket[0] = min(float(rate.burst), bucket[0] + (now - bucket[1]) * rate.per_second)
            bucket[1] = now
            self._buckets[key] = bucket  # most recently used last
            while len(self._buckets) > MAX_BUCKETS:
                del self._buckets[next(iter(self._buckets))]
            if bucket[0] >= 1.0:
                bucket[0] -= 1.0
                return 0.0
            return (1.0 - bucket[0]) / rate.per_second


def retry_after_ms(seconds: float) -> int:
    """Whole milliseconds to wait, rounded up (at least 1)."""
    return max(1, math.ceil(seconds * 1000.0))
