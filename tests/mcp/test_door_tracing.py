"""The MCP door passes its caller's W3C ``traceparent`` on: a tool call over HTTP to a door
with ``--target`` reaches the gRPC service (tracing on, the SDK's in-memory exporter) as a
Route whose server span is in the caller's trace, under the caller's span."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from router.engine import Engine
from tests.support.mcp_doors import running_door
from tests.support.servers import start_server
from tests.support.spans import recorded_spans

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    with recorded_spans() as found:
        yield found


@pytest.mark.anyio
async def test_a_tool_call_continues_the_callers_trace_at_the_service(
        tree_engine: Engine, exporter: InMemorySpanExporter) -> None:
    server = start_server(tree_engine, tracing="otlp")
    try:
        with running_door(["--target", f"127.0.0.1:{server.port}"]) as door:
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=120.0)) as http:
                http.headers["traceparent"] = f"00-{TRACE}-{PARENT}-01"
                async with Client(streamable_http_client(door.url, http_client=http),
                                  mode="legacy") as client:
                    found = await client.call_tool("search_skills",
                                                   {"query": "extract tables from a PDF"})
        assert not found.is_error
    finally:
        server.stop(0)
    routes = [s for s in exporter.get_finished_spans()
              if s.name == "/router.v1.SkillRouter/Route"]
    assert len(routes) == 1
    assert format(routes[0].context.trace_id, "032x") == TRACE
    assert routes[0].parent is not None and format(routes[0].parent.span_id, "016x") == PARENT
