"""The flags the doors' commands share: one function a group, the same flags everywhere."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from router.cli.flags import (
    DEFAULT_TARGET,
    add_accept_args,
    add_listen_args,
    add_target_args,
    caller_auth_from_args,
)
from router.credentials import TOKEN_ENV


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--index")
    add_target_args(parser, default=None, into=source, target_help="the server",
                    timeout=5.0, timeout_help="seconds")
    add_listen_args(parser, 8765, "address", "port")
    add_accept_args(parser.add_argument_group("callers"), "mcp", "the door")
    return parser


def test_the_groups_parse_with_their_defaults() -> None:
    args = _parser().parse_args([])
    assert (args.target, args.timeout, args.host, args.port) == (None, 5.0, "127.0.0.1", 8765)
    assert (args.accept_token_file, args.accept_token_env, args.token_file) == (None, None, "")
    given = _parser().parse_args(["--target", "h:1", "--timeout", "2", "--tls",
                                  "--accept-token-file", "f", "--port", "0"])
    assert (given.target, given.timeout, given.tls, given.accept_token_file, given.port) == (
        "h:1", 2.0, True, "f", 0)


def test_the_target_joins_the_group_it_is_given() -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args(["--index", "i", "--target", "h:1"])


def test_a_default_target_and_the_section_in_the_help() -> None:
    parser = argparse.ArgumentParser()
    add_target_args(parser, default=DEFAULT_TARGET, target_help="t", timeout=1.0,
                    timeout_help="s")
    add_accept_args(parser, "ops", "the console")
    assert parser.parse_args([]).target == "127.0.0.1:50051"
    assert "(ops.accept_token_file)" in parser.format_help()


def test_the_token_comes_from_the_file_else_the_environment(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(" tok-file \n")
    args = _parser().parse_args(["--ca-file", "ca.pem", "--token-file", str(token)])
    auth = caller_auth_from_args(args, env={TOKEN_ENV: "tok-env"})
    assert (auth.token, auth.ca_file, auth.secure) == ("tok-file", "ca.pem", True)
    plain = caller_auth_from_args(_parser().parse_args([]), env={TOKEN_ENV: "tok-env"})
    assert (plain.token, plain.secure) == ("tok-env", False)
    with pytest.raises(ValueError):
        caller_auth_from_args(_parser().parse_args(["--token-file", str(tmp_path / "none")]),
                              env={})
