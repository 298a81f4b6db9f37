"""What the MCP door needs from skill-router, behind one small protocol, and its in-process
implementation over an ``Engine`` (the same calls the gRPC servicer makes).

Every method is synchronous and may block (embedding, disk, network); the server runs them in a
worker thread. Errors are ``router.errors`` classes, whichever implementation raised them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Protocol

from router.access.model import ANONYMOUS, Principal
from router.activation.activator import Activation, Resource, ResourceList
from router.door.context import ACTING, CallSession
from router.door.entries import SkillEntry, entry_of
from router.door.path_policy import PathPolicy
from router.door.threads import SearchThreads
from router.engine import Engine
from router.routing.model import RouteQuery
from router.skills.digests import recorded_for
from router.skills.model import Skill, SkillKind


@dataclass(frozen=True)
class Hit:
    """One skill of a search result, as the structured tool output lists it."""

    name: str
    description: str
    score: float
    reason: str  # "always_on", "retrieved", "explicit" or "active"


@dataclass(frozen=True)
class Search:
    """The narrowed catalog for one query. ``catalog_text`` is empty when nothing fits."""

    hits: tuple[Hit, ...]
    catalog_text: str
    index_version: str
    explicit_content: str = ""  # a skill the query named as /name, activated as Route does
    route_id: str = ""  # the router's id for this route (passed back on Activate)


@dataclass(frozen=True)
class SkillFile:
    """An indexed skill as the resource listing needs it."""

    name: str
    description: str
    skill_file: str  # "SKILL.md" or "manifest.json": the file that defines the skill
    model_invocable: bool = True  # False: ``disable-model-invocation`` (the user's alone)


class Backend(Protocol):
    """The calls the door makes. ``close`` releases connections, if any."""

    def search(self, query: str, top_k: int, session: CallSession) -> Search: ...

    def activate(self, name: str, session: CallSession) -> Activation: ...

    def list_resources(self, name: str) -> ResourceList: ...

    def read_resource(self, name: str, path: str) -> Resource: ...

    def skills(self) -> tuple[SkillFile, ...]: ...

    def skill_entries(self) -> tuple[SkillEntry, ...]: ...

    def close(self) -> None: ...


class EngineBackend:
    """The door over an Engine in this process, acting for each call's principal (``ACTING``,
    else ``caller``): every call works on its view (``router.access.view``); ``for_caller``
    gives the same door for another caller. ``paths`` says what callers see of the server's
    paths (``server.expose_paths``), in answers and error messages alike."""

    def __init__(self, engine: Engine, paths: PathPolicy | None = None,
                 caller: Principal = ANONYMOUS) -> None:
        self.engine, self.caller = engine, caller
        self._threads = SearchThreads(engine.config.index.search_threads)
        self._paths = paths or PathPolicy(expose=True)
        self._shown = self._paths.over(lambda: self.engine.snapshot)

    def _caller(self) -> Principal:
        """The principal the door serves this call as (``ACTING``, set by the door for a
        caller of its principals file), else ``caller``."""
        return ACTING.get() or self.caller

    def for_caller(self, caller: Principal) -> EngineBackend:
        door = EngineBackend(self.engine, self._paths, caller)
        door._threads = self._threads
        return door

    def search(self, query: str, top_k: int, session: CallSession) -> Search:
        self._threads.set_up()
        result = self._shown.hiding(lambda: self.engine.route_turn(RouteQuery(
            message=query, top_k=top_k, session_id=session.session_id,
            active_skills=session.active_skills, caller=self._caller())))
        hits = tuple(Hit(s.name, s.description, s.score, s.reason.value) for s in result.skills)
        return Search(hits, self._shown.text(result.catalog_text), result.index_version,
                      self._shown.text(result.explicit_content), result.route_id)

    def activate(self, name: str, session: CallSession) -> Activation:
        done = self._shown.hiding(lambda: self.engine.activate(
            name, session.session_id, session.active_skills, route_id=session.route_id,
            principal_name=self._caller().name, caller=self._caller()))
        return replace(done, content=self._shown.text(done.content),
                       skill_dir=self._shown.text(done.skill_dir))

    def list_resources(self, name: str) -> ResourceList:
        listing = self._shown.hiding(lambda: self.engine.list_resources(
            name, caller=self._caller()))
        return replace(listing, skill_dir=self._shown.text(listing.skill_dir))

    def read_resource(self, name: str, path: str) -> Resource:
        return self._shown.hiding(lambda: self.engine.read_resource(
            name, path, caller=self._caller()))

    def skills(self) -> tuple[SkillFile, ...]:
        return tuple(SkillFile(s.name, s.description, os.path.basename(s.location),
                               s.model_invocable)
                     for s in self.engine.skills(self._caller()) if _served_as_skill(s))

    def skill_entries(self) -> tuple[SkillEntry, ...]:
        """Every enabled skill of the view with its recorded files (the Skills extension's
        source)."""
        visible = self.engine.visible(self._caller())
        return tuple(entry_of(s, recorded_for(visible.snap.digests, s.key))
                     for s in visible.skills() if _served_as_skill(s))

    def close(self) -> None:
        """Sync and close what the Engine writes (its feedback segment)."""
        self.engine.close()


def _served_as_skill(skill: Skill) -> bool:
    """Is ``skill`` a skill:// resource and a Skills extension entry? Not when switched off,
    nor an MCP server's tool (a tool, served by its own server; no skill folder)."""
    return skill.enabled and skill.kind is not SkillKind.MCP_TOOL
