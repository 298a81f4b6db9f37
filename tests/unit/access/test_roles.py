"""The one role check: what it refuses, and how its refusal is worded."""

from __future__ import annotations

import pytest

from router.access.model import ADMIN, DELEGATE, OPS, ROUTE, Principal
from router.access.roles import RoleMissing, holdings, require, roles_for
from router.errors import PermissionDenied

GATEWAY = Principal("gw", frozenset({ROUTE}))


def test_a_principal_holding_one_of_the_roles_passes() -> None:
    require(GATEWAY, ROUTE, "Route")
    require(GATEWAY, (OPS, ROUTE), "Explain")
    require(Principal("ops", frozenset({OPS})), roles_for("SkillStats"), "SkillStats")


def test_a_missing_role_is_a_permission_denied_naming_what_needs_it() -> None:
    with pytest.raises(PermissionDenied) as caught:
        require(GATEWAY, (OPS, ADMIN), "all_catalogs")
    refused = caught.value
    assert isinstance(refused, RoleMissing)
    assert str(refused) == "all_catalogs requires role ops or admin"
    assert refused.principal is GATEWAY and refused.roles == (OPS, ADMIN)
    assert refused.what == "all_catalogs"


def test_say_held_adds_what_the_principal_holds() -> None:
    with pytest.raises(RoleMissing, match=r"^Reindex requires role admin; principal 'gw' "
                                          r"holds route$"):
        require(GATEWAY, roles_for("Reindex"), "Reindex", say_held=True)
    with pytest.raises(RoleMissing, match=r"; this caller holds no role$"):
        require(Principal("", frozenset()), ROUTE, "Route", say_held=True)


def test_holdings_lists_the_roles_sorted() -> None:
    assert holdings(Principal("d", frozenset({ROUTE, DELEGATE}))) == \
        "principal 'd' holds delegate, route"
