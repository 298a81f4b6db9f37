"""JWT callers through the principals file's oidc section, against a provider on loopback:
each bad token refused with a reason in the log (never the token), a good one naming its
principal, token_sha256 principals beside them, key rotation, the provider down, and the JWKS
fetched once for many calls."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from router.access.oidc import REMEMBER_SECONDS, JwtCheck, JwtRefused, looks_like_jwt
from router.access.principals import parse_principals
from router.access.table import PrincipalTable
from router.errors import InvalidRequest
from tests.support.oidc import Provider, ec_key, identity_provider, oidc_section, rsa_key


def principals(provider: Provider, **extra: str) -> str:
    static = hashlib.sha256(b"tok-static").hexdigest()
    return (oidc_section(provider, **extra) + "principals:\n"
            "  - name: payments-gateway\n    subject: payments-client\n    roles: [route]\n"
            "    catalogs: [payments]\n"
            "  - name: ops-bot\n    subject: ops-client\n    roles: [ops]\n    catalogs: '*'\n"
            f"  - name: legacy\n    token_sha256: \"{static}\"\n    roles: [route]\n"
            "    catalogs: '*'\n")


@pytest.fixture
def provider() -> Iterator[Provider]:
    with identity_provider(rsa_key("k1"), ec_key("k2")) as running:
        yield running


@pytest.fixture
def table(provider: Provider) -> PrincipalTable:
    return parse_principals(principals(provider), "p.yaml")


def name_of(table: PrincipalTable, token: str | bytes) -> str | None:
    entry = table.by_token(token.encode() if isinstance(token, str) else token)
    return entry.principal.name if entry is not None else None


def test_a_token_of_the_issuer_names_its_principal_rsa_and_ec(
        provider: Provider, table: PrincipalTable) -> None:
    assert name_of(table, provider.token("payments-client")) == "payments-gateway"
    assert name_of(table, provider.token("ops-client", provider.keys[1])) == "ops-bot"
    assert name_of(table, "tok-static") == "legacy"  # token_sha256 principals keep working
    assert name_of(table, "tok-other") is None


def test_many_calls_fetch_the_keys_once(provider: Provider, table: PrincipalTable) -> None:
    token = provider.token("payments-client")
    for _ in range(50):
        assert name_of(table, token) == "payments-gateway"
    assert provider.count() == 1


def _unsigned(provider: Provider, alg: str) -> str:
    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    body = {"iss": provider.issuer, "aud": "skill-router", "sub": "payments-client",
            "exp": int(time.time()) + 600}
    return f"{part({'alg': alg, 'kid': 'k1'})}.{part(body)}."


def _hs256_with_public_key(provider: Provider) -> str:
    public = provider.keys[0].private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    body = {"iss": provider.issuer, "aud": "skill-router", "sub": "payments-client",
            "exp": int(time.time()) + 600}
    header = {"alg": "HS256", "kid": "k1", "typ": "JWT"}
    signing = ".".join(base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()
                       for v in (header, body))
    mac = hmac.new(public, signing.encode(), hashlib.sha256).digest()
    return signing + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


BAD = {
    "expired": (lambda p: p.token("payments-client", exp=int(time.time()) - 120),
                "it expired"),
    "not yet valid": (lambda p: p.token("payments-client", nbf=int(time.time()) + 600),
                      "not valid yet"),
    "another audience": (lambda p: p.token("payments-client", aud="someone-else"),
                         "does not hold oidc.audience"),
    "another issuer": (lambda p: p.token("payments-client", iss="https://evil.example"),
                       "is not oidc.issuer"),
    "no exp": (lambda p: p.token("payments-client", exp=None), "exp"),
    "alg none": (lambda p: _unsigned(p, "none"), "is not one of oidc.algorithms"),
    "HS256 with the public key": (_hs256_with_public_key, "is not one of oidc.algorithms"),
    "a foreign key under a known kid": (
        lambda p: p.token("payments-client", rsa_key("k1")), "signature does not verify"),
    "an unknown subject": (lambda p: p.token("stranger"), "has subject 'stranger'"),
    "an unknown kid": (lambda p: p.token("payments-client", rsa_key("k9")),
                       "no signing key with kid 'k9'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_bad_token_is_refused_with_a_reason_and_never_logged(
        case: str, provider: Provider, table: PrincipalTable,
        caplog: pytest.LogCaptureFixture) -> None:
    make, reason = BAD[case]
    token = make(provider)
    assert looks_like_jwt(token.encode())
    with caplog.at_level(logging.WARNING):
        assert name_of(table, token) is None
    assert reason in caplog.text
    assert all(part not in caplog.text for part in token.split(".") if part)


def test_a_key_published_later_works_without_a_restart(provider: Provider,
                                                      table: PrincipalTable) -> None:
    assert name_of(table, provider.token("payments-client")) == "payments-gateway"
    rotated = rsa_key("k3")
    provider.keys.append(rotated)
    assert name_of(table, provider.token("payments-client", rotated)) == "payments-gateway"
    assert provider.count() == 2  # the unknown kid fetched the keys again, once


def test_unknown_kids_refetch_at_most_once_in_five_seconds(provider: Provider,
                                                          table: PrincipalTable) -> None:
    assert name_of(table, provider.token("payments-client")) == "payments-gateway"
    for index in range(20):
        assert name_of(table, provider.token("payments-client", rsa_key(f"x{index}"))) is None
    assert provider.count() <= 3  # 1, and one more per 5 s however slow the machine


def test_the_provider_down_keeps_the_cached_keys(provider: Provider,
                                                 table: PrincipalTable) -> None:
    assert name_of(table, provider.token("payments-client")) == "payments-gateway"
    provider.down = True
    assert name_of(table, provider.token("payments-client", rsa_key("k7"))) is None
    assert name_of(table, provider.token("ops-client", provider.keys[1])) == "ops-bot"


def test_the_keys_come_from_the_issuers_discovery(provider: Provider) -> None:
    table = parse_principals(principals(provider).replace(
        f"  jwks_url: {provider.jwks_url}\n", ""), "p.yaml")
    assert name_of(table, provider.token("payments-client")) == "payments-gateway"
    assert provider.count("/.well-known/openid-configuration") == 1 and provider.count() == 1


def test_another_principal_claim(provider: Provider) -> None:
    table = parse_principals(principals(provider, principal_claim="azp"), "p.yaml")
    assert name_of(table, provider.token("nobody", azp="payments-client")) == \
        "payments-gateway"
    assert name_of(table, provider.token("payments-client")) is None  # no azp


def test_a_reload_keeps_the_key_cache(provider: Provider) -> None:
    token = provider.token("payments-client")
    for _ in range(3):
        assert name_of(parse_principals(principals(provider), "p.yaml"), token) == \
            "payments-gateway"
    assert provider.count() == 1


def test_accepted_tokens_join_a_table_with_oidc(provider: Provider,
                                                table: PrincipalTable) -> None:
    joined = table.with_tokens([b"tok-door"])
    assert name_of(joined, provider.token("payments-client")) == "payments-gateway"
    assert joined.by_token(b"tok-door") is not None


@pytest.mark.parametrize(("oidc", "says"), [
    ("oidc:\n  audience: a\n", "oidc needs issuer"),
    ("oidc:\n  issuer: https://idp.example\n", "oidc needs audience"),
    ("oidc:\n  issuer: ftp://idp\n  audience: a\n", "https:// URL"),
    ("oidc:\n  issuer: https://idp.example\n  audience: a\n  algorithms: [HS256]\n",
     "HS256 always refused"),
    ("oidc:\n  issuer: https://idp.example\n  audience: a\n  algorithms: [none, RS256]\n",
     "none always refused"),
    ("oidc:\n  issuer: https://idp.example\n  audience: a\n  colour: red\n",
     "unknown field oidc.colour"),
    ("oidc: [1]\n", "oidc must be a mapping"),
    ("", "has a subject (a JWT claim) but the file has no oidc section"),
])
def test_a_bad_oidc_section_is_named_with_its_line(oidc: str, says: str) -> None:
    text = oidc + "principals:\n  - name: a\n    subject: s\n    roles: [route]\n" \
                  "    catalogs: '*'\n"
    with pytest.raises(InvalidRequest) as raised:
        parse_principals(text, "p.yaml")
    assert says in str(raised.value) and "p.yaml:" in str(raised.value)


def test_two_principals_with_one_subject_are_refused(provider: Provider) -> None:
    text = oidc_section(provider) + "principals:\n" + "".join(
        f"  - name: {n}\n    subject: same\n    roles: [route]\n    catalogs: '*'\n"
        for n in ("a", "b"))
    with pytest.raises(InvalidRequest, match="same JWT subject as 'a'"):
        parse_principals(text, "p.yaml")


def test_plain_http_beyond_loopback_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    text = ("oidc:\n  issuer: http://idp.internal\n  audience: a\n"
            "principals:\n  - name: a\n    subject: s\n    roles: [route]\n    catalogs: '*'\n")
    with caplog.at_level(logging.WARNING):
        parse_principals(text, "p.yaml")
    assert "plain http beyond loopback" in caplog.text


def test_what_looks_like_a_jwt() -> None:
    token = jwt.encode({"a": 1}, "k" * 32, algorithm="HS256")
    assert looks_like_jwt(token.encode())
    assert not looks_like_jwt(b"tok-static") and not looks_like_jwt(b"a.b")
    assert not looks_like_jwt(b"a.b.c.d") and not looks_like_jwt(b"a b.c.d")


class CountingKeys:
    """The provider's keys, counting how often the check asks for one."""

    def __init__(self, provider: Provider) -> None:
        self.jwks = {k.kid: k.jwk() for k in provider.keys}
        self.asked = 0
        self.where = provider.jwks_url

    def key(self, kid: str) -> dict[str, object] | None:
        self.asked += 1
        return self.jwks.get(kid)


