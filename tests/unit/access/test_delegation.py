"""Delegation and the role table: never more than the delegate itself may see or do."""

from __future__ import annotations

import pytest

from router.access.delegation import WITHIN_KEY, delegated, within
from router.access.model import ADMIN, DELEGATE, OPS, ROUTE, Principal
from router.access.roles import METHOD_ROLES, require, roles_for
from router.errors import PermissionDenied
from router.v1 import router_pb2 as pb

DOOR = Principal("door", frozenset({ROUTE, OPS, DELEGATE}), ("org", "payments"), ("beta-*",))


def test_the_served_principal_is_the_intersection() -> None:
    team = Principal("team", frozenset({ROUTE, ADMIN}), ("payments", "search", "org"),
                     ("internal-*",))
    served = delegated(DOOR, team)
    assert served.name == "team"  # its sessions and learning are the team's
    assert served.roles == frozenset({ROUTE})  # admin is not the door's to give
    assert served.catalogs == ("payments", "org")  # the team's order, the door's limit
    assert served.deny == ("internal-*", "beta-*")


def test_every_catalog_on_one_side_yields_the_other() -> None:
    everything = Principal("all", frozenset({ROUTE}))
    assert delegated(DOOR, everything).catalogs == ("org", "payments")
    wide = Principal("wide", frozenset({ROUTE, DELEGATE}))
    assert delegated(wide, Principal("t", frozenset({ROUTE}), ("x",))).catalogs == ("x",)


def test_within_bounds_the_view_and_keeps_the_roles() -> None:
    team = Principal("team", frozenset({ROUTE}), ("payments", "org"), ("beta-*",))
    operator = Principal("op", frozenset({OPS}), ("org", "search"), ("internal-*",))
    bounded = within(team, operator)
    assert (bounded.name, bounded.roles) == ("team", frozenset({ROUTE}))
    assert bounded.catalogs == ("org",) and bounded.deny == ("beta-*", "internal-*")
    assert within(team, Principal("all", frozenset({OPS}))).catalogs == team.catalogs


def test_within_needs_delegate_and_a_known_name() -> None:
    from router.access.table import Entry, PrincipalTable
    from router.service.access import resolve

    gateway = Principal("gw", frozenset({ROUTE, OPS}))
    table = PrincipalTable([Entry(DOOR, subject="CN=door"), Entry(gateway, subject="CN=gw"),
                            Entry(Principal("op", frozenset({OPS}), ("org",)))])
    served = resolve(table, [(WITHIN_KEY, "op")], "CN=door")
    assert served is not None and served.principal.catalogs == ("org",)
    with pytest.raises(PermissionDenied, match=f"{WITHIN_KEY} names 'nobody'"):
        resolve(table, [(WITHIN_KEY, "nobody")], "CN=door")
    with pytest.raises(PermissionDenied, match="requires role delegate"):
        resolve(table, [(WITHIN_KEY, "op")], "CN=gw")


def test_a_caller_without_delegate_may_not_delegate() -> None:
    with pytest.raises(PermissionDenied, match="requires role delegate"):
        delegated(Principal("gw", frozenset({ROUTE, OPS, ADMIN})), DOOR)


def test_the_role_table_covers_every_method_of_the_service() -> None:
    methods = set(pb.DESCRIPTOR.services_by_name["SkillRouter"].methods_by_name)
    assert methods == set(METHOD_ROLES)
    assert roles_for("SomethingNew") == (ADMIN,)


@pytest.mark.parametrize(("method", "role"), [("Reindex", "admin"), ("SkillStats", "ops"),
                                              ("Route", "route")])
def test_a_call_outside_the_roles_says_which_role_it_needs(method: str, role: str) -> None:
    nobody = Principal("nobody", frozenset({DELEGATE}))
    with pytest.raises(PermissionDenied, match=f"{method} requires role {role}"):
        require(nobody, roles_for(method), method, say_held=True)
    require(Principal("p", frozenset({role})), roles_for(method), method, say_held=True)
