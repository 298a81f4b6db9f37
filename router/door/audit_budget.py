"""How many refused calls an audit log writes: a bounded rate, with a summary of the rest.

A refused call (no or a wrong credential, a missing role, a rate limit: ``UNAUTHENTICATED``,
``PERMISSION_DENIED``, ``RESOURCE_EXHAUSTED``, or HTTP 401, 403, 429) costs its sender nothing,
so a flood of them would fill the log and rotate its history away within minutes. Their lines
pass a token bucket (``BURST`` at once, then ``PER_SECOND``); the others are counted, by code
and by principal, and summed up in one ``audit_dropped`` line written with the next line once a
second at most, and when the log closes. Calls that were served are always written.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

BURST = 50
PER_SECOND = 5.0
SUMMARY_SECONDS = 1.0
REFUSED = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", 401, 403,
                     429, "401", "403", "429"})


def refused(line: Mapping[str, Any]) -> bool:
    """Whether ``line`` is a refused call's (its ``code``, or an HTTP ``status``)."""
    code = line.get("code", line.get("status"))
    return isinstance(code, str | int) and code in REFUSED


class RefusalBudget:
    """Decides which refused lines are written; keeps the count of the others (thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tokens, self._at = float(BURST), clock()
        self._dropped: Counter[str] = Counter()
        self._callers: Counter[str] = Counter()
        self._since = 0.0  # when the first line not yet summed up was dropped
        self._summed = -SUMMARY_SECONDS
        self._lock = threading.Lock()

    def admit(self, line: Mapping[str, Any]) -> bool:
        """Whether to write ``line`` (a refused one only while the bucket has a token)."""
        if not refused(line):
            return True
        with self._lock:
            now = self._clock()
            self._tokens = min(float(BURST), self._tokens + (now - self._at) * PER_SECOND)
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            if not self._dropped:
                self._since = now
            self._dropped[str(line.get("code", line.get("status")))] += 1
            self._callers[str(line.get("principal") or "(none)")] += 1
            return False

    def summary(self, *, closing: bool = False) -> dict[str, Any] | None:
        """The ``audit_dropped`` line of what was dropped since the last one, when one is due
        (at most once a second; always when ``closing``); None else."""
        with self._lock:
            now = self._clock()
            if not self._dropped or (not closing and now - self._summed < SUMMARY_SECONDS):
                return None
            line = {"event": "audit_dropped", "dropped": sum(self._dropped.values()),
                    "codes": dict(self._dropped),
                    "principals": dict(self._callers.most_common(10)),
                    "seconds": round(now - self._since, 3),
                    "reason": f"refused calls are written at most {PER_SECOND:g} a second "
                              f"(bursts of {BURST})"}
            self._dropped.clear()
            self._callers.clear()
            self._summed = now
            return line
