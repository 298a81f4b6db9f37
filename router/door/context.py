"""What a door passes with each call to its backend (``router.door.backend``): the state of
the caller's session, and the principal the door serves the call as."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from router.access.model import Principal


@dataclass(frozen=True)
class CallSession:
    """What the door passes with a call. An empty ``session_id`` means "no memory"."""

    session_id: str = ""
    active_skills: tuple[str, ...] = ()
    route_id: str = ""  # of the session's latest search


NO_SESSION = CallSession()

# The principal the door serves this call as, set by the door for a caller of its principals
# file; None: the door calls as itself.
ACTING: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("acting", default=None)
