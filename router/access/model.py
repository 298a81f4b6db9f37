"""A principal: who a call comes from, what it may do (roles) and what it may see (its view).

The doors authenticate a caller and name its ``Principal``; the servicer checks the roles a call
needs and hands the principal to the Engine, which applies its view. ``name`` is the key every
record of the caller uses (the sessions and ``route_id``s it owns, what its traffic teaches):
for a principal of a principals file its configured name, for an accepted token
(``serve --accept-token-file``) the sha256 of the token (the token itself is never stored),
``""`` for the one anonymous caller of a server without authentication. Signatures that take
only that string call it ``principal_name`` (or ``caller_name``); ``Principal`` is the object.
"""

from __future__ import annotations

from dataclasses import dataclass

ROUTE, OPS, ADMIN, DELEGATE = "route", "ops", "admin", "delegate"
ROLES = (ROUTE, OPS, ADMIN, DELEGATE)
EVERY_CATALOG = "*"


@dataclass(frozen=True)
class Principal:
    name: str
    roles: frozenset[str] = frozenset({ROUTE, OPS, ADMIN})
    catalogs: tuple[str, ...] = (EVERY_CATALOG,)  # precedence order; "*": the index's order
    deny: tuple[str, ...] = ()  # skill-name globs hidden from it

    def may(self, role: str) -> bool:
        return role in self.roles

    @property
    def sees_everything(self) -> bool:
        """True when its view is the whole catalog (every catalog, nothing denied)."""
        return self.catalogs == (EVERY_CATALOG,) and not self.deny


ANONYMOUS = Principal("")
