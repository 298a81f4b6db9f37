"""How a client of the gRPC service proves who it is: TLS and a bearer token.

``CallerAuth`` holds the options the Python client (``router.client.SkillRouterClient``) and
``skill-router reindex --target`` share: the CA that signed the server's certificate (TLS), a
client certificate and key (for a server that requires mutual TLS) and a bearer token (sent as
``authorization: Bearer <token>`` on every call). The token can come from a file or from the
``SKILL_ROUTER_TOKEN`` environment variable.
"""

from __future__ import annotations

import argparse
import collections
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

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


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc


def channel_credentials(auth: CallerAuth) -> grpc.ChannelCredentials:
    """TLS credentials for ``auth``; ValueError when a file is missing or the pair is half."""
    if bool(auth.cert_file) != bool(auth.key_file):
        raise ValueError("a client certificate needs both the certificate and the key file")
    return grpc.ssl_channel_credentials(
        root_certificates=_read(auth.ca_file, "CA file") if auth.ca_file else None,
        private_key=_read(auth.key_file, "client key") if auth.key_file else None,
        certificate_chain=_read(auth.cert_file, "client certificate") if auth.cert_file else None)


class _Details(collections.namedtuple(
        "_Details", ("method", "timeout", "metadata", "credentials", "wait_for_ready",
                     "compression")), grpc.ClientCallDetails):
    pass


class BearerToken(grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
                  grpc.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    """Adds ``authorization: Bearer <token>`` to every call of a channel."""

    def __init__(self, token: str) -> None:
        self._pair = ("authorization", f"Bearer {token}")

    def _with_token(self, details: Any) -> _Details:
        metadata = [*(details.metadata or ()), self._pair]
        return _Details(details.method, details.timeout, metadata, details.credentials,
                        details.wait_for_ready, details.compression)

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: Any,
                              request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], client_call_details: Any,
                               request: Any) -> Any:
        return continuation(self._with_token(client_call_details), request)


def open_channel(target: str, auth: CallerAuth,
                 options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A channel to ``target`` with ``auth``'s TLS and token (plaintext when neither)."""
    if auth.secure:
        channel = grpc.secure_channel(target, channel_credentials(auth), options=list(options))
    else:
        channel = grpc.insecure_channel(target, options=list(options))
    if auth.token:
        channel = grpc.intercept_channel(channel, BearerToken(auth.token))
    return channel


def add_caller_args(parser: argparse.ArgumentParser) -> None:
    """The ``--ca-file``, ``--cert-file``, ``--key-file``, ``--token-file`` and ``--tls`` flags."""
    group = parser.add_argument_group("caller authentication")
    group.add_argument("--tls", action="store_true",
                       help="use TLS, trusting the system CAs (implied by --ca-file)")
    group.add_argument("--ca-file", default="", metavar="PEM",
                       help="CA certificate that signed the server's certificate (TLS)")
    group.add_argument("--cert-file", default="", metavar="PEM",
                       help="client certificate, for a server that requires mutual TLS")
    group.add_argument("--key-file", default="", metavar="PEM", help="client private key")
    group.add_argument("--token-file", default="", metavar="FILE",
                       help=f"file holding the bearer token (default: ${TOKEN_ENV} if set)")


def caller_auth_from_args(args: argparse.Namespace,
                          env: Mapping[str, str] | None = None) -> CallerAuth:
    """``CallerAuth`` from the flags of ``add_caller_args``; ValueError if the token file
    cannot be read."""
    env = os.environ if env is None else env
    token = env.get(TOKEN_ENV, "").strip()
    if args.token_file:
        token = _read(args.token_file, "token file").decode("utf-8", "replace").strip()
    return CallerAuth(ca_file=args.ca_file, cert_file=args.cert_file, key_file=args.key_file,
                      token=token, tls=args.tls)
