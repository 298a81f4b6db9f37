"""Error hierarchy. Each class below stands for one gRPC status code, by one table both ways
(``router.door.api``): the servicer answers a raised error with its code, and
``router.client`` raises the class of the code a server answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the errors are raised in-process too, without gRPC loaded
    import grpc


class RouterError(Exception):
    """Base class for every error skill-router raises on purpose.

    One that ``router.client`` raised for a server's answer carries its status: ``code`` (a
    ``grpc.StatusCode``) and ``details`` (the server's message); None and "" otherwise.
    """

    code: grpc.StatusCode | None = None
    details: str = ""


class InvalidRequest(RouterError):
    """The caller sent something we cannot act on (maps to INVALID_ARGUMENT)."""


class NotFound(RouterError):
    """A named skill or resource does not exist (maps to NOT_FOUND)."""


class TooLarge(RouterError):
    """A request or resource exceeds a configured cap (maps to RESOURCE_EXHAUSTED)."""


class RateLimited(TooLarge):
    """The caller's principal is over its rate (RESOURCE_EXHAUSTED with the trailing metadata
    ``retry-after-ms``, which ``retry_after_ms`` holds: when a call may succeed again)."""

    retry_after_ms: int = 0


class PermissionDenied(RouterError):
    """The skill exists but may not be used this way (maps to PERMISSION_DENIED)."""


class FailedPrecondition(RouterError):
    """The request is sound but the server's state does not allow it now: the skill changed
    since the caller looked, the server keeps no feedback store (maps to FAILED_PRECONDITION)."""


class StaleFile(FailedPrecondition):
    """A skill file no longer matches the digest recorded when the index was built, or was not
    recorded at all; it is not served until a Reindex (FAILED_PRECONDITION)."""


class Unauthenticated(RouterError):
    """The caller presented no credentials the server accepts (maps to UNAUTHENTICATED)."""


class ServiceError(RouterError):
    """The service could not answer, through no fault of the request; a client raises it for a
    status no subclass names (UNKNOWN, UNIMPLEMENTED, CANCELLED, ...)."""


class Unavailable(ServiceError):
    """The service cannot answer now: unreachable, starting, or without an index (maps to
    UNAVAILABLE)."""


class DeadlineExceeded(ServiceError):
    """The call did not finish within its deadline (maps to DEADLINE_EXCEEDED)."""


class Internal(ServiceError):
    """The server failed unexpectedly; its log says why (maps to INTERNAL)."""


class IndexUnavailable(Unavailable):
    """No usable index is loaded (maps to UNAVAILABLE)."""


class IndexCorrupt(IndexUnavailable):
    """An index directory failed its integrity checks and was not loaded."""


class SkillParseError(RouterError):
    """A SKILL.md or manifest.json could not be turned into a Skill.

    ``line`` is 1-based when known.
    """

    def __init__(self, message: str, *, path: str = "", line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = path + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
