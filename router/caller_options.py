"""The options a client of the gRPC service authenticates with, and their command-line flags.

Light to import (no grpc), so building the command-line parser stays fast; the channel itself
is opened by ``router.caller_auth``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
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
