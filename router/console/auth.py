"""Who may use the ops console, and CSRF tokens for its forms.

- **Tokens.** With accepted tokens every page needs one: ``Authorization: Bearer <token>`` or
  the session cookie the login form sets (``POST /login``). The cookie holds a random session
  id kept by the console (``router.console.sessions``): it expires after ``ops.session_seconds``
  and is removed at logout, after which the old cookie gets the login form (401) like any other
  caller without a valid one. A session is bound to the sha256 of the token it signed in with:
  every request checks that this token is still accepted, as the same principal's, so a
  session ends with its token (a principals file reloaded without it, or giving it to another
  principal). A login with a JWT of the principals file's provider (``oidc``) lasts until the
  token expires at the latest, and while the file still names that principal by the token's
  subject. It is HttpOnly, SameSite=Strict, Path=/, and ``Secure`` when the
  console is reached over TLS (a proxy of ``ops.trusted_proxies`` saying so with
  ``X-Forwarded-Proto``). Tokens are compared in constant time (``router.bearer.accepts``). A
  client address (the connection's peer, or what a trusted proxy forwards:
  ``router.console.forwarded``) with ``ops.login_failures_per_minute`` wrong tokens (login form
  or header) in the last minute is answered 429 until the oldest leaves the minute.
- **Principals.** With a principals file (``ops --principals FILE``, ``ops.principals_file``)
  its tokens are accepted as well, a login's session remembers whose it is, and each caller is
  its principal: its pages need ``ops``, the Reindex and purge forms ``admin`` (403 else), and
  the console calls the service for it (``x-skill-router-principal``; see
  ``router.console.app``). The file is read again on SIGHUP.
- **CSRF.** Every POST form carries a hidden ``csrf`` field: an HMAC, under the same secret,
  of the caller's session (the cookie value, the header token's HMAC, or "anonymous" on a
  console without tokens). A POST whose field is missing or wrong is answered 403, and so is
  one whose ``Origin`` header names another host (a POST without ``Origin`` is judged by its
  field alone).
- **Host.** A console without tokens answers only requests naming a loopback host (or the
  address it listens on) in ``Host``, else 421: a page that rebinds its own name to 127.0.0.1
  (DNS rebinding) cannot read the open console. A gated console answers any Host.
- **The bind rule**, as the MCP door's but with no opt-out: beyond loopback without tokens
  the console refuses to start.
Pure: no HTTP framework, so it tests without a server.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from router.access.callers import LiveTable
from router.access.oidc import seconds_left
from router.access.table import Entry
from router.bearer import accepts, bearer_token, is_loopback
from router.console.sessions import LoginThrottle, SessionTable
from router.errors import InvalidRequest

COOKIE = "skill_router_ops"
JWT_SESSION = b"jwt\0"  # a session signed in with a JWT holds this and the principal's subject
OPEN_SESSION = "anonymous"  # the one session of a console without tokens
GIVE = "--principals FILE, --accept-token-file FILE or --accept-token-env VAR " \
       "(ops.principals_file, ops.accept_token_file, ops.accept_token_env); inside serve: " \
       "the server's own tokens"


def _mac(secret: bytes, purpose: str, value: bytes) -> str:
    return hmac.new(secret, purpose.encode("ascii") + b"\0" + value, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ConsoleAccess:
    """The accepted tokens (() = an open, loopback-only console), this process's secret, the
    signed-in sessions, the failed logins and the principals (None: no principals file)."""

    tokens: tuple[bytes, ...] = ()
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    sessions: SessionTable = field(default_factory=lambda: SessionTable(8 * 3600.0))
    throttle: LoginThrottle = field(default_factory=lambda: LoginThrottle(10))
    principals: LiveTable | None = None

    @property
    def gated(self) -> bool:
        return bool(self.tokens) or self.principals is not None

    def _entry(self, token: bytes | None) -> Entry | None:
        return self.principals.table.by_token(token) if self.principals is not None else None

    def _accepts(self, token: bytes | None) -> bool:
        if self.principals is not None:
            return self._entry(token) is not None
        return accepts(self.tokens, token)

    def _signed_in(self, cookie: str) -> tuple[bool, Entry | None]:
        """Whether ``cookie`` is a live session whose token is still accepted, as the same
        principal's, and that principal's entry (None without a principals file). A session
        whose token is no longer accepted is closed."""
        held = self.sessions.holder(cookie) if cookie else None
        if held is None:
            return False, None
        owner, digest = held
        entry = self.principals.table.by_name(owner) if self.principals is not None else None
        if self.principals is None:
            still = False
            for token in self.tokens:  # every one compared, as router.bearer.accepts does
                still |= hmac.compare_digest(hashlib.sha256(token).digest(), digest)
        elif digest.startswith(JWT_SESSION):
            still = entry is not None and bool(entry.claim) and hmac.compare_digest(
                JWT_SESSION + entry.claim.encode("utf-8"), digest)
        else:
            still = entry is not None and hmac.compare_digest(entry.digest, digest)
        if not still or not digest:
            self.sessions.close(cookie)
            return False, None
        return True, entry

    def caller_entry(self, headers: Mapping[str, str],
                     cookies: Mapping[str, str]) -> Entry | None:
        """The principal table's entry of a caller with a session (None without a principals
        file)."""
        if self.principals is None:
            return None
        presented = bearer_token(headers.get("authorization"))
        if presented is not None:
            return self._entry(presented)
        return self._signed_in(cookies.get(COOKIE, ""))[1]

    def session(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
        """The caller's session id, or None when the console has tokens and the caller
        presents no accepted token (header) or live session (cookie)."""
        if not self.gated:
            return OPEN_SESSION
        presented = bearer_token(headers.get("authorization"))
        if presented is not None:
            return _mac(self.secret, "header", presented) if self._accepts(presented) else None
        cookie = cookies.get(COOKIE, "")
        return cookie if self._signed_in(cookie)[0] else None

    def login(self, presented: str) -> str | None:
        """A new session for a token typed into the login form, None if not accepted."""
        token = presented.strip().encode("utf-8")
        if not token or not self._accepts(token):
            return None
        entry = self._entry(token)
        digest = hashlib.sha256(token).digest()
        if entry is not None and entry.claim and not hmac.compare_digest(entry.digest, digest):
            return self.sessions.open(entry.principal.name,  # a JWT: until it expires
                                      JWT_SESSION + entry.claim.encode("utf-8"),
                                      seconds_left(token, time.time()))
        return self.sessions.open(entry.principal.name if entry is not None else "", digest)

    def logout(self, session: str) -> None:
        self.sessions.close(session)

    def csrf_for(self, session: str) -> str:
        return _mac(self.secret, "csrf", session.encode("ascii", "replace"))

    def csrf_ok(self, session: str, presented: str) -> bool:
        return hmac.compare_digest(self.csrf_for(session).encode("ascii"),
                                   presented.encode("ascii", "replace"))


def same_origin(origin: str | None, host: str) -> bool:
    """Whether a request's ``Origin`` (None: not sent) names the host it was sent to."""
    if origin is None:
        return True
    try:
        netloc = urlsplit(origin.strip()).netloc
    except ValueError:
        return False
    return bool(netloc) and netloc.lower() == host.strip().lower()


