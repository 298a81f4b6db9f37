"""The open console's pages through a real console on a real port, in front of a real gRPC
server: the route page's candidates and bars, escaping of hostile skill text, the skills list's
filters, a skill's page, the index page and its CSRF-protected Reindex, and the headers that
forbid scripts."""

from __future__ import annotations

import html
import re

import grpc
import httpx2

from router.calibration.gate import bundled_requests
from router.service.server import RouterServer
from router.v1 import router_pb2 as pb
from tests.console.conftest import HOSTILE, HOSTILE_TEXT, PDF_SKILL
from tests.support.pages import csrf
from tests.support.servers import make_stub

RAW = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>")


def get(url: str, **params: str) -> httpx2.Response:
    return httpx2.get(url, params=params, timeout=30.0)


def rows(page: str) -> list[str]:
    """The data-skill of every row of a table on ``page``, in order."""
    return re.findall(r'<tr[^>]* data-skill="([^"]+)"', page)



def test_route_page_ranks_the_right_skill_with_scores_and_bars(console: str) -> None:
    answer = get(f"{console}/route", message="merge two PDF files into one PDF", top_k="3")
    assert answer.status_code == 200
    page = answer.text
    assert rows(page)[0] == PDF_SKILL
    first = page.split(f'data-skill="{PDF_SKILL}"', 1)[1].split("</tr>", 1)[0]
    assert "kept" in first
    scores = [float(s) for s in re.findall(r'<td class="num">(-?\d+\.\d{4})</td>', first)]
    assert len(scores) == 3 and scores[0] > 0  # dense, lexical, fused
    widths = [float(w) for w in re.findall(r'class="fused" style="width: ([\d.]+)%"', page)]
    assert widths[0] == 100.0 and all(w <= 100.0 for w in widths)
    assert 'id="settings"' in page and "gate" in page
    assert f'href="/skills/{PDF_SKILL}"' in page.split('id="shown"', 1)[1].split("</p>", 1)[0]


def test_route_page_says_why_the_gate_gave_a_turn_nothing(console: str) -> None:
    let_through = get(f"{console}/route", message="merge two PDF files into one PDF").text
    assert "let the turn through" in let_through.split('id="refused"', 1)[1].split("</dd>")[0]
    said = []
    for message in bundled_requests()[:10]:  # everyday requests the gate was calibrated on
        page = get(f"{console}/route", message=message).text
        said.append(html.unescape(page.split('id="refused"', 1)[1].split("</dd>", 1)[0]))
    refused = [s for s in said if s.startswith(">refused: ")]
    assert refused and all("off-topic" in s for s in refused)


def test_route_page_without_a_message_is_the_form_only(console: str) -> None:
    page = get(f"{console}/route").text
    assert 'id="route-form"' in page and 'id="candidates"' not in page


def test_hostile_description_renders_as_text_everywhere(console: str) -> None:
    pages = [get(f"{console}/skills").text, get(f"{console}/skills/{HOSTILE}").text,
             get(f"{console}/route", message=HOSTILE_TEXT).text]
    for page in pages:
        for raw in RAW:
            assert raw not in page
        assert html.escape(RAW[0], quote=True) in page
    assert html.escape(HOSTILE_TEXT) in pages[1]


def test_every_page_forbids_scripts(console: str) -> None:
    for path in ("/", "/route", "/skills", "/index", "/skills/nope"):
        answer = get(f"{console}{path}")
        policy = answer.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert "<script" not in answer.text


def test_skills_list_filters_and_sorts(console: str) -> None:
    everyone = rows(get(f"{console}/skills").text)
    assert sorted(everyone) == everyone and PDF_SKILL in everyone and HOSTILE in everyone
    assert rows(get(f"{console}/skills", q="docker").text) == ["docker-ops"]
    assert rows(get(f"{console}/skills", flag="deprecated").text) == []
    assert rows(get(f"{console}/", flag="not_deprecated").text) == everyone


def test_skill_page_lists_its_files_and_unknown_is_404(console: str) -> None:
    page = get(f"{console}/skills/{PDF_SKILL}").text
    assert "reference.md" in page.split('id="files"', 1)[1]
    assert get(f"{console}/skills/no-such-skill").status_code == 404


def test_reindex_needs_the_form_token(console: str) -> None:
    page = get(f"{console}/index").text
    assert "version" in page and 'id="reindex"' in page
    url = f"{console}/index/reindex"
    assert httpx2.post(url, data={"full": "1"}, timeout=30.0).status_code == 403
    assert httpx2.post(url, data={"csrf": "0" * 64}, timeout=30.0).status_code == 403
    done = httpx2.post(url, data={"csrf": csrf(page)}, timeout=120.0)
    assert done.status_code == 200
    assert re.search(r'id="notice">index \S+ (swapped in|not swapped): \d+ added', done.text)


def test_a_request_the_router_refuses_is_a_clear_400(console: str) -> None:
    answer = get(f"{console}/route", message="   ")
    assert answer.status_code == 400
    assert "INVALID_ARGUMENT" in answer.text and 'id="candidates"' not in answer.text


def test_the_router_down_is_a_502_page() -> None:
    from router.console.server import ConsoleServer, RouterLink
    from router.credentials import CallerAuth
    from tests.support.ports import free_port

    down = ConsoleServer(RouterLink(f"127.0.0.1:{free_port()}", CallerAuth(), timeout=1.0),
                         "127.0.0.1", 0, ()).start()
    try:
        answer = get(f"{down.url}/skills")
        assert answer.status_code == 502  # UNAVAILABLE, or the deadline spent on retries
        assert re.search(r"The router answered (UNAVAILABLE|DEADLINE_EXCEEDED)", answer.text)
    finally:
        down.stop()


def test_a_request_the_router_refuses_is_a_400_page(console: str) -> None:
    active = ",".join(f"s{i}" for i in range(300))  # past the router's cap on active skills
    answer = get(f"{console}/route", message="merge two PDF files", active=active)
    assert answer.status_code == 400
    assert "The router answered INVALID_ARGUMENT" in answer.text


def test_route_page_shows_what_a_session_was_shown_and_on_which_turn(
        console: str, grpc_server: RouterServer) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{grpc_server.port}") as channel:
        stub = make_stub(channel)
        stub.Route(pb.RouteRequest(message="merge two PDF files into one PDF",
                                   session_id="console-conv", top_k=1))
        stub.Route(pb.RouteRequest(message="merge two PDF files into one PDF",
                                   session_id="console-conv", top_k=1))
    page = get(f"{console}/route", message="merge two PDF files into one PDF",
               session="console-conv", top_k="1").text
    table = page.split('id="session-shown"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr><td><a href="/skills/([^"]+)">[^<]+</a></td><td class="num">(\d+)'
                      r"</td></tr>", table) == [(PDF_SKILL, "1")]
    assert "nothing new" in page.split('id="reveal-names"', 1)[1].split("</p>", 1)[0]
    fresh = get(f"{console}/route", message="merge two PDF files into one PDF").text
    assert 'id="session-shown"' not in fresh
    assert PDF_SKILL in fresh.split('id="reveal-names"', 1)[1].split("</p>", 1)[0]
