"""The caller's W3C ``traceparent`` at the MCP door: an MCP server middleware that reads the
HTTP header of each request and holds it (``router.common.tracing.TRACEPARENT``) while the
request is served, so a door with ``--target`` passes it on to the gRPC service as metadata
(``router.client``) and the service's spans join the caller's trace. Over stdio, and for a
header that is not a well-formed traceparent, nothing is passed on."""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

from router.common.tracing import TRACEPARENT, TRACEPARENT_KEY, traceparent_of


async def carry_traceparent(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    headers = getattr(ctx.request, "headers", None)
    value = traceparent_of(headers.get(TRACEPARENT_KEY) if headers is not None else None)
    if not value:
        return await call_next(ctx)
    token = TRACEPARENT.set(value)
    try:
        return await call_next(ctx)
    finally:
        TRACEPARENT.reset(token)
