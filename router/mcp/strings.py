"""Strings the stores cannot hold, refused at the MCP door: a middleware that answers a request
whose params hold a NUL character (U+0000) anywhere, a tool's arguments among them, with a
JSON-RPC invalid-params error naming the field (``router.door.strings``; a tool call: a tool
error with that message, as the door refuses any bad argument), before any tool, read or row is
made of it."""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent

from router.door.strings import nul_message, nul_path


async def refuse_nul(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
    where = nul_path(dict(ctx.params), "params") if ctx.params else ""
    if not where:
        return await call_next(ctx)
    field = where.removeprefix("params.")
    if ctx.method == "tools/call":  # a tool's bad argument: a tool error the model reads
        return CallToolResult(content=[TextContent(text=nul_message(field))], is_error=True)
    raise MCPError(code=INVALID_PARAMS, message=nul_message(field), data={"field": field})
