"""Console sessions kept by the server, through real consoles on real ports: logout ends the
session (the old cookie gets the login form), the cookie is Secure behind TLS, wrong tokens
from one address are answered 429 past the limit, and a POST from a foreign Origin is 403;
expiry is checked on the session table with a clock."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from router.config import OpsConfig
from router.console.server import ConsoleServer, RouterLink
from router.console.sessions import LoginThrottle, SessionTable
from router.credentials import CallerAuth
from router.service.server import RouterServer
from tests.console.conftest import TOKENS
from tests.support.pages import csrf

LIMIT = 3


@pytest.fixture
def strict_console(grpc_server: RouterServer) -> Iterator[str]:
    """A gated console allowing LIMIT wrong tokens a minute; its base URL."""
    running = ConsoleServer(RouterLink(f"127.0.0.1:{grpc_server.port}", CallerAuth()),
                            "127.0.0.1", 0, tuple(t.encode() for t in TOKENS),
                            ops=OpsConfig(login_failures_per_minute=LIMIT)).start()
    yield running.url
    running.stop()


def test_logout_ends_the_session_for_the_old_cookie(gated_console: str) -> None:
    with httpx2.Client(base_url=gated_console, timeout=30.0) as browser:
        assert browser.post("/login", data={"token": TOKENS[0]}).status_code == 303
        old = dict(browser.cookies)
        page = browser.get("/index")
        assert page.status_code == 200
        assert browser.post("/logout", data={"csrf": csrf(page.text)}).status_code == 303
    replayed = httpx2.get(f"{gated_console}/index", cookies=old, timeout=30.0)
    assert replayed.status_code == 401 and 'action="/login"' in replayed.text
    again = httpx2.post(f"{gated_console}/logout", cookies=old, timeout=30.0,
                        data={"csrf": csrf(page.text)})
    assert again.status_code == 401


def test_two_logins_with_one_token_are_two_sessions(gated_console: str) -> None:
    cookies = []
    for _ in range(2):
        with httpx2.Client(base_url=gated_console, timeout=30.0) as browser:
            browser.post("/login", data={"token": TOKENS[1]})
            cookies.append(dict(browser.cookies))
    assert cookies[0] != cookies[1]


def test_the_cookie_is_secure_behind_tls(grpc_server: RouterServer,
                                         gated_console: str) -> None:
    running = ConsoleServer(RouterLink(f"127.0.0.1:{grpc_server.port}", CallerAuth()),
                            "127.0.0.1", 0, tuple(t.encode() for t in TOKENS),
                            ops=OpsConfig(trusted_proxies=("127.0.0.1",))).start()
    try:  # the TLS proxy in front is trusted (ops.trusted_proxies; tests/console/test_forwarded)
        signed = httpx2.post(f"{running.url}/login", data={"token": TOKENS[0]}, timeout=30.0,
                             headers={"X-Forwarded-Proto": "https"})
    finally:
        running.stop()
    assert signed.status_code == 303 and "secure" in signed.headers["set-cookie"].lower()
    plain = httpx2.post(f"{gated_console}/login", data={"token": TOKENS[0]}, timeout=30.0)
    assert "secure" not in plain.headers["set-cookie"].lower()


def test_wrong_tokens_are_limited_per_client(strict_console: str) -> None:
    for _ in range(LIMIT):
        assert httpx2.post(f"{strict_console}/login", data={"token": "guess"},
                           timeout=30.0).status_code == 401
    blocked = httpx2.post(f"{strict_console}/login", data={"token": TOKENS[0]}, timeout=30.0)
    assert blocked.status_code == 429 and "retry-after" in blocked.headers
    header = httpx2.get(f"{strict_console}/index", timeout=30.0,
                        headers={"Authorization": f"Bearer {TOKENS[0]}"})
    assert header.status_code == 429  # the header is no way around the limit


def test_a_post_from_a_foreign_origin_is_forbidden(gated_console: str) -> None:
    with httpx2.Client(base_url=gated_console, timeout=30.0) as browser:
        evil = browser.post("/login", data={"token": TOKENS[0]},
                            headers={"Origin": "http://evil.example"})
        assert evil.status_code == 403 and not browser.cookies
        host = gated_console.removeprefix("http://")
        assert browser.post("/login", data={"token": TOKENS[0]},
                            headers={"Origin": f"http://{host}"}).status_code == 303
        page = browser.get("/index")
        form = {"csrf": csrf(page.text)}
        for origin in ("http://evil.example", "null", f"http://{host}.evil.example"):
            refused = browser.post("/logout", data=form, headers={"Origin": origin})
            assert refused.status_code == 403, origin
        assert browser.get("/index").status_code == 200  # still signed in
        assert browser.post("/logout", data=form).status_code == 303  # no Origin: the field


def test_sessions_expire_and_failures_leave_the_window() -> None:
    now = [100.0]
    table = SessionTable(60.0, clock=lambda: now[0])
    session = table.open()
    assert table.alive(session) and not table.alive("forged")
    now[0] += 60.0
    assert not table.alive(session)
    throttle = LoginThrottle(2, 60.0, clock=lambda: now[0])
    throttle.failed("10.0.0.1")
    throttle.failed("10.0.0.1")
    assert throttle.blocked("10.0.0.1") and not throttle.blocked("10.0.0.2")
    now[0] += 60.0
    assert not throttle.blocked("10.0.0.1")
