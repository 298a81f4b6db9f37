"""The ``serve`` flags for authenticated callers; each overrides one ``server`` setting."""

from __future__ import annotations

import argparse
from typing import Any

# flag destination -> ServerConfig field
FLAGS = {"tls_cert": "tls_cert_file", "tls_key": "tls_key_file",
         "tls_client_ca": "tls_client_ca_file", "token_file": "auth_token_file",
         "token_env": "auth_token_env", "principals": "principals_file",
         "health_port": "health_port",
         "allow_unauthenticated": "allow_unauthenticated", "open_metrics": "open_metrics"}


def add_server_auth_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("authenticated callers (all off by default)")
    group.add_argument("--tls-cert", metavar="PEM",
                       help="server certificate chain: serve TLS (server.tls_cert_file)")
    group.add_argument("--tls-key", metavar="PEM", help="its private key (server.tls_key_file)")
    group.add_argument("--tls-client-ca", metavar="PEM",
                       help="require client certificates signed by this CA: mutual TLS "
                            "(server.tls_client_ca_file)")
    group.add_argument("--token-file", metavar="FILE",
                       help="accepted bearer tokens, one per line (server.auth_token_file)")
    group.add_argument("--token-env", metavar="VAR",
                       help="environment variable holding comma-separated bearer tokens "
                            "(server.auth_token_env)")
    group.add_argument("--principals", metavar="FILE",
                       help="principals with roles and catalogs, by the sha256 of their "
                            "tokens; reloaded on SIGHUP (server.principals_file)")
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
    """The ServerConfig fields these flags set (only the flags given)."""
    return {field: getattr(args, dest) for dest, field in FLAGS.items()
            if getattr(args, dest, None) is not None}
