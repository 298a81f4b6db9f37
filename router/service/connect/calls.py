"""One JSON-door call through the gRPC door's handler chain: the same interceptors (request id,
deadline, parse and NUL checks, the log line and the observer that feeds metrics and audit,
tracing, the access gate and rates) around the same method handlers, in the same order as the
gRPC server applies them. Only the request's decoding and the answer's encoding differ."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import Message

from router.door.api import connect_http
from router.service.connect import protocol as wire
from router.service.connect.context import Aborted, HttpCallContext
from router.service.interceptors import Unparsable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, headers, body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class _Details:
    """A ``grpc.HandlerCallDetails`` for the interceptors."""

    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


class Registry:
    """Collects the unary method handlers a generated ``add_*_to_server`` registers."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}  # type: ignore[type-arg]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass  # the same methods come by name below

    def add_registered_method_handlers(self, service: str,
                                       handlers: Mapping[str, Any]) -> None:
        for name, handler in handlers.items():
            if handler.unary_unary is not None:
                self.handlers[f"/{service}/{name}"] = handler


def input_types(files: Sequence[FileDescriptor]) -> dict[str, type[Message]]:
    """``/<service>/<Method>`` -> the request message class, for every method of ``files``."""
    found: dict[str, type[Message]] = {}
    for file in files:
        for service in file.services_by_name.values():
            for method in service.methods:
                found[f"/{service.full_name}/{method.name}"] = message_factory.GetMessageClass(
                    method.input_type)
    return found


class CallChain:
    """The unary methods of ``registry`` behind ``interceptors`` (outermost first)."""

    def __init__(self, registry: Registry, interceptors: Sequence[Any],
                 files: Sequence[FileDescriptor], example: str) -> None:
        types = input_types(files)
        self._handlers = {path: h for path, h in registry.handlers.items() if path in types}
        self._types = types
        self._interceptors = tuple(interceptors)
        self.example = example  # a method's path, for the message naming none

    def serves(self, path: str) -> bool:
        return path in self._handlers

    def _handler(self, details: _Details) -> Any:
        """The method's handler as the interceptors wrap it, the first outermost (as
        ``grpc.server`` builds it for each call)."""
        def at(index: int) -> Callable[[_Details], Any]:
            if index == len(self._interceptors):
                return lambda d: self._handlers[d.method]
            return lambda d: self._interceptors[index].intercept_service(at(index + 1), d)

        return at(0)(details)

    def run(self, path: str, codec: str, body: bytes, context: HttpCallContext) -> Answer:
        """The answer to one call (never raises: an unexpected failure is ``internal``)."""
        kind = self._types[path]
        try:
            request: Any = wire.decode(codec, body, kind)
        except ValueError as exc:
            hint = wire.json_hint(kind) if codec == wire.JSON else "send the binary " \
                f"protobuf encoding of {kind.DESCRIPTOR.full_name}"
            request = Unparsable(str(exc), hint)
        try:
            handler = self._handler(_Details(path, context.invocation_metadata()))
            response = handler.unary_unary(request, context)
        except Aborted:
            response = None
        except Exception:  # the chain guards its calls; this is a bug, said as internal
            log.exception("%s failed unexpectedly at the JSON door", path)
            context.set_code(grpc.StatusCode.INTERNAL)
            context.set_details("internal error; see the server log")
            response = None
        return _answer(codec, response, context)


def _answer(codec: str, response: Message | None, context: HttpCallContext) -> Answer:
    trailers = tuple((wire.TRAILER_PREFIX + k, v) for k, v in context.trailing_metadata())
    code = context.code()
    if response is not None and code in (None, grpc.StatusCode.OK):
        return Answer(200, (("content-type", codec), *trailers), wire.encode(codec, response))
    code = code if code not in (None, grpc.StatusCode.OK) else grpc.StatusCode.UNKNOWN
    return Answer(connect_http(code), (("content-type", wire.JSON), *trailers),
                  wire.error_body(code, context.details() or code.name.lower()))
