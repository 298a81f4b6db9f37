"""Who owns a session id and a ``route_id``: the principal that first used it.

A principal is who a call comes from (``router.access.model``), keyed here by its name: a
principal of the principals file by its configured name; under ``serve --token-file`` (or
``--token-env``) each accepted bearer token by the sha256 of the token (the token itself is never
stored); a server without tokens has one anonymous principal (""); a door in front of a running
service (``mcp --target``, the console) is the principal of its token, or, with the delegate
role, the principal it acts for.

A session id belongs to the principal whose call first named it; a ``route_id`` to the principal
whose Route made it (recorded in its route row, so every replica can tell). Route, Activate and
Feedback from another principal on them are ``PermissionDenied`` before anything is written.

The rules here are pure. A session's owner is part of the Engine's session state
(``router.engine.sessions``), which keeps it through the feedback store
(``router.learning.store.FeedbackStore.claim_session``; a route's owner: ``find_route``), so a
store shared by every replica can decide it at once; ``Owners`` is the table a store (or the
session state without one) keeps in memory: ``MAX_SESSIONS`` session ids (least recently used
forgotten first, ten times what the activated-skill memory keeps, so a session's active skills
are forgotten first), and a session it does not know is looked up with ``known`` (the store's
recent Routes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection

from router.errors import InvalidRequest, PermissionDenied
from router.skills.limits import ACTIVE_SKILLS, SESSION_ID_CHARS

MAX_SESSIONS = 100_000
NOT_YOURS = ("{what} belongs to another caller: use the ids your own calls created (start a "
             "new session with a fresh session_id)")


def check_session_fields(session_id: str, active_skills: Collection[str]) -> None:
    """The caps on a request's session id and active-skill list. Raises InvalidRequest."""
    if len(session_id) > SESSION_ID_CHARS:
        raise InvalidRequest(f"session_id has {len(session_id)} characters; "
                             f"the limit is {SESSION_ID_CHARS}")
    if len(active_skills) > ACTIVE_SKILLS:
        raise InvalidRequest(f"active_skills lists {len(active_skills)} names; "
                             f"the limit is {ACTIVE_SKILLS}")


def check_route_owner(owner: str | None, principal: str) -> None:
    """PermissionDenied when a ``route_id`` known to be ``owner``'s is used by ``principal``
    (None: the route is not known, and teaches nothing)."""
    if owner is not None and owner != principal:
        raise PermissionDenied(NOT_YOURS.format(what="route_id"))


def check_session_owner(owner: str, principal: str) -> None:
    """PermissionDenied when the session ``owner`` owns (after ``principal``'s claim on it) is
    not ``principal``'s."""
    if owner != principal:
        raise PermissionDenied(NOT_YOURS.format(what="session_id"))


class Owners:
    """Thread-safe map session id -> the principal that created it."""

    def __init__(self, known: Callable[[str], str | None] = lambda _: None,
                 max_sessions: int = MAX_SESSIONS) -> None:
        self._known = known
        self._max = max_sessions
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def owner(self, session_id: str) -> str | None:
        """Who owns ``session_id`` here, if known (nothing is claimed)."""
        with self._lock:
            found = self._owners.get(session_id)
            if found is not None:
                self._owners.move_to_end(session_id)
            return found

    def claim(self, session_id: str, principal: str) -> str:
        """The owner of ``session_id`` after ``principal`` claims it: the principal that owned
        it already, else ``principal`` (who owns it from now on). An empty id is nobody's, and
        is claimed by whoever asks."""
        if not session_id:
            return principal
        with self._lock:
            owner = self._owners.get(session_id)
            if owner is None:
                found = self._known(session_id)
                owner = principal if found is None else found
                self._owners[session_id] = owner
                while len(self._owners) > self._max:
                    self._owners.popitem(last=False)
            else:
                self._owners.move_to_end(session_id)
        return owner
