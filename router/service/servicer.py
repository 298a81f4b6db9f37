"""The SkillRouter gRPC servicer: convert each request (``router.service.codec``), call the
Engine, convert its answer, and map its errors to status codes.

Nothing here routes, renders or reads the disk; every call hands off to the Engine. The only
request checks made on the way in are protobuf concerns (an enum number this server does not
know), in the codec; everything semantic (empty message, ``top_k`` range, ...) is the Engine's
to reject.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from router.access.model import ADMIN, ANONYMOUS, OPS, Principal
from router.access.roles import require
from router.access.view import View
from router.activation.activator import Activation
from router.door.api import status_for
from router.door.path_policy import PathPolicy
from router.engine import Engine
from router.routing.deadline import Deadline
from router.routing.model import RouteQuery
from router.service.codec import learning as lc
from router.service.codec.activation import (
    activation_to_proto,
    resource_list_to_proto,
    resource_to_proto,
    validation_to_proto,
)
from router.service.codec.admission import add_findings, approved_to_proto, revoked_to_proto
from router.service.codec.feedback import outcome_from_proto
from router.service.codec.index import info_to_proto, reindex_to_proto, skills_to_proto
from router.service.codec.paths import hidden
from router.service.codec.routing import explain_to_proto, query_from_proto, route_to_proto
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=Message)
CallerReader = Callable[[grpc.ServicerContext], Principal]  # the Principal a call is served as
OperatorCheck = Callable[[grpc.ServicerContext], bool]


def _turn(request: pb.RouteRequest, context: grpc.ServicerContext,
          caller: Principal) -> RouteQuery:
    """The turn of a Route or Explain call, bounded by the call's deadline and cancellation."""
    return replace(query_from_proto(request, caller),
                   until=Deadline.within(context.time_remaining(), context.is_active))