def host_name(header: str) -> str:
    """The host of a ``Host`` header without its port, lower case; IPv6 without brackets."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(access: ConsoleAccess, header: str, bound: str) -> bool:
    """Whether a request naming ``header`` as its Host may be answered (see the module)."""
    if access.gated:
        return True
    name = host_name(header)
    return is_loopback(name) or (bool(name) and name == bound.strip("[]").lower())


def console_access(host: str, tokens: Sequence[bytes], *, session_seconds: float = 8 * 3600.0,
                   login_failures: int = 10,
                   principals: LiveTable | None = None) -> ConsoleAccess:
    """Apply the bind rule for a console on ``host``: InvalidRequest when it would listen
    beyond loopback with no accepted token. Sessions last ``session_seconds``; a client gets
    ``login_failures`` wrong tokens a minute."""
    if not tokens and principals is None and not is_loopback(host):
        raise InvalidRequest(f"refusing to serve the ops console on {host or 'all interfaces'} "
                             f"with no caller authentication: give accepted tokens with {GIVE}, "
                             "or listen on 127.0.0.1")
    if session_seconds <= 0 or login_failures < 1:
        raise InvalidRequest("ops.session_seconds must be > 0 and "
                             "ops.login_failures_per_minute >= 1")
    return ConsoleAccess(tuple(tokens), sessions=SessionTable(session_seconds),
                         throttle=LoginThrottle(login_failures), principals=principals)
