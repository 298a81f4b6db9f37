"""A store URL's user info, taken off before anything parses or shows the URL. Pure.

A password may hold any character, ``/`` and ``@`` among them, so the user info runs from the
scheme's ``//`` to the LAST ``@`` of the URL (before it nothing is a host), never to the first
``/`` or ``@`` a URL parser would stop at: ``postgresql://app:Base64/Pw+Q==@db:5432/feedback``
is the user ``app`` with the password ``Base64/Pw+Q==`` at ``db:5432/feedback``.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import unquote

MASK = "***"


class Parts(NamedTuple):
    scheme: str  # "postgresql"; "" when the URL has no "://"
    user: str  # percent-decoded; "" without one
    password: str  # percent-decoded; "" without one
    rest: str  # host, port, path and query: no user info


def split_userinfo(url: str) -> Parts:
    """``url``'s scheme, user, password and the rest (see the module)."""
    scheme, sep, tail = url.partition("://")
    if not sep:
        return Parts("", "", "", url)
    at = tail.rfind("@")
    if at < 0:
        return Parts(scheme, "", "", tail)
    user, colon, password = tail[:at].partition(":")
    return Parts(scheme, unquote(user), unquote(password) if colon else "", tail[at + 1:])


def masked(url: str) -> str:
    """``url`` with its password shown as ``***`` (the user kept), for printing settings."""
    parts = split_userinfo(url)
    if not parts.scheme or not (parts.user or parts.password):
        return url
    secret = f":{MASK}" if parts.password else ""
    return f"{parts.scheme}://{parts.user}{secret}@{parts.rest}"
