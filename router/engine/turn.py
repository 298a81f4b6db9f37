"""A turn as a short sequence of named stages, each a function from plain values to plain
values: ``(Parts, Turn) -> Turn``, where ``Parts`` is what the Engine made once (settings,
caches, the session state, the recorder) and ``Turn`` the frozen record of one turn so far.

``ROUTE`` is Route's and Explain's sequence; ``TURN`` adds what a served Route also does (record
it, activate a skill the user named). A new stage (a reranker, the session's reveals) is one
function here and one line in a sequence; what it keeps per session goes in the session state
(``router.engine.sessions``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace

import numpy as np

from router.access.model import OPS, Principal
from router.access.ownership import check_session_fields, check_session_owner
from router.activation.activator import Activator
from router.common.tracing import ENCODE, stage
from router.config import Config
from router.encoders.base import Embedder
from router.encoders.cache import QueryCache
from router.engine.project_turns import ProjectTurns
from router.engine.reveals import revealed
from router.engine.sessions import SessionState
from router.engine.views import CatalogSizes, ViewCache
from router.index.store import IndexSnapshot
from router.learning.recorder import Recorder, RoutedTurn, ShownSkill
from router.learning.shown import Seen, Started
from router.routing import router as core
from router.routing.fusion import FusionConfig
from router.routing.model import Reason, RouteQuery, RouteResult
from router.routing.project import Overlay, check_bounds
from router.routing.query_text import QueryVectors, retrieval_text, turn_texts, turn_vectors
from router.routing.request import checked_query
from router.routing.visible import Visible
from router.skills.model import PROJECT_CATALOG, Diagnostic, Skill, skill_key


@dataclass(frozen=True)
class Parts:
    """What every turn uses of its Engine, made once."""

    config: Config
    fusion: FusionConfig
    settings: core.Settings
    cache: QueryCache  # the turns' query vectors
    views: ViewCache  # each caller's view of a snapshot
    sizes: CatalogSizes  # the size of each view's whole catalog
    project: ProjectTurns  # project skills' vectors and the slots that embed them
    sessions: SessionState
    recorder: Recorder
    activator: Activator
    visible: Callable[[Principal], Visible]  # the served snapshot as a caller sees it


@dataclass(frozen=True)
class Turn:
    """One turn so far: the request and the snapshot and encoder it is served with, then
    what each stage adds."""

    query: RouteQuery
    snapshot: IndexSnapshot
    embedder: Embedder
    explain: bool = False
    project_skills: tuple[Skill, ...] = ()  # the usable project skills the caller may send
    notes: tuple[Diagnostic, ...] = ()  # the project skills left out, and why
    text: str = ""  # the message without its /names: what retrieval reads
    vectors: QueryVectors | None = None
    overlay: Overlay | None = None  # the project skills laid over the caller's view
    ranked: core.Ranked | None = None
    result: RouteResult | None = None
    opening: Future[Started] | None = None  # the session's turn, opened with the claim


Stage = Callable[[Parts, Turn], Turn]


def checked(parts: Parts, query: RouteQuery) -> RouteQuery:
    """``query`` with defaults filled; InvalidRequest when any part is out of bounds."""
    query = checked_query(query, parts.config.routing, parts.fusion.history_turns)
    check_bounds(query.project_skills)
    check_session_fields(query.session_id, query.active_skills)
    return query


def validate(parts: Parts, turn: Turn) -> Turn:
    """The request checked before any work (``checked``)."""
    return replace(turn, query=checked(parts, turn.query))


def claim(parts: Parts, turn: Turn) -> Turn:
    """The session becomes the caller's if nobody owns it; PermissionDenied if another does.
    A Route that reveals opens the session's turn with the claim (``SessionState.opening``:
    with a store the fleet shares, one statement sent now and read by ``reveal``, so the
    round trip runs while the turn is routed); Explain only claims."""
    query = turn.query
    name = query.caller.name
    if turn.explain or not query.session_id or query.format.tools_only:
        check_session_owner(parts.sessions.claim(query.session_id, name), name)
        return turn
    opening = parts.sessions.opening(query.session_id, name, query.context_reset,
                                     query.revealed_skills)
    if opening.done():  # decided already: another's session is refused before any work
        check_session_owner(opening.result().owner, name)
    return replace(turn, opening=opening)


def opened(turn: Turn) -> Seen | None:
    """The session's memory as its turn opened (None: it did not open with the claim);
    PermissionDenied when the session turned out to be another's."""
    if turn.opening is None:
        return None
    started = turn.opening.result()
    check_session_owner(started.owner, turn.query.caller.name)
    return started.seen


