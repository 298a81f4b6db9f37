"""W3C Trace Context's rules for a traceparent: version ``ff``, an all-zero trace id or parent
id, and a version-00 header with more fields are invalid (ignored); a later version may add
fields, of which the first four are kept."""

from __future__ import annotations

import pytest

from router.common.tracing import traceparent_of

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


@pytest.mark.parametrize("value", [
    f"ff-{TRACE}-{PARENT}-01",
    f"00-{'0' * 32}-{PARENT}-01",
    f"00-{TRACE}-{'0' * 16}-01",
    f"00-{TRACE}-{PARENT}-01-extra",
    f"00-{TRACE.upper()}-{PARENT}-01",
    f"01-{TRACE}-{PARENT}-01x",
    "",
])
def test_an_invalid_traceparent_is_ignored(value: str) -> None:
    assert traceparent_of(value) == ""


@pytest.mark.parametrize(("value", "kept"), [
    (f"00-{TRACE}-{PARENT}-01", f"00-{TRACE}-{PARENT}-01"),
    (f" 00-{TRACE}-{PARENT}-00 ", f"00-{TRACE}-{PARENT}-00"),
    (f"cc-{TRACE}-{PARENT}-01-what-the-future-holds", f"cc-{TRACE}-{PARENT}-01"),
])
def test_a_valid_traceparent_is_kept(value: str, kept: str) -> None:
    assert traceparent_of(value) == kept
