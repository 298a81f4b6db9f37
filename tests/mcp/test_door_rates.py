"""``RateGate`` at the MCP HTTP door, on a clock held still: a principal with ``rate`` gets its
burst of POSTs, then 429 with ``Retry-After``; GETs and other principals pass; a token back
after the clock moves lets one more through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from router.access.callers import LiveTable, load_table
from router.access.rates import RateLimiter
from router.mcp.rates import RateGate
from tests.support.principals import entry, principals_yaml

PRINCIPALS = principals_yaml(
    entry("limited", "tok-limited", ["route"], rate={"per_second": 0.5, "burst": 2}),
    entry("free", "tok-free", ["route"]))


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


async def _inner(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def _request(gate: RateGate, token: str, method: str = "POST") -> tuple[int, dict[str, str],
                                                                         bytes]:
    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": method, "path": "/mcp",
             "headers": [(b"authorization", f"Bearer {token}".encode())]}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(gate, scope, receive, send)
    start, body = sent[0], sent[1]
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    return int(start["status"]), headers, body["body"]


def test_over_its_rate_a_caller_gets_429_with_retry_after(tmp_path: Path) -> None:
    (tmp_path / "principals.yaml").write_text(PRINCIPALS)
    table = LiveTable(lambda: load_table(str(tmp_path / "principals.yaml")))
    clock = Clock()
    gate = RateGate(_inner, table, RateLimiter(clock))
    assert [_request(gate, "tok-limited")[0] for _ in range(2)] == [200, 200]
    status, headers, body = _request(gate, "tok-limited")
    assert status == 429 and headers["retry-after"] == "2"
    assert "over its rate" in json.loads(body)["error"]["message"]
    assert _request(gate, "tok-limited", "GET")[0] == 200  # the event stream takes no token
    assert _request(gate, "tok-free")[0] == 200
    clock.now += 2.0
    assert _request(gate, "tok-limited")[0] == 200
    assert _request(gate, "tok-limited")[0] == 429
