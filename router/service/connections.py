"""The gRPC port's connection limits, as grpc core channel arguments of the server.

A connection that sent the HTTP/2 preface and then nothing held a file descriptor for as long
as the caller kept it open; enough of them and the process had none left. Three limits, each
off at 0 (``server.*``, docs/configuration.md):

- **Idle.** A connection with no call in flight for ``max_connection_idle_seconds`` (300) is
  sent a GOAWAY and closed (``grpc.max_connection_idle_ms``). A client's channel reconnects on
  its next call.
- **Age.** A connection older than ``max_connection_age_seconds`` (off) is sent a GOAWAY, grpc
  adding a jitter of up to 10% (``grpc.max_connection_age_ms``); its calls in flight then have
  ``max_connection_age_grace_seconds`` (60; 0: as long as they take) to finish before it is
  closed (``grpc.max_connection_age_grace_ms``).
- **Cap.** Past ``max_connections`` (1000) open connections a new one is closed as soon as it
  is accepted, before any HTTP/2 (``grpc.max_allowed_incoming_connections``); never more than
  half the process's file limit, as on the HTTP doors (``router.door.httpd``). It counts
  connections, not calls: ``max_workers`` bounds the calls served at once, and each connection
  carries up to grpc's own stream limit.
"""

from __future__ import annotations

from router.config import ServerConfig
from router.door.listen import file_limit

IDLE = "grpc.max_connection_idle_ms"
AGE = "grpc.max_connection_age_ms"
AGE_GRACE = "grpc.max_connection_age_grace_ms"
CAP = "grpc.max_allowed_incoming_connections"


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def connection_cap(config: ServerConfig, files: int | None = None) -> int:
    """Open connections the port keeps: ``max_connections``, at most half the file limit; 0
    when there is no cap."""
    if config.max_connections <= 0:
        return 0
    return max(1, min(config.max_connections, (file_limit() if files is None else files) // 2))


def connection_options(config: ServerConfig,
                       files: int | None = None) -> list[tuple[str, int]]:
    """The grpc server options applying ``config``'s connection limits (``files``: the file
    limit, the process's by default)."""
    options: list[tuple[str, int]] = []
    if config.max_connection_idle_seconds > 0:
        options.append((IDLE, _ms(config.max_connection_idle_seconds)))
    if config.max_connection_age_seconds > 0:
        options.append((AGE, _ms(config.max_connection_age_seconds)))
        if config.max_connection_age_grace_seconds > 0:  # else grpc's own: no limit
            options.append((AGE_GRACE, _ms(config.max_connection_age_grace_seconds)))
    cap = connection_cap(config, files)
    if cap:
        options.append((CAP, cap))
    return options