def remember(parts: Parts, turn: Turn) -> Turn:
    """The session's activated skills join the request's; its project skills are noted."""
    query, caller = turn.query, turn.query.caller
    remembered = parts.sessions.active(query.session_id)
    if remembered:
        query = replace(query, active_skills=(*query.active_skills,
                                              *sorted(remembered - set(query.active_skills))))
    skills, notes = parts.project.select(query, caller)
    parts.sessions.remember_project(caller.name, query.session_id, (s.name for s in skills))
    return replace(turn, query=query, project_skills=skills, notes=notes)


def encode(parts: Parts, turn: Turn) -> Turn:
    """The turn's query vectors, and its project skills' laid over the caller's view."""
    query, snapshot, embedder = turn.query, turn.snapshot, turn.embedder
    caller = query.caller
    text = retrieval_text(query)
    with stage(ENCODE, snapshot.info.version, caller.name):
        texts = turn_texts(text, query.history, parts.fusion)
        rows = (parts.cache.encode(embedder, list(texts.texts), caller.name) if texts.views
                else np.zeros((0, 0), dtype=np.float32))
        vectors = turn_vectors(texts, rows, parts.fusion)
    view = parts.views.view(snapshot, caller)
    laid = parts.project.embed(snapshot, view, turn.project_skills, caller, embedder,
                               query.until)
    return replace(turn, text=text, vectors=vectors, overlay=laid)


def route(parts: Parts, turn: Turn) -> Turn:
    """The turn ranked over the caller's view and its project skills (``router.routing``)."""
    assert turn.vectors is not None
    view = parts.views.view(turn.snapshot, turn.query.caller)
    ranked = core.rank(turn.snapshot, turn.query, turn.vectors, parts.settings,
                       explain=turn.explain, view=view, project=turn.overlay)
    return replace(turn, ranked=ranked)


def render(parts: Parts, turn: Turn) -> Turn:
    """The catalog rendered; what Explain may show of it; the project skills' diagnostics."""
    assert turn.ranked is not None
    ranked, config = turn.ranked, parts.settings.routing
    whole = parts.sizes(ranked.snap, turn.query, config, ranked.base)  # kept: done once
    result = core.render(ranked, turn.query, config, whole)
    caller = turn.query.caller
    if turn.explain and not (caller.may(OPS) and caller.sees_everything):
        # A matched example may be another principal's user's request: the index does not
        # keep whose, so only an operator of every catalog sees them.
        result = replace(result, candidates=tuple(
            replace(c, matched_example="") for c in result.candidates))
    return replace(turn, result=replace(result, diagnostics=turn.notes) if turn.notes
                   else result)


def reveal(parts: Parts, turn: Turn) -> Turn:
    """What the session has not been shown yet, as ``reveal_text`` (``router.engine.reveals``);
    a Route remembers it, Explain only reads."""
    assert turn.result is not None
    seen = opened(turn)
    result = revealed(parts.sessions, parts.config.routing, turn.query, turn.result,
                      turn.explain, seen)
    return replace(turn, result=result)


def routed(turn: Turn) -> RoutedTurn:
    """What the turn showed, for the recorder."""
    assert turn.result is not None
    query = turn.query
    return RoutedTurn(query.session_id, query.caller.name, turn.text,
                      tuple(ShownSkill(s.catalog, s.name, s.reason is Reason.RETRIEVED,
                                       s.reason is Reason.EXPLICIT)
                            for s in turn.result.skills))


def record(parts: Parts, turn: Turn) -> Turn:
    """The Route stored for learning; its ``route_id`` in the result."""
    assert turn.result is not None
    route_id = parts.recorder.on_route(routed(turn))
    return replace(turn, result=replace(turn.result, route_id=route_id))


def activate_named(parts: Parts, turn: Turn) -> Turn:
    """A ``/name`` the user typed activated (``explicit_content``); a project skill's
    activation stays with the gateway."""
    result, query = turn.result, turn.query
    assert result is not None
    explicit = [s for s in result.skills if s.reason is Reason.EXPLICIT]
    if not explicit or explicit[0].catalog == PROJECT_CATALOG:
        return turn
    done = parts.activator.activate(explicit[0].name, query.session_id, query.active_skills,
                                    explicit=True, within=parts.visible(query.caller))
    if not done.already_active:  # a repeat in the conversation is not an activation
        parts.recorder.on_explicit(skill_key(explicit[0].catalog, done.name), routed(turn),
                                   result.route_id)
    return replace(turn, result=replace(result, explicit_content=done.content))


ROUTE: tuple[Stage, ...] = (validate, claim, remember, encode, route, render, reveal)
TURN: tuple[Stage, ...] = (*ROUTE, record, activate_named)


def run(parts: Parts, turn: Turn, stages: Sequence[Stage]) -> RouteResult:
    """``turn`` through ``stages``, in order; the result the last one left."""
    for step in stages:
        turn = step(parts, turn)
    assert turn.result is not None
    return turn.result
