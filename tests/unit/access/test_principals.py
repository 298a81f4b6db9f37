"""The principals file: parsing, every problem named with its line, lookups, token-file tokens."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from router.access.model import ADMIN, DELEGATE, OPS, ROUTE
from router.access.principals import load_principals, parse_principals
from router.errors import InvalidRequest


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


GOOD = f"""\
principals:
  - name: payments-gateway
    token_sha256: "{sha('tok-pay')}"
    roles: [route]
    catalogs: [payments, org]
    deny: ["internal-*"]
  - name: ops-team
    token_sha256: "{sha('tok-ops').upper()}"
    roles: [ops, admin]
    catalogs: "*"
  - name: door
    client_cert_subject: "CN=door"
    roles: [route, delegate]
    catalogs: ["*"]
"""


def test_a_good_file_names_each_principal_with_its_roles_and_view() -> None:
    table = parse_principals(GOOD, "p.yaml")
    pay = table.by_token(b"tok-pay")
    assert pay is not None and pay.from_file
    assert pay.principal.name == "payments-gateway"
    assert pay.principal.roles == frozenset({ROUTE})
    assert pay.principal.catalogs == ("payments", "org")
    assert pay.principal.deny == ("internal-*",)
    ops = table.by_token(b"tok-ops")  # the digest is matched whatever its case
    assert ops is not None and ops.principal.roles == frozenset({OPS, ADMIN})
    assert ops.principal.catalogs == ("*",) and ops.principal.sees_everything
    door = table.by_subject("CN=door")
    assert door is not None and door.principal.may(DELEGATE) and door.digest == b""
    assert table.by_name("door") is door
    assert table.by_token(b"tok-pa") is None and table.by_token(None) is None
    assert table.by_subject("CN=other") is None and table.by_subject("") is None


@pytest.mark.parametrize(("text", "line", "says"), [
    ("principals: []\n", 1, "non-empty list"),
    ("people:\n  - name: a\n", 1, "one key, principals"),
    ("principals:\n  - name: a\n    roles: [route]\n    catalogs: '*'\n    colour: red\n", 5,
     "unknown field 'colour'"),
    ("principals:\n  - name: a\n    roles: [route, root]\n    catalogs: '*'\n", 3,
     "not 'root'"),
    ("principals:\n  - name: a\n    roles: []\n    catalogs: '*'\n", 3, "roles must be"),
    ("principals:\n  - name: a\n    token_sha256: abc\n    roles: [ops]\n    catalogs: '*'\n",
     3, "64 hex digits"),
    ("principals:\n  - name: a\n    roles: [ops]\n", 2, "needs catalogs"),
    ("principals:\n  - name: a\n    roles: [ops]\n    catalogs: [Payments]\n", 4,
     "not 'Payments'"),
    ("principals:\n  - name: a\n    roles: [ops]\n    catalogs: ['*', org]\n", 4, '"*" alone'),
    ("principals:\n  - roles: [ops]\n    catalogs: '*'\n", 2, "needs a name"),
    ("principals:\n  - name: 'has space'\n    roles: [ops]\n    catalogs: '*'\n", 2, "must match"),
    ("principals:\n  - name: a\n    roles: [ops]\n    catalogs: '*'\n"
     "  - name: a\n    roles: [ops]\n    catalogs: '*'\n", 5, "same name as 'a'"),
    ("principals:\n  - name: a\n    roles: [ops\n", 4, "not valid YAML"),
    ("principals:\n  - name: a\n    roles: [ops]\n    catalogs: '*'\n    deny: ['']\n", 5,
     "must not be empty"),
])
def test_every_problem_is_named_with_its_line(text: str, line: int, says: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_principals(text, "p.yaml")
    assert f"p.yaml:{line}: " in str(caught.value)
    assert says in str(caught.value)


def test_all_problems_are_reported_at_once() -> None:
    text = (f"principals:\n  - name: a\n    roles: [boss]\n    catalogs: '*'\n"
            f"  - name: b\n    token_sha256: '{sha('x')}'\n    roles: [ops]\n    catalogs: '*'\n"
            f"  - name: c\n    token_sha256: '{sha('x')}'\n    roles: [ops]\n    catalogs: '*'\n")
    with pytest.raises(InvalidRequest) as caught:
        parse_principals(text, "p.yaml")
    problems = str(caught.value).splitlines()
    assert problems[0].startswith("p.yaml:3: ")
    assert problems[1].startswith("p.yaml:9: ") and "same token as 'b'" in problems[1]


def test_tokens_of_the_token_file_join_as_route_ops_admin_principals() -> None:
    table = parse_principals(GOOD).with_tokens((b"legacy",))
    legacy = table.by_token(b"legacy")
    assert legacy is not None and not legacy.from_file
    assert legacy.principal.name == sha("legacy")
    assert legacy.principal.roles == frozenset({ROUTE, OPS, ADMIN})
    assert legacy.principal.sees_everything
    with pytest.raises(InvalidRequest, match="also the token of principal 'payments-gateway'"):
        parse_principals(GOOD).with_tokens((b"tok-pay",))


def test_the_loader_reads_a_file_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "principals.yaml"
    path.write_text(GOOD)
    assert len(load_principals(str(path))) == 3
    path.write_text(GOOD.replace("[route]", "[rout]"))
    with pytest.raises(InvalidRequest, match=f"{path}:4: "):
        load_principals(str(path))
    with pytest.raises(InvalidRequest, match="cannot read the principals file"):
        load_principals(str(tmp_path / "missing.yaml"))
