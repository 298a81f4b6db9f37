"""A turn's reveal, from and into the session's memory of what it was shown
(``router.learning.shown``; the blocks: ``router.routing.reveal``).

A Route starts the session's next turn in the memory (forgetting it first on
``context_reset``, adding the gateway's ``revealed_skills``), splits the turn's new skills into
``reveal_text`` and remembers them with the turn's always-on and active skills. Explain reads
the memory and changes nothing. An Activate remembers the skill, and tells the recorder whether
it was revealed on an earlier turn (then it was shown to the model, and teaches). A tool search
format reveals nothing and remembers nothing; a Route without a session id remembers nothing.
"""

from __future__ import annotations

from dataclasses import replace

from router.config import RoutingConfig
from router.learning.shown import NOTHING, SESSION_SECONDS, ShownMemory
from router.learning.store import FeedbackStore
from router.routing.model import Reason, RouteQuery, RouteResult
from router.routing.reveal import split
from router.routing.router import always_on_positions
from router.routing.visible import Visible
from router.skills.model import PROJECT_CATALOG


class Reveals:
    """The Engine's side of the reveals, over the memory its feedback store keeps."""

    def __init__(self, store: FeedbackStore | None, config: RoutingConfig,
                 ttl_seconds: float = SESSION_SECONDS) -> None:
        from router.learning.shown import LocalShown

        limit = config.max_shown_per_session
        self.memory: ShownMemory = (store.shown_memory(limit, ttl_seconds) if store is not None
                                    else LocalShown(limit, ttl_seconds))
        self._config = config

    def turn(self, query: RouteQuery, result: RouteResult, explain: bool) -> RouteResult:
        """``result`` with its reveal; the session's memory moved on a turn (not ``explain``)."""
        if query.format.tools_only:
            return result
        session = query.session_id
        if explain:
            seen = self.memory.recall(session)
            new = split(result, query.format, seen.shown, self._config.include_location)
            return replace(new, shown=seen.pairs())
        seen = (self.memory.begin(session, query.context_reset, query.revealed_skills)
                if session else NOTHING)
        new = split(result, query.format, seen.shown, self._config.include_location)
        if session:
            held = [s.name for s in new.skills
                    if s.first_shown or s.reason in (Reason.ALWAYS_ON, Reason.ACTIVE)]
            self.memory.add(session, [n for n in dict.fromkeys((*new.always_on, *held))
                                      if n not in seen.shown])
        return new

    def activated(self, session: str, name: str, visible: Visible) -> bool:
        """Remember ``name`` as activated in ``session``; whether it was revealed to the model
        on an earlier turn (not one of the caller's always-on skills)."""
        if not session:
            return False
        seen = self.memory.recall(session)
        self.memory.add(session, [name])
        found = seen.shown.get(name)
        if found is None or found >= seen.turn:
            return False
        skill = visible.skill(name)
        always = {visible.snap.skills[p].name
                  for p in always_on_positions(visible.snap, self._config, visible.view)}
        return name not in always and (skill is None or skill.catalog != PROJECT_CATALOG)
