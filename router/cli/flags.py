"""The command-line flags every door's command shares, one function a group: how it reaches a
running server (``--target``, ``--timeout``, and the caller flags ``--tls``, ``--ca-file``,
``--cert-file``, ``--key-file``, ``--token-file``), where an HTTP door listens (``--host``,
``--port``), the tokens it accepts from its own callers (``--accept-token-file``,
``--accept-token-env``), and the feedback store a command opens (``--feedback-store``, on
``serve``, ``index``, ``mcp --index``, ``stats`` and ``examples``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping

from router.config import Config
from router.credentials import TOKEN_ENV, CallerAuth, read_file

DEFAULT_TARGET = "127.0.0.1:50051"


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


def add_target_args(parser: argparse.ArgumentParser, *, default: str | None, target_help: str,
                    timeout: float, timeout_help: str,
                    into: argparse._ActionsContainer | None = None) -> None:
    """``--target`` (``default``: ``DEFAULT_TARGET`` or None; added to ``into`` when given,
    a group of ``parser``), ``--timeout`` (seconds, ``timeout`` by default) and the caller
    flags."""
    (into or parser).add_argument("--target", default=default, metavar="HOST:PORT",
                                  help=target_help)
    parser.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    add_caller_args(parser)


def add_listen_args(parser: argparse.ArgumentParser, port: int, host_help: str,
                    port_help: str) -> None:
    """``--host`` (default 127.0.0.1) and ``--port`` (default ``port``) of an HTTP door."""
    parser.add_argument("--host", default="127.0.0.1", help=host_help)
    parser.add_argument("--port", type=int, default=port, help=port_help)


def add_accept_args(group: argparse._ActionsContainer, section: str, what: str) -> None:
    """``--accept-token-file`` and ``--accept-token-env``: the tokens ``what`` accepts from its
    own callers, overriding ``<section>.accept_token_file`` / ``<section>.accept_token_env``."""
    group.add_argument("--accept-token-file", metavar="FILE",
                       help=f"bearer tokens {what} accepts, one per line "
                            f"({section}.accept_token_file)")
    group.add_argument("--accept-token-env", metavar="VAR",
                       help="environment variable holding comma-separated bearer tokens "
                            f"{what} accepts ({section}.accept_token_env)")


def add_feedback_store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--feedback-store", metavar="URL", default=None,
                   help="keep and read the learned traffic here: postgresql://user@host:port/db "
                        "(default: feedback.store_url; empty: the files in the index folder)")


def with_feedback_store(config: Config, args: argparse.Namespace) -> Config:
    """``config`` with ``--feedback-store`` applied, when given."""
    url = getattr(args, "feedback_store", None)
    if not url:
        return config
    return dataclasses.replace(config,
                               feedback=dataclasses.replace(config.feedback, store_url=url))
