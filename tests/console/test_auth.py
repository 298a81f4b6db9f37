"""The gated console's callers, through a real console on a real port: without an accepted
token only the login form (401) and nothing else; the Authorization header and the login
cookie (HttpOnly, SameSite=Strict, not the token) both work; CSRF tokens are per session; and
the bind rule refuses a console beyond loopback without tokens."""

from __future__ import annotations

import httpx2
import pytest

from router.console.auth import COOKIE, ConsoleAccess, console_access
from router.errors import InvalidRequest
from tests.console.conftest import HOSTILE, PDF_SKILL, TOKENS
from tests.support.pages import csrf

PATHS = ("/", "/route?message=merge+pdf", "/skills", f"/skills/{PDF_SKILL}", "/index")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}



@pytest.mark.parametrize("headers", [{}, bearer("wrong-token"), {"Authorization": "Basic eA=="},
                                     {"Cookie": f"{COOKIE}={TOKENS[0]}"}])
def test_without_an_accepted_token_only_the_login_form(gated_console: str,
                                                       headers: dict[str, str]) -> None:
    for path in PATHS:
        answer = httpx2.get(f"{gated_console}{path}", headers=headers, timeout=30.0)
        assert answer.status_code == 401
        assert 'action="/login"' in answer.text
        for secret in (PDF_SKILL, HOSTILE, "version", 'name="csrf"'):
            assert secret not in answer.text
    denied = httpx2.post(f"{gated_console}/index/reindex", headers=headers, timeout=30.0)
    assert denied.status_code == 401


def test_the_authorization_header_opens_every_page(gated_console: str) -> None:
    for token in TOKENS:
        for path in PATHS:
            answer = httpx2.get(f"{gated_console}{path}", headers=bearer(token), timeout=30.0)
            assert answer.status_code == 200, path
    page = httpx2.get(f"{gated_console}/route?message=merge+two+PDF+files",
                      headers=bearer(TOKENS[0]), timeout=30.0).text
    assert f'data-skill="{PDF_SKILL}"' in page


def test_login_sets_a_strict_httponly_cookie_that_is_not_the_token(gated_console: str) -> None:
    with httpx2.Client(base_url=gated_console, timeout=30.0) as browser:
        refused = browser.post("/login", data={"token": "nope"})
        assert refused.status_code == 401 and COOKIE not in browser.cookies
        signed = browser.post("/login", data={"token": TOKENS[1]})
        assert signed.status_code == 303
        header = signed.headers["set-cookie"].lower()
        assert "httponly" in header and "samesite=strict" in header and "path=/" in header
        value = browser.cookies[COOKIE]
        assert TOKENS[1] not in value and len(value) == 64
        page = browser.get("/index")
        assert page.status_code == 200 and "version" in page.text
        # the form token of this session works; the one of another session does not
        other = httpx2.get(f"{gated_console}/index", headers=bearer(TOKENS[0]), timeout=30.0)
        assert browser.post("/logout", data={"csrf": csrf(other.text)}).status_code == 403
        out = browser.post("/logout", data={"csrf": csrf(page.text)})
        assert out.status_code == 303


def test_a_post_with_the_header_still_needs_the_form_token(gated_console: str) -> None:
    answer = httpx2.post(f"{gated_console}/index/reindex", headers=bearer(TOKENS[0]),
                         data={"full": "1"}, timeout=30.0)
    assert answer.status_code == 403


def test_session_checks_compare_against_every_token() -> None:
    access = ConsoleAccess((b"a-token", b"b-token"))
    assert access.session({"authorization": "Bearer b-token"}, {}) is not None
    assert access.session({"authorization": "Bearer c-token"}, {}) is None
    cookie = access.login("a-token")
    assert cookie is not None and access.session({}, {COOKIE: cookie}) == cookie
    other = ConsoleAccess((b"a-token",)).login("a-token")
    assert other is not None and access.session({}, {COOKIE: other}) is None  # another process
    assert access.login("") is None
    assert not access.csrf_ok(cookie, "") and access.csrf_ok(cookie, access.csrf_for(cookie))


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "10.1.2.3", "router.internal"])
def test_bind_rule_refuses_an_open_console_beyond_loopback(host: str) -> None:
    with pytest.raises(InvalidRequest, match="refusing to serve the ops console"):
        console_access(host, ())
    assert console_access(host, (b"t",)).gated


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]"])
def test_loopback_console_may_be_open(host: str) -> None:
    assert not console_access(host, ()).gated


def test_open_console_answers_loopback_host_names_only(console: str) -> None:
    port = console.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]"):
        assert httpx2.get(f"{console}/skills", headers={"Host": host}).status_code == 200
    rebound = httpx2.get(f"{console}/skills", headers={"Host": f"evil.example:{port}"})
    assert rebound.status_code == 421 and PDF_SKILL not in rebound.text


def test_gated_console_answers_any_host_with_a_token(gated_console: str) -> None:
    answer = httpx2.get(f"{gated_console}/skills", timeout=30.0,
                        headers={"Host": "router.internal", **bearer(TOKENS[0])})
    assert answer.status_code == 200
