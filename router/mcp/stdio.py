"""Serve the door over stdio, answering a malformed line instead of ignoring it.

The SDK's stdio transport turns a line that is not a JSON-RPC message into an exception on the
read stream, which the server drops without a word; a host then waits for an answer that never
comes. Here such a line gets a JSON-RPC error with a null id (-32700 for text that is not JSON,
-32600 for JSON that is not a JSON-RPC message), and the server keeps reading.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

log = logging.getLogger(__name__)


def error_for(exc: Exception) -> JSONRPCError:
    """The answer to an unreadable line."""
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors())
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request: the line is not a "
                          "JSON-RPC 2.0 request, notification or response")
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)


async def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async drives the same object
    async with stdio_server() as (read_stream, write_stream):
        sender, receiver = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def pump() -> None:
            async with sender:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        log.warning("unreadable message on stdin: %s", type(item).__name__)
                        await write_stream.send(SessionMessage(error_for(item)))
                    else:
                        await sender.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            await lowlevel.run(receiver, write_stream, lowlevel.create_initialization_options())
