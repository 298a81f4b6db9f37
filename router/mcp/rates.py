"""Rate limits at the MCP HTTP door: each POST (one MCP message) of a caller whose principal
has a ``rate`` (``router.access.rates``) takes a token of its bucket in this process; one that
finds it empty is answered ``429`` with ``Retry-After`` (whole seconds, rounded up) and a
JSON-RPC error saying when to retry, before any MCP handling. GET (the event stream) and
DELETE (ending a session) take none. With ``--target`` the service limits the door's calls too
(by the door's principal and the caller it is served as)."""

from __future__ import annotations

import json
import logging
import math

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from router.access.callers import LiveTable
from router.access.rates import RateLimiter
from router.mcp.principals import caller_entry

log = logging.getLogger(__name__)


class RateGate:
    """ASGI middleware: a caller over its principal's rate gets 429 with Retry-After."""

    def __init__(self, app: ASGIApp, principals: LiveTable,
                 limiter: RateLimiter | None = None) -> None:
        self.app, self.principals = app, principals
        self.limiter = limiter or RateLimiter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "POST":
            entry = caller_entry(self.principals, Headers(scope=scope))
            if entry is not None and entry.rate is not None:
                wait = self.limiter.take(entry.principal.name, entry.rate)
                if wait > 0.0:
                    await _over_rate(send, entry.principal.name, wait)
                    return
        await self.app(scope, receive, send)


async def _over_rate(send: Send, name: str, wait: float) -> None:
    seconds = max(1, math.ceil(wait))
    log.info("refused a request of principal %s: over its rate", name)
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": f"principal {name!r} is over its rate: retry in "
                                   f"{seconds} s (Retry-After)"}}).encode("utf-8")
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode("ascii")),
                            (b"retry-after", str(seconds).encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
