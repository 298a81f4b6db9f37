"""The gRPC server's audit lines, its JSON door's calls too (``server.audit_log``; written by
``router.door.audit``).

One line per finished call, refused ones included (UNAUTHENTICATED, PERMISSION_DENIED,
RESOURCE_EXHAUSTED, ...): ``ts``, ``request_id``, ``trace_id`` (32 lowercase hex digits: the
caller's ``traceparent`` when it sent one), ``principal`` (the authenticated caller; null when
it was not), ``acting_for`` (the principal a delegate was served as; null when none), ``method``
(``/router.v1.SkillRouter/Route``), ``code`` (the gRPC status name), ``index_version`` (the
version served) and ``door`` (``grpc``, or ``connect``: the JSON door). Route, Activate and
ReadResource add ``skills``: the skills handed out (``name``, ``catalog``, and ``digest``: the
SKILL.md digest the index recorded, null for a skill the gateway sent with the turn or an index
without digests); empty when the call failed. ApproveSkill and RevokeApproval add ``approval``:
the skill (``name``, ``catalog``) and the ``digest`` asked for (null for a revoke), refused
calls too. Health checks and reflection are not written. Nothing of the request's text is
written.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import grpc

from router.door.audit import AuditLog
from router.engine import Engine
from router.service.interceptors import CallObserver, CallRecord
from router.service.metrics import short_method
from router.skills.model import skill_key

log = logging.getLogger(__name__)

HANDS_OUT = frozenset({"Route", "Activate", "ReadResource"})
APPROVALS = frozenset({"ApproveSkill", "RevokeApproval"})
UNAUDITED = ("/grpc.health.", "/grpc.reflection.")  # probes and tooling: no line


def _digest(engine: Engine, catalog: str, name: str) -> str | None:
    recorded = engine.snapshot.digests
    found = recorded.get(skill_key(catalog, name)) if recorded is not None else None
    return found.files[0].digest if found is not None and found.files else None


def _handed(engine: Engine, record: CallRecord, short: str) -> list[tuple[str, str]]:
    """(catalog, name) of every skill the call handed out."""
    answer, request = record.response, record.request
    if answer is None or record.code is not grpc.StatusCode.OK:
        return []
    if short == "Route":
        return [(s.catalog, s.name) for s in answer.skills]
    if short == "Activate":
        return [(answer.catalog, request.name)]
    served = record.facts.served
    found = engine.visible(served).skill(request.name) if served is not None else \
        engine.visible().skill(request.name)
    return [(found.catalog, found.name)] if found is not None else []


def audit_line(engine: Engine, record: CallRecord) -> dict[str, Any]:
    """The audit line of one finished call."""
    facts = record.facts
    short = short_method(record.method)
    version = getattr(record.response, "index_version", "") or engine.snapshot.info.version
    line: dict[str, Any] = {
        "request_id": record.request_id, "trace_id": facts.trace_id or uuid.uuid4().hex,
        "principal": facts.principal, "acting_for": facts.acting_for,
        "method": record.method, "code": record.code.name, "index_version": version,
        "door": facts.door}
    if short in HANDS_OUT:
        line["skills"] = [{"name": name, "catalog": catalog,
                           "digest": _digest(engine, catalog, name)}
                          for catalog, name in _handed(engine, record, short)]
    if short in APPROVALS and record.request is not None:
        request = record.request
        line["approval"] = {"name": request.skill, "catalog": request.catalog or "default",
                            "digest": getattr(request, "digest", "") or None}
    return line


def audit_observer(engine: Engine, audit: AuditLog) -> CallObserver:
    """The call observer writing ``engine``'s calls to ``audit``."""

    def observe(record: CallRecord) -> None:
        if not record.method.startswith(UNAUDITED):
            audit.write(audit_line(engine, record))

    return observe
