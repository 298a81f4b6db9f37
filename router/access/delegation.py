"""Delegation: a caller with the ``delegate`` role asks to be served as another principal
(the metadata ``x-skill-router-principal: NAME``), as Kubernetes impersonation works.

The principal served is never more than the delegate itself may see or do: its roles are the
intersection of both, its catalogs the named principal's limited to the delegate's (in the named
principal's order; ``"*"`` on one side yields the other side's list), its deny globs both sides'.
It keeps the named principal's name, so the sessions, route ids and learning it touches are that
principal's.

A delegate may also bound what it serves by a third principal's view (``x-skill-router-within:
NAME``): the ops console routing "as" a principal for a signed-in operator sends the operator's
name, so the operator never sees through another principal more than its own view holds
(``within``: the catalogs both see, both sides' deny globs; the roles stay). Pure.
"""

from __future__ import annotations

from router.access.model import DELEGATE, EVERY_CATALOG, Principal
from router.errors import PermissionDenied

PRINCIPAL_KEY = "x-skill-router-principal"
WITHIN_KEY = "x-skill-router-within"
NEEDS_DELEGATE = (f"the metadata {PRINCIPAL_KEY} requires role {DELEGATE}: only a door holding "
                  "it may act for its callers")


def _catalogs(delegate: tuple[str, ...], named: tuple[str, ...]) -> tuple[str, ...]:
    if delegate == (EVERY_CATALOG,):
        return named
    if named == (EVERY_CATALOG,):
        return delegate
    allowed = set(delegate)
    return tuple(c for c in named if c in allowed)


def delegated(delegate: Principal, named: Principal) -> Principal:
    """``named`` as ``delegate`` may serve it; PermissionDenied when ``delegate`` may not
    delegate."""
    if not delegate.may(DELEGATE):
        raise PermissionDenied(NEEDS_DELEGATE)
    deny = tuple(dict.fromkeys((*named.deny, *delegate.deny)))
    return Principal(named.name, named.roles & delegate.roles,
                     _catalogs(delegate.catalogs, named.catalogs), deny)


def within(served: Principal, bound: Principal) -> Principal:
    """``served`` seeing no more than ``bound``'s view (its roles and name unchanged)."""
    deny = tuple(dict.fromkeys((*served.deny, *bound.deny)))
    return Principal(served.name, served.roles, _catalogs(bound.catalogs, served.catalogs), deny)


def unknown_principal(name: str, key: str = PRINCIPAL_KEY) -> PermissionDenied:
    return PermissionDenied(f"{key} names {name!r}, which is no principal of this "
                            "server's principals file")
