"""The ``--tls``, ``--ca-file``, ``--cert-file``, ``--key-file`` and ``--token-file`` flags of
commands that call a running server (``skill-router reindex --target``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from router.credentials import TOKEN_ENV, CallerAuth, read_file


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
        token = read_file(args.token_file, "token file").decode("utf-8", "replace").strip()
    return CallerAuth(ca_file=args.ca_file, cert_file=args.cert_file, key_file=args.key_file,
                      token=token, tls=args.tls)
