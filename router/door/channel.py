"""How a caller reaches the gRPC service: a channel with the TLS credentials and the bearer
token of a ``router.credentials.CallerAuth``, the token (or any metadata pair) on every call."""

from __future__ import annotations

import collections
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from router.credentials import CallerAuth, read_file


def channel_credentials(auth: CallerAuth) -> grpc.ChannelCredentials:
    """TLS credentials for ``auth``; ValueError when a file is missing or the pair is half."""
    if bool(auth.cert_file) != bool(auth.key_file):
        raise ValueError("a client certificate needs both the certificate and the key file")
    chain = read_file(auth.cert_file, "client certificate") if auth.cert_file else None
    return grpc.ssl_channel_credentials(
        root_certificates=read_file(auth.ca_file, "CA file") if auth.ca_file else None,
        private_key=read_file(auth.key_file, "client key") if auth.key_file else None,
        certificate_chain=chain)


class _Details(collections.namedtuple(
        "_Details", ("method", "timeout", "metadata", "credentials", "wait_for_ready",
                     "compression")), grpc.ClientCallDetails):
    pass


class BearerToken(grpc.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
                  grpc.UnaryStreamClientInterceptor):  # type: ignore[type-arg]
    """Adds ``authorization: Bearer <token>`` (or the pair ``header``) to every call."""

    def __init__(self, token: str, header: tuple[str, str] | None = None) -> None:
        self._pair = header or ("authorization", f"Bearer {token}")

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
