"""What the HTTP doors (the ops console, the MCP door over streamable HTTP) add to uvicorn so
that a flood of connections cannot take the process down.

uvicorn (h11) already bounds a request's header size (``h11_max_incomplete_event_size``, 16
KiB) and closes a kept-alive connection idle after a response (``timeout_keep_alive``, 5 s);
its ``limit_concurrency`` answers 503 only once a request's headers have arrived. It has no
deadline for the headers themselves and never refuses a connection, so idle half-requests hold
file descriptors until the process has none left (and the gRPC port beside them, and the log,
suffer). ``GuardedH11`` adds both:

- **Header deadline.** A connection that has not finished a request's headers within
  ``header_timeout`` seconds of connecting (or of its previous response) is closed.
- **Connection cap.** Past ``connection_cap`` open connections a new one is closed as soon as
  it is accepted; the cap is the configured ``max_connections`` but never more than half the
  process's file limit (``RLIMIT_NOFILE``), so the rest stays for everything else.

A refused connection is logged at most once a minute, with the count since the last line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from router.door.listen import file_limit
from router.errors import InvalidRequest

log = logging.getLogger(__name__)

REFUSAL_LOG_SECONDS = 60.0


@dataclass(frozen=True)
class DoorLimits:
    """How long a caller may take to send its headers, and how many connections are open."""

    header_timeout: float = 30.0
    max_connections: int = 1000

    def __post_init__(self) -> None:
        if not 0 < self.header_timeout <= 30:
            raise InvalidRequest(f"header timeout {self.header_timeout!r}: give seconds in "
                                 "(0, 30]")
        if self.max_connections < 1:
            raise InvalidRequest(f"max connections {self.max_connections!r}: give at least 1")


def connection_cap(limits: DoorLimits, files: int | None = None) -> int:
    """Open connections a door keeps: ``max_connections``, at most half the file limit."""
    return max(1, min(limits.max_connections, (file_limit() if files is None else files) // 2))


class _Refusals:
    """Counts refused connections and logs them at most once every REFUSAL_LOG_SECONDS."""

    def __init__(self, cap: int) -> None:
        self.cap, self.count, self.logged_at = cap, 0, -REFUSAL_LOG_SECONDS

    def refused(self) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self.logged_at >= REFUSAL_LOG_SECONDS:
            log.warning("refused %d connection(s): %d are open, the cap", self.count, self.cap)
            self.count, self.logged_at = 0, now


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with the header deadline and the connection cap (set on the
    subclass ``protocol_class`` makes)."""

    header_timeout: float = 30.0
    cap: int = 1000
    refusals: _Refusals = _Refusals(1000)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap:
            self.refusals.refused()
            transport.abort()  # the descriptor is freed now, not after a handshake
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        """Close the connection when it still has not finished a request's headers."""
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request's headers get the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def protocol_class(limits: DoorLimits) -> type[GuardedH11]:
    """A ``GuardedH11`` subclass applying ``limits`` (one per server: its own refusal count)."""
    cap = connection_cap(limits)
    return type("DoorH11", (GuardedH11,), {"header_timeout": limits.header_timeout,
                                           "cap": cap, "refusals": _Refusals(cap)})


def door_config(app: Any, limits: DoorLimits, *, protocol: type[GuardedH11] | None = None,
                **settings: Any) -> uvicorn.Config:
    """A uvicorn configuration for a door: the guarded protocol, uvicorn's loggers left to the
    process's handlers (so its repeated warnings are throttled like every other line; see
    ``router.cli.logs``), no access log, forwarded headers (``X-Forwarded-For``,
    ``X-Forwarded-Proto``) not believed unless ``settings`` say from whom (uvicorn believes them
    from loopback by default: a client there could pose as any address); ``protocol``: a
    subclass of ``protocol_class(limits)`` in its place; ``settings`` are other
    ``uvicorn.Config`` arguments."""
    return uvicorn.Config(app, http=protocol or protocol_class(limits), log_config=None,
                          access_log=False, log_level="warning",
                          **{"proxy_headers": False, **settings})
