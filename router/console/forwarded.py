"""Whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` the console believes: only those of the
proxies ``ops.trusted_proxies`` names (addresses or networks), none by default.

The client address keys the login throttle (``router.console.sessions.LoginThrottle``) and the
scheme decides whether the session cookie is ``Secure``. uvicorn believes those headers from
127.0.0.1 unless told otherwise, so any local process (or a proxy on the host passing on what
its callers sent) could give each wrong token a new address and never be throttled. Here, with
no trusted proxy the headers are ignored (the address is the connection's peer); with some,
uvicorn reads the address from the right of ``X-Forwarded-For``, skipping the trusted proxies.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from router.errors import InvalidRequest


def trusted_networks(proxies: Sequence[str]) -> list[str]:
    """``proxies`` as the networks they name (an address is a network of one); InvalidRequest
    naming an entry that is neither."""
    networks: list[str] = []
    for entry in proxies:
        try:
            networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
        except ValueError as exc:
            raise InvalidRequest(f"ops.trusted_proxies: {entry!r} is not an address or a "
                                 "network; give the proxies in front of the console as "
                                 "addresses (10.0.0.5) or networks (10.0.0.0/24)") from exc
    return networks


def proxy_settings(proxies: Sequence[str]) -> dict[str, Any]:
    """The ``uvicorn.Config`` arguments that believe forwarded headers from ``proxies``
    only."""
    networks = trusted_networks(proxies)
    if not networks:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": networks}
