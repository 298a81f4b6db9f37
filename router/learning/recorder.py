"""The recording rule: what a Route, an Activate and a Feedback call leave in the store.

- Every Route gets a ``route_id`` and a ``route`` row (session, message without its ``/names``,
  shown and retrieved skills), written before Route answers and synced within a fifth of a
  second (``router.learning.segments``).
- An Activate of skill S by the model in session X, when S was shown in one of X's last
  ``WINDOW`` Routes, records that Route's message as a positive example for S, with the skills
  that Route showed (the others were passed over for S: weak negatives for encoder
  fine-tuning, ``Example.passed_over``). "Shown" means
  retrieved for that message: always-on skills and the session's active skills are in every
  catalog, so activating them teaches nothing. With a
  ``route_id`` the window is read from the store, so any replica can decide; without one, from
  this process's memory. Only the model's choices teach: a skill the user named (``/name`` or
  ``$name``, activated by Route) is counted but records no example, and its Route is ``forced``:
  no later activation learns from it. Activations that match no shown skill are counted but
  teach nothing, unless the skill was revealed to the session on an earlier turn
  (``router.learning.reveals``): the model was shown it, and the session's latest Route's
  message teaches it.
- A Feedback outcome is counted; ``wrong_skill`` on a Route that showed the skill records that
  Route's message as a negative example for it. Feedback that names neither a route nor a
  session is not recorded at all (it could be anyone's, and would move the counters).
- Every row carries the caller's principal (``router.access.ownership``); a route row's
  principal owns its ``route_id``: ``check_route`` refuses the others (who owns a session is
  the Engine's session state, ``router.engine.sessions``).
- What a Route showed comes from the turn as plain values (``RoutedTurn``): the user's message
  without its ``/names``, and the skills with why each was shown.
- A skill activated again in the same conversation (Activate answers ``already_active``) is not
  a second activation: the Engine does not report it here (the session state knows what the
  conversation activated), so nothing is written.

The Engine owns one ``Recorder`` over its feedback store (``router.learning.store``);
``Recorder.disabled()`` records nothing and hands out no ids.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from router.access.ownership import NOT_YOURS, check_route_owner
from router.config import FeedbackConfig
from router.errors import InvalidRequest, PermissionDenied
from router.learning.policy import check_policy
from router.learning.routes import RouteWindow, ShownRoute, pick
from router.learning.rows import ACTIVATE, FEEDBACK, OUTCOMES, ROUTE, Row
from router.learning.store import FeedbackStore
from router.skills.model import PROJECT_CATALOG, skill_key

log = logging.getLogger(__name__)

MAX_ROUTE_ID_CHARS = 64


@dataclass(frozen=True)
class ShownSkill:
    """A skill a Route showed: ``retrieved`` for the message (not always-on, not already
    active), ``named`` by the user (``/name``)."""

    catalog: str
    name: str
    retrieved: bool = False
    named: bool = False


@dataclass(frozen=True)
class RoutedTurn:
    """What one Route showed, as the turn hands it over: ``request`` is the user's message
    without its ``/names``."""

    session: str
    principal: str
    request: str
    skills: tuple[ShownSkill, ...]


class Recorder:
    """Records traffic into ``store`` under its policy (or nowhere, when disabled: no store,
    or ``feedback.enabled`` false)."""

    def __init__(self, store: FeedbackStore | None) -> None:
        self.store = store
        self.policy = check_policy(store.policy if store is not None
                                   else FeedbackConfig(enabled=False))
        self.enabled = store is not None and self.policy.enabled
        self._window = RouteWindow()
        self._failing = False  # the last write failed (later failures are logged quietly)

    @classmethod
    def disabled(cls) -> Recorder:
        return cls(None)

    def _append(self, row: Row, *, durable: bool = True) -> bool:
        """Store ``row``; False (logged) when the store cannot be written: routing goes on."""
        assert self.store is not None
        try:
            self.store.append(row, durable=durable)
        except OSError as exc:
            level = logging.DEBUG if self._failing else logging.ERROR
            log.log(level, "cannot record feedback in %s: %s", self.store.location, exc)
            self._failing = True
            return False
        self._failing = False
        return True

    def close(self) -> None:
        """Put this process's rows on disk and release them (a compaction can then take
        them)."""
        if self.store is not None:
            self.store.close()

    def on_route(self, turn: RoutedTurn) -> str:
        """Store what this Route showed; its ``route_id`` ("" when disabled)."""
        if not self.enabled:
            return ""
        assert self.store is not None
        route_id = self.store.new_route_id(turn.principal)
        indexed = [s for s in turn.skills if s.catalog != PROJECT_CATALOG]  # ours to learn
        row = Row(kind=ROUTE, ts=time.time(), session=turn.session, route_id=route_id,
                  query=turn.request,
                  shown=tuple(skill_key(s.catalog, s.name) for s in indexed),
                  retrieved=tuple(skill_key(s.catalog, s.name) for s in indexed
                                  if s.retrieved),
                  principal=turn.principal,
                  forced=any(s.named for s in turn.skills))
        if not self._append(row, durable=False):  # synced soon after, off the turn's path
            return ""
        self._window.add(ShownRoute.from_row(row))
        return route_id

    def _find(self, route_id: str) -> ShownRoute | None:
        if len(route_id) > MAX_ROUTE_ID_CHARS:
            raise InvalidRequest(f"route_id has {len(route_id)} characters; pass back the "
                                 "route_id a Route returned")
        if not route_id or self.store is None:
            return None
        return self.store.find_route(route_id)

    def check_route(self, route_id: str, principal: str) -> None:
        """Activate's and Feedback's check, before anything is written: the route is
        ``principal``'s, or not known; PermissionDenied otherwise."""
        made = (self.store.route_made_for(route_id, principal)
                if self.enabled and route_id and self.store is not None else None)
        if made is False:  # made for another caller, as the id itself says
            raise PermissionDenied(NOT_YOURS.format(what="route_id"))
        if made is None:
            check_route_owner(self.route_owner(route_id), principal)

    def route_owner(self, route_id: str) -> str | None:
        """The principal whose Route made ``route_id``; None when it is not known."""
        found = self._find(route_id) if self.enabled else None
        return found.principal if found is not None else None

    def _showing(self, skill: str, session: str, route_id: str,
                 principal: str) -> ShownRoute | None:
        """The Route of the session's window that showed ``skill`` (see the module doc)."""
        if route_id and self.store is not None:
            found = self._find(route_id)
            if found is not None:
                if (session and found.session != session) or found.principal != principal:
                    return None  # another conversation's Route
                window = self.store.session_routes(found.session) if found.session else [found]
                return pick(window, skill, route_id)
        return pick(self._window.last(session), skill) if session else None

    def on_explicit(self, skill: str, turn: RoutedTurn, route_id: str) -> None:
        """Count the activation of a skill the user named on Route ``route_id``; it teaches
        nothing (the user chose it, not the model)."""
        if self.enabled:
            self._append(Row(kind=ACTIVATE, ts=time.time(), skill=skill, session=turn.session,
                             route_id=route_id, principal=turn.principal))

    def _latest(self, session: str, principal: str) -> ShownRoute | None:
        """The session's latest Route (the current turn's request), unless the user named a
        skill in it."""
        window = (self.store.session_routes(session) if self.store is not None
                  else self._window.last(session))
        mine = [r for r in window if r.principal == principal]
        latest = max(mine, key=lambda r: r.ts) if mine else None
        return latest if latest is not None and not latest.forced else None

    def on_activate(self, skill: str, session: str, route_id: str = "",
                    principal: str = "", revealed: bool = False) -> None:
        """Count an activation; a positive example when the rule holds (``revealed``: the
        skill was revealed to the session on an earlier turn, so the current turn's request
        teaches it even when no Route of the window showed it)."""
        if not self.enabled:
            return
        route = self._showing(skill, session, route_id, principal)
        if route is None and revealed and session:
            route = self._latest(session, principal)
        row = Row(kind=ACTIVATE, ts=time.time(), skill=skill,
                  session=session or (route.session if route else ""),
                  query=route.query if route is not None else "",
                  route_id=route.route_id if route is not None else route_id,
                  shown=route.shown if route is not None else (), principal=principal)
        self._append(row)
        if route is not None:
            log.debug("learned: %r -> %s", route.query, skill)

    def on_feedback(self, skill: str, session: str, outcome: str, route_id: str = "",
                    principal: str = "") -> bool:
        """Store an outcome; False when disabled, when it names neither a route nor a session,
        or when the store cannot be written. ``outcome`` is one of ``OUTCOMES``."""
        if outcome not in OUTCOMES:
            raise InvalidRequest(f"unknown outcome {outcome!r}; use one of "
                                 f"{', '.join(OUTCOMES)}")
        if not self.enabled or not (session or route_id):
            return False
        route = (self._showing(skill, session, route_id, principal)
                 if outcome == "wrong_skill" else None)
        return self._append(Row(kind=FEEDBACK, ts=time.time(), skill=skill, outcome=outcome,
                                session=session or (route.session if route else ""),
                                query=route.query if route is not None else "",
                                route_id=route_id or (route.route_id if route else ""),
                                principal=principal))
