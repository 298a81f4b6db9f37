"""A console session is bound to the sha256 of the token it signed in with: once the principals
file is read again without that token (or with it given to another principal), the session's
cookie gets the login form, as after a logout. Pure (``ConsoleAccess`` over a reloadable
principal table) and through a real console in front of a real service."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from router.access.callers import LiveTable, load_table
from router.config import OpsConfig
from router.console.auth import COOKIE, ConsoleAccess, console_access
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from router.engine import Engine
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server

OLD, NEW, OTHER = "tok-watch-old", "tok-watch-new", "tok-keep"


def principals_with(path: Path, watcher: str, keeper: str = OTHER) -> None:
    write_principals(path, entry("console", "tok-console", ["route", "ops", "delegate"]),
                     entry("watcher", watcher, ["ops"]), entry("keeper", keeper, ["ops"]))


@pytest.fixture()
def principals(tmp_path: Path) -> Path:
    path = tmp_path / "principals.yaml"
    principals_with(path, OLD)
    return path


def signed_in(principals: Path) -> tuple[LiveTable, dict[str, str], ConsoleAccess]:
    live = LiveTable(lambda: load_table(str(principals)))
    access = console_access("127.0.0.1", (), principals=live)
    cookie = access.login(OLD)
    assert cookie is not None
    cookies = {COOKIE: cookie}
    assert access.session({}, cookies) == cookie
    entry = access.caller_entry({}, cookies)
    assert entry is not None and entry.principal.name == "watcher"
    return live, cookies, access


def test_a_session_ends_when_its_token_is_rotated_out(principals: Path) -> None:
    live, cookies, access = signed_in(principals)
    principals_with(principals, NEW)  # the watcher's token rotated
    assert live.reload()
    assert access.session({}, cookies) is None
    assert access.caller_entry({}, cookies) is None
    principals_with(principals, OLD)  # and back: the ended session stays ended
    assert live.reload()
    assert access.session({}, cookies) is None
    assert access.login(NEW) is None and access.login(OLD) is not None


def test_a_session_ends_when_its_token_becomes_another_principals(principals: Path) -> None:
    live, cookies, access = signed_in(principals)
    principals_with(principals, NEW, keeper=OLD)  # the old token now names the keeper
    assert live.reload()
    assert access.session({}, cookies) is None
    assert access.caller_entry({}, cookies) is None


def test_a_session_with_accepted_tokens_lives_while_its_token_is_accepted() -> None:
    access = console_access("127.0.0.1", (b"token-a", b"token-b"))
    cookie = access.login("token-b")
    assert cookie is not None and access.session({}, {COOKIE: cookie}) == cookie
    rotated = console_access("127.0.0.1", (b"token-a",))
    unknown = rotated.sessions.open("", hashlib.sha256(b"token-b").digest())
    assert rotated.session({}, {COOKIE: unknown}) is None  # its token is not accepted


@pytest.fixture()
def console(engine: Engine, principals: Path) -> Iterator[ConsoleServer]:
    service = start_server(engine, principals_file=str(principals))
    running = ConsoleServer(RouterLink(f"127.0.0.1:{service.port}",
                                       CallerAuth(token="tok-console")),
                            "127.0.0.1", 0, (),
                            ops=OpsConfig(principals_file=str(principals))).start()
    try:
        yield running
    finally:
        running.stop()
        service.stop(0)


def test_the_console_signs_out_a_rotated_token(console: ConsoleServer,
                                               principals: Path) -> None:
    with httpx2.Client(base_url=console.url, timeout=30.0) as browser:
        assert browser.post("/login", data={"token": OLD}).status_code == 303
        assert browser.get("/skills").status_code == 200
        principals_with(principals, NEW)
        assert console.principals is not None and console.principals.reload()  # as SIGHUP
        refused = browser.get("/skills")
        assert refused.status_code == 401 and 'action="/login"' in refused.text
        assert browser.post("/login", data={"token": NEW}).status_code == 303
        assert browser.get("/skills").status_code == 200
