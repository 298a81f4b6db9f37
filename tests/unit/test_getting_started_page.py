"""The getting-started page exists, stays short, is the README's first link, and the README's
quick start itself puts the command on the PATH (``tests/slow/test_getting_started.py`` runs
the page's commands)."""

from __future__ import annotations

import re

from tests.support import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_page_is_short_and_the_readme_links_it_first() -> None:
    page = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert len(page.splitlines()) < 150
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links[0] == "docs/getting-started.md"


def test_the_quick_start_puts_the_command_on_the_path() -> None:
    quick_start = README.split("\n## ")[0]
    assert "source .venv/bin/activate" in quick_start
    assert "--no-home --no-project" in README
