"""The MCP door's audit lines (``mcp.audit_log``, ``mcp --audit-log PATH``; written by
``router.door.audit``): ``AuditedBackend`` wraps the door's backend and writes one line per
call it makes, failed ones included, with the fields of the service's lines
(``router.service.audit``): ``request_id`` (the door's own), ``trace_id`` (the caller's
``traceparent``, else a fresh one), ``principal`` (the caller's principal of the door's
principals file; ``""`` when the door calls as itself), ``acting_for`` (null), ``method`` (the
SkillRouter method the call is: ``/router.v1.SkillRouter/Route`` for search_skills, ``Activate``,
``ReadResource``, ``ListResources``, ``ListSkills``), ``code`` (the gRPC status name of its
outcome), ``index_version``, ``door: "mcp"``, and for Route, Activate and ReadResource the
``skills`` handed out. In-process (``--index``) each skill has its catalog and the SKILL.md
digest the index recorded; with ``--target`` the door does not know them (null), and the
service's own audit log has them. Never the query, nor any argument's text.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from router.activation.activator import Activation, Resource, ResourceList
from router.common.tracing import TRACEPARENT
from router.door.api import SERVICE_NAME, status_for
from router.door.audit import AuditLog
from router.door.backend import Backend, EngineBackend, Search, SkillFile
from router.door.context import ACTING, CallSession
from router.door.entries import SkillEntry
from router.skills.model import skill_key

T = TypeVar("T")


class AuditedBackend:
    """``backend`` with one audit line per call."""

    def __init__(self, backend: Backend, audit: AuditLog) -> None:
        self.backend, self.audit = backend, audit

    def _skill(self, name: str, catalog: str | None = None) -> dict[str, Any]:
        inner = self.backend
        if not isinstance(inner, EngineBackend):
            return {"name": name, "catalog": catalog, "digest": None}
        engine = inner.engine
        if catalog is None:
            found = engine.visible(ACTING.get() or inner.caller).skill(name)
            catalog = found.catalog if found is not None else None
        recorded = engine.snapshot.digests
        files = recorded.get(skill_key(catalog, name)) if recorded and catalog else None
        return {"name": name, "catalog": catalog,
                "digest": files.files[0].digest if files is not None and files.files else None}

    def _version(self) -> str | None:
        inner = self.backend
        return inner.engine.snapshot.info.version if isinstance(inner, EngineBackend) else None

    def _audited(self, method: str, call: Callable[[], T],
                 skills: Callable[[T], list[dict[str, Any]]] | None = None,
                 version: Callable[[T], str | None] | None = None) -> T:
        caller = ACTING.get()
        traceparent = TRACEPARENT.get()
        line: dict[str, Any] = {
            "request_id": uuid.uuid4().hex,
            "trace_id": traceparent.split("-")[1] if traceparent else uuid.uuid4().hex,
            "principal": caller.name if caller is not None else "", "acting_for": None,
            "method": f"/{SERVICE_NAME}/{method}", "door": "mcp"}
        try:
            answer = call()
        except Exception as exc:
            self.audit.write({**line, "code": status_for(exc)[0].name,
                              "index_version": self._version(),
                              **({"skills": []} if skills is not None else {})})
            raise
        self.audit.write({**line, "code": "OK",
                          "index_version": version(answer) if version else self._version(),
                          **({"skills": skills(answer)} if skills is not None else {})})
        return answer

    def search(self, query: str, top_k: int, session: CallSession) -> Search:
        return self._audited("Route", lambda: self.backend.search(query, top_k, session),
                             lambda found: [self._skill(h.name) for h in found.hits],
                             lambda found: found.index_version)

    def activate(self, name: str, session: CallSession) -> Activation:
        return self._audited("Activate", lambda: self.backend.activate(name, session),
                             lambda done: [self._skill(done.name, done.catalog)])

    def list_resources(self, name: str) -> ResourceList:
        return self._audited("ListResources", lambda: self.backend.list_resources(name))

    def read_resource(self, name: str, path: str) -> Resource:
        return self._audited("ReadResource", lambda: self.backend.read_resource(name, path),
                             lambda found: [self._skill(found.name)])

    def skills(self) -> tuple[SkillFile, ...]:
        return self._audited("ListSkills", self.backend.skills)

    def skill_entries(self) -> tuple[SkillEntry, ...]:
        return self._audited("ListSkills", self.backend.skill_entries)

    def close(self) -> None:
        try:
            self.backend.close()
        finally:
            self.audit.close()
