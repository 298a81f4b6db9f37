"""JWT callers from an identity provider: the ``oidc`` section of the principals file and the
check of a presented token.

```yaml
oidc:
  issuer: https://idp.example.com          # the tokens' iss, exactly
  audience: skill-router                   # must be one of the token's aud
  jwks_url: https://idp.example.com/keys   # optional: else the issuer's openid-configuration
  principal_claim: sub                     # the claim a principal's ``subject`` is matched to
  algorithms: [RS256, ES256]               # the default; none and HS* are always refused
```

``JwtCheck.claim_of`` verifies a token with PyJWT against the provider's keys
(``router.access.jwks.KeySet``: cached, never fetched per call): the signature with the key of
its ``kid`` under an allowed algorithm, ``iss``, ``aud``, ``exp`` (all three required) and
``nbf``, with ``LEEWAY`` seconds for clocks apart. It answers the value of ``principal_claim``
or raises ``JwtRefused`` with a reason for the log; the token itself is never in a message. A
token it accepted is remembered by its sha256 for ``REMEMBER_SECONDS`` at most (never past its
``exp`` and leeway; ``MAX_REMEMBERED`` tokens, the least recent forgotten first), so the calls
of one caller, and the doors' several looks at one request, verify its signature once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from router.access.jwks import Jwk, check_url

if TYPE_CHECKING:
    import jwt  # PyJWT loads with the first token checked, not with every server

LEEWAY = 60
REMEMBER_SECONDS = 60.0
MAX_REMEMBERED = 4096
DEFAULT_ALGORITHMS = ("RS256", "ES256")
SUPPORTED = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
             "EdDSA")
FIELDS = ("issuer", "audience", "jwks_url", "principal_claim", "algorithms")
CLAIM = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
_B64URL = re.compile(rb"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class OidcSettings:
    issuer: str
    audience: str
    jwks_url: str = ""
    principal_claim: str = "sub"
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS


class KeySource(Protocol):
    @property
    def where(self) -> str: ...

    def key(self, kid: str) -> Jwk | None: ...


class JwtRefused(Exception):
    """A presented JWT is not accepted; the message says why, for the log."""


def looks_like_jwt(token: bytes) -> bool:
    """Three base64url parts joined by dots (a JWS compact serialisation)."""
    parts = token.split(b".")
    return len(parts) == 3 and all(_B64URL.fullmatch(p) for p in parts[:2]) and \
        (not parts[2] or _B64URL.fullmatch(parts[2]) is not None)


def _scalar(node: yaml.Node, key: str, problem: Callable[[yaml.Node, str], None]) -> str:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        problem(node, f"oidc.{key} must be a non-empty string")
        return ""
    return str(node.value).strip()


def parse_oidc(node: yaml.Node,
               problem: Callable[[yaml.Node, str], None]) -> OidcSettings | None:
    """The settings of an ``oidc`` mapping; None after reporting each problem to ``problem``."""
    if not isinstance(node, yaml.MappingNode):
        problem(node, f"oidc must be a mapping ({', '.join(FIELDS)})")
        return None
    fields: dict[str, yaml.Node] = {}
    for key_node, value in node.value:
        key = str(key_node.value)
        if key not in FIELDS or key in fields:
            problem(key_node, f"oidc.{key} given twice" if key in fields else
                    f"unknown field oidc.{key}; use {', '.join(FIELDS)}")
        fields[key] = value
    values = {key: _scalar(fields[key], key, problem) for key in FIELDS[:4] if key in fields}
    for key in ("issuer", "audience"):
        if key not in fields:
            problem(node, f"oidc needs {key}")
    for key in ("issuer", "jwks_url"):
        message = check_url(values[key], f"oidc.{key}") if values.get(key) else ""
        if message:
            problem(fields[key], message)
    claim = values.get("principal_claim", "sub")
    if claim and not CLAIM.fullmatch(claim):
        problem(fields["principal_claim"], f"oidc.principal_claim must be a claim name, "
                                           f"not {claim!r}")
    algorithms = _algorithms(fields.get("algorithms"), problem)
    if not all(values.get(k) for k in ("issuer", "audience")) or algorithms is None:
        return None
    return OidcSettings(values["issuer"], values["audience"], values.get("jwks_url", ""),
                        claim, algorithms)


def _algorithms(node: yaml.Node | None,
                problem: Callable[[yaml.Node, str], None]) -> tuple[str, ...] | None:
    if node is None:
        return DEFAULT_ALGORITHMS
    names = [str(n.value) for n in node.value if isinstance(n, yaml.ScalarNode)] \
        if isinstance(node, yaml.SequenceNode) else []
    if not names or len(names) != len(node.value) or any(n not in SUPPORTED for n in names):
        refused = [n for n in names if n.lower() == "none" or n.upper().startswith("HS")]
        problem(node, "oidc.algorithms must be a non-empty list of " + ", ".join(SUPPORTED)
                + (f" ({', '.join(refused)} always refused: a token anyone could make)"
                   if refused else ""))
        return None
    return tuple(dict.fromkeys(names))


def _header(token: bytes) -> dict[str, Any]:
    """A token's JOSE header (unverified), or JwtRefused."""
    segment = token.split(b".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(segment + b"=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        header = None  # RecursionError: a header of thousands of nested arrays
    if not isinstance(header, dict):
        raise JwtRefused("not a readable JWT: its header is not base64url JSON")
    return header


def _peek(token: bytes, claim: str) -> str:
    """A claim of a token that failed, for the log (unverified, quoted, cut short)."""
    import jwt

    try:
        value = jwt.decode(token, options={"verify_signature": False}).get(claim)
    except (jwt.PyJWTError, RecursionError):
        return "?"
    return repr(value)[:120]


class JwtCheck:
    """Verifies presented JWTs against the provider's keys (see the module)."""

    def __init__(self, settings: OidcSettings, keys: KeySource,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings, self.keys, self._clock = settings, keys, clock
        self._prepared: dict[tuple[str, int], tuple[Jwk, jwt.PyJWK]] = {}
        self._verified: OrderedDict[bytes, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def claim_of(self, token: bytes) -> str:
        """The ``principal_claim`` of a valid token; JwtRefused naming why it is not."""
        digest, now = hashlib.sha256(token).digest(), self._clock()
        with self._lock:
            held = self._verified.get(digest)
            if held is not None and now < held[1]:
                self._verified.move_to_end(digest)
                return held[0]
        value, exp = self._verify(token)
        with self._lock:
            self._verified[digest] = (value, min(exp + LEEWAY, now + REMEMBER_SECONDS))
            self._verified.move_to_end(digest)
            while len(self._verified) > MAX_REMEMBERED:
                self._verified.popitem(last=False)
        return value

    def _verify(self, token: bytes) -> tuple[str, float]:
        settings = self.settings
        header = _header(token)
        alg, kid = header.get("alg"), header.get("kid", "")
        if alg not in settings.algorithms:
            raise JwtRefused(f"its alg {str(alg)[:20]!r} is not one of oidc.algorithms "
                             f"({', '.join(settings.algorithms)})")
        if not isinstance(kid, str):
            raise JwtRefused("its kid is not a string")
        key = self._key(str(alg), kid)
        claims = self._decode(token, key, str(alg), kid)
        value = claims.get(settings.principal_claim)
        if not isinstance(value, str) or not value:
            raise JwtRefused(f"it has no string claim {settings.principal_claim!r} "
                             "(oidc.principal_claim) to name its principal")
        exp = claims.get("exp")
        return value, float(exp) if isinstance(exp, int | float) else 0.0

    def _key(self, alg: str, kid: str) -> jwt.PyJWK:
        import jwt

        jwk = self.keys.key(kid)
        if jwk is None:
            raise JwtRefused(f"the provider's keys ({self.keys.where}) have no signing key "
                             f"with kid {kid[:80]!r}" if kid else
                             f"it has no kid and the provider's keys ({self.keys.where}) are "
                             "not exactly one")
        held = self._prepared.get((alg, id(jwk)))
        if held is not None and held[0] is jwk:
            return held[1]
        try:
            prepared = jwt.PyJWK(dict(jwk), algorithm=str(jwk.get("alg") or alg))
        except jwt.PyJWTError as exc:
            raise JwtRefused(f"the provider's key {kid[:80]!r} does not fit alg {alg}: "
                             f"{exc}") from None
        if len(self._prepared) > 64:
            self._prepared.clear()
        self._prepared[(alg, id(jwk))] = (jwk, prepared)
        return prepared

    def _decode(self, token: bytes, key: jwt.PyJWK, alg: str, kid: str) -> dict[str, Any]:
        import jwt

        settings = self.settings
        try:
            return dict(jwt.decode(token, key, algorithms=[alg], audience=settings.audience,
                                   issuer=settings.issuer, leeway=LEEWAY,
                                   options={"require": ["exp", "iss", "aud"]}))
        except jwt.ExpiredSignatureError:
            raise JwtRefused(f"it expired (exp {_when(token, 'exp')}, leeway {LEEWAY} s): "
                             "the caller must fetch a new token") from None
        except jwt.ImmatureSignatureError:
            raise JwtRefused(f"it is not valid yet (nbf {_when(token, 'nbf')}, leeway "
                             f"{LEEWAY} s): are the clocks apart?") from None
        except jwt.InvalidAudienceError:
            raise JwtRefused(f"its aud {_peek(token, 'aud')} does not hold oidc.audience "
                             f"{settings.audience!r}") from None
        except jwt.InvalidIssuerError:
            raise JwtRefused(f"its iss {_peek(token, 'iss')} is not oidc.issuer "
                             f"{settings.issuer!r}") from None
        except jwt.InvalidSignatureError:
            raise JwtRefused(f"its signature does not verify with the provider's key "
                             f"{kid[:80]!r}") from None
        except jwt.PyJWTError as exc:
            raise JwtRefused(f"it is not valid: {exc}") from None
        except RecursionError:
            raise JwtRefused("its claims are not readable JSON (nested too deep)") from None


def seconds_left(token: bytes, now: float) -> float:
    """Seconds until a token's ``exp`` (plus the leeway) at wall-clock ``now``; read without
    verifying, for a token ``JwtCheck`` accepted; 0 without a number."""
    import jwt

    try:
        exp: Any = jwt.decode(token, options={"verify_signature": False}).get("exp")
        return max(0.0, float(exp) + LEEWAY - now)
    except (jwt.PyJWTError, TypeError, ValueError, RecursionError):
        return 0.0


def _when(token: bytes, claim: str) -> str:
    import jwt

    try:
        value: Any = jwt.decode(token, options={"verify_signature": False}).get(claim)
        return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
    except (jwt.PyJWTError, TypeError, ValueError, OverflowError, OSError, RecursionError):
        return "?"
