"""An identity provider for the tests: its own RSA and EC keys, a JWKS and an
openid-configuration served on a loopback port (counting every fetch), tokens minted on
demand, key rotation, and a switch that takes it down (503). Each provider's issuer has a path
of its own, so a port used again later is another provider to the process's key cache."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

AUDIENCE = "skill-router"
JWKS_PATH = "/keys"


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        found: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**found, "kid": self.kid, "use": "sig", "alg": self.alg}


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537,
                                                             key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


@dataclass
class Provider:
    """The provider's state; the handler reads it on every request."""

    base: str = ""  # the issuer: http://127.0.0.1:PORT/realm-XXXX
    keys: list[SigningKey] = field(default_factory=list)
    cache_control: str = ""
    down: bool = False
    fetches: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def issuer(self) -> str:
        return self.base

    @property
    def jwks_url(self) -> str:
        return self.base + JWKS_PATH

    @property
    def realm(self) -> str:
        return "/" + self.base.split("/", 3)[3]

    def count(self, path: str = JWKS_PATH) -> int:
        """How many times ``path`` (under the issuer) was fetched."""
        with self.lock:
            return self.fetches.get(path, 0)

    def token(self, subject: str, key: SigningKey | None = None, **claims: Any) -> str:
        """A token of this provider for ``subject`` (claims override iss, aud, exp, ...)."""
        key = key or self.keys[0]
        now = int(time.time())
        body = {"iss": self.issuer, "aud": AUDIENCE, "sub": subject, "iat": now,
                "exp": now + 600, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid})

    def document(self, path: str) -> Any:
        if path == JWKS_PATH:
            return {"keys": [k.jwk() for k in self.keys]}
        if path == "/.well-known/openid-configuration":
            return {"issuer": self.issuer, "jwks_uri": self.jwks_url}
        return None


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.removeprefix(provider.realm)
            with provider.lock:
                provider.fetches[path] = provider.fetches.get(path, 0) + 1
            document = provider.document(path)
            if provider.down or document is None:
                self.send_response(503 if provider.down else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if provider.cache_control:
                self.send_header("Cache-Control", provider.cache_control)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def identity_provider(*keys: SigningKey) -> Iterator[Provider]:
    """A provider with ``keys`` (default: one RSA key "k1") on a free loopback port."""
    provider = Provider(keys=list(keys) or [rsa_key("k1")])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    provider.base = f"http://127.0.0.1:{server.server_address[1]}/realm-{secrets.token_hex(6)}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        server.shutdown()
        server.server_close()


def oidc_section(provider: Provider, *, discovery: bool = False, **extra: str) -> str:
    """The principals file's oidc section for ``provider`` (its JWKS URL, or discovery)."""
    lines = ["oidc:", f"  issuer: {provider.issuer}", f"  audience: {AUDIENCE}"]
    if not discovery:
        lines.append(f"  jwks_url: {provider.jwks_url}")
    lines += [f"  {key}: {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"
