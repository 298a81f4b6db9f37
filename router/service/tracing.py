"""Server spans for the gRPC port and the JSON door (``server.tracing: otlp``): every call but
health checks is a SERVER span named by its method that continues the caller's W3C
``traceparent`` (gRPC metadata or an HTTP header, read with OpenTelemetry's propagator), so a
Route's stage spans (``router.common.tracing``) sit under it in the caller's trace. The span
carries ``rpc.system`` (``grpc``; ``connect_rpc`` at the JSON door), ``rpc.service``,
``rpc.method``, ``rpc.grpc.status_code``, the principal
served (``skill_router.principal``) and an error status for any code but OK; its trace id is
the call's audit-log ``trace_id``. While tracing is off (no provider in use) calls pass
untouched."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from router.common import tracing
from router.service.auth import OPEN_PREFIXES
from router.service.interceptors import CALL_FACTS, door_of

Behaviour = Callable[[Any, grpc.ServicerContext], Any]
RPC_SYSTEMS = {"grpc": "grpc", "connect": "connect_rpc"}  # OpenTelemetry's rpc.system names


def _carrier(context: grpc.ServicerContext) -> dict[str, str]:
    return {key: value for key, value in context.invocation_metadata() or ()
            if isinstance(value, str)}


def _code(context: grpc.ServicerContext, failed: bool) -> grpc.StatusCode:
    code = context.code()  # type: ignore[attr-defined]
    if isinstance(code, grpc.StatusCode):
        return code
    return grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK


def traced(method: str, behaviour: Behaviour) -> Behaviour:
    """``behaviour`` run inside a server span for ``method`` (while tracing is on)."""
    from opentelemetry.propagate import extract
    from opentelemetry.trace import SpanKind, Status, StatusCode

    service, _, name = method.lstrip("/").rpartition("/")

    def run(request: Any, context: grpc.ServicerContext) -> Any:
        active = tracing.tracer()
        if active is None:
            return behaviour(request, context)
        with active.start_as_current_span(
                method, context=extract(_carrier(context)), kind=SpanKind.SERVER,
                attributes={"rpc.system": RPC_SYSTEMS.get(door_of(context), "grpc"),
                            "rpc.service": service, "rpc.method": name},
                record_exception=False, set_status_on_exception=False) as span:
            facts = CALL_FACTS.get()
            if facts is not None:
                facts.trace_id = format(span.get_span_context().trace_id, "032x")
            failed = True
            try:
                answer = behaviour(request, context)
                failed = False
                return answer
            finally:
                code = _code(context, failed)
                span.set_attribute("rpc.grpc.status_code", code.value[0])
                if facts is not None and facts.principal is not None:
                    span.set_attribute(tracing.PRINCIPAL, facts.acting_for or facts.principal)
                if code is not grpc.StatusCode.OK:
                    span.set_status(Status(StatusCode.ERROR, code.name))

    return run


class TracingInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Wraps each unary call (health checks aside) in its server span."""

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Any],
                          handler_call_details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith(OPEN_PREFIXES) or handler.unary_unary is None:
            return handler
        return grpc.unary_unary_rpc_method_handler(
            traced(method, handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer)
