"""A thin synchronous Python client for the SkillRouter gRPC service.

Every method returns the protobuf response message (``router.v1.router_pb2``) unchanged and
raises the ``router.errors`` class of the server's status on failure (``NotFound``,
``InvalidRequest``, ``Unauthenticated``, ``Unavailable``, ...; ``router.door.api``), with the
status on it as ``code`` and ``details``. Calls that find the server unreachable
(``UNAVAILABLE``) are retried by gRPC itself, through the channel's service-config retry
policy, with exponential backoff; each attempt and the whole call are bounded by the client's
``timeout``.

Example::

    with SkillRouterClient("127.0.0.1:50051") as client:
        turn = client.route("extract the tables from this PDF", session_id="conv-1")
        print(turn.catalog_text)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypedDict, Unpack

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.access.delegation import PRINCIPAL_KEY, WITHIN_KEY
from router.common.tracing import TRACEPARENT, TRACEPARENT_KEY
from router.credentials import CallerAuth
from router.door.api import SERVICE_NAME, received
from router.door.channel import BearerToken, open_channel
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

MAX_REPLY_BYTES = 256 * 1024 * 1024  # the largest reply the client accepts (ListSkills with files)
_FORMATS = {"xml": pb.CATALOG_FORMAT_XML, "json": pb.CATALOG_FORMAT_JSON,
            "markdown": pb.CATALOG_FORMAT_MARKDOWN,
            "anthropic": pb.CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES,
            "openai": pb.CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT}
_OUTCOMES = {"success": pb.FEEDBACK_OUTCOME_SUCCESS, "failure": pb.FEEDBACK_OUTCOME_FAILURE,
             "wrong_skill": pb.FEEDBACK_OUTCOME_WRONG_SKILL,
             "not_used": pb.FEEDBACK_OUTCOME_NOT_USED}


def service_config(retries: int) -> str:
    """The gRPC service config: retry every SkillRouter and Health call on UNAVAILABLE, and
    balance calls across every address the target resolves to."""
    policy = {
        "maxAttempts": max(2, min(retries + 1, 5)),  # gRPC caps attempts at 5
        "initialBackoff": "0.2s",
        "maxBackoff": "2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"],
    }
    names = [{"service": SERVICE_NAME}, {"service": "grpc.health.v1.Health"}]
    # round_robin: a dns:/// target naming several replicas is balanced per call.
    return json.dumps({"loadBalancingConfig": [{"round_robin": {}}],
                       "methodConfig": [{"name": names, "retryPolicy": policy}]})


class SkillRouterClient:
    """Calls a SkillRouter server at ``target`` (``host:port``).

    ``timeout`` is the deadline of each call in seconds, retries included. ``retries`` is how
    many times a call that met ``UNAVAILABLE`` is tried again (0 = never; gRPC allows at most 4).
    Use it as a context manager, or call ``close()``.

    For a server with authenticated callers: ``ca_file`` (the CA of the server's certificate;
    ``tls=True`` alone trusts the system CAs), ``cert_file`` and ``key_file`` (mutual TLS) and
    ``token`` (sent as ``authorization: Bearer <token>``); see ``router.credentials``.
    ``acting_for(NAME)`` (for a caller with the ``delegate`` role): a client on the same channel
    whose calls are served as that principal (``x-skill-router-principal``).
    """

    def __init__(self, target: str, timeout: float = 2.0, retries: int = 3, *,
                 ca_file: str = "", cert_file: str = "", key_file: str = "", token: str = "",
                 tls: bool = False) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        options = [("grpc.enable_retries", 1 if retries else 0),
                   ("grpc.service_config", service_config(retries)),
                   # Reconnect soon after a refused connection, so a retry can succeed
                   # against a server that is just starting.
                   ("grpc.initial_reconnect_backoff_ms", 100),
                   ("grpc.min_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", 1000),
                   # ListSkills with include_files carries every skill's files and digests:
                   # tens of MB at 10k skills, past gRPC's 4 MB default.
                   ("grpc.max_receive_message_length", MAX_REPLY_BYTES)]
        self.target = target
        self.timeout = timeout
        auth = CallerAuth(ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                          token=token, tls=tls)
        self._channel = open_channel(target, auth, options)
        self._stub = _stub(self._channel, "")
        self._health = health_pb2_grpc.HealthStub(self._channel)

    def acting_for(self, principal_name: str, within: str = "") -> SkillRouterClient:
        """A client on this one's channel whose calls are served as ``principal_name`` ("" = as
        this client's own token), seeing no more than principal ``within``'s view when given.
        Close only the original."""
        view = copy.copy(self)
        view._stub = _stub(self._channel, principal_name, within)
        return view

    def __enter__(self) -> SkillRouterClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel; the client cannot be used afterwards."""
        self._channel.close()

    def _call(self, rpc: Callable[..., Any], request: Message,
              timeout: float | None = None) -> Any:
        """``rpc(request)`` within ``timeout`` (default: the client's); a failed status raises
        its ``router.errors`` class."""
        traceparent = TRACEPARENT.get()  # a door's caller's trace, continued by the service
        metadata = ((TRACEPARENT_KEY, traceparent),) if traceparent else None
        try:
            return rpc(request, timeout=timeout or self.timeout, metadata=metadata)
        except grpc.RpcError as exc:
            raise received(exc) from exc

    def route(self, message: str, history: Sequence[str] = (), session_id: str = "",
              top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
              max_catalog_chars: int = 0, project_skills: Sequence[pb.InlineSkill] = (),
              **context: Unpack[Context]) -> pb.RouteResponse:
        """The narrowed catalog for one turn. ``format`` is "xml", "json", "markdown", or a
        tool search answer: "anthropic" or "openai" (docs/gateway.md, "Tool search");
        ``context``: what the model still sees (``Context``)."""
        response: pb.RouteResponse = self._call(self._stub.Route, route_request(
            message, history, session_id, top_k, format, active_skills, max_catalog_chars,
            project_skills, **context))
        return response

    def explain(self, message: str, history: Sequence[str] = (), session_id: str = "",
                top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
                max_catalog_chars: int = 0, project_skills: Sequence[pb.InlineSkill] = (),
                **context: Unpack[Context]) -> pb.ExplainResponse:
        """Route's answer plus every candidate's scores and why it was kept or dropped, and
        what the session has been shown (Explain changes nothing of it)."""
        response: pb.ExplainResponse = self._call(self._stub.Explain, route_request(
            message, history, session_id, top_k, format, active_skills, max_catalog_chars,
            project_skills, **context))
        return response

    def activate(self, name: str, session_id: str = "", active_skills: Sequence[str] = (),
                 include_frontmatter: bool = False, route_id: str = "") -> pb.ActivateResponse:
        """A skill's instructions (empty ``content`` with ``already_active`` the second time).
        ``route_id``: the one the Route that showed the skill returned (lets the router learn
        from the activation, whichever replica answers)."""
        request = pb.ActivateRequest(name=name, session_id=session_id,
                                     active_skills=list(active_skills),
                                     include_frontmatter=include_frontmatter, route_id=route_id)
        response: pb.ActivateResponse = self._call(self._stub.Activate, request)
        return response

    def feedback(self, skill: str, outcome: str, session_id: str = "",
                 route_id: str = "") -> pb.FeedbackResponse:
        """Report how ``skill`` worked out: ``outcome`` is "success", "failure", "wrong_skill"
        (a negative example) or "not_used". ``recorded`` is False when the server keeps no
        feedback."""
        if outcome not in _OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}; use one of {', '.join(_OUTCOMES)}")
        request = pb.FeedbackRequest(skill=skill, outcome=_OUTCOMES[outcome],
                                     session_id=session_id, route_id=route_id)
        response: pb.FeedbackResponse = self._call(self._stub.Feedback, request)
        return response

    def read_resource(self, name: str, path: str) -> pb.ReadResourceResponse:
        """One bundled file of skill ``name``, ``path`` relative to its directory."""
        request = pb.ReadResourceRequest(name=name, path=path)
        response: pb.ReadResourceResponse = self._call(self._stub.ReadResource, request)
        return response

    def list_resources(self, name: str) -> pb.ListResourcesResponse:
        """The bundled files of skill ``name``, as Activate lists them, without activating it."""
        response: pb.ListResourcesResponse = self._call(self._stub.ListResources,
                                                        pb.ListResourcesRequest(name=name))
        return response

    def validate_arguments(self, name: str,
                           arguments_json: str) -> pb.ValidateArgumentsResponse:
        """Check a callable skill's arguments (JSON text); defaults filled when valid."""
        request = pb.ValidateArgumentsRequest(name=name, arguments_json=arguments_json)
        response: pb.ValidateArgumentsResponse = self._call(self._stub.ValidateArguments,
                                                            request)
        return response

    def list_skills(self, include_files: bool = False,
                    all_catalogs: bool = False) -> pb.ListSkillsResponse:
        """The caller's skills and flags, its catalogs' discovery diagnostics;
        ``include_files``: their files and frontmatter; ``all_catalogs`` (role ops or admin):
        every variant of the caller's catalogs, shadowed ones too."""
        response: pb.ListSkillsResponse = self._call(self._stub.ListSkills, pb.ListSkillsRequest(
            include_files=include_files, all_catalogs=all_catalogs))
        return response

    def index_info(self) -> pb.GetIndexInfoResponse:
        """The index being served."""
        response: pb.GetIndexInfoResponse = self._call(self._stub.GetIndexInfo,
                                                       pb.GetIndexInfoRequest())
        return response

    def reindex(self, full: bool = False, timeout: float | None = None) -> pb.ReindexResponse:
        """Ask the server to rebuild its index and swap it in. A rebuild takes longer than a
        turn: ``timeout`` (default: the client's) bounds it."""
        response: pb.ReindexResponse = self._call(self._stub.Reindex,
                                                  pb.ReindexRequest(full=full), timeout)
        return response

    def skill_stats(self, min_routed: int = 0) -> pb.SkillStatsResponse:
        """Traffic counters per skill (routed, shown, activated, outcomes, hit rate) and the skills
        routed at least ``min_routed`` times (0: the server's default, 10) and never activated."""
        response: pb.SkillStatsResponse = self._call(
            self._stub.SkillStats, pb.SkillStatsRequest(min_routed=min_routed))
        return response

    def list_examples(self, skill: str = "", older_than_days: float | None = None,
                      limit: int = 0) -> pb.ListExamplesResponse:
        """The examples recorded from traffic (``skill``'s only when given; only those older
        than ``older_than_days`` when given), at most ``limit`` (0: the server's default)."""
        request = pb.ListExamplesRequest(skill=skill, limit=limit)
        if older_than_days is not None:
            request.older_than_days = older_than_days
        response: pb.ListExamplesResponse = self._call(self._stub.ListExamples, request)
        return response

    def purge_examples(self, skill: str = "",
                       older_than_days: float | None = None) -> pb.PurgeExamplesResponse:
        """Forget ``skill``'s recorded examples (every skill's when empty), or only those
        older than ``older_than_days``; at least one must be given (INVALID_ARGUMENT)."""
        request = pb.PurgeExamplesRequest(skill=skill)
        if older_than_days is not None:
            request.older_than_days = older_than_days
        response: pb.PurgeExamplesResponse = self._call(self._stub.PurgeExamples, request)
        return response

    def approve_skill(self, skill: str, digest: str, note: str = "",
                      catalog: str = "") -> pb.ApproveSkillResponse:
        """Approve the quarantined ``skill`` (of ``catalog``, default ``default``) at ``digest``,
        the one ListSkills shows (``admission_digest``); the next Reindex admits it. Role admin;
        FailedPrecondition when the skill changed since (another digest) or is not quarantined."""
        response: pb.ApproveSkillResponse = self._call(self._stub.ApproveSkill,
                                                       pb.ApproveSkillRequest(
                                                           skill=skill, catalog=catalog,
                                                           digest=digest, note=note))
        return response

    def revoke_approval(self, skill: str, catalog: str = "") -> pb.RevokeApprovalResponse:
        """Drop ``skill``'s approval (``revoked`` false when it had none); the next Reindex
        judges it again. Role admin."""
        response: pb.RevokeApprovalResponse = self._call(
            self._stub.RevokeApproval, pb.RevokeApprovalRequest(skill=skill, catalog=catalog))
        return response

    def health(self) -> bool:
        """True when the server reports SERVING for the SkillRouter service."""
        request = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
        response = self._call(self._health.Check, request)
        return bool(response.status == health_pb2.HealthCheckResponse.SERVING)


