"""``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed only from the proxies
``ops.trusted_proxies`` names (real consoles on real ports): by default wrong tokens sent with
a new forwarded address each are still one client's, and are answered 429 past the limit; from a
trusted proxy each forwarded address is its own client and ``https`` makes the cookie Secure."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from router.config import OpsConfig
from router.console.forwarded import proxy_settings
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from router.errors import InvalidRequest
from router.service.server import RouterServer
from tests.console.conftest import TOKENS

LIMIT = 10  # ops.login_failures_per_minute's default


@pytest.fixture()
def console(request: pytest.FixtureRequest, grpc_server: RouterServer) -> Iterator[str]:
    running = ConsoleServer(RouterLink(f"127.0.0.1:{grpc_server.port}", CallerAuth()),
                            "127.0.0.1", 0, tuple(t.encode() for t in TOKENS),
                            ops=OpsConfig(trusted_proxies=request.param)).start()
    yield running.url
    running.stop()


def wrong_logins(url: str, count: int) -> list[int]:
    """The statuses of ``count`` wrong tokens, each claiming another forwarded address."""
    return [httpx2.post(f"{url}/login", data={"token": f"wrong-{i}"}, timeout=30.0,
                        headers={"X-Forwarded-For": f"203.0.113.{i + 1}"}).status_code
            for i in range(count)]


@pytest.mark.parametrize("console", [()], indirect=True, ids=["untrusted"])
def test_forwarded_addresses_are_ignored_by_default(console: str) -> None:
    statuses = wrong_logins(console, LIMIT + 2)
    assert statuses[:LIMIT] == [401] * LIMIT and statuses[LIMIT:] == [429, 429]
    signed = httpx2.post(f"{console}/login", data={"token": TOKENS[0]}, timeout=30.0,
                         headers={"X-Forwarded-For": "198.51.100.7"})
    assert signed.status_code == 429  # the address is still the blocked one
    plain = httpx2.post(f"{console}/login", data={"token": TOKENS[0]}, timeout=30.0,
                        headers={"X-Forwarded-Proto": "https", "X-Forwarded-For": "::1"})
    assert plain.status_code == 429


@pytest.mark.parametrize("console", [("127.0.0.0/8",)], indirect=True, ids=["trusted"])
def test_a_trusted_proxy_forwards_the_client_and_the_scheme(console: str) -> None:
    assert 429 not in wrong_logins(console, LIMIT + 2)  # each forwarded address its own client
    signed = httpx2.post(f"{console}/login", data={"token": TOKENS[0]}, timeout=30.0,
                         headers={"X-Forwarded-Proto": "https"})
    assert signed.status_code == 303 and "secure" in signed.headers["set-cookie"].lower()


@pytest.mark.parametrize("console", [()], indirect=True, ids=["untrusted"])
def test_an_untrusted_forwarded_scheme_does_not_make_the_cookie_secure(console: str) -> None:
    signed = httpx2.post(f"{console}/login", data={"token": TOKENS[0]}, timeout=30.0,
                         headers={"X-Forwarded-Proto": "https"})
    assert signed.status_code == 303 and "secure" not in signed.headers["set-cookie"].lower()


def test_the_setting_names_addresses_or_networks() -> None:
    assert proxy_settings(()) == {"proxy_headers": False}
    assert proxy_settings(("10.0.0.5", "10.1.0.0/16", "::1")) == {
        "proxy_headers": True, "forwarded_allow_ips": ["10.0.0.5/32", "10.1.0.0/16", "::1/128"]}
    with pytest.raises(InvalidRequest, match=r"ops\.trusted_proxies: 'proxy\.local'"):
        proxy_settings(("proxy.local",))
