"""What a client of the gRPC service presents: TLS settings and a bearer token.

``CallerAuth`` holds the options the Python client (``router.client.SkillRouterClient``) and
``skill-router reindex --target`` share: the CA that signed the server's certificate (TLS), a
client certificate and key (for a server that requires mutual TLS) and a bearer token (sent as
``authorization: Bearer <token>`` on every call). The token can come from a file or from the
``SKILL_ROUTER_TOKEN`` environment variable. Pure data: no grpc import, so the CLI parser
stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TOKEN_ENV = "SKILL_ROUTER_TOKEN"


@dataclass(frozen=True)
class CallerAuth:
    """TLS and token settings of a client; the defaults are a plaintext, anonymous channel."""

    ca_file: str = ""  # PEM CA for the server's certificate ("" with tls: the system roots)
    cert_file: str = ""  # PEM client certificate (mutual TLS)
    key_file: str = ""  # PEM key of cert_file
    token: str = ""  # bearer token
    tls: bool = False  # TLS even without a CA file (system roots)

    @property
    def secure(self) -> bool:
        return bool(self.tls or self.ca_file or self.cert_file or self.key_file)


def read_file(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc
