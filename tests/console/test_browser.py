"""Headless Chromium (Debian's ``chromium``) against real consoles on real ports: the route
page's candidate table with the right skill and its scores, a hostile description as text (no
script or image element comes of it), and only the login form without a token on a gated
console. Chromium cannot send a header or fill a form without automation, so the token and
form cases with credentials are tested with an HTTP client (test_auth, test_pages). Set
``CONSOLE_SCREENSHOT=PATH`` to keep the route page's screenshot (the README's)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlencode
from xml.etree import ElementTree

import pytest

from tests.console.conftest import HOSTILE, HOSTILE_TEXT, PDF_SKILL

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                "(apt-get install chromium); .ci/run installs it")
ROUTE = "/route?" + urlencode({"message": "merge two PDF files into one PDF", "top_k": "3"})


def chromium(tmp_path: Path, *args: str) -> str:
    """Run headless Chromium with a throwaway profile; its stdout."""
    assert CHROMIUM is not None
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dom(tmp_path: Path, url: str) -> str:
    return chromium(tmp_path, "--dump-dom", url)


def test_route_page_in_chromium_shows_the_candidate_table(console: str, tmp_path: Path) -> None:
    page = dom(tmp_path, console + ROUTE)
    table = page.split('<table id="candidates">', 1)[1].split("</table>", 1)[0]
    first = table.split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert f'data-skill="{PDF_SKILL}"' in first and "kept" in first
    assert first.count('class="num"') == 4  # rank, dense, lexical, fused
    assert 'class="fused" style="width: 100.0%"' in first


def test_hostile_description_is_text_in_chromium(console: str, tmp_path: Path) -> None:
    page = dom(tmp_path, f"{console}/skills/{HOSTILE}")
    description = page.split('id="description">', 1)[1].split("</dd>", 1)[0]
    # the browser parsed it as text: serialised back, the markup is escaped, no element made
    text = ElementTree.fromstring(f"<dd>{description}</dd>").text
    assert text == HOSTILE_TEXT
    assert "<script" not in page and "<img" not in page


def test_gated_console_shows_chromium_only_the_login_form(gated_console: str,
                                                          tmp_path: Path) -> None:
    for path in (ROUTE, "/skills", f"/skills/{PDF_SKILL}", "/index"):
        page = dom(tmp_path, gated_console + path)
        assert 'action="/login"' in page and 'type="password"' in page
        assert PDF_SKILL not in page and "candidates" not in page


def test_route_page_screenshot(console: str, tmp_path: Path) -> None:
    shot = tmp_path / "route.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,800",
             "--hide-scrollbars", console + ROUTE)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    keep = os.environ.get("CONSOLE_SCREENSHOT")
    if keep:
        Path(keep).write_bytes(data)
