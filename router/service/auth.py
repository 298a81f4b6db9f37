"""Bearer-token authentication for the gRPC server.

When tokens are configured (``server.auth_token_file`` / ``--accept-token-file``: one token per
line, ``#`` comments and blank lines ignored; ``server.auth_token_env`` / ``--accept-token-env``:
the name of an environment variable holding comma-separated tokens), every call must carry the
metadata ``authorization: Bearer <token>`` with one of them. The presented token is compared
with every configured one in constant time (``hmac.compare_digest``); a missing or wrong token
is refused with ``UNAUTHENTICATED`` before the call runs. ``grpc.health.v1.Health`` stays open
so load balancers and kubelet probes need no token. Tokens are read by ``router.bearer``
(shared with the MCP door) at start-up and again on SIGHUP.

Each accepted token is its own principal, named by the sha256 of the token, with the roles
route, ops and admin on every catalog; a principals file (``server.principals_file``) names
principals with narrower roles and views. ``router.service.access`` resolves each call's
principal and checks its roles; without tokens or principals every caller is the one anonymous
principal. Session ids and route ids belong to the principal that created them.

``check_open_bind`` is the bind rule ``serve`` applies before it loads anything: beyond loopback
a server must ask for a token or a client certificate, or be started with
``--allow-unauthenticated`` (``server.allow_unauthenticated``) behind an authenticating proxy.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from router.bearer import bearer_token, check_bind, is_loopback, read_tokens
from router.config import ServerConfig

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


GIVE = ("--principals FILE (server.principals_file), --accept-token-file FILE or "
        "--accept-token-env VAR (server.auth_token_file, server.auth_token_env; formerly "
        "--token-file, --token-env), or client certificates with --tls-client-ca")
OPT_OUT = "--allow-unauthenticated (server.allow_unauthenticated)"


def authenticates(config: ServerConfig) -> bool:
    """True when ``config`` asks callers for a token or a client certificate."""
    return bool(config.auth_token_file or config.auth_token_env or config.tls_client_ca_file
                or config.principals_file)


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
    token = bool(config.auth_token_file or config.auth_token_env or config.principals_file)
    if not authenticates(config):
        log.warning("serving on %s with no caller authentication (server.allow_unauthenticated"
                    "): anyone who reaches this port can call it; keep an authenticating proxy "
                    "in front (see docs/operations.md)", config.host)
    elif token and not config.tls_cert_file:
        log.warning("bearer tokens travel in plaintext on %s: set server.tls_cert_file and "
                    "server.tls_key_file", config.host)
