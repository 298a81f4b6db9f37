"""Which roles each SkillRouter method needs (pure).

A call needs one of the roles listed for its method: ``route`` for what a gateway does in a turn,
``ops`` for what an operator reads, ``admin`` for what changes the index or the learned data.
Explain and ListSkills serve both a gateway and an operator. A method missing from the table
needs ``admin`` (a new method is closed until it is placed here). ``require`` is the one role
check: the gRPC service (per method and for ``all_catalogs``), the MCP door (per request) and
the console (per page and form) all call it and word its refusal their way.
"""

from __future__ import annotations

from router.access.model import ADMIN, OPS, ROUTE, Principal
from router.errors import PermissionDenied

METHOD_ROLES: dict[str, tuple[str, ...]] = {
    "Route": (ROUTE,), "Activate": (ROUTE,), "ReadResource": (ROUTE,),
    "ListResources": (ROUTE,), "ValidateArguments": (ROUTE,), "Feedback": (ROUTE,),
    "Explain": (ROUTE, OPS), "ListSkills": (ROUTE, OPS),
    "SkillStats": (OPS,), "ListExamples": (OPS,), "GetIndexInfo": (OPS,),
    "Reindex": (ADMIN,), "PurgeExamples": (ADMIN,),
    "ApproveSkill": (ADMIN,), "RevokeApproval": (ADMIN,),
}


def roles_for(method: str) -> tuple[str, ...]:
    """The roles that may call ``method`` (its bare name, e.g. ``Route``)."""
    return METHOD_ROLES.get(method, (ADMIN,))


def requires_role(roles: tuple[str, ...]) -> str:
    """The refusal message for a call needing one of ``roles``."""
    return f"requires role {' or '.join(roles)}"


def holdings(principal: Principal) -> str:
    """``principal 'NAME' holds ROLES`` (``this caller`` when it has no name)."""
    who = f"principal {principal.name!r}" if principal.name else "this caller"
    return f"{who} holds {', '.join(sorted(principal.roles)) or 'no role'}"


class RoleMissing(PermissionDenied):
    """``principal`` holds none of ``roles``, which ``what`` (a method, a page, a request
    field) needs: ``{what} requires role A or B``, then with ``say_held`` what it holds."""

    def __init__(self, principal: Principal, roles: tuple[str, ...], what: str, *,
                 say_held: bool = False) -> None:
        message = f"{what} {requires_role(roles)}"
        super().__init__(f"{message}; {holdings(principal)}" if say_held else message)
        self.principal, self.roles, self.what = principal, roles, what


def require(principal: Principal, roles: str | tuple[str, ...], what: str, *,
            say_held: bool = False) -> None:
    """The role check of every door: RoleMissing (a PermissionDenied) when ``principal``
    holds none of ``roles`` (one role, or several of which any one will do)."""
    needed = (roles,) if isinstance(roles, str) else roles
    if not any(principal.may(role) for role in needed):
        raise RoleMissing(principal, needed, what, say_held=say_held)
