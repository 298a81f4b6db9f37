"""Accepted bearer tokens and the open-bind rule, shared by both doors: the gRPC service
(``serve``, ``router.service.auth``) and the MCP door over HTTP (``router.mcp.auth``).

Tokens come from a file (one per line; ``#`` comments and blank lines ignored) and/or an
environment variable (comma-separated); both are read once, at start-up. A configured source
that cannot be read or holds no token is an error: a door must not start open by mistake. A
presented token is compared with every accepted one in constant time (``hmac.compare_digest``).

The bind rule: a door listening beyond loopback (anything but 127.0.0.0/8, ::1, localhost)
must authenticate its callers, or be told explicitly that something in front of it does.
Pure: no grpc, no HTTP framework, so both doors and the CLI parser import it cheaply.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from router.errors import InvalidRequest

SCHEME = "bearer "
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def _from_file(path: str) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"cannot read the token file {path}: {exc}") from exc
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _from_env(name: str, env: Mapping[str, str], setting: str) -> list[str]:
    if name not in env:
        raise InvalidRequest(f"{setting} names {name!r}, which is not set")
    return [t.strip() for t in env[name].split(",") if t.strip()]


def read_tokens(file: str, env_var: str, env: Mapping[str, str] | None = None, *,
                env_setting: str = "the token variable") -> tuple[bytes, ...]:
    """The tokens in ``file`` and in the variable named ``env_var`` ("" = not configured);
    () when neither is configured. ``env_setting`` names the setting in error messages.
    Raises InvalidRequest when a configured source cannot be read or they hold no token."""
    env = os.environ if env is None else env
    tokens: list[str] = []
    sources = []
    if file:
        tokens += _from_file(file)
        sources.append(file)
    if env_var:
        tokens += _from_env(env_var, env, env_setting)
        sources.append(f"${env_var}")
    if sources and not tokens:
        raise InvalidRequest(f"token auth is configured but {' and '.join(sources)} "
                             "hold no token")
    return tuple(t.encode("utf-8") for t in tokens)


def bearer_token(value: str | bytes | None) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` value (scheme case-insensitive), or
    None when ``value`` is absent or another scheme."""
    if value is None:
        return None
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    text = text.strip()
    if text[:len(SCHEME)].lower() != SCHEME:
        return None
    token = text[len(SCHEME):].strip()
    return token.encode("utf-8") if token else None


def accepts(tokens: Sequence[bytes], presented: bytes | None) -> bool:
    """True if ``presented`` is one of ``tokens``; every token is compared (constant time)."""
    if presented is None:
        return False
    matched = False
    for token in tokens:
        matched |= hmac.compare_digest(token, presented)
    return matched


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 (bracketed or not) and localhost; False for every other
    name or address, including "" and 0.0.0.0 / :: (all interfaces)."""
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, authenticated: bool, allow_unauthenticated: bool,
               give: str, opt_out: str) -> bool:
    """Apply the bind rule. Returns True when the door will listen beyond loopback without
    authenticating anyone because ``allow_unauthenticated`` says so (the caller warns).
    Raises InvalidRequest, naming ``give`` (how to give tokens) and ``opt_out``, when it would
    do so without being told."""
    if authenticated or is_loopback(host):
        return False
    if allow_unauthenticated:
        return True
    raise InvalidRequest(f"refusing to listen on {host or 'all interfaces'} with no caller "
                         f"authentication: give accepted tokens with {give}, or pass "
                         f"{opt_out} if an authenticating proxy stands in front")
