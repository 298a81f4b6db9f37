"""Server interceptor: request ids, deadlines, one log line per call, and a call observer.

Every call gets a request id, taken from the ``x-request-id`` metadata when the caller sent one
and generated otherwise; it is echoed in the trailing metadata and written on the call's log
line (``request_id``, ``method``, ``code``, ``ms`` as structured fields); an answered unary
call's trailing metadata also carries ``server-timing: handler;dur=<ms>``, the server's own
time for it, so a caller can tell it from the wire's. A call whose deadline
has already passed when it reaches the server is answered DEADLINE_EXCEEDED without running.
A unary request whose bytes do not parse (e.g. a string field holding invalid UTF-8, which
proto3 forbids) is answered INVALID_ARGUMENT with the parser's reason, and logged and counted
like any other call, instead of failing inside gRPC before any handler runs.
While a call runs, ``CALL_FACTS`` holds what the access gate learns of it (its caller, the
principal served for it, whether its rate refused it) and its trace id; the observer reads them
in ``CallRecord.facts`` (the audit log, the rate-limit counter).

What does not change from call to call is done once: the handler of a method, with every
interceptor's wrapping, is built on its first call and kept (``router.service.handlers``), and
the call's metadata is read in one pass. A trace id is only taken from a ``traceparent`` the
caller sent (or set by the server span while tracing is on); the audit line makes up its own
when there is none, and nothing is formatted for a call log line whose level is off.
"""

from __future__ import annotations

import contextvars
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from router.common.tracing import traceparent_of
from router.door.strings import nul_field, nul_message
from router.service.handlers import HandlerCache
from router.skills.limits import REQUEST_ID_CHARS

log = logging.getLogger(__name__)

REQUEST_ID_KEY = "x-request-id"
TRACEPARENT_KEY = "traceparent"
SERVER_TIMING_KEY = "server-timing"  # W3C Server-Timing: the server's own time for a call


@dataclass
class CallFacts:
    """What is learnt of a call as it runs (filled by the access gate and tracing)."""

    principal: str | None = None  # the authenticated caller's name; None: not authenticated
    acting_for: str | None = None  # the principal a delegate is served as; None: itself
    served: Any = None  # the Principal the call is served as (router.access.model)
    limited: str = ""  # the principal whose rate refused it; "" = none
    trace_id: str = ""  # 32 lowercase hex digits: the caller's traceparent, else its own
    door: str = "grpc"  # the wire the call came in on: grpc, or connect (the JSON door)


CALL_FACTS: contextvars.ContextVar[CallFacts | None] = contextvars.ContextVar(
    "call_facts", default=None)


@dataclass(frozen=True)
class CallRecord:
    """One finished call, as the observer sees it (``response`` is None unless it was OK)."""

    method: str
    code: grpc.StatusCode
    seconds: float
    request_id: str
    request: Any
    response: Any
    facts: CallFacts = field(default_factory=CallFacts)


# Called once per finished call, e.g. to feed metrics. Must not raise (errors are logged).
CallObserver = Callable[[CallRecord], None]


def observing(*observers: CallObserver | None) -> CallObserver | None:
    """One observer calling each of ``observers`` in turn (None: there is none)."""
    present = [o for o in observers if o is not None]
    if len(present) < 2:
        return present[0] if present else None

    def observe(record: CallRecord) -> None:
        for each in present:
            try:
                each(record)
            except Exception:  # one failing observer does not keep the call from the others
                log.exception("call observer failed for %s", record.method)

    return observe


# Infrastructure services polled often by load balancers and tooling: logged at DEBUG only.
_QUIET_PREFIXES = ("/grpc.health.", "/grpc.reflection.")


def _status(context: grpc.ServicerContext, failed: bool) -> grpc.StatusCode:
    """The status a call ended with (``None`` from the context means OK unless it raised)."""
    code = context.code()  # type: ignore[attr-defined]
    if isinstance(code, grpc.StatusCode):
        return code
    return grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK


def request_id_of(context: grpc.ServicerContext) -> str:
    """The caller's ``x-request-id`` (trimmed to a sane length), else a fresh one."""
    return _ids_of(context)[0]


def trace_id_of(context: grpc.ServicerContext) -> str:
    """The trace id of the caller's W3C ``traceparent``, else a fresh one."""
    return _ids_of(context)[1] or uuid.uuid4().hex


def _ids_of(context: grpc.ServicerContext) -> tuple[str, str]:
    """The request id (the caller's, else a fresh one) and the trace id of the caller's
    ``traceparent`` ("" when it sent none that W3C's rules accept), in one pass."""
    request_id = trace_id = ""
    for key, value in context.invocation_metadata() or ():
        if not isinstance(value, str):
            continue
        if key == REQUEST_ID_KEY and not request_id and value.strip():
            request_id = value.strip()[:REQUEST_ID_CHARS]
        elif key == TRACEPARENT_KEY and not trace_id:
            found = traceparent_of(value)  # W3C's rules: version ff, zero ids refused
            trace_id = found.split("-")[1] if found else ""
    return request_id or uuid.uuid4().hex, trace_id


