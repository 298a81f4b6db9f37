"""Server interceptors: one log line per call with its status code and duration."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

log = logging.getLogger(__name__)

# Called once per finished call with (full method name, status code, seconds).
CallObserver = Callable[[str, grpc.StatusCode, float], None]

# Infrastructure services polled often by load balancers and tooling: logged at DEBUG only.
_QUIET_PREFIXES = ("/grpc.health.", "/grpc.reflection.")


def _status(context: grpc.ServicerContext, failed: bool) -> grpc.StatusCode:
    """The status a call ended with (``None`` from the context means OK unless it raised)."""
    code = context.code()  # type: ignore[attr-defined]
    if isinstance(code, grpc.StatusCode):
        return code
    return grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK


class LoggingInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Times every call and logs ``method status duration_ms`` when it finishes.

    ``observer`` (optional) receives the same facts, e.g. to feed metrics.
    """

    def __init__(self, observer: CallObserver | None = None) -> None:
        self._observer = observer

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],  # type: ignore[type-arg]
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:  # type: ignore[type-arg]
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        kwargs: dict[str, Any] = {"request_deserializer": handler.request_deserializer,
                                  "response_serializer": handler.response_serializer}
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary), **kwargs)
        if handler.unary_stream is not None:
            if getattr(handler.unary_stream, "experimental_non_blocking", False):
                return handler  # health Watch: wrapping would pin a worker thread per watcher
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream), **kwargs)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(method, handler.stream_unary), **kwargs)
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._wrap_stream(method, handler.stream_stream), **kwargs)
        return handler

    def _wrap_unary(self, method: str, behaviour: Callable[[Any, grpc.ServicerContext], Any],
                    ) -> Callable[[Any, grpc.ServicerContext], Any]:
        def timed(request: Any, context: grpc.ServicerContext) -> Any:
            start = time.perf_counter()
            failed = True
            try:
                response = behaviour(request, context)
                failed = False
                return response
            finally:
                self._finish(method, _status(context, failed), time.perf_counter() - start)

        return timed

    def _wrap_stream(self, method: str,
                     behaviour: Callable[[Any, grpc.ServicerContext], Iterator[Any]],
                     ) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
        def timed(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            start = time.perf_counter()
            failed = True
            try:
                yield from behaviour(request, context)
                failed = False
            finally:
                self._finish(method, _status(context, failed), time.perf_counter() - start)

        return timed

    def _finish(self, method: str, code: grpc.StatusCode, seconds: float) -> None:
        level = logging.DEBUG if method.startswith(_QUIET_PREFIXES) else logging.INFO
        log.log(level, "%s %s %.2fms", method, code.name, seconds * 1000.0)
        if self._observer is not None:
            try:
                self._observer(method, code, seconds)
            except Exception:  # an observer must never fail the call
                log.exception("call observer failed for %s", method)
