"""``ops --audit-log`` (``ops.audit_log``): the console writes one JSON line per request it
answers, refused ones included, naming the principal signed in (or signing in), the path
only (never the query, which holds the routed message), the answer as a status name; 0600.
A page the service refuses for the operator's rate is 429 with Retry-After."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import httpx2

from router.access.rates import RateLimiter
from router.config import OpsConfig
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from router.engine import Engine
from tests.support.servers import start_server

TRACE = "6bf92f3577b34da6a3ce929d0e0e4738"


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _principals(console_roles: str) -> str:
    rows = [("console", "tok-console", console_roles), ("operator", "tok-op", "[route, ops]"),
            ("viewer", "tok-view", "[route]")]
    return "principals:\n" + "".join(
        f'  - name: {name}\n    token_sha256: "{_sha(token)}"\n    roles: {roles}\n'
        '    catalogs: "*"\n' for name, token, roles in rows)


def test_one_line_per_request_with_its_principal_and_no_query(engine: Engine,
                                                              tmp_path: Path) -> None:
    (tmp_path / "service.yaml").write_text(_principals("[route, ops, admin, delegate]"))
    (tmp_path / "console.yaml").write_text(_principals("[route]"))
    log = tmp_path / "ops-audit.jsonl"
    service = start_server(engine, principals_file=str(tmp_path / "service.yaml"))
    console = ConsoleServer(RouterLink(f"127.0.0.1:{service.port}", CallerAuth(
        token="tok-console")), "127.0.0.1", 0, (), ops=OpsConfig(
        principals_file=str(tmp_path / "console.yaml"), audit_log=str(log))).start()
    try:
        with httpx2.Client(base_url=console.url, timeout=30.0) as browser:
            assert browser.post("/login", data={"token": "wrong"}).status_code == 401
            assert browser.post("/login", data={"token": "tok-op"}).status_code == 303
            page = browser.get("/route?message=the+classified+tender+for+bridges",
                               headers={"traceparent": f"00-{TRACE}-b7ad6b7169203331-01"})
            assert page.status_code == 200
        viewer = httpx2.get(f"{console.url}/skills", timeout=30.0,
                            headers={"Authorization": "Bearer tok-view"})
        assert viewer.status_code == 403
    finally:
        console.stop()
        service.stop(0)
    text = log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "classified" not in text and "tender" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(line["method"], line["code"], line["principal"]) for line in lines] == [
        ("POST /login", "UNAUTHENTICATED", None), ("POST /login", "OK", "operator"),
        ("GET /route", "OK", "operator"), ("GET /skills", "PERMISSION_DENIED", "viewer")]
    assert lines[2]["trace_id"] == TRACE
    assert all(line["door"] == "ops" and len(line["trace_id"]) == 32 for line in lines)


def test_a_page_over_the_operators_rate_is_429_with_retry_after(engine: Engine,
                                                                tmp_path: Path) -> None:
    rated = "    roles: [route, ops]\n    rate: {per_second: 0.5, burst: 1}\n"
    service_file = _principals("[route, ops, admin, delegate]").replace(
        "    roles: [route, ops]\n", rated)
    (tmp_path / "service.yaml").write_text(service_file)
    (tmp_path / "console.yaml").write_text(_principals("[route]"))
    service = start_server(engine, principals_file=str(tmp_path / "service.yaml"))
    service.gate.limiter = RateLimiter(lambda: 0.0)  # the clock held still: no token comes back
    console = ConsoleServer(RouterLink(f"127.0.0.1:{service.port}", CallerAuth(
        token="tok-console")), "127.0.0.1", 0, (), ops=OpsConfig(
        principals_file=str(tmp_path / "console.yaml"))).start()
    try:
        pages = [httpx2.get(f"{console.url}/route?message=merge+pdf", timeout=30.0,
                            headers={"Authorization": "Bearer tok-op"}) for _ in range(2)]
    finally:
        console.stop()
        service.stop(0)
    assert pages[-1].status_code == 429 and pages[-1].headers["retry-after"] == "2"
    assert "RESOURCE_EXHAUSTED" in pages[-1].text
