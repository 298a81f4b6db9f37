"""A thin synchronous Python client for the SkillRouter gRPC service.

Every method returns the protobuf response message (``router.v1.router_pb2``) unchanged and
raises ``grpc.RpcError`` with the server's status on failure. Calls that find the server
unreachable (``UNAVAILABLE``) are retried by gRPC itself, through the channel's service-config
retry policy, with exponential backoff; each attempt and the whole call are bounded by the
client's ``timeout``.

Example::

    with SkillRouterClient("127.0.0.1:50051") as client:
        turn = client.route("extract the tables from this PDF", session_id="conv-1")
        print(turn.catalog_text)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import TracebackType

from grpc_health.v1 import health_pb2, health_pb2_grpc

from router.caller_auth import open_channel
from router.caller_options import CallerAuth
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc

SERVICE = "router.v1.SkillRouter"
_FORMATS = {"xml": pb.CATALOG_FORMAT_XML, "json": pb.CATALOG_FORMAT_JSON,
            "markdown": pb.CATALOG_FORMAT_MARKDOWN}


def service_config(retries: int) -> str:
    """The gRPC service config: retry every SkillRouter and Health call on UNAVAILABLE."""
    policy = {
        "maxAttempts": max(2, min(retries + 1, 5)),  # gRPC caps attempts at 5
        "initialBackoff": "0.2s",
        "maxBackoff": "2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"],
    }
    names = [{"service": SERVICE}, {"service": "grpc.health.v1.Health"}]
    return json.dumps({"methodConfig": [{"name": names, "retryPolicy": policy}]})


class SkillRouterClient:
    """Calls a SkillRouter server at ``target`` (``host:port``).

    ``timeout`` is the deadline of each call in seconds, retries included. ``retries`` is how
    many times a call that met ``UNAVAILABLE`` is tried again (0 = never; gRPC allows at most 4).
    Use it as a context manager, or call ``close()``.

    For a server with authenticated callers: ``ca_file`` (the CA of the server's certificate;
    ``tls=True`` alone trusts the system CAs), ``cert_file`` and ``key_file`` (mutual TLS) and
    ``token`` (sent as ``authorization: Bearer <token>``); see ``router.caller_auth``.
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
                   ("grpc.max_reconnect_backoff_ms", 1000)]
        self.target = target
        self.timeout = timeout
        auth = CallerAuth(ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                          token=token, tls=tls)
        self._channel = open_channel(target, auth, options)
        self._stub = pb_grpc.SkillRouterStub(self._channel)  # type: ignore[no-untyped-call]
        self._health = health_pb2_grpc.HealthStub(self._channel)

    def __enter__(self) -> SkillRouterClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel; the client cannot be used afterwards."""
        self._channel.close()

    def route(self, message: str, history: Sequence[str] = (), session_id: str = "",
              top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
              max_catalog_chars: int = 0) -> pb.RouteResponse:
        """The narrowed catalog for one turn. ``format`` is "xml", "json" or "markdown"."""
        request = route_request(message, history, session_id, top_k, format, active_skills,
                                max_catalog_chars)
        response: pb.RouteResponse = self._stub.Route(request, timeout=self.timeout)
        return response

    def explain(self, message: str, history: Sequence[str] = (), session_id: str = "",
                top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
                max_catalog_chars: int = 0) -> pb.ExplainResponse:
        """Route's answer plus every candidate's scores and why it was kept or dropped."""
        request = route_request(message, history, session_id, top_k, format, active_skills,
                                max_catalog_chars)
        response: pb.ExplainResponse = self._stub.Explain(request, timeout=self.timeout)
        return response

    def activate(self, name: str, session_id: str = "", active_skills: Sequence[str] = (),
                 include_frontmatter: bool = False) -> pb.ActivateResponse:
        """A skill's instructions (empty ``content`` with ``already_active`` the second time)."""
        request = pb.ActivateRequest(name=name, session_id=session_id,
                                     active_skills=list(active_skills),
                                     include_frontmatter=include_frontmatter)
        response: pb.ActivateResponse = self._stub.Activate(request, timeout=self.timeout)
        return response

    def read_resource(self, name: str, path: str) -> pb.ReadResourceResponse:
        """One bundled file of skill ``name``, ``path`` relative to its directory."""
        request = pb.ReadResourceRequest(name=name, path=path)
        response: pb.ReadResourceResponse = self._stub.ReadResource(request,
                                                                    timeout=self.timeout)
        return response

    def validate_arguments(self, name: str,
                           arguments_json: str) -> pb.ValidateArgumentsResponse:
        """Check a callable skill's arguments (JSON text); defaults filled when valid."""
        request = pb.ValidateArgumentsRequest(name=name, arguments_json=arguments_json)
        response: pb.ValidateArgumentsResponse = self._stub.ValidateArguments(
            request, timeout=self.timeout)
        return response

    def list_skills(self) -> pb.ListSkillsResponse:
        """Every indexed skill with its flags, plus discovery diagnostics."""
        response: pb.ListSkillsResponse = self._stub.ListSkills(pb.ListSkillsRequest(),
                                                                timeout=self.timeout)
        return response

    def index_info(self) -> pb.GetIndexInfoResponse:
        """The index being served."""
        response: pb.GetIndexInfoResponse = self._stub.GetIndexInfo(pb.GetIndexInfoRequest(),
                                                                    timeout=self.timeout)
        return response

    def health(self) -> bool:
        """True when the server reports SERVING for the SkillRouter service."""
        request = health_pb2.HealthCheckRequest(service=SERVICE)
        response = self._health.Check(request, timeout=self.timeout)
        return bool(response.status == health_pb2.HealthCheckResponse.SERVING)


def route_request(message: str, history: Sequence[str] = (), session_id: str = "",
                  top_k: int = 0, format: str = "xml", active_skills: Sequence[str] = (),
                  max_catalog_chars: int = 0) -> pb.RouteRequest:
    """A RouteRequest from plain values; an unknown ``format`` is a ValueError."""
    if format not in _FORMATS:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(_FORMATS)}")
    return pb.RouteRequest(message=message, history=list(history), session_id=session_id,
                           top_k=top_k, format=_FORMATS[format],
                           active_skills=list(active_skills),
                           max_catalog_chars=max_catalog_chars)
