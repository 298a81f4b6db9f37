"""The console authenticating its callers from a principals file, in front of a real gRPC
service with the same file: 401 for a missing or unknown token, 403 for a page or form outside
the caller's roles, each caller served by delegation (never beyond the console's own roles),
and the route page routing "as" a principal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from router.config import OpsConfig
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from router.engine import Engine
from tests.console.conftest import PDF_SKILL
from tests.support.pages import csrf
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server

PRINCIPALS = (entry("console", "tok-console", ["route", "ops", "delegate"]),
              entry("watcher", "tok-watch", ["ops"]), entry("keeper", "tok-keep", ["ops", "admin"]),
              entry("team", "tok-team", ["route"]),
              entry("blind", "tok-blind", ["ops"], deny=["*"]))  # a view holding nothing


@pytest.fixture(scope="module")
def principals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_principals(tmp_path_factory.mktemp("principals") / "principals.yaml",
                            *PRINCIPALS)


@pytest.fixture(scope="module")
def console(engine: Engine, principals: Path) -> Iterator[str]:
    service = start_server(engine, principals_file=str(principals))
    running = ConsoleServer(RouterLink(f"127.0.0.1:{service.port}",
                                       CallerAuth(token="tok-console")),
                            "127.0.0.1", 0, (),
                            ops=OpsConfig(principals_file=str(principals))).start()
    try:
        yield running.url
    finally:
        running.stop()
        service.stop(0)


def get(url: str, token: str | None = None) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.get(url, headers=headers, timeout=30.0)


def post(url: str, token: str, data: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, headers={"Authorization": f"Bearer {token}"}, data=data,
                       timeout=60.0)


@pytest.mark.parametrize("token", [None, "tok-wat", "tok-watch-more"])
def test_a_missing_or_unknown_token_is_401(console: str, token: str | None) -> None:
    assert get(f"{console}/skills", token).status_code == 401


def test_pages_need_ops(console: str) -> None:
    refused = get(f"{console}/skills", "tok-team")
    assert refused.status_code == 403 and "requires role ops" in refused.text
    page = get(f"{console}/skills", "tok-watch")
    assert page.status_code == 200 and PDF_SKILL in page.text


def test_reindex_and_purge_need_admin(console: str) -> None:
    form = {"csrf": csrf(get(f"{console}/index", "tok-watch").text)}
    for path in ("/index/reindex", f"/skills/{PDF_SKILL}/purge"):
        refused = post(f"{console}{path}", "tok-watch", form)
        assert refused.status_code == 403 and "requires role admin" in refused.text


def test_the_service_serves_each_caller_within_the_consoles_roles(console: str) -> None:
    form = {"csrf": csrf(get(f"{console}/index", "tok-keep").text)}
    # admitted by the console (keeper holds admin), refused by the service: the console
    # delegates, and admin is not the console's to give
    answer = post(f"{console}/index/reindex", "tok-keep", form)
    assert answer.status_code == 502 and "PERMISSION_DENIED" in answer.text
    assert "requires role admin" in answer.text


def test_the_route_page_routes_as_a_principal(console: str) -> None:
    query = "message=extract+the+tables+from+this+pdf"
    as_team = get(f"{console}/route?{query}&as=team", "tok-watch")
    assert as_team.status_code == 200 and PDF_SKILL in as_team.text
    unknown = get(f"{console}/route?{query}&as=nobody", "tok-watch")
    assert unknown.status_code == 502 and "&#39;nobody&#39;" in unknown.text


def test_routing_as_a_principal_stays_within_the_operators_own_view(console: str) -> None:
    query = "message=extract+the+tables+from+this+pdf"
    seen = get(f"{console}/route?{query}&as=team", "tok-watch")
    blind = get(f"{console}/route?{query}&as=team", "tok-blind")
    assert seen.status_code == blind.status_code == 200
    assert PDF_SKILL in seen.text and PDF_SKILL not in blind.text
    skills = get(f"{console}/skills", "tok-blind")
    assert skills.status_code == 200 and PDF_SKILL not in skills.text
