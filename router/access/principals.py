"""The principals file: who may call, with which roles, seeing which catalogs (pure parse, plus a
small file loader).

```yaml
principals:
  - name: payments-gateway
    token_sha256: "<64 hex>"        # sha256 of its bearer token; tokens are never stored
    roles: [route]                   # route, ops, admin, delegate
    catalogs: [payments, org]        # what it may see, in precedence order; "*" = every catalog
    deny: ["internal-*"]             # optional skill-name globs hidden from it
    client_cert_subject: "CN=payments-gateway"   # optional: a client certificate names it
    rate: {per_second: 5, burst: 10}  # optional: its calls' allowance (router.access.rates)
    subject: payments-gateway-client # optional: a JWT whose oidc.principal_claim is this
oidc:                                # optional: JWT callers (router.access.oidc)
  issuer: https://idp.example.com
  audience: skill-router
```

Every problem is named with its line (``FILE:LINE: ...``, from yaml's node marks) and the whole
list is one ``InvalidRequest``: a bad file is a start-up error. A principal without
``token_sha256``, ``client_cert_subject`` and ``subject`` is reachable only by delegation;
``subject`` needs the ``oidc`` section.
The file parses into a ``router.access.table.PrincipalTable``; a door's accepted tokens join it
in ``router.access.callers.load_table``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from router.access.jwks import shared_key_set, warn_if_plain
from router.access.model import EVERY_CATALOG, ROLES, Principal
from router.access.oidc import JwtCheck, OidcSettings, parse_oidc
from router.access.rates import parse_rate
from router.access.table import Entry, PrincipalTable
from router.errors import InvalidRequest

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
CATALOG = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
DIGEST = re.compile(r"[0-9a-fA-F]{64}")
FIELDS = ("name", "token_sha256", "roles", "catalogs", "deny", "client_cert_subject",
          "subject", "rate")
TOP = ("principals", "oidc")


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []

    def problem(self, node: yaml.Node | None, message: str, line: int = 1) -> None:
        where = _line(node) if node is not None else line
        self.problems.append(f"{self.source}:{where}: {message}")

    def scalar(self, node: yaml.Node, key: str) -> str | None:
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
            self.problem(node, f"{key} must be a string")
            return None
        return str(node.value)

    def strings(self, node: yaml.Node, key: str) -> list[str] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.problem(node, f"{key} must be a list of strings")
            return None
        values = [self.scalar(item, f"each of {key}") for item in node.value]
        return None if None in values else [v for v in values if v is not None]

    def entry(self, node: yaml.Node) -> tuple[Entry, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.problem(node, f"each principal must be a mapping ({', '.join(FIELDS)})")
            return None
        fields: dict[str, yaml.Node] = {}
        for key_node, value in node.value:
            key = str(key_node.value)
            if key not in FIELDS:
                self.problem(key_node, f"unknown field {key!r}; use {', '.join(FIELDS)}")
            elif key in fields:
                self.problem(key_node, f"{key} given twice")
            else:
                fields[key] = value
        before = len(self.problems)
        name = self._name(fields, node)
        digest = self._digest(fields)
        roles = self._roles(fields, node)
        catalogs = self._catalogs(fields, node)
        deny = self.strings(fields["deny"], "deny") if "deny" in fields else []
        if deny is not None and any(not glob.strip() for glob in deny):
            self.problem(fields["deny"], "deny globs must not be empty")
        subject = self.scalar(fields["client_cert_subject"], "client_cert_subject") \
            if "client_cert_subject" in fields else ""
        claim = self.scalar(fields["subject"], "subject") if "subject" in fields else ""
        rate = parse_rate(fields["rate"], self.problem) if "rate" in fields else None
        if len(self.problems) > before or name is None or roles is None or catalogs is None:
            return None
        principal = Principal(name, frozenset(roles), tuple(catalogs), tuple(deny or ()))
        return Entry(principal, digest, (subject or "").strip(),
                     claim=(claim or "").strip(), rate=rate), fields.get("name", node)

    def _name(self, fields: dict[str, yaml.Node], node: yaml.Node) -> str | None:
        if "name" not in fields:
            self.problem(node, "a principal needs a name")
            return None
        name = self.scalar(fields["name"], "name")
        if name is not None and not NAME.fullmatch(name):
            self.problem(fields["name"], f"name {name!r} must match {NAME.pattern}")
            return None
        return name

    def _digest(self, fields: dict[str, yaml.Node]) -> bytes:
        if "token_sha256" not in fields:
            return b""
        value = self.scalar(fields["token_sha256"], "token_sha256")
        if value is None:
            return b""
        if not DIGEST.fullmatch(value):
            self.problem(fields["token_sha256"], "token_sha256 must be 64 hex digits, the "
                         "sha256 of the token (e.g. printf %s TOKEN | sha256sum)")
            return b""
        return bytes.fromhex(value)

    def _roles(self, fields: dict[str, yaml.Node], node: yaml.Node) -> list[str] | None:
        if "roles" not in fields:
            self.problem(node, f"a principal needs roles (any of {', '.join(ROLES)})")
            return None
        roles = self.strings(fields["roles"], "roles")
        if roles is None:
            return None
        unknown = [r for r in roles if r not in ROLES]
        if unknown or not roles:
            self.problem(fields["roles"], f"roles must be some of {', '.join(ROLES)}"
                         + (f" (not {', '.join(map(repr, unknown))})" if unknown else ""))
            return None
        return roles

    def _catalogs(self, fields: dict[str, yaml.Node], node: yaml.Node) -> list[str] | None:
        if "catalogs" not in fields:
            self.problem(node, 'a principal needs catalogs: a list of catalog names, or "*"')
            return None
        value = fields["catalogs"]
        if isinstance(value, yaml.ScalarNode) and value.value == EVERY_CATALOG:
            return [EVERY_CATALOG]
        names = self.strings(value, "catalogs")
        if names is None:
            return None
        if names == [EVERY_CATALOG]:
            return names
        bad = [n for n in names if not CATALOG.fullmatch(n)]
        if bad or len(set(names)) != len(names):
            self.problem(value, f'catalogs must be distinct names matching {CATALOG.pattern} '
                         f'or "*" alone' + (f" (not {', '.join(map(repr, bad))})" if bad else ""))
            return None
        return names


def parse_principals(text: str, source: str = "<principals>") -> PrincipalTable:
    """The table of a principals file's text; InvalidRequest naming every problem's line."""
    parser = _Parser(source)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = int(mark.line) + 1 if mark is not None else 1
        raise InvalidRequest(f"{source}:{line}: not valid YAML: "
                             f"{getattr(exc, 'problem', None) or exc}") from exc
    top: Any = None
    if isinstance(root, yaml.MappingNode):
        top = {str(k.value): v for k, v in root.value}
    if top is None or "principals" not in top or not set(top) <= set(TOP):
        parser.problem(root, "the file must be a mapping with one key, principals: a list "
                             "(and optionally oidc: JWT callers)")
    elif not isinstance(top["principals"], yaml.SequenceNode) or not top["principals"].value:
        parser.problem(top["principals"], "principals must be a non-empty list")
    else:
        oidc = parse_oidc(top["oidc"], parser.problem) if "oidc" in top else None
        return _table(parser, top["principals"].value, oidc)
    raise InvalidRequest("\n".join(parser.problems))


def _table(parser: _Parser, nodes: list[yaml.Node],
           oidc: OidcSettings | None) -> PrincipalTable:
    entries: list[Entry] = []
    seen: dict[str, dict[Any, str]] = {"name": {}, "token": {}, "subject": {}, "JWT subject": {}}
    for node in nodes:
        parsed = parser.entry(node)
        if parsed is None:
            continue
        entry, where = parsed
        if entry.claim and oidc is None:
            parser.problem(where, f"principal {entry.principal.name!r} has a subject (a JWT "
                                  "claim) but the file has no oidc section")
        for kind, key in (("name", entry.principal.name), ("token", entry.digest),
                          ("subject", entry.subject), ("JWT subject", entry.claim)):
            if not key:
                continue
            other = seen[kind].get(key)
            if other is not None:
                parser.problem(where, f"principal {entry.principal.name!r} has the same {kind} "
                                      f"as {other!r}")
            seen[kind][key] = entry.principal.name
        entries.append(entry)
    if parser.problems:
        raise InvalidRequest("\n".join(parser.problems))
    if oidc is None:
        return PrincipalTable(entries, parser.source)
    warn_if_plain(oidc.jwks_url or oidc.issuer, "oidc.jwks_url" if oidc.jwks_url else
                  "oidc.issuer")
    keys = shared_key_set(oidc.jwks_url, oidc.issuer)
    return PrincipalTable(entries, parser.source, JwtCheck(oidc, keys))


def load_principals(path: str) -> PrincipalTable:
    """The table of the principals file at ``path``; InvalidRequest when it cannot be read or
    is not valid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"cannot read the principals file {path}: {exc}") from exc
    return parse_principals(text, path)
