"""Learning from traffic in the console, through a real console on a real port in front of a
real gRPC server (the six-skill learning catalog, feedback on): counters per skill after
traffic, never-activated skills marked and filtered, a skill's recorded examples (hostile
requests shown as text), and a purge through the form: CSRF required, a confirmation first,
then the examples gone."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from router.client import SkillRouterClient
from router.console.server import ConsoleServer, RouterLink
from router.credentials import CallerAuth
from tests.support.learning import DOCKER, PDF, make_index, open_engine, teach
from tests.support.pages import csrf
from tests.support.servers import start_server

HOSTILE = "<script>alert(1)</script>"
HOSTILE_REQUEST = f"{PDF} {HOSTILE} <img src=x onerror=alert(1)>"


@dataclass(frozen=True)
class Setup:
    url: str  # the console
    client: SkillRouterClient  # the router, for traffic


@pytest.fixture()
def setup(tmp_path: Path) -> Iterator[Setup]:
    server = start_server(open_engine(make_index(tmp_path)))
    target = f"127.0.0.1:{server.port}"
    console = ConsoleServer(RouterLink(target, CallerAuth()), "127.0.0.1", 0, ()).start()
    try:
        with SkillRouterClient(target, timeout=10.0) as client:
            yield Setup(console.url, client)
    finally:
        console.stop()
        server.stop(0)


def get(url: str, **params: str) -> httpx2.Response:
    return httpx2.get(url, params=params, timeout=30.0)


def post(url: str, **data: str) -> httpx2.Response:
    return httpx2.post(url, data=data, timeout=30.0)


def row(page: str, name: str) -> str:
    """The table row of skill ``name`` on the /skills page."""
    found = re.search(rf'<tr data-skill="{re.escape(name)}"[^>]*>.*?</tr>', page, re.S)
    assert found, f"no row for {name}"
    return found.group(0)


def cell(text: str, css: str) -> str:
    found = re.search(rf'class="[^"]*\b{css}"[^>]*>([^<]*)<', text)
    assert found, f"no {css} cell"
    return found.group(1)


def names(page: str) -> list[str]:
    return re.findall(r'<tr data-skill="([^"]+)"', page)



def example_count(page: str) -> int:
    return page.split('id="examples"', 1)[1].split("</table>", 1)[0].count('class="example"')


def test_skills_show_counters_and_mark_the_never_activated(setup: Setup) -> None:
    pdf = teach(setup.client, ("a", "b"), PDF)
    for session in ("a", "b", "c"):
        setup.client.route(DOCKER, session_id=session, top_k=1)
    page = get(f"{setup.url}/skills", min_routed="3").text
    mine = row(page, pdf)
    # shown 4: retrieved twice, then active in sessions a and b when DOCKER was routed there
    assert (cell(mine, "shown"), cell(mine, "activated"), cell(mine, "hit-rate")) == \
        ("4", "2", "100.0%")
    docker = row(page, "skill-3")
    assert 'class="never"' in docker and "never_activated</span>" in docker
    assert cell(docker, "hit-rate") == "0.0%" and cell(row(page, "skill-5"), "hit-rate") == "-"
    assert 'class="never"' not in mine
    only = get(f"{setup.url}/skills", flag="never_activated", min_routed="3").text
    assert names(only) == ["skill-3"]
    assert names(get(f"{setup.url}/skills", flag="never_activated").text) == []  # default 10
    by_activated = names(get(f"{setup.url}/skills", sort="activated").text)
    assert by_activated[0] == pdf and len(by_activated) == 6
    assert "not in the gRPC API" not in page


def test_a_skills_page_lists_its_examples_with_hostile_text_as_text(setup: Setup) -> None:
    pdf = teach(setup.client, ("a", "b"), HOSTILE_REQUEST)
    page = get(f"{setup.url}/skills/{pdf}").text
    assert example_count(page) == 2
    assert HOSTILE not in page and "<img src=x" not in page and "<script" not in page
    assert html.escape(HOSTILE) in page
    assert re.search(r"<td>positive</td><td>yes</td>", page)
    assert cell(page.split('id="counters"', 1)[1], "activated") == "2"
    assert example_count(get(f"{setup.url}/skills/skill-1").text) == 0


def test_a_purge_needs_the_form_token_and_a_confirmation(setup: Setup) -> None:
    pdf = teach(setup.client, ("a", "b"), PDF)
    page = get(f"{setup.url}/skills/{pdf}").text
    assert example_count(page) == 2 and 'id="purge"' in page
    url = f"{setup.url}/skills/{pdf}/purge"
    assert post(url, confirm="1").status_code == 403
    assert post(url, confirm="1", csrf="0" * 64).status_code == 403
    assert setup.client.list_examples(skill=pdf).total == 2  # nothing purged
    asked = post(url, csrf=csrf(page), older_than="")
    assert asked.status_code == 200
    assert f"Purge 2 examples of {pdf}?" in asked.text
    assert 'name="confirm" value="1"' in asked.text
    assert setup.client.list_examples(skill=pdf).total == 2  # asking purges nothing
    done = post(url, csrf=csrf(asked.text), older_than="", confirm="1")
    assert done.status_code == 200
    assert re.search(rf'id="notice">purged 2 examples of {pdf}', done.text)
    assert example_count(done.text) == 0
    assert example_count(get(f"{setup.url}/skills/{pdf}").text) == 0
    assert setup.client.list_examples(skill=pdf).total == 0


def test_a_purge_of_old_examples_only_keeps_the_recent(setup: Setup) -> None:
    pdf = teach(setup.client, ("a", "b"), PDF)
    page = get(f"{setup.url}/skills/{pdf}").text
    url = f"{setup.url}/skills/{pdf}/purge"
    asked = post(url, csrf=csrf(page), older_than="30")
    assert f"Purge 0 examples of {pdf} older than 30 days?" in asked.text
    done = post(url, csrf=csrf(page), older_than="30", confirm="1")
    assert "purged 0 examples" in done.text and example_count(done.text) == 2
    for bad in ("soon", "-1", "nan"):
        refused = post(url, csrf=csrf(page), older_than=bad, confirm="1")
        assert refused.status_code == 400 and "days" in refused.text
    assert setup.client.list_examples(skill=pdf).total == 2


def test_a_router_recording_nothing_is_said_on_the_pages(tmp_path: Path) -> None:
    server = start_server(open_engine(make_index(tmp_path), enabled=False))
    console = ConsoleServer(RouterLink(f"127.0.0.1:{server.port}", CallerAuth()),
                            "127.0.0.1", 0, ()).start()
    try:
        assert 'id="counters-off"' in get(f"{console.url}/skills").text
        assert 'id="counters-off"' in get(f"{console.url}/skills/skill-0").text
    finally:
        console.stop()
        server.stop(0)


def test_a_gated_console_asks_for_a_token_and_the_form_token(tmp_path: Path) -> None:
    server = start_server(open_engine(make_index(tmp_path)))
    target = f"127.0.0.1:{server.port}"
    console = ConsoleServer(RouterLink(target, CallerAuth()), "127.0.0.1", 0,
                            (b"ops-token",)).start()
    bearer = {"authorization": "Bearer ops-token"}
    url = f"{console.url}/skills/skill-0/purge"
    try:
        with SkillRouterClient(target, timeout=10.0) as client:
            pdf = teach(client, ("a", "b"), PDF)
            assert pdf == "skill-0"
            assert get(f"{console.url}/skills/{pdf}").status_code == 401
            assert post(url, confirm="1").status_code == 401
            page = httpx2.get(f"{console.url}/skills/{pdf}", headers=bearer, timeout=30.0).text
            no_form_token = httpx2.post(url, data={"confirm": "1"}, headers=bearer, timeout=30.0)
            assert no_form_token.status_code == 403
            done = httpx2.post(url, data={"confirm": "1", "csrf": csrf(page)}, headers=bearer,
                               timeout=30.0)
            assert done.status_code == 200 and "purged 2 examples" in done.text
            assert client.list_examples(skill=pdf).total == 0
    finally:
        console.stop()
        server.stop(0)