def server_timing(seconds: float) -> str:
    """The ``server-timing`` value of an answered call: ``handler;dur=<ms>``, the server's
    own time from taking the call to its answer (W3C Server-Timing; not the wire's)."""
    return f"handler;dur={seconds * 1000.0:.3f}"


def _begin(context: grpc.ServicerContext, request_id: str) -> None:
    """Tag the call with its request id; refuse it if its deadline has already passed."""
    context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                      "the call's deadline passed before the server could start it")


UTF8_HINT = "every string field must be valid UTF-8"


@dataclass(frozen=True)
class Unparsable:
    """Stands in for a request whose bytes did not parse; the handler is not run. ``hint``
    says what the caller can fix."""

    reason: str
    hint: str = UTF8_HINT


def door_of(context: grpc.ServicerContext) -> str:
    """The wire a call came in on: ``grpc``, or the ``door`` its context names (the JSON
    door's calls run this same chain with a context of its own)."""
    return str(getattr(context, "door", "grpc"))


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # protobuf's DecodeError, or anything a parser raises
            return Unparsable(str(exc) or type(exc).__name__)

    return parse


def _refuse_unparsable(request: Any, context: grpc.ServicerContext) -> None:
    if isinstance(request, Unparsable):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      f"the request could not be parsed ({request.reason}); {request.hint}")
    where = nul_field(request) if isinstance(request, Message) else ""
    if where:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, nul_message(where))


Unary = Callable[[Any, grpc.ServicerContext], Any]
Streaming = Callable[[Any, grpc.ServicerContext], Iterator[Any]]


class LoggingInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Times every call, logs it when it finishes, and hands the facts to ``observer``."""

    def __init__(self, observer: CallObserver | None = None) -> None:
        self._observer = observer
        self._handlers = HandlerCache()

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],  # type: ignore[type-arg]
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:  # type: ignore[type-arg]
        """The method's handler, wrapped by this and every inner interceptor on its first call
        and kept for the next ones (none of them reads anything of a call's own here)."""
        handler: grpc.RpcMethodHandler | None = self._handlers.get(  # type: ignore[type-arg]
            handler_call_details, lambda: self._wrapped(continuation(handler_call_details),
                                                        handler_call_details.method))
        return handler

    def _wrapped(self, handler: Any, method: str) -> Any:
        if handler is None:
            return None
        kwargs: dict[str, Any] = {"request_deserializer": handler.request_deserializer,
                                  "response_serializer": handler.response_serializer}
        unary_kwargs = {**kwargs, "request_deserializer": _lenient(handler.request_deserializer)}
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary), **unary_kwargs)
        if handler.unary_stream is not None:
            if getattr(handler.unary_stream, "experimental_non_blocking", False):
                return handler  # health Watch: wrapping would pin a worker thread per watcher
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream), **unary_kwargs)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(method, handler.stream_unary), **kwargs)
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._wrap_stream(method, handler.stream_stream), **kwargs)
        return handler

    def _wrap_unary(self, method: str, behaviour: Unary) -> Unary:
        def timed(request: Any, context: grpc.ServicerContext) -> Any:
            start = time.perf_counter()
            (request_id, trace_id), response, failed = _ids_of(context), None, True
            facts = CallFacts(trace_id=trace_id, door=door_of(context))
            noted = CALL_FACTS.set(facts)
            try:
                _begin(context, request_id)
                _refuse_unparsable(request, context)
                response = behaviour(request, context)
                failed = False
                context.set_trailing_metadata((
                    *(context.trailing_metadata() or ()),
                    (SERVER_TIMING_KEY, server_timing(time.perf_counter() - start))))
                return response
            finally:
                CALL_FACTS.reset(noted)
                self._finish(CallRecord(method, _status(context, failed),
                                        time.perf_counter() - start, request_id, request,
                                        None if failed else response, facts))

        return timed

    def _wrap_stream(self, method: str, behaviour: Streaming) -> Streaming:
        def timed(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            start = time.perf_counter()
            request_id, failed = _ids_of(context)[0], True
            try:
                _begin(context, request_id)
                _refuse_unparsable(request, context)
                yield from behaviour(request, context)
                failed = False
            finally:
                self._finish(CallRecord(method, _status(context, failed),
                                        time.perf_counter() - start, request_id, request, None))

        return timed

    def _finish(self, record: CallRecord) -> None:
        level = logging.DEBUG if record.method.startswith(_QUIET_PREFIXES) else logging.INFO
        if log.isEnabledFor(level):
            ms = round(record.seconds * 1000.0, 3)
            log.log(level, "%s %s %.2fms", record.method, record.code.name, ms,
                    extra={"request_id": record.request_id, "method": record.method,
                           "code": record.code.name, "ms": ms})
        if self._observer is not None:
            try:
                self._observer(record)
            except Exception:  # an observer must never fail the call
                log.exception("call observer failed for %s", record.method)
