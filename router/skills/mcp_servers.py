"""List the tools of the configured MCP servers with the official MCP SDK client (the I/O of
``router.skills.sources.mcp``; ``mcp_tools`` turns what is listed into skills).

Each server is started (a command over stdio) or reached (a streamable-HTTP URL), initialised
with the classic handshake (every server version answers it), and asked ``tools/list`` page by
page. All servers are listed at once, in one event loop on a thread of its own (so a caller
already inside an event loop, such as the MCP door, may call this), each within
``timeout`` seconds: a server that fails to start, to list or to answer in time is one error
diagnostic naming it, never a failed build. A stdio server is stopped when its tools are
listed; what it wrote to its standard error is dropped, but for its last line, which the
diagnostic of a server that failed quotes.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from router.skills.mcp_tools import ServerSpec, location_of
from router.skills.model import Diagnostic, Level

log = logging.getLogger(__name__)

MAX_PAGES = 100  # tools/list pages read from one server
MAX_TOOLS = 2000  # tools kept from one server

Listed = dict[str, list[dict[str, Any]]]  # server name -> its tools, as the server sent them


async def _list_one(spec: ServerSpec, timeout: float, errlog: TextIO) -> list[dict[str, Any]]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    target: Any = spec.url or stdio_client(
        StdioServerParameters(command=spec.command[0], args=list(spec.command[1:])),
        errlog=errlog)
    tools: list[dict[str, Any]] = []
    with anyio.fail_after(timeout):
        async with Client(target, mode="legacy", read_timeout_seconds=timeout) as client:
            cursor: str | None = None
            for _page in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(t.model_dump(by_alias=True, exclude_none=True, mode="json")
                             for t in page.tools)
                cursor = page.next_cursor
                if not cursor or len(tools) >= MAX_TOOLS:
                    break
    return tools[:MAX_TOOLS]


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"it did not list its tools within {timeout:g} s (discovery.mcp_timeout_seconds)"
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0], timeout)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _last_line(errlog: TextIO) -> str:
    """The last line a stdio server wrote to its standard error ("" when none)."""
    errlog.flush()
    errlog.seek(0)
    lines = [line.strip() for line in errlog.read()[-4096:].splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


async def _list_all(specs: Sequence[ServerSpec], timeout: float,
                    listed: Listed, failed: dict[str, str]) -> None:
    import anyio

    async def one(spec: ServerSpec) -> None:
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                listed[spec.name] = await _list_one(spec, timeout, errlog)
            except Exception as exc:  # a server's failure is its diagnostic, never the build's
                log.debug("MCP server %s failed", spec.name, exc_info=True)
                said = _last_line(errlog)
                failed[spec.name] = _reason(exc, timeout) + (f" (it said: {said})"
                                                             if said else "")

    async with anyio.create_task_group() as group:
        for spec in specs:
            group.start_soon(one, spec)


def list_tools(specs: Sequence[ServerSpec],
               timeout: float) -> tuple[Mapping[str, list[dict[str, Any]]], list[Diagnostic]]:
    """Every server's tools by server name (in ``specs`` order), and one diagnostic per
    server that could not be listed."""
    listed: Listed = {}
    failed: dict[str, str] = {}
    if not specs:
        return {}, []

    def run() -> None:
        import anyio

        anyio.run(_list_all, specs, timeout, listed, failed)

    worker = threading.Thread(target=run, name="mcp-servers", daemon=True)
    worker.start()
    worker.join()
    diagnostics = [Diagnostic(Level.ERROR, location_of(s.name, ""),
                              f"MCP server {s.name!r} ({s.shown}) was not indexed: "
                              f"{failed[s.name]}", s.name)
                   for s in specs if s.name in failed]
    for spec in specs:
        if spec.name not in failed and spec.name not in listed:
            diagnostics.append(Diagnostic(Level.ERROR, location_of(spec.name, ""),
                                          f"MCP server {spec.name!r} was not listed", spec.name))
    return {s.name: listed[s.name] for s in specs if s.name in listed}, diagnostics
