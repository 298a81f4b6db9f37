"""The principal table: the principals a door knows and how a caller proves to be one (pure).

Each entry is a ``Principal`` and its proofs: the sha256 of its bearer token and/or the subject
of a client certificate. ``PrincipalTable.by_token`` hashes the presented token and compares it
with every entry's digest (``hmac.compare_digest``, no early exit), so the time taken does not
say which matched. Accepted tokens (a door's token file or variable) join the table as
principals named by their sha256 with the roles route, ops and admin on every catalog
(``with_tokens``), never delegate. With an ``oidc`` section (``router.access.oidc``) a token
that no digest matches and that looks like a JWT is verified, and the value of its
``principal_claim`` names the entry whose ``claim`` (the file's ``subject``) it is; a refused
JWT is logged with the reason, never the token. Tables are built by
``router.access.callers.load_table`` and never changed: a reload builds a new one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from router.access.model import ADMIN, EVERY_CATALOG, OPS, ROUTE, Principal
from router.access.oidc import JwtCheck, JwtRefused, looks_like_jwt
from router.access.rates import Rate
from router.errors import InvalidRequest

log = logging.getLogger(__name__)

TOKEN_ROLES = frozenset({ROUTE, OPS, ADMIN})


@dataclass(frozen=True)
class Entry:
    """One principal of the table and how a caller proves to be it."""

    principal: Principal
    digest: bytes = b""  # sha256 of its token (32 bytes), b"" = no token
    subject: str = ""  # the client certificate subject that names it, "" = none
    from_file: bool = True  # False: an accepted token outside the principals file
    rate: Rate | None = None  # its calls' allowance (router.access.rates); None = no limit
    claim: str = ""  # the oidc.principal_claim value of a JWT that names it, "" = none


class PrincipalTable:
    """The principals a door knows, looked up by token, certificate subject or name; empty
    when the door authenticates nobody."""

    def __init__(self, entries: Iterable[Entry] = (), source: str = "",
                 oidc: JwtCheck | None = None) -> None:
        self.entries = tuple(entries)
        self.source, self.oidc = source, oidc
        self._by_claim = {e.claim: e for e in self.entries if e.claim}
        self._by_name = {e.principal.name: e for e in self.entries}
        self._by_subject = {e.subject: e for e in self.entries if e.subject}
        self._digests = tuple(e for e in self.entries if e.digest)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def has_tokens(self) -> bool:
        """Whether accepted tokens outside the principals file joined the table."""
        return any(not e.from_file for e in self.entries)

    def by_token(self, token: bytes | None) -> Entry | None:
        """The entry whose token is ``token``; every digest is compared (constant time)."""
        if not token:
            return None
        presented = hashlib.sha256(token).digest()
        found: Entry | None = None
        for entry in self._digests:
            if hmac.compare_digest(entry.digest, presented):
                found = entry
        if found is None and self.oidc is not None and looks_like_jwt(token):
            return self._by_jwt(self.oidc, token)
        return found

    def _by_jwt(self, oidc: JwtCheck, token: bytes) -> Entry | None:
        try:
            value = oidc.claim_of(token)
        except JwtRefused as exc:
            log.warning("refused a JWT caller: %s", exc)
            return None
        entry = self._by_claim.get(value)
        if entry is None:
            log.warning("refused a JWT caller: no principal of %s has subject %s (its %s): "
                        "add one to name this caller", self.source, repr(value)[:120],
                        oidc.settings.principal_claim)
        return entry

    def accepts(self, token: bytes | None) -> bool:
        return self.by_token(token) is not None

    def by_subject(self, subject: str) -> Entry | None:
        return self._by_subject.get(subject) if subject else None

    def by_name(self, name: str) -> Entry | None:
        return self._by_name.get(name)

    def with_tokens(self, tokens: Sequence[bytes]) -> PrincipalTable:
        """This table plus each token as a principal named by its sha256 (roles route, ops and
        admin on "*"). InvalidRequest when a token is also a principal's of the file."""
        added: list[Entry] = []
        for token in dict.fromkeys(tokens):
            digest = hashlib.sha256(token).digest()
            clash = self.by_token(token)
            if clash is not None:
                raise InvalidRequest(f"a token of the token file is also the token of "
                                     f"principal {clash.principal.name!r} in {self.source}: "
                                     "give each caller one token")
            added.append(Entry(Principal(digest.hex(), TOKEN_ROLES, (EVERY_CATALOG,)),
                               digest, from_file=False))
        return PrincipalTable((*self.entries, *added), self.source, self.oidc)
