"""The console's callers with JWTs of the principals file's provider (on loopback): the
Authorization header admits its principal, a login with one opens a session bound to the
principal's subject that ends when the token expires or the file stops naming that subject,
and a static token's session stays bound to its digest."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import pytest

from router.access.callers import LiveTable
from router.access.principals import parse_principals
from router.console.auth import COOKIE, ConsoleAccess
from router.console.sessions import SessionTable
from tests.support.oidc import Provider, identity_provider, oidc_section


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def text(provider: Provider, subject: str = "ops-client") -> str:
    static = hashlib.sha256(b"tok-static").hexdigest()
    return (oidc_section(provider) + "principals:\n"
            f"  - name: operator\n    subject: {subject}\n    roles: [ops]\n    catalogs: '*'\n"
            f"  - name: legacy\n    token_sha256: \"{static}\"\n    roles: [ops]\n"
            "    catalogs: '*'\n")


@pytest.fixture
def provider() -> Iterator[Provider]:
    with identity_provider() as running:
        yield running


def console(provider: Provider, clock: Clock, file: dict[str, str]) -> ConsoleAccess:
    live = LiveTable(lambda: parse_principals(file["text"], "p.yaml"))
    return ConsoleAccess(sessions=SessionTable(8 * 3600.0, clock=clock), principals=live)


def test_a_jwt_in_the_header_is_its_principal(provider: Provider) -> None:
    access = console(provider, Clock(), {"text": text(provider)})
    header = {"authorization": f"Bearer {provider.token('ops-client')}"}
    assert access.session(header, {}) is not None
    entry = access.caller_entry(header, {})
    assert entry is not None and entry.principal.name == "operator"
    stranger = {"authorization": f"Bearer {provider.token('nobody')}"}
    assert access.session(stranger, {}) is None


def test_a_jwt_login_lasts_until_the_token_expires(provider: Provider) -> None:
    clock = Clock()
    access = console(provider, clock, {"text": text(provider)})
    cookie = access.login(provider.token("ops-client", exp=int(time.time()) + 600))
    assert cookie is not None
    cookies = {COOKIE: cookie}
    assert access.session({}, cookies) == cookie  # the next request is still signed in
    entry = access.caller_entry({}, cookies)
    assert entry is not None and entry.principal.name == "operator"
    clock.now += 600 + 60 + 1  # past exp and its leeway, long before the 8 hours
    assert access.session({}, cookies) is None


def test_a_jwt_login_ends_when_the_file_no_longer_names_its_subject(provider: Provider) -> None:
    file = {"text": text(provider)}
    access = console(provider, Clock(), file)
    cookie = access.login(provider.token("ops-client"))
    assert cookie is not None and access.session({}, {COOKIE: cookie}) == cookie
    file["text"] = text(provider, subject="another-client")
    assert access.principals is not None and access.principals.reload()
    assert access.session({}, {COOKIE: cookie}) is None


def test_a_static_tokens_login_beside_them_is_unchanged(provider: Provider) -> None:
    access = console(provider, Clock(), {"text": text(provider)})
    cookie = access.login("tok-static")
    assert cookie is not None and access.session({}, {COOKIE: cookie}) == cookie
    assert access.login(provider.token("ops-client", aud="another")) is None
