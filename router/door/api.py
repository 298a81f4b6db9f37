"""The gRPC API as every door and ``router.client`` name it: the service's full name and the one
table between ``router.errors`` classes and status codes, read one way by the servicer (an
error raised becomes its code) and the other by the client (a code answered becomes its
error)."""

from __future__ import annotations

import grpc

from router.access.rates import RETRY_AFTER_KEY
from router.errors import (
    DeadlineExceeded,
    Internal,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    RateLimited,
    RouterError,
    ServiceError,
    StaleFile,
    TooLarge,
    Unauthenticated,
    Unavailable,
)
from router.v1 import router_pb2 as pb

# The service's full name, read from the generated descriptor (router.v1.SkillRouter).
SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["SkillRouter"].full_name

# First match wins for a raised error, so a subclass (IndexUnavailable, IndexCorrupt: an
# Unavailable) follows its parent unless listed earlier; each code names one class.
STATUS_BY_ERROR: tuple[tuple[type[RouterError], grpc.StatusCode], ...] = (
    (InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (TooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (StaleFile, grpc.StatusCode.FAILED_PRECONDITION),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (DeadlineExceeded, grpc.StatusCode.DEADLINE_EXCEEDED),
    (Internal, grpc.StatusCode.INTERNAL),
)
_ERROR_BY_STATUS: dict[grpc.StatusCode, type[RouterError]] = {
    code: error for error, code in STATUS_BY_ERROR}


def status_for(exc: Exception) -> tuple[grpc.StatusCode, str]:
    """The status code and caller-facing message for an exception a door's call raised;
    INTERNAL, with a message that hides the exception's own, for any other exception."""
    for error_type, code in STATUS_BY_ERROR:
        if isinstance(exc, error_type) and code is not grpc.StatusCode.INTERNAL:
            return code, str(exc) or error_type.__name__
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
