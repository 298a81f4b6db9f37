"""Which roles each SkillRouter method needs (pure).

A call needs one of the roles listed for its method: ``route`` for what a gateway does in a turn,
``ops`` for what an operator reads, ``admin`` for what changes the index or the learned data.
Explain and ListSkills serve both a gateway and an operator. A method missing from the table
needs ``admin`` (a new method is closed until it is placed here).
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
}


def roles_for(method: str) -> tuple[str, ...]:
    """The roles that may call ``method`` (its bare name, e.g. ``Route``)."""
    return METHOD_ROLES.get(method, (ADMIN,))


def requires_role(roles: tuple[str, ...]) -> str:
    """The refusal message for a call needing one of ``roles``."""
    return f"requires role {' or '.join(roles)}"


def check_roles(principal: Principal, method: str) -> None:
    """PermissionDenied (``requires role ...``) when ``principal`` may not call ``method``."""
    roles = roles_for(method)
    if not any(principal.may(role) for role in roles):
        who = f"principal {principal.name!r}" if principal.name else "this caller"
        raise PermissionDenied(f"{method} {requires_role(roles)}; {who} holds "
                               f"{', '.join(sorted(principal.roles)) or 'no role'}")
