"""Bearer-token authentication for the gRPC server.

When tokens are configured (``server.auth_token_file``: one token per line, ``#`` comments and
blank lines ignored; ``server.auth_token_env``: the name of an environment variable holding
comma-separated tokens), every call must carry the metadata ``authorization: Bearer <token>``
with one of them. The presented token is compared with every configured one in constant time
(``hmac.compare_digest``); a missing or wrong token is refused with ``UNAUTHENTICATED`` before
the call runs. ``grpc.health.v1.Health`` stays open so load balancers and kubelet probes need no
token. Tokens are read once, at start-up.
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc

from router.config import ServerConfig
from router.errors import InvalidRequest

log = logging.getLogger(__name__)

AUTH_KEY = "authorization"
SCHEME = "bearer "
OPEN_PREFIXES = ("/grpc.health.v1.Health/",)
REFUSED = ("missing or invalid bearer token: send the metadata "
           "'authorization: Bearer <token>' with a token this server accepts")


def _from_file(path: str) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"cannot read the token file {path}: {exc}") from exc
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _from_env(name: str, env: Mapping[str, str]) -> list[str]:
    if name not in env:
        raise InvalidRequest(f"server.auth_token_env names {name!r}, which is not set")
    return [t.strip() for t in env[name].split(",") if t.strip()]


def load_tokens(config: ServerConfig, env: Mapping[str, str] | None = None) -> tuple[bytes, ...]:
    """The accepted tokens; () when token auth is off. Raises InvalidRequest when a configured
    source cannot be read or holds no token (a server must not start open by mistake)."""
    env = os.environ if env is None else env
    tokens: list[str] = []
    sources = []
    if config.auth_token_file:
        tokens += _from_file(config.auth_token_file)
        sources.append(config.auth_token_file)
    if config.auth_token_env:
        tokens += _from_env(config.auth_token_env, env)
        sources.append(f"${config.auth_token_env}")
    if sources and not tokens:
        raise InvalidRequest(f"token auth is configured but {' and '.join(sources)} "
                             "hold no token")
    return tuple(t.encode("utf-8") for t in tokens)


def presented_token(metadata: Sequence[tuple[str, Any]] | None) -> bytes | None:
    """The bearer token in a call's metadata, or None."""
    for key, value in metadata or ():
        if key != AUTH_KEY:
            continue
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        if text[:len(SCHEME)].lower() == SCHEME:
            return text[len(SCHEME):].strip().encode("utf-8")
    return None


def accepts(tokens: Sequence[bytes], presented: bytes | None) -> bool:
    """True if ``presented`` is one of ``tokens``; every token is compared (constant time)."""
    if presented is None:
        return False
    matched = False
    for token in tokens:
        matched |= hmac.compare_digest(token, presented)
    return matched


def _refuse_unary(request: Any, context: grpc.ServicerContext) -> Any:
    context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSED)


def _refuse_stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
    context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSED)
    yield from ()


def _refusing(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:  # type: ignore[type-arg]
    """A handler of the same kind as ``handler`` that refuses the call."""
    kwargs: dict[str, Any] = {"request_deserializer": handler.request_deserializer,
                              "response_serializer": handler.response_serializer}
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(_refuse_unary, **kwargs)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(_refuse_stream, **kwargs)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(_refuse_unary, **kwargs)
    return grpc.stream_stream_rpc_method_handler(_refuse_stream, **kwargs)


_Continuation = Callable[[grpc.HandlerCallDetails], Any]


class TokenInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Refuses, with UNAUTHENTICATED, every call without an accepted token (health is open)."""

    def __init__(self, tokens: Sequence[bytes]) -> None:
        if not tokens:
            raise ValueError("TokenInterceptor needs at least one token")
        self._tokens = tuple(tokens)

    def intercept_service(self, continuation: _Continuation,
                          handler_call_details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(handler_call_details)
        if handler is None or handler_call_details.method.startswith(OPEN_PREFIXES):
            return handler
        presented = presented_token(handler_call_details.invocation_metadata)
        if accepts(self._tokens, presented):
            return handler
        log.debug("refused %s: %s token", handler_call_details.method,
                  "no" if presented is None else "unknown")
        return _refusing(handler)


def auth_interceptors(config: ServerConfig) -> list[TokenInterceptor]:
    """The interceptors ``config`` asks for: a TokenInterceptor when tokens are configured."""
    tokens = load_tokens(config)
    return [TokenInterceptor(tokens)] if tokens else []


def warn_if_open(config: ServerConfig) -> None:
    """Log a warning when a server reachable beyond loopback authenticates no caller, or sends
    tokens over plaintext."""
    if config.host.startswith(("127.", "::1", "[::1]", "localhost")):
        return
    token = bool(config.auth_token_file or config.auth_token_env)
    if not (token or config.tls_client_ca_file):
        log.warning("serving on %s with no caller authentication: set server.auth_token_file "
                    "or server.tls_client_ca_file (see README, Operations)", config.host)
    elif token and not config.tls_cert_file:
        log.warning("bearer tokens travel in plaintext on %s: set server.tls_cert_file and "
                    "server.tls_key_file", config.host)
