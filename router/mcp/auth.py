"""Who may call the MCP door over streamable HTTP.

- **Bearer tokens.** ``mcp.accept_token_file`` / ``--accept-token-file`` (one per line) and
  ``mcp.accept_token_env`` / ``--accept-token-env`` (a variable holding comma-separated tokens),
  read by ``router.bearer`` exactly as ``serve`` reads its own. With tokens, every HTTP request
  must carry ``Authorization: Bearer <token>``; a missing or wrong one is answered ``401`` with
  ``WWW-Authenticate: Bearer`` and a JSON body by ``BearerGate``, before any MCP handling. The
  door has no open path (probes use a TCP check). These are the door's *accepted* tokens; the
  token it *presents* to a ``--target`` service is ``--token-file`` / ``SKILL_ROUTER_TOKEN``.
  ``--principals FILE`` (``mcp.principals_file``) accepts the tokens of a principals file too
  and serves each caller as its principal (``router.mcp.principals``). With an ``oidc``
  section there, JWTs of its provider are accepted too (checked off the event loop), and the
  401's challenge names the door's protected resource metadata (``router.mcp.resource``).
- **The bind rule.** Beyond loopback with no accepted tokens the door refuses to start, unless
  ``--allow-unauthenticated`` (``mcp.allow_unauthenticated``) says a proxy in front
  authenticates (a warning is logged).
- **Host and Origin.** The SDK's DNS-rebinding protection stays on whatever the address:
  requests must name an allowed ``Host`` (loopback names, the bound address, and each
  ``--allowed-host`` / ``mcp.allowed_hosts``: ``name`` for any port, ``name:port`` for one)
  else ``421``; a browser ``Origin`` must be one of those hosts over http(s), else ``403``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio.to_thread
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from router.access.callers import LiveTable
from router.access.oidc import looks_like_jwt
from router.bearer import accepts, bearer_token, check_bind, read_tokens
from router.config import McpConfig
from router.door.httpd import DoorLimits
from router.errors import InvalidRequest
from router.mcp.principals import door_principals
from router.mcp.resource import DOOR_PATH, check_resource_url

log = logging.getLogger(__name__)

REALM = "skill-router"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ALL_INTERFACES = frozenset({"", "0.0.0.0", "::", "[::]"})
GIVE = ("--principals FILE, --accept-token-file FILE or --accept-token-env VAR "
        "(mcp.principals_file, mcp.accept_token_file, mcp.accept_token_env)")
OPT_OUT = "--allow-unauthenticated (mcp.allow_unauthenticated)"


@dataclass(frozen=True)
class HttpAccess:
    """What the HTTP door checks: the accepted tokens (() = none), the allowed hosts, its
    connection limits (``router.door.httpd``) and its sessions (``router.mcp.quota``)."""

    tokens: tuple[bytes, ...]
    security: TransportSecuritySettings
    limits: DoorLimits = field(default_factory=DoorLimits)
    sessions_per_caller: int = 100
    session_idle_seconds: float = 1800.0
    principals: LiveTable | None = None  # with a principals file: who each caller is
    resource_url: str = ""  # the door's /mcp URL its OAuth metadata names ("" = per request)


def http_access(host: str, config: McpConfig) -> HttpAccess:
    """Read the accepted tokens and apply the bind rule for a door on ``host``. Raises
    InvalidRequest when a token source is unusable or the door would start open."""
    tokens = read_tokens(config.accept_token_file, config.accept_token_env,
                         env_setting="mcp.accept_token_env")
    principals = door_principals(config) if config.principals_file else None
    if check_bind(host, authenticated=bool(tokens) or principals is not None,
                  allow_unauthenticated=config.allow_unauthenticated, give=GIVE,
                  opt_out=OPT_OUT):
        log.warning("the MCP door listens on %s and authenticates nobody "
                    "(mcp.allow_unauthenticated): anyone who reaches it calls the service "
                    "as the door; keep an authenticating proxy in front", host)
    if config.max_sessions_per_caller < 1 or config.session_idle_seconds <= 0:
        raise InvalidRequest("mcp.max_sessions_per_caller must be >= 1 and "
                             "mcp.session_idle_seconds > 0")
    return HttpAccess(tokens, transport_security(host, config.allowed_hosts),
                      DoorLimits(config.header_timeout_seconds, config.max_connections),
                      config.max_sessions_per_caller, config.session_idle_seconds, principals,
                      check_resource_url(config.resource_url, DOOR_PATH)
                      if config.resource_url else "")


def _host_patterns(host: str) -> list[str]:
    """SDK Host patterns for one allowed host: ``name:port`` as given, ``name`` any port."""
    host = host.strip()
    if host.startswith("["):  # [v6] or [v6]:port
        return [host] if "]:" in host else [host, f"{host}:*"]
    if host.count(":") == 1:  # name:port
        return [host]
    if ":" in host:  # a bare IPv6 address
        host = f"[{host}]"
    return [host, f"{host}:*"]


def transport_security(host: str, allowed: Sequence[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection on: loopback names, ``host`` (unless all interfaces) and
    ``allowed`` as Host values; the same names over http(s) as Origins."""
    names = [*LOOPBACK_HOSTS, *([] if host in ALL_INTERFACES else [host]), *allowed]
    hosts = [pattern for name in names for pattern in _host_patterns(name)]
    unique = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{pattern}" for pattern in unique for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=unique, allowed_origins=origins)


class BearerGate:
    """ASGI middleware: HTTP requests without an accepted bearer token get 401; lifespan and
    everything else pass through."""

    def __init__(self, app: ASGIApp,
                 tokens: Sequence[bytes] | Callable[[bytes | None], bool],
                 challenge: Callable[[Scope], str] | None = None) -> None:
        if not tokens:
            raise ValueError("BearerGate needs at least one token")
        self.app, self._challenge = app, challenge
        self._accepts = tokens if callable(tokens) else \
            (lambda presented, known=tuple(tokens): accepts(known, presented))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization")
        presented = bearer_token(header)
        if presented is not None and looks_like_jwt(presented):  # may fetch the keys
            accepted = await anyio.to_thread.run_sync(self._accepts, presented)
        else:
            accepted = self._accepts(presented)
        if accepted:
            await self.app(scope, receive, send)
            return
        log.debug("refused %s %s: %s token", scope.get("method"), scope.get("path"),
                  "no" if presented is None else "unknown")
        extra = self._challenge(scope) if self._challenge is not None else ""
        await _refuse(send, missing=presented is None, extra=extra)


async def _refuse(send: Send, *, missing: bool, extra: str = "") -> None:
    """401 as RFC 6750 says: no error code when no credentials came, invalid_token else;
    ``extra``: more parameters of the challenge (RFC 9728's resource_metadata)."""
    challenge = f'Bearer realm="{REALM}"' + (f", {extra}" if extra else "")
    if not missing:
        challenge += ', error="invalid_token"'
    body = json.dumps({"error": "invalid_token" if not missing else "unauthorized",
                       "error_description": "missing or invalid bearer token: send the header "
                                            "'Authorization: Bearer <token>' with a token this "
                                            "door accepts"}).encode("utf-8")
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode("ascii")),
                            (b"www-authenticate", challenge.encode("ascii"))]})
    await send({"type": "http.response.body", "body": body})
