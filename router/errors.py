"""Error hierarchy. The gRPC servicer maps each class to one status code in one table."""

from __future__ import annotations


class RouterError(Exception):
    """Base class for every error skill-router raises on purpose."""


class InvalidRequest(RouterError):
    """The caller sent something we cannot act on (maps to INVALID_ARGUMENT)."""


class NotFound(RouterError):
    """A named skill or resource does not exist (maps to NOT_FOUND)."""


class TooLarge(RouterError):
    """A request or resource exceeds a configured cap (maps to RESOURCE_EXHAUSTED)."""


class PermissionDenied(RouterError):
    """The skill exists but may not be used this way (maps to PERMISSION_DENIED)."""


class StaleFile(RouterError):
    """A skill file no longer matches the digest recorded when the index was built, or was not
    recorded at all; it is not served until a Reindex (maps to FAILED_PRECONDITION)."""


class IndexUnavailable(RouterError):
    """No usable index is loaded (maps to UNAVAILABLE / FAILED_PRECONDITION)."""


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
