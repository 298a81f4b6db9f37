"""The HTTP door as an OAuth 2.1 resource server, as the MCP authorization spec has it: with
an ``oidc`` section in the door's principals file (``router.access.oidc``) it serves its
protected resource metadata (RFC 9728) and names it in every 401.

- **Metadata.** ``GET /.well-known/oauth-protected-resource/mcp`` (the path-suffixed form the
  MCP SDK's clients ask first) and ``/.well-known/oauth-protected-resource`` answer, with no
  token, the SDK's ``ProtectedResourceMetadata``: ``resource`` the door's ``/mcp`` URL,
  ``authorization_servers`` the issuer, ``bearer_methods_supported: ["header"]`` and the
  algorithms it accepts. The ``Host`` is checked as for ``/mcp`` (421 else).
- **The door's URL.** ``mcp.resource_url`` (``--resource-url``), e.g.
  ``https://router.example.com/mcp``, the URL hosts are given; without it, the address the
  door listens on (the scheme and the local address and port of the request's connection),
  right for a door reached directly, not behind a proxy. Never the request's ``Host`` header,
  which the caller writes (a ``Host`` holding a quote would add parameters to the 401).
- **401.** ``WWW-Authenticate: Bearer realm="skill-router", resource_metadata="<the absolute
  metadata URL>"`` (``router.mcp.auth.BearerGate``), so a host finds the issuer and asks the
  user to sign in there; the token it then sends must carry ``oidc.audience``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from router.access.callers import LiveTable
from router.access.oidc import OidcSettings
from router.errors import InvalidRequest

WELL_KNOWN = "/.well-known/oauth-protected-resource"
DOOR_PATH = "/mcp"
RESOURCE_NAME = "skill-router"


def check_resource_url(url: str, path: str) -> str:
    """``mcp.resource_url`` checked: an absolute http(s) URL ending in the door's ``path``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or \
            parts.fragment or not parts.path.rstrip("/").endswith(path):
        raise InvalidRequest(f"mcp.resource_url must be the door's absolute URL ending in "
                             f"{path}, e.g. https://router.example.com{path}, not {url!r}")
    return url.rstrip("/")


@dataclass(frozen=True)
class ResourceServer:
    """What the metadata says and where it is: the ``oidc`` section of the principals in use
    (after a SIGHUP, the new one); ``resource_url`` "" = from each request."""

    principals: LiveTable
    path: str = DOOR_PATH
    resource_url: str = ""

    @property
    def oidc(self) -> OidcSettings | None:
        check = self.principals.table.oidc
        return check.settings if check is not None else None

    def resource(self, scope: Scope) -> str:
        """The door's URL, as configured, else the address the door listens on (the request's
        local socket): never the request's ``Host``, which the caller writes."""
        if self.resource_url:
            return self.resource_url
        server = scope.get("server")
        host, port = (str(server[0]), server[1]) if server else ("localhost", None)
        host = f"[{host}]" if ":" in host else host
        where = f"{host}:{int(port)}" if port else host
        return f"{'https' if scope.get('scheme') == 'https' else 'http'}://{where}{self.path}"

    def metadata_url(self, scope: Scope) -> str:
        return str(build_resource_metadata_url(AnyHttpUrl(self.resource(scope))))

    def challenge(self, scope: Scope) -> str:
        """The ``resource_metadata`` parameter of a 401's ``WWW-Authenticate`` ("" while the
        principals have no oidc section)."""
        return f'resource_metadata="{self.metadata_url(scope)}"' if self.oidc else ""

    def metadata(self, scope: Scope) -> ProtectedResourceMetadata | None:
        oidc = self.oidc
        if oidc is None:
            return None
        return ProtectedResourceMetadata.model_validate({
            "resource": self.resource(scope), "authorization_servers": [oidc.issuer],
            "bearer_methods_supported": ["header"],
            "resource_signing_alg_values_supported": list(oidc.algorithms),
            "resource_name": RESOURCE_NAME})


class ProtectedResource:
    """ASGI middleware answering the metadata paths (GET, no token); the rest passes on."""

    def __init__(self, app: ASGIApp, server: ResourceServer,
                 security: TransportSecuritySettings) -> None:
        self.app, self.server = app, server
        self._paths = frozenset({WELL_KNOWN, WELL_KNOWN + server.path})
        self._security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").rstrip("/") not in self._paths:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = await self._security.validate_request(request, is_post=False)
        if response is None and request.method not in ("GET", "HEAD"):
            response = Response("method not allowed", 405, {"Allow": "GET, HEAD"})
        metadata = self.server.metadata(scope) if response is None else None
        if response is None and metadata is None:
            response = Response("no oidc section in the door's principals file", 404)
        if response is None and metadata is not None:
            response = Response(metadata.model_dump_json(exclude_none=True), 200,
                                {"Cache-Control": "public, max-age=3600"},
                                media_type="application/json")
        assert response is not None
        await response(scope, receive, send)
