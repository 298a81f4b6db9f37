"""The SkillRouter gRPC servicer: protobuf <-> routing records, and error mapping.

Nothing here routes, renders or reads the disk; every call hands off to the Engine. The only
request checks made here are protobuf concerns (an enum number this server does not know);
everything semantic (empty message, ``top_k`` range, ...) is the Engine's to reject.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TypeVar

import grpc

from router.engine import Engine
from router.errors import (
    IndexUnavailable,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    StaleFile,
    TooLarge,
)
from router.index.layout import IndexInfo
from router.routing.model import CatalogFormat, Reason, RoutedSkill, RouteQuery, RouteResult
from router.service import learning_codec as lc
from router.service.codec import (
    activation_to_proto,
    resource_list_to_proto,
    resource_to_proto,
    validation_to_proto,
)
from router.service.feedback_codec import outcome_from_proto
from router.skills.digests import SkillDigests, recorded_for
from router.skills.limits import truncate_description
from router.skills.model import Diagnostic, Level, Scope, Skill, SkillKind
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

T = TypeVar("T")

# The one table from error class to status code. First match wins, so subclasses
# (e.g. IndexCorrupt, an IndexUnavailable) follow their parent unless listed earlier.
STATUS_BY_ERROR: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (TooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (StaleFile, grpc.StatusCode.FAILED_PRECONDITION),
    (IndexUnavailable, grpc.StatusCode.UNAVAILABLE),
)

_FORMATS: dict[int, CatalogFormat] = {
    pb.CATALOG_FORMAT_XML: CatalogFormat.XML,
    pb.CATALOG_FORMAT_JSON: CatalogFormat.JSON,
    pb.CATALOG_FORMAT_MARKDOWN: CatalogFormat.MARKDOWN,
}
_REASONS: dict[Reason, pb.RouteReason] = {
    Reason.ALWAYS_ON: pb.ROUTE_REASON_ALWAYS_ON,
    Reason.RETRIEVED: pb.ROUTE_REASON_RETRIEVED,
    Reason.EXPLICIT: pb.ROUTE_REASON_EXPLICIT,
    Reason.ACTIVE: pb.ROUTE_REASON_ACTIVE,
}
_SCOPES: dict[Scope, pb.SkillScope] = {
    Scope.PROJECT: pb.SKILL_SCOPE_PROJECT,
    Scope.USER: pb.SKILL_SCOPE_USER,
    Scope.ORG: pb.SKILL_SCOPE_ORG,
    Scope.BUNDLED: pb.SKILL_SCOPE_BUNDLED,
}
_KINDS: dict[SkillKind, pb.SkillKind] = {
    SkillKind.SKILL_MD: pb.SKILL_KIND_SKILL_MD,
    SkillKind.MANIFEST: pb.SKILL_KIND_MANIFEST,
}
_LEVELS: dict[Level, pb.DiagnosticLevel] = {
    Level.WARNING: pb.DIAGNOSTIC_LEVEL_WARNING,
    Level.ERROR: pb.DIAGNOSTIC_LEVEL_ERROR,
}


def status_for(exc: Exception) -> tuple[grpc.StatusCode, str]:
    """The status code and caller-facing message for an exception raised by the Engine."""
    for error_type, code in STATUS_BY_ERROR:
        if isinstance(exc, error_type):
            return code, str(exc) or error_type.__name__
    return grpc.StatusCode.INTERNAL, f"internal error ({type(exc).__name__}); see the server log"


def query_from_proto(request: pb.RouteRequest) -> RouteQuery:
    """Convert a RouteRequest; an unknown ``format`` number is rejected here."""
    fmt = _FORMATS.get(request.format)
    if fmt is None:
        known = ", ".join(f"{pb.CatalogFormat.Name(n)} ({n})" for n in sorted(_FORMATS))
        raise InvalidRequest(f"unknown format {request.format}; use one of {known}")
    return RouteQuery(
        message=request.message,
        history=tuple(request.history),
        session_id=request.session_id,
        top_k=request.top_k,
        format=fmt,
        active_skills=tuple(request.active_skills),
        max_catalog_chars=request.max_catalog_chars,
    )


def routed_to_proto(skill: RoutedSkill) -> pb.RoutedSkill:
    return pb.RoutedSkill(name=skill.name, description=truncate_description(skill.description),
                          location=skill.location, score=skill.score,
                          reason=_REASONS.get(skill.reason, pb.ROUTE_REASON_UNSPECIFIED),
                          parameters_json=skill.parameters_json)


def route_to_proto(result: RouteResult) -> pb.RouteResponse:
    """Convert a RouteResult (its candidates are not part of a RouteResponse)."""
    return pb.RouteResponse(
        skills=[routed_to_proto(s) for s in result.skills],
        catalog_text=result.catalog_text,
        index_version=result.index_version,
        full_catalog_chars=result.full_catalog_chars,
        catalog_chars=result.catalog_chars,
        routed_count=max(result.routed_count, len(result.skills)),
        shown_count=len(result.skills),
        unknown_explicit=list(result.unknown_explicit),
        explicit_content=result.explicit_content,
        activate_tool_json=result.activate_tool_json,
        route_id=result.route_id,
    )


def explain_to_proto(result: RouteResult) -> pb.ExplainResponse:
    """Convert a RouteResult with its candidates."""
    return pb.ExplainResponse(
        route=route_to_proto(result),
        candidates=[
            pb.Candidate(name=c.name, dense_score=c.dense_score, lexical_score=c.lexical_score,
                         fused_score=c.fused_score, kept=c.kept, reason=c.reason.value,
                         matched_example=c.matched_example)
            for c in result.candidates
        ],
        gate=result.gate, dense_weight=result.dense_weight, example_mode=result.example_mode,
        lexical_with_examples=result.lexical_with_examples,
        settings_reason=result.settings_reason, refused=result.refused,
    )


def skill_to_proto(skill: Skill) -> pb.SkillInfo:
    return pb.SkillInfo(
        name=skill.name, description=truncate_description(skill.description),
        location=skill.location, scope=_SCOPES.get(skill.scope, pb.SKILL_SCOPE_UNSPECIFIED),
        kind=_KINDS.get(skill.kind, pb.SKILL_KIND_UNSPECIFIED),
        model_invocable=skill.model_invocable, user_invocable=skill.user_invocable,
        enabled=skill.enabled, deprecated=skill.deprecated, always_on=skill.always_on,
    )


def add_files(info: pb.SkillInfo, skill: Skill, recorded: SkillDigests | None) -> pb.SkillInfo:
    """``info`` with the recorded files and frontmatter the Skills extension lists."""
    info.frontmatter_json = json.dumps(dict(skill.frontmatter), ensure_ascii=False, default=str)
    info.files_recorded = recorded is not None
    if recorded is not None:
        info.files_complete = recorded.complete
        info.files.extend(pb.SkillFile(path=f.path, size=f.size, digest=f.digest)
                          for f in recorded.files)
    return info


def diagnostic_to_proto(diagnostic: Diagnostic) -> pb.Diagnostic:
    return pb.Diagnostic(level=_LEVELS.get(diagnostic.level, pb.DIAGNOSTIC_LEVEL_UNSPECIFIED),
                         path=diagnostic.path, message=diagnostic.message)


def info_to_proto(info: IndexInfo) -> pb.GetIndexInfoResponse:
    return pb.GetIndexInfoResponse(
        version=info.version, model=info.model, dimension=info.dimension,
        skill_count=info.skill_count, built_at=info.built_at,
        format_version=info.format_version, path=info.path,
        calibrated_gate=info.calibrated_gate, example_count=info.example_count,
        tuning_json=info.tuning_json,
    )


class SkillRouterServicer(pb_grpc.SkillRouterServicer):
    """Serves one Engine. Thread-safe because the Engine is."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def Route(self, request: pb.RouteRequest,
              context: grpc.ServicerContext) -> pb.RouteResponse:
        return _guarded(context, "Route", lambda: route_to_proto(
            self._engine.route_turn(query_from_proto(request))))

    def Explain(self, request: pb.RouteRequest,
                context: grpc.ServicerContext) -> pb.ExplainResponse:
        return _guarded(context, "Explain",
                        lambda: explain_to_proto(self._engine.explain(query_from_proto(request))))

    def ListSkills(self, request: pb.ListSkillsRequest,
                   context: grpc.ServicerContext) -> pb.ListSkillsResponse:
        def run() -> pb.ListSkillsResponse:
            snapshot = self._engine.snapshot  # one version for the skills and their files
            return pb.ListSkillsResponse(
                skills=[add_files(skill_to_proto(s), s, recorded_for(snapshot.digests, s.name))
                        if request.include_files else skill_to_proto(s)
                        for s in snapshot.skills],
                diagnostics=[diagnostic_to_proto(d) for d in self._engine.diagnostics()],
                index_version=self._engine.info().version,
            )

        return _guarded(context, "ListSkills", run)

    def GetIndexInfo(self, request: pb.GetIndexInfoRequest,
                     context: grpc.ServicerContext) -> pb.GetIndexInfoResponse:
        return _guarded(context, "GetIndexInfo", lambda: info_to_proto(self._engine.info()))

    def Activate(self, request: pb.ActivateRequest,
                 context: grpc.ServicerContext) -> pb.ActivateResponse:
        """Activation on the model's behalf (a user's ``/name`` goes through Route)."""
        return _guarded(context, "Activate", lambda: activation_to_proto(
            self._engine.activate(request.name, request.session_id,
                                  tuple(request.active_skills), request.include_frontmatter,
                                  route_id=request.route_id)))

    def ReadResource(self, request: pb.ReadResourceRequest,
                     context: grpc.ServicerContext) -> pb.ReadResourceResponse:
        return _guarded(context, "ReadResource", lambda: resource_to_proto(
            self._engine.read_resource(request.name, request.path)))

    def ValidateArguments(self, request: pb.ValidateArgumentsRequest,
                          context: grpc.ServicerContext) -> pb.ValidateArgumentsResponse:
        return _guarded(context, "ValidateArguments", lambda: validation_to_proto(
            self._engine.validate_arguments(request.name, request.arguments_json)))

    def Reindex(self, request: pb.ReindexRequest,
                context: grpc.ServicerContext) -> pb.ReindexResponse:
        """Rebuild from the recorded discovery settings and swap; see ``router.index.build``."""
        def run() -> pb.ReindexResponse:
            done = self._engine.reindex(full=request.full)
            return pb.ReindexResponse(
                index_version=done.index_version, added=done.changes.added,
                changed=done.changes.changed, removed=done.changes.removed,
                unchanged=done.changes.unchanged, duration_seconds=done.duration_seconds,
                diagnostics=[diagnostic_to_proto(d) for d in done.diagnostics],
                swapped=done.swapped)

        return _guarded(context, "Reindex", run)

    def Feedback(self, request: pb.FeedbackRequest,
                 context: grpc.ServicerContext) -> pb.FeedbackResponse:
        """An outcome for a skill in a session; see ``router.learning.recorder``."""
        return _guarded(context, "Feedback", lambda: pb.FeedbackResponse(
            recorded=self._engine.feedback(request.skill, request.session_id,
                                           outcome_from_proto(request.outcome),
                                           request.route_id)))

    def ListResources(self, request: pb.ListResourcesRequest,
                      context: grpc.ServicerContext) -> pb.ListResourcesResponse:
        """A skill's bundled files without activating it (no session is touched)."""
        return _guarded(context, "ListResources", lambda: resource_list_to_proto(
            self._engine.list_resources(request.name)))

    def SkillStats(self, request: pb.SkillStatsRequest,
                   context: grpc.ServicerContext) -> pb.SkillStatsResponse:
        review = self._engine.review  # the feedback store; see router.learning.review
        return _guarded(context, "SkillStats", lambda: lc.stats_to_proto(
            review.stats(lc.min_routed_from_proto(request.min_routed)), review.enabled))

    def ListExamples(self, request: pb.ListExamplesRequest,
                     context: grpc.ServicerContext) -> pb.ListExamplesResponse:
        return _guarded(context, "ListExamples", lambda: lc.examples_to_proto(
            self._engine.review.examples(request.skill, lc.days_from_proto(request)),
            lc.limit_from_proto(request.limit), self._engine.review.enabled))

    def PurgeExamples(self, request: pb.PurgeExamplesRequest,
                      context: grpc.ServicerContext) -> pb.PurgeExamplesResponse:
        return _guarded(context, "PurgeExamples", lambda: lc.purge_to_proto(
            self._engine.review.purge(request.skill, lc.days_from_proto(request))))


def _guarded(context: grpc.ServicerContext, method: str, call: Callable[[], T]) -> T:
    """Run ``call``; turn any exception into a status (never into a crashed worker)."""
    try:
        return call()
    except Exception as exc:  # mapped below; unexpected ones are logged with a traceback
        code, message = status_for(exc)
        if code is grpc.StatusCode.INTERNAL:
            log.exception("%s failed unexpectedly", method)
        else:
            log.debug("%s rejected: %s %s", method, code.name, message)
    context.abort(code, message)


def add_to_server(engine: Engine, server: grpc.Server) -> SkillRouterServicer:
    """Register a servicer for ``engine`` on ``server`` and return it."""
    servicer = SkillRouterServicer(engine)
    pb_grpc.add_SkillRouterServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    return servicer