def route_request(message: str, history: Sequence[str] = (), session_id: str = "",
                  top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
                  max_catalog_chars: int = 0, project_skills: Sequence[pb.InlineSkill] = (),
                  **context: Unpack[Context]) -> pb.RouteRequest:
    """A RouteRequest from plain values; an unknown ``format`` is a ValueError."""
    if format not in _FORMATS:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(_FORMATS)}")
    return pb.RouteRequest(message=message, history=list(history), session_id=session_id,
                           top_k=top_k, format=_FORMATS[format], active_skills=list(active_skills),
                           max_catalog_chars=max_catalog_chars, project_skills=project_skills,
                           revealed_skills=list(context.get("revealed_skills", ())),
                           context_reset=context.get("context_reset", False))


class Context(TypedDict, total=False):
    """What a gateway says of the model's context on a Route (docs/gateway.md, "Keeping the
    prompt cache")."""

    revealed_skills: Sequence[str]  # skills the model has been shown, by the gateway's record
    context_reset: bool  # the conversation was compacted: reveal what this turn needs again


def _stub(channel: grpc.Channel, principal_name: str,
          within: str = "") -> pb_grpc.SkillRouterStub:
    for key, name in ((PRINCIPAL_KEY, principal_name), (WITHIN_KEY, within)):
        if name:
            channel = grpc.intercept_channel(channel, BearerToken("", (key, name)))
    return pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]
