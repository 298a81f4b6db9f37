"""The door over streamable HTTP at ``/mcp``: the SDK's Starlette app with our Host/Origin
settings and session idle expiry, behind ``SessionQuota`` (open sessions per caller),
``RateGate`` (its principals' rates) and ``BearerGate`` when tokens are accepted, served by
uvicorn with the header deadline and the connection cap of ``router.door.httpd``."""

from __future__ import annotations

import functools
import socket
from collections.abc import Callable

import anyio
import uvicorn
from starlette.types import ASGIApp

from router.access.callers import LiveTable
from router.door.httpd import door_config
from router.mcp.auth import BearerGate, HttpAccess
from router.mcp.quota import SessionCounts, SessionQuota
from router.mcp.rates import RateGate
from router.mcp.resource import DOOR_PATH, ProtectedResource, ResourceServer
from router.mcp.server import SkillDoor

PATH = DOOR_PATH


def http_app(door: SkillDoor, access: HttpAccess, host: str) -> ASGIApp:
    """The ASGI app: the SDK's streamable HTTP app, gated when ``access`` has tokens."""
    app: ASGIApp = door.streamable_http_app(streamable_http_path=PATH,
                                            transport_security=access.security, host=host,
                                            session_idle_timeout=access.session_idle_seconds)
    app = SessionQuota(app, SessionCounts(access.sessions_per_caller,
                                          access.session_idle_seconds),
                       _principal_name(access.principals))
    if access.principals is not None:  # with an oidc section: an OAuth resource server
        resource = ResourceServer(access.principals, PATH, access.resource_url)
        gate = BearerGate(RateGate(app, access.principals), access.principals.accepts,
                          resource.challenge)
        return ProtectedResource(gate, resource, access.security)
    return BearerGate(app, access.tokens) if access.tokens else app


def _principal_name(principals: LiveTable | None) -> Callable[[bytes], str | None] | None:
    """The name of the principal a token names (what SessionQuota counts by), or None."""
    if principals is None:
        return None

    def named(token: bytes) -> str | None:
        entry = principals.table.by_token(token)
        return entry.principal.name if entry is not None else None

    return named


def serve_http(door: SkillDoor, access: HttpAccess, host: str,
               listener: socket.socket) -> None:
    """Serve on ``listener`` (bound by ``router.door.listen.bind``, so a taken port was said
    before anything listened) until SIGTERM or SIGINT (uvicorn's handlers stop it
    gracefully)."""
    config = door_config(http_app(door, access, host), access.limits, host=host,
                         port=listener.getsockname()[1])
    anyio.run(functools.partial(uvicorn.Server(config).serve, sockets=[listener]))
