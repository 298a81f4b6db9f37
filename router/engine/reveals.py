"""The turn's reveal (``router.routing.reveal``), from and into what the session was shown
(``SessionState.begin_turn``, ``record_shown``, ``shown``).

A Route starts the session's next turn in its memory (forgetting it first on
``context_reset``, adding the gateway's ``revealed_skills``), splits the turn's new skills into
``reveal_text`` and remembers them with the turn's always-on and active skills. Explain reads
the memory and changes nothing. An Activate remembers the skill and tells the recorder whether
it was revealed on an earlier turn (then the model was shown it, and it teaches). A tool search
format reveals nothing and remembers nothing; a Route without a session id remembers nothing.
"""

from __future__ import annotations

from dataclasses import replace

from router.config import RoutingConfig
from router.engine.sessions import SessionState
from router.learning.shown import NOTHING, Seen
from router.routing.model import Reason, RouteQuery, RouteResult
from router.routing.reveal import split
from router.routing.router import always_on_positions
from router.routing.visible import Visible
from router.skills.model import PROJECT_CATALOG


def revealed(sessions: SessionState, config: RoutingConfig, query: RouteQuery,
             result: RouteResult, explain: bool, started: Seen | None = None) -> RouteResult:
    """``result`` with its reveal; the session's memory moved on a turn (not ``explain``):
    begun here, unless the turn began with its claim (``started``)."""
    if query.format.tools_only:
        return result
    session = query.session_id
    if explain:
        seen = sessions.shown(session)
        return replace(split(result, query.format, seen.shown, config.include_location),
                       shown=seen.pairs())
    if started is not None:
        seen = started
    else:
        seen = (sessions.begin_turn(session, query.context_reset, query.revealed_skills)
                if session else NOTHING)
    new = split(result, query.format, seen.shown, config.include_location)
    if session:
        held = [s.name for s in new.skills
                if s.first_shown or s.reason in (Reason.ALWAYS_ON, Reason.ACTIVE)]
        sessions.record_shown(session, [n for n in dict.fromkeys((*new.always_on, *held))
                                        if n not in seen.shown])
    return new


def activated(sessions: SessionState, config: RoutingConfig, session: str, name: str,
              visible: Visible) -> bool:
    """Remember ``name`` as shown to ``session`` (it was activated); whether it was revealed
    to the model on an earlier turn (not one of the caller's always-on skills, nor a project
    skill)."""
    if not session:
        return False
    seen = sessions.shown(session)
    sessions.record_shown(session, [name])
    first = seen.shown.get(name)
    if first is None or first >= seen.turn:
        return False
    skill = visible.skill(name)
    always = {visible.snap.skills[p].name
              for p in always_on_positions(visible.snap, config, visible.view)}
    return name not in always and (skill is None or skill.catalog != PROJECT_CATALOG)
