"""Reading the console's HTML pages in tests."""

from __future__ import annotations

import re


def csrf(page: str) -> str:
    """The CSRF token of the form on ``page`` (the page must have one)."""
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, "the page has no CSRF field"
    return found.group(1)