def test_an_accepted_token_is_remembered_for_a_minute_at_most(provider: Provider) -> None:
    settings = parse_principals(principals(provider), "p.yaml").oidc
    assert settings is not None
    keys, clock = CountingKeys(provider), [time.time()]
    check = JwtCheck(settings.settings, keys, clock=lambda: clock[0])
    token = provider.token("payments-client").encode()
    for _ in range(20):
        assert check.claim_of(token) == "payments-client"
    assert keys.asked == 1  # verified once
    clock[0] += REMEMBER_SECONDS + 1
    assert check.claim_of(token) == "payments-client" and keys.asked == 2
    bad = provider.token("payments-client", aud="another").encode()
    for _ in range(3):
        with pytest.raises(JwtRefused):
            check.claim_of(bad)
    assert keys.asked == 5  # a refused token is checked every time


def test_a_remembered_token_is_forgotten_at_its_expiry(provider: Provider) -> None:
    settings = parse_principals(principals(provider), "p.yaml").oidc
    assert settings is not None
    keys, clock = CountingKeys(provider), [time.time()]
    check = JwtCheck(settings.settings, keys, clock=lambda: clock[0])
    token = provider.token("payments-client", exp=int(clock[0]) - 30).encode()  # in leeway
    assert check.claim_of(token) == "payments-client"
    clock[0] += 31  # past exp + leeway, before REMEMBER_SECONDS
    check.claim_of(token)
    assert keys.asked == 2
