"""Bearer-token authentication for the gRPC server.

When tokens are configured (``server.auth_token_file``: one token per line, ``#`` comments and
blank lines ignored; ``server.auth_token_env``: the name of an environment variable holding
comma-separated tokens), every call must carry the metadata ``authorization: Bearer <token>``
with one of them. The presented token is compared with every configured one in constant time
(``hmac.compare_digest``); a missing or wrong token is refused with ``UNAUTHENTICATED`` before
the call runs. ``grpc.health.v1.Health`` stays open so load balancers and kubelet probes need no
token. Tokens are read once, at start-up, by ``router.bearer`` (shared with the MCP door).

Each accepted token is its own principal (``router.learning.owners``): ``principal_reader`` names
the caller of a call by the sha256 of its token; without tokens every caller is the one
anonymous principal. Session ids and route ids belong to the principal that created them.

``check_open_bind`` is the bind rule ``serve`` applies before it loads anything: beyond loopback
a server must ask for a token or a client certificate, or be started with
``--allow-unauthenticated`` (``server.allow_unauthenticated``) behind an authenticating proxy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import grpc

from router.access.model import ANONYMOUS, Principal
from router.bearer import accepts, bearer_token, check_bind, is_loopback, read_tokens
from router.config import ServerConfig
from router.learning.owners import principal_of_token

log = logging.getLogger(__name__)

AUTH_KEY = "authorization"
OPEN_PREFIXES = ("/grpc.health.v1.Health/",)
REFUSED = ("missing or invalid bearer token: send the metadata "
           "'authorization: Bearer <token>' with a token this server accepts")


def load_tokens(config: ServerConfig, env: Mapping[str, str] | None = None) -> tuple[bytes, ...]:
    """The accepted tokens; () when token auth is off. Raises InvalidRequest when a configured
    source cannot be read or holds no token (a server must not start open by mistake)."""
    return read_tokens(config.auth_token_file, config.auth_token_env, env,
                       env_setting="server.auth_token_env")


def presented_token(metadata: Sequence[tuple[str, Any]] | None) -> bytes | None:
    """The bearer token in a call's metadata, or None."""
    for key, value in metadata or ():
        if key == AUTH_KEY:
            token = bearer_token(value)
            if token is not None:
                return token
    return None


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


def principal_reader(config: ServerConfig) -> Callable[[grpc.ServicerContext], Principal]:
    """How the servicer names a call's principal: the one named by the sha256 of its accepted
    bearer token when ``config`` asks for tokens (the interceptor has refused every other call),
    else ANONYMOUS. Either sees every skill and holds the roles route, ops and admin."""
    if not (config.auth_token_file or config.auth_token_env):
        return lambda context: ANONYMOUS
    return lambda context: Principal(
        principal_of_token(presented_token(context.invocation_metadata())))


GIVE = ("--token-file FILE or --token-env VAR (server.auth_token_file, server.auth_token_env), "
        "or client certificates with --tls-client-ca")
OPT_OUT = "--allow-unauthenticated (server.allow_unauthenticated)"


def authenticates(config: ServerConfig) -> bool:
    """True when ``config`` asks callers for a token or a client certificate."""
    return bool(config.auth_token_file or config.auth_token_env or config.tls_client_ca_file)


def check_open_bind(config: ServerConfig) -> None:
    """The bind rule for ``serve``: beyond loopback, callers must be authenticated (a token or
    a client certificate) unless ``server.allow_unauthenticated`` says a proxy in front does.
    Raises InvalidRequest naming the flags; checked before anything loads."""
    check_bind(config.host, authenticated=authenticates(config),
               allow_unauthenticated=config.allow_unauthenticated, give=GIVE, opt_out=OPT_OUT)


def warn_if_open(config: ServerConfig) -> None:
    """Log a warning when a server reachable beyond loopback authenticates no caller (allowed
    only with server.allow_unauthenticated; ``serve`` refuses it otherwise), or sends tokens
    over plaintext."""
    if is_loopback(config.host):
        return
    token = bool(config.auth_token_file or config.auth_token_env)
    if not authenticates(config):
        log.warning("serving on %s with no caller authentication (server.allow_unauthenticated"
                    "): anyone who reaches this port can call it; keep an authenticating proxy "
                    "in front (see docs/operations.md)", config.host)
    elif token and not config.tls_cert_file:
        log.warning("bearer tokens travel in plaintext on %s: set server.tls_cert_file and "
                    "server.tls_key_file", config.host)