class SkillRouterServicer(pb_grpc.SkillRouterServicer):
    """Serves one Engine (thread-safe as it is); ``caller_of`` reads each call's caller and
    ``operator`` says whether it holds ``ops`` by the principals file (ListExamples shows it
    session ids); ``paths`` says what callers see of the server's paths (every answer and
    error message passes through it)."""

    def __init__(self, engine: Engine,
                 caller_of: CallerReader = lambda context: ANONYMOUS,
                 operator: OperatorCheck = lambda context: False,
                 paths: PathPolicy | None = None) -> None:
        self._engine, self._caller_of, self._operator = engine, caller_of, operator
        self._shown = (paths or PathPolicy(expose=True)).over(lambda: self._engine.snapshot)

    def _answer(self, context: grpc.ServicerContext, method: str, call: Callable[[], M]) -> M:
        """``_guarded``, the answer and any error message shown as ``paths`` allows (the view
        taken after the call: a Reindex answers with the version it swapped in)."""
        return _guarded(context, method, lambda: hidden(call(), self._shown.view()),
                        self._shown.text)

    def Route(self, request: pb.RouteRequest,
              context: grpc.ServicerContext) -> pb.RouteResponse:
        def run() -> pb.RouteResponse:
            caller = self._caller_of(context)
            return route_to_proto(self._engine.route_turn(_turn(request, context, caller)))

        return self._answer(context, "Route", run)

    def Explain(self, request: pb.RouteRequest,
                context: grpc.ServicerContext) -> pb.ExplainResponse:
        def run() -> pb.ExplainResponse:
            caller = self._caller_of(context)
            return explain_to_proto(self._engine.route(_turn(request, context, caller),
                                                       explain=True))

        return self._answer(context, "Explain", run)

    def ListSkills(self, request: pb.ListSkillsRequest,
                   context: grpc.ServicerContext) -> pb.ListSkillsResponse:
        def run() -> pb.ListSkillsResponse:
            caller = self._caller_of(context)
            if request.all_catalogs:
                require(caller, (OPS, ADMIN), "all_catalogs")
            visible = self._engine.visible(caller)  # one version for the skills and files
            skills = visible.variants() if request.all_catalogs else visible.skills()
            answer = skills_to_proto(visible.snap, skills, request.include_files,
                                     visible.diagnostics(), visible.snap.info.version)
            if caller.may(OPS) or caller.may(ADMIN):  # the findings: their catalogs' operators
                add_findings(answer, visible.snap.info.path, visible.view.holds)
            return answer

        return self._answer(context, "ListSkills", run)

    def GetIndexInfo(self, request: pb.GetIndexInfoRequest,
                     context: grpc.ServicerContext) -> pb.GetIndexInfoResponse:
        return self._answer(context, "GetIndexInfo", lambda: info_to_proto(
            self._engine.visible(self._caller_of(context)).info()))

    def Activate(self, request: pb.ActivateRequest,
                 context: grpc.ServicerContext) -> pb.ActivateResponse:
        """Activation on the model's behalf (a user's ``/name`` goes through Route)."""
        return self._answer(context, "Activate", lambda: activation_to_proto(
            self._activate(request, self._caller_of(context))))

    def _activate(self, request: pb.ActivateRequest, caller: Principal) -> Activation:
        return self._engine.activate(request.name, request.session_id,
                                     tuple(request.active_skills), request.include_frontmatter,
                                     request.route_id, caller.name, caller=caller)

    def ReadResource(self, request: pb.ReadResourceRequest,
                     context: grpc.ServicerContext) -> pb.ReadResourceResponse:
        return self._answer(context, "ReadResource", lambda: resource_to_proto(
            self._engine.read_resource(request.name, request.path,
                                       caller=self._caller_of(context))))

    def ValidateArguments(self, request: pb.ValidateArgumentsRequest,
                          context: grpc.ServicerContext) -> pb.ValidateArgumentsResponse:
        return self._answer(context, "ValidateArguments", lambda: validation_to_proto(
            self._engine.validate_arguments(request.name, request.arguments_json,
                                            caller=self._caller_of(context))))

    def Reindex(self, request: pb.ReindexRequest,
                context: grpc.ServicerContext) -> pb.ReindexResponse:
        """Rebuild from the recorded discovery settings and swap (``router.builder.pipeline``)."""
        def run() -> pb.ReindexResponse:
            done = self._engine.reindex(full=request.full)
            view = self._view(context)  # the diagnostics of the caller's catalogs only
            return reindex_to_proto(done if view.whole else replace(done, diagnostics=tuple(
                d for d in done.diagnostics if d.catalog in view.catalogs)))

        return self._answer(context, "Reindex", run)

    def Feedback(self, request: pb.FeedbackRequest,
                 context: grpc.ServicerContext) -> pb.FeedbackResponse:
        """An outcome for a skill in a session; see ``router.learning.recorder``."""
        def run() -> pb.FeedbackResponse:
            caller = self._caller_of(context)
            recorded = self._engine.feedback(
                request.skill, request.session_id, outcome_from_proto(request.outcome),
                request.route_id, caller.name, caller=caller)
            found = self._engine.visible(caller).skill(request.skill)
            return pb.FeedbackResponse(recorded=recorded,
                                       catalog=found.catalog if found is not None else "")

        return self._answer(context, "Feedback", run)

    def ListResources(self, request: pb.ListResourcesRequest,
                      context: grpc.ServicerContext) -> pb.ListResourcesResponse:
        """A skill's bundled files without activating it (no session is touched)."""
        return self._answer(context, "ListResources", lambda: resource_list_to_proto(
            self._engine.list_resources(request.name, caller=self._caller_of(context))))

    def SkillStats(self, request: pb.SkillStatsRequest,
                   context: grpc.ServicerContext) -> pb.SkillStatsResponse:
        review = self._engine.review  # the feedback store; see router.learning.review
        return self._answer(context, "SkillStats", lambda: lc.stats_to_proto(
            review.stats(lc.min_routed_from_proto(request.min_routed), request.catalog,
                         self._view(context)),
            review.enabled))

    def ListExamples(self, request: pb.ListExamplesRequest,
                     context: grpc.ServicerContext) -> pb.ListExamplesResponse:
        return self._answer(context, "ListExamples", lambda: lc.examples_to_proto(
            self._engine.review.examples(request.skill, lc.days_from_proto(request),
                                         request.catalog, self._view(context)),
            lc.limit_from_proto(request.limit), self._engine.review.enabled,
            with_sessions=self._operator(context)))

    def PurgeExamples(self, request: pb.PurgeExamplesRequest,
                      context: grpc.ServicerContext) -> pb.PurgeExamplesResponse:
        return self._answer(context, "PurgeExamples", lambda: lc.purge_to_proto(
            self._engine.review.purge(request.skill, lc.days_from_proto(request),
                                      request.catalog, self._view(context))))

    def ApproveSkill(self, request: pb.ApproveSkillRequest,
                     context: grpc.ServicerContext) -> pb.ApproveSkillResponse:
        """An admin's approval of a quarantined skill, for the next Reindex
        (``router.engine.approving``)."""
        return self._answer(context, "ApproveSkill", lambda: approved_to_proto(
            self._engine.approve_skill(request.skill, request.catalog, request.digest,
                                       request.note, caller=self._caller_of(context))))

    def RevokeApproval(self, request: pb.RevokeApprovalRequest,
                       context: grpc.ServicerContext) -> pb.RevokeApprovalResponse:
        return self._answer(context, "RevokeApproval", lambda: revoked_to_proto(
            self._engine.revoke_approval(request.skill, request.catalog,
                                         caller=self._caller_of(context))))

    def _view(self, context: grpc.ServicerContext) -> View:
        """The caller's view, which bounds what the learning methods read and change."""
        return self._engine.visible(self._caller_of(context)).view


def _guarded(context: grpc.ServicerContext, method: str, call: Callable[[], T],
             shown: Callable[[str], str] = str) -> T:
    """Run ``call``; turn any exception into a status (never into a crashed worker), its
    message as ``shown`` rewrites it."""
    try:
        return call()
    except Exception as exc:  # mapped below; unexpected ones are logged with a traceback
        code, message = status_for(exc)
        if code is grpc.StatusCode.INTERNAL:
            log.exception("%s failed unexpectedly", method)
        else:
            log.debug("%s rejected: %s %s", method, code.name, message)
    context.abort(code, shown(message))


def add_to_server(engine: Engine, server: grpc.Server, caller_of: CallerReader,
                  operator: OperatorCheck = lambda context: False,
                  paths: PathPolicy | None = None) -> SkillRouterServicer:
    """Register a servicer for ``engine`` on ``server`` and return it."""
    servicer = SkillRouterServicer(engine, caller_of, operator, paths)
    pb_grpc.add_SkillRouterServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    return servicer
