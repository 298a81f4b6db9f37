"""Route ids that name their owner: ``<nonce>.<mac>``, the MAC an HMAC-SHA256 of the nonce and
the principal's name under a key every replica of one database shares (kept in it:
``feedback_keys``). Any replica then tells, the moment a Route answers and with no round trip,
whether a route id was made for the caller using it: a Route's row may reach the database a
moment later (``router.learning.pg_writer``), its owner does not have to. An id without a MAC
(a store with no key, or one made before) is checked against the stored Route, as before.
Pure."""

from __future__ import annotations

import hashlib
import hmac
import uuid

SEPARATOR = "."
MAC_HEX = 24  # 96 bits of the MAC: the id stays under the 64 characters Activate accepts


def _mac(key: bytes, nonce: str, principal: str) -> str:
    message = f"{nonce}\x00{principal}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:MAC_HEX]


def mint(key: bytes, principal: str) -> str:
    """A new route id made for ``principal``."""
    nonce = uuid.uuid4().hex
    return f"{nonce}{SEPARATOR}{_mac(key, nonce, principal)}"


def made_for(key: bytes, route_id: str, principal: str) -> bool | None:
    """Whether ``route_id`` was made for ``principal`` under ``key``; None when it carries no
    MAC (it is then checked against the stored Route)."""
    nonce, separator, mac = route_id.partition(SEPARATOR)
    if not separator:
        return None
    return hmac.compare_digest(mac, _mac(key, nonce, principal))
