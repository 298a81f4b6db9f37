"""The pieces both doors share: reading accepted tokens, matching a presented one, the bind
rule; and the MCP door's settings (flags over the ``mcp`` config section, allowed hosts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.bearer import accepts, bearer_token, check_bind, is_loopback, read_tokens
from router.cli import build_parser
from router.cli.mcp import mcp_config
from router.config import McpConfig, ServerConfig, load_config
from router.errors import InvalidRequest
from router.mcp.auth import http_access, transport_security
from router.service.auth import check_open_bind

LOOPBACK = ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"]
BEYOND = ["0.0.0.0", "::", "[::]", "", "10.0.0.5", "192.168.1.2", "router.internal",
          "2001:db8::1", "localhost.example.com"]


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", BEYOND)
def test_everything_else_is_beyond_loopback(host: str) -> None:
    assert not is_loopback(host)


def test_the_bind_rule() -> None:
    rule = {"give": "--give-tokens", "opt_out": "--opt-out"}
    assert check_bind("127.0.0.1", authenticated=False, allow_unauthenticated=False,
                      **rule) is False
    assert check_bind("0.0.0.0", authenticated=True, allow_unauthenticated=False,
                      **rule) is False
    assert check_bind("0.0.0.0", authenticated=False, allow_unauthenticated=True,
                      **rule) is True  # allowed, and the caller warns
    with pytest.raises(InvalidRequest, match=r"--give-tokens.*--opt-out"):
        check_bind("0.0.0.0", authenticated=False, allow_unauthenticated=False, **rule)
    with pytest.raises(InvalidRequest, match="all interfaces"):
        check_bind("", authenticated=False, allow_unauthenticated=False, **rule)


@pytest.mark.parametrize(("settings", "refused"), [
    ({"host": "127.0.0.1"}, False),
    ({"host": "0.0.0.0"}, True),
    ({"host": "0.0.0.0", "auth_token_file": "t"}, False),
    ({"host": "0.0.0.0", "auth_token_env": "T"}, False),
    ({"host": "0.0.0.0", "tls_cert_file": "c", "tls_key_file": "k"}, True),  # TLS is no auth
    ({"host": "0.0.0.0", "tls_cert_file": "c", "tls_key_file": "k",
      "tls_client_ca_file": "ca"}, False),  # client certificates are
    ({"host": "0.0.0.0", "allow_unauthenticated": True}, False),
])
def test_serve_follows_the_bind_rule(settings: dict[str, object], refused: bool) -> None:
    config = ServerConfig(**settings)  # type: ignore[arg-type]
    if refused:
        with pytest.raises(InvalidRequest, match=r"--token-file.*--allow-unauthenticated"):
            check_open_bind(config)
    else:
        check_open_bind(config)


def test_tokens_come_from_a_file_and_a_variable_together(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# comment\n one \n\ntwo\n")
    assert read_tokens(str(path), "V", {"V": "three, ,four"}) == (b"one", b"two", b"three",
                                                                   b"four")
    assert read_tokens("", "") == ()
    with pytest.raises(InvalidRequest, match=r"mcp\.accept_token_env names 'V'"):
        read_tokens("", "V", {}, env_setting="mcp.accept_token_env")


@pytest.mark.parametrize(("value", "token"), [
    ("Bearer abc", b"abc"), ("bearer  abc ", b"abc"), ("BEARER abc", b"abc"),
    (b"Bearer abc", b"abc"), ("Basic abc", None), ("Bearer", None), ("Bearer ", None),
    ("", None), (None, None), ("Bearerabc", None)])
def test_a_bearer_header_is_parsed(value: str | bytes | None, token: bytes | None) -> None:
    assert bearer_token(value) == token


def test_matching_is_exact() -> None:
    tokens = (b"abc", b"xyz")
    assert accepts(tokens, b"xyz") and accepts(tokens, b"abc")
    assert not any(accepts(tokens, t) for t in (b"ab", b"abcd", b"", b"ABC", None))
    assert not accepts((), b"abc")


def test_allowed_hosts_become_sdk_patterns() -> None:
    security = transport_security("0.0.0.0", ["router.internal", "lb.example:443", "::2",
                                              "[fd00::1]:8765"])
    assert security.enable_dns_rebinding_protection
    hosts = security.allowed_hosts
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*"} <= set(hosts)
    assert {"router.internal", "router.internal:*", "lb.example:443", "[::2]", "[::2]:*",
            "[fd00::1]:8765"} <= set(hosts)
    assert not any(h.startswith("0.0.0.0") for h in hosts)  # all interfaces is no Host
    assert "lb.example" not in hosts and "lb.example:*" not in hosts  # that port only
    assert {"https://router.internal", "http://router.internal:*"} <= set(
        security.allowed_origins)
    assert "10.0.0.5:*" in transport_security("10.0.0.5", []).allowed_hosts


def test_door_flags_override_the_mcp_section(tmp_path: Path) -> None:
    config = load_config(env={"SKILL_ROUTER_MCP_ACCEPT_TOKEN_ENV": "FROM_CONFIG",
                              "SKILL_ROUTER_MCP_ALLOWED_HOSTS": "a.example, b.example"})
    assert config.mcp == McpConfig(accept_token_env="FROM_CONFIG",
                                   allowed_hosts=("a.example", "b.example"))
    parser = build_parser()
    plain = parser.parse_args(["mcp", "--transport", "http"])
    assert mcp_config(plain, config) == config.mcp
    flags = parser.parse_args(["mcp", "--transport", "http", "--accept-token-file", "f",
                               "--accept-token-env", "V", "--allowed-host", "x",
                               "--allowed-host", "y:80", "--allow-unauthenticated"])
    assert mcp_config(flags, config) == McpConfig(accept_token_file="f", accept_token_env="V",
                                                  allowed_hosts=("x", "y:80"),
                                                  allow_unauthenticated=True)
    assert flags.token_file == ""  # the outbound token is another flag


def test_the_open_door_is_allowed_only_when_told(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(InvalidRequest, match="--accept-token-file"):
        http_access("0.0.0.0", McpConfig())
    access = http_access("0.0.0.0", McpConfig(allow_unauthenticated=True))
    assert access.tokens == () and "authenticates nobody" in caplog.text
    assert http_access("127.0.0.1", McpConfig()).tokens == ()
