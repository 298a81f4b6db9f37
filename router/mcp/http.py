"""The door over streamable HTTP at ``/mcp``: the SDK's Starlette app with our Host/Origin
settings, behind ``BearerGate`` when tokens are accepted, served by uvicorn."""

from __future__ import annotations

import anyio
import uvicorn
from starlette.types import ASGIApp

from router.mcp.auth import BearerGate, HttpAccess
from router.mcp.server import SkillDoor

PATH = "/mcp"


def http_app(door: SkillDoor, access: HttpAccess, host: str) -> ASGIApp:
    """The ASGI app: the SDK's streamable HTTP app, gated when ``access`` has tokens."""
    app: ASGIApp = door.streamable_http_app(streamable_http_path=PATH,
                                            transport_security=access.security, host=host)
    return BearerGate(app, access.tokens) if access.tokens else app


def serve_http(door: SkillDoor, access: HttpAccess, host: str, port: int) -> None:
    """Serve until SIGTERM or SIGINT (uvicorn's handlers stop it gracefully)."""
    config = uvicorn.Config(http_app(door, access, host), host=host, port=port,
                            log_level="warning")
    anyio.run(uvicorn.Server(config).serve)
