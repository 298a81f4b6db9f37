"""The API as every door and ``router.client`` name it: the service's full name and the one
error table, from ``router.errors`` classes to the status each door answers with: a gRPC status
code (read one way by the servicer, an error raised becomes its code, and the other by the
client, a code answered becomes its error), an HTTP status (the console), a JSON-RPC error
code (the MCP door) and a Connect code with its HTTP status (the JSON door: the gRPC code's
name in lower case, answered with the status the Connect protocol gives it). No door maps an
error to a status of its own."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

import grpc

from router.access.rates import RETRY_AFTER_KEY
from router.errors import (
    DeadlineExceeded,
    FailedPrecondition,
    IndexUnavailable,
    Internal,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    RouterError,
    ServiceError,
    TooLarge,
    Unauthenticated,
    Unavailable,
)
from router.v1 import router_pb2 as pb

# The service's full name, read from the generated descriptor (router.v1.SkillRouter).
SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["SkillRouter"].full_name

# JSON-RPC 2.0's error codes (the MCP SDK's ``mcp_types`` names the same numbers).
INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR = -32600, -32602, -32603

# The HTTP status the Connect protocol answers each code with (connectrpc.com/docs/protocol,
# "Error Codes"); the code itself is the gRPC code's name in lower case.
CONNECT_HTTP: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.CANCELLED: 499, grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404, grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400, grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400, grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500, grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500, grpc.StatusCode.UNAUTHENTICATED: 401}


def connect_code(code: grpc.StatusCode) -> str:
    """The Connect protocol's name for a gRPC status code (``invalid_argument``; ``canceled``
    with one l, as Connect spells it)."""
    return "canceled" if code is grpc.StatusCode.CANCELLED else code.name.lower()


def connect_http(code: grpc.StatusCode) -> int:
    """The HTTP status a Connect answer with ``code`` carries (500 for one it does not name)."""
    return CONNECT_HTTP.get(code, 500)


@dataclass(frozen=True)
class Status:
    """What a door answers for one error: ``grpc`` (the service), ``http`` (the console, for
    the router's answer it shows: 409 when the state changed under the page, 502 when the
    router failed or refused for a reason the page cannot name), ``mcp`` (the MCP door,
    for a call that names a skill or file) and ``connect`` with ``connect_http`` (the JSON
    door: the Connect code and its HTTP status, read off ``grpc``, so the two doors of the
    service never disagree)."""

    grpc: grpc.StatusCode
    http: int
    mcp: int

    @property
    def connect(self) -> str:
        return connect_code(self.grpc)

    @property
    def connect_http(self) -> int:
        return connect_http(self.grpc)


# First match wins for a raised error, so a subclass (RateLimited: a TooLarge; IndexUnavailable,
# IndexCorrupt: an Unavailable; StaleFile: a FailedPrecondition) follows its parent unless
# listed earlier. A code answered
# becomes the last class listed with it (TooLarge, Unavailable): each code names one class.
ERROR_TABLE: tuple[tuple[type[RouterError], Status], ...] = (
    (InvalidRequest, Status(grpc.StatusCode.INVALID_ARGUMENT, 400, INVALID_PARAMS)),
    (NotFound, Status(grpc.StatusCode.NOT_FOUND, 404, INVALID_PARAMS)),
    (RateLimited, Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, INVALID_PARAMS)),
    (TooLarge, Status(grpc.StatusCode.RESOURCE_EXHAUSTED, 413, INVALID_PARAMS)),
    (PermissionDenied, Status(grpc.StatusCode.PERMISSION_DENIED, 502, INVALID_PARAMS)),
    (FailedPrecondition, Status(grpc.StatusCode.FAILED_PRECONDITION, 409, INVALID_PARAMS)),
    (IndexUnavailable, Status(grpc.StatusCode.UNAVAILABLE, 502, INTERNAL_ERROR)),
    (Unavailable, Status(grpc.StatusCode.UNAVAILABLE, 502, INVALID_PARAMS)),
    (Unauthenticated, Status(grpc.StatusCode.UNAUTHENTICATED, 502, INVALID_PARAMS)),
    (DeadlineExceeded, Status(grpc.StatusCode.DEADLINE_EXCEEDED, 502, INVALID_PARAMS)),
    (Internal, Status(grpc.StatusCode.INTERNAL, 502, INVALID_PARAMS)),
)
OTHER = Status(grpc.StatusCode.INTERNAL, 502, INVALID_PARAMS)  # any other exception
_ERROR_BY_STATUS: dict[grpc.StatusCode, type[RouterError]] = {
    status.grpc: error for error, status in ERROR_TABLE}

# An HTTP answer as a gRPC status name (the console's audit lines): 2xx and 3xx are OK.
_CODE_BY_HTTP = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 409: "FAILED_PRECONDITION", 413: "RESOURCE_EXHAUSTED",
                 429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE"}


# A door's own refusal of its caller: a role it checked before any call (``Call.GATE``).
REFUSED = Status(grpc.StatusCode.PERMISSION_DENIED, 403, INVALID_REQUEST)


class Call(enum.Enum):
    """Where a door met an error: in a call that names a skill or file (the table's row), in a
    listing, which names nothing (for MCP the server's trouble: INTERNAL_ERROR), or at the
    door's own check of its caller's role, before any call (a ``PermissionDenied`` there is
    ``REFUSED``)."""

    NAMING = "naming"
    LISTING = "listing"
    GATE = "gate"


def status_of(exc: BaseException, call: Call = Call.NAMING) -> Status:
    """What a door answers for ``exc`` met at ``call`` (``OTHER`` for an exception the table
    does not name)."""
    if call is Call.GATE and isinstance(exc, PermissionDenied):
        return REFUSED
    found = next((status for error_type, status in ERROR_TABLE if isinstance(exc, error_type)),
                 OTHER)
    return replace(found, mcp=INTERNAL_ERROR) if call is Call.LISTING else found


def http_status(exc: BaseException, call: Call = Call.NAMING) -> int:
    """The HTTP status a door answers with for ``exc``."""
    return status_of(exc, call).http


def mcp_code(exc: BaseException, call: Call = Call.NAMING) -> int:
    """The JSON-RPC error code the MCP door answers with for ``exc``."""
    return status_of(exc, call).mcp


def code_name_of_http(status: int) -> str:
    """An HTTP answer's status as a gRPC status name: ``OK`` below 400, ``INTERNAL`` for a 5xx
    the table does not name, ``FAILED_PRECONDITION`` for such a 4xx."""
    if status < 400:
        return "OK"
    return _CODE_BY_HTTP.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")


def status_for(exc: Exception) -> tuple[grpc.StatusCode, str]:
    """The status code and caller-facing message for an exception a door's call raised;
    INTERNAL, with a message that hides the exception's own, for any other exception."""
    for error_type, status in ERROR_TABLE:
        if isinstance(exc, error_type) and status.grpc is not grpc.StatusCode.INTERNAL:
            return status.grpc, str(exc) or error_type.__name__
    return grpc.StatusCode.INTERNAL, f"internal error ({type(exc).__name__}); see the server log"


def error_for(code: grpc.StatusCode, details: str) -> RouterError:
    """The error for a server's answer ``code`` with ``details``: its class from the table
    (``ServiceError`` for a code it does not name), the status kept on it."""
    error = _ERROR_BY_STATUS.get(code, ServiceError)(details or code.name.lower())
    error.code, error.details = code, details
    return error


def received(exc: grpc.RpcError) -> RouterError:
    """The error for an ``RpcError`` a call raised (UNKNOWN when it carries no status); a
    RESOURCE_EXHAUSTED with ``retry-after-ms`` is ``RateLimited``, holding it."""
    if not isinstance(exc, grpc.Call):
        return error_for(grpc.StatusCode.UNKNOWN, str(exc))
    error = error_for(exc.code(), exc.details() or "")
    if exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED:
        wait = next((str(v) for k, v in exc.trailing_metadata() or () if k == RETRY_AFTER_KEY),
                    "")
        if wait.isdigit():
            limited = RateLimited(str(error))
            limited.code, limited.details = error.code, error.details
            limited.retry_after_ms = int(wait)
            return limited
    return error


def described(exc: RouterError) -> str:
    """``CODE: details`` for an error a client raised for a server's answer (its message for
    any other)."""
    return f"{exc.code.name}: {exc.details}" if exc.code is not None else str(exc)
