"""How long a turn may still run: its caller's deadline and whether the caller went away.
A door makes one from its call (the gRPC door from the call's context); in-process callers
have none. Checked between pieces of costly work (``check``), so a turn nobody waits for
stops instead of running on."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from router.errors import DeadlineExceeded


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Deadline:
    """``at``: the ``time.monotonic()`` past which nobody waits for the answer (inf: never);
    ``gone``: True once the caller cancelled or disconnected."""

    at: float = math.inf
    gone: Callable[[], bool] = _never

    @classmethod
    def within(cls, seconds: float | None, active: Callable[[], bool] | None = None) -> Deadline:
        """A deadline ``seconds`` from now (None: none), the call ``active`` while it is."""
        at = math.inf if seconds is None else time.monotonic() + max(0.0, seconds)
        return cls(at, _never if active is None else (lambda: not active()))

    def remaining(self) -> float | None:
        """Seconds left (never below 0); None without a deadline."""
        return None if math.isinf(self.at) else max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return self.gone() or time.monotonic() >= self.at

    def check(self, doing: str) -> None:
        """Raise ``passed(doing)`` once the caller's deadline passed or it went away."""
        if self.expired():
            raise self.passed(doing)

    @staticmethod
    def passed(doing: str) -> DeadlineExceeded:
        """The error of a turn stopped while ``doing`` something, nobody waiting any more."""
        return DeadlineExceeded(f"the caller's deadline passed (or it cancelled) while {doing}; "
                                "the work was stopped")


NO_DEADLINE = Deadline()
