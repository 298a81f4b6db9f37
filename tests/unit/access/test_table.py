"""The principal table: lookups by token, subject and name, and accepted tokens joining it."""

from __future__ import annotations

import hashlib

import pytest

from router.access.model import ADMIN, DELEGATE, OPS, ROUTE, Principal
from router.access.table import Entry, PrincipalTable
from router.errors import InvalidRequest

TEAM = Entry(Principal("team", frozenset({ROUTE}), ("payments",)),
             hashlib.sha256(b"tok-team").digest(), "CN=team")
DOOR = Entry(Principal("door", frozenset({ROUTE, DELEGATE})), subject="CN=door")


def test_a_table_finds_each_principal_by_its_proofs() -> None:
    table = PrincipalTable((TEAM, DOOR), "p.yaml")
    assert table.by_token(b"tok-team") is TEAM and table.accepts(b"tok-team")
    assert table.by_token(b"tok-other") is None and not table.accepts(b"tok-other")
    assert table.by_token(None) is None and table.by_token(b"") is None
    assert table.by_subject("CN=door") is DOOR and table.by_subject("") is None
    assert table.by_name("team") is TEAM and table.by_name("nobody") is None
    assert len(table) == 2 and not table.has_tokens


def test_an_empty_table_is_false_and_accepts_nobody() -> None:
    table = PrincipalTable()
    assert not table and len(table) == 0
    assert not table.accepts(b"anything")


def test_accepted_tokens_join_as_route_ops_admin_principals_on_every_catalog() -> None:
    table = PrincipalTable((TEAM,), "p.yaml").with_tokens((b"legacy", b"legacy"))
    entry = table.by_token(b"legacy")
    assert entry is not None and not entry.from_file and table.has_tokens
    assert entry.principal.name == hashlib.sha256(b"legacy").hexdigest()
    assert entry.principal.roles == frozenset({ROUTE, OPS, ADMIN})
    assert entry.principal.sees_everything
    assert len(table) == 2  # a token given twice is one principal
    assert table.by_token(b"tok-team") is TEAM  # the file's principals stay


def test_a_token_that_is_also_a_principals_is_refused() -> None:
    with pytest.raises(InvalidRequest, match=r"also the token of principal 'team' in p\.yaml"):
        PrincipalTable((TEAM,), "p.yaml").with_tokens((b"tok-team",))
