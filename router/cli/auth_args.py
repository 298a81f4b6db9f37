"""The ``serve`` flags for authenticated callers; each overrides one ``server`` setting.

The tokens ``serve`` accepts are ``--accept-token-file`` / ``--accept-token-env``, as on
``mcp`` and ``ops``, where ``--token-file`` is the token a command presents to a server.
``serve --token-file`` / ``--token-env`` still work as deprecated aliases (a warning, once).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

log = logging.getLogger(__name__)

# flag destination -> ServerConfig field
FLAGS = {"tls_cert": "tls_cert_file", "tls_key": "tls_key_file",
         "tls_client_ca": "tls_client_ca_file", "accept_token_file": "auth_token_file",
         "accept_token_env": "auth_token_env", "principals": "principals_file",
         "health_port": "health_port",
         "allow_unauthenticated": "allow_unauthenticated", "open_metrics": "open_metrics"}
# deprecated flag destination -> (its flag, the flag destination it stands for)
ALIASES = {"token_file": ("--token-file", "accept_token_file"),
           "token_env": ("--token-env", "accept_token_env")}
_warned: set[str] = set()


def add_server_auth_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("authenticated callers (all off by default)")
    group.add_argument("--tls-cert", metavar="PEM",
                       help="server certificate chain: serve TLS (server.tls_cert_file)")
    group.add_argument("--tls-key", metavar="PEM", help="its private key (server.tls_key_file)")
    group.add_argument("--tls-client-ca", metavar="PEM",
                       help="require client certificates signed by this CA: mutual TLS "
                            "(server.tls_client_ca_file)")
    group.add_argument("--accept-token-file", metavar="FILE",
                       help="accepted bearer tokens, one per line (server.auth_token_file)")
    group.add_argument("--accept-token-env", metavar="VAR",
                       help="environment variable holding comma-separated accepted bearer "
                            "tokens (server.auth_token_env)")
    group.add_argument("--token-file", metavar="FILE",
                       help="deprecated alias of --accept-token-file")
    group.add_argument("--token-env", metavar="VAR",
                       help="deprecated alias of --accept-token-env")
    group.add_argument("--principals", metavar="FILE",
                       help="principals with roles and catalogs, by the sha256 of their "
                            "tokens or, with an oidc section, by their JWTs' subject; reloaded "
                            "on SIGHUP (server.principals_file)")
    group.add_argument("--health-port", type=int, metavar="N",
                       help="plaintext port serving only grpc.health.v1, for probes when TLS "
                            "is on; 0 = off (server.health_port)")
    group.add_argument("--allow-unauthenticated", action="store_true", default=None,
                       help="listen beyond loopback with no token and no client certificate, "
                            "for a server behind an authenticating proxy; without it such a "
                            "server refuses to start (server.allow_unauthenticated)")
    group.add_argument("--open-metrics", action="store_true", default=None,
                       help="with tokens, serve /metrics without one, for a scrape network "
                            "closed by other means (server.open_metrics)")


def server_auth_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The ServerConfig fields these flags set (only the flags given); a deprecated alias
    counts when its new flag is not given, and is warned about once."""
    given = {dest: getattr(args, dest, None) for dest in FLAGS}
    for alias, (flag, dest) in ALIASES.items():
        value = getattr(args, alias, None)
        if value is None:
            continue
        if flag not in _warned:
            _warned.add(flag)
            new = "--" + dest.replace("_", "-")
            log.warning("serve %s is deprecated: use %s, which names the tokens the server "
                        "accepts as it does on mcp and ops (there --token-file is the token "
                        "presented to a server)", flag, new)
        if given[dest] is None:
            given[dest] = value
    return {FLAGS[dest]: value for dest, value in given.items() if value is not None}
