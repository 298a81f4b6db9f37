"""The provider's key cache on a fake clock and a fake fetch: Cache-Control honoured, unknown
kids refetched at most once in five seconds, the keys kept while the provider is down, one
fetch for many threads, discovery checked, only asymmetric signing keys kept."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from router.access.jwks import (
    DEFAULT_TTL,
    MAX_WAITERS,
    FetchFailed,
    KeySet,
    max_age,
    signing_keys,
)

URL = "https://idp.example/keys"


class Fake:
    """A provider answering ``documents`` by URL, or failing while ``down``."""

    def __init__(self, keys: list[dict[str, Any]], cache_control: str = "") -> None:
        self.keys, self.cache_control, self.down = keys, cache_control, False
        self.calls: list[str] = []
        self.now = 1000.0
        self.gate: threading.Event | None = None

    def clock(self) -> float:
        return self.now

    def fetch(self, url: str) -> tuple[Any, str]:
        self.calls.append(url)
        if self.gate is not None:
            self.gate.wait(30)
        if self.down:
            raise FetchFailed(f"{url} answered HTTP 503")
        if url.endswith("/.well-known/openid-configuration"):
            return {"issuer": "https://idp.example", "jwks_uri": URL}, ""
        return {"keys": list(self.keys)}, self.cache_control


def key(kid: str, **extra: Any) -> dict[str, Any]:
    return {"kty": "RSA", "kid": kid, "n": "AQAB", "e": "AQAB", **extra}


def key_set(fake: Fake, url: str = URL, issuer: str = "") -> KeySet:
    return KeySet(url, issuer, fetch=fake.fetch, clock=fake.clock)


@pytest.mark.parametrize(("header", "seconds"), [
    ("", DEFAULT_TTL), ("public, max-age=60", 60.0), ("max-age=0", 5.0), ("no-store", 5.0),
    ("max-age=99999999", 86400.0), ("private, MAX-AGE=\"120\"", 120.0)])
def test_max_age(header: str, seconds: float) -> None:
    assert max_age(header) == seconds


def test_the_cache_lasts_as_long_as_max_age_says() -> None:
    fake = Fake([key("a")], "max-age=60")
    keys = key_set(fake)
    for _ in range(10):
        assert keys.key("a") is not None
    fake.now += 59
    assert keys.key("a") is not None and len(fake.calls) == 1
    fake.now += 2
    assert keys.key("a") is not None  # the stale key at once, the fetch behind it
    assert keys.settled(30) and len(fake.calls) == 2


def test_an_unknown_kid_refetches_at_most_once_in_five_seconds() -> None:
    fake = Fake([key("a")])
    keys = key_set(fake)
    assert keys.key("a") is not None
    fake.keys.append(key("b"))
    assert keys.key("b") is not None and len(fake.calls) == 2  # a rotation: at once
    for index in range(50):
        assert keys.key(f"x{index}") is None
    assert len(fake.calls) == 2
    fake.now += 5
    assert keys.key("x") is None and len(fake.calls) == 3


def test_the_keys_outlive_their_cache_while_the_provider_is_down() -> None:
    fake = Fake([key("a")])
    keys = key_set(fake)
    assert keys.key("a") is not None
    fake.down = True
    fake.now += DEFAULT_TTL + 1
    for _ in range(20):
        assert keys.key("a") is not None
        assert keys.settled(30)
    assert len(fake.calls) == 2  # one failed try, none again within five seconds
    fake.now += 5
    assert keys.key("a") is not None and keys.settled(30) and len(fake.calls) == 3
    fake.down = False
    fake.now += 5
    fake.keys = [key("c")]
    assert keys.key("c") is not None and keys.key("a") is None


def test_a_provider_down_at_the_start_refuses_until_it_answers() -> None:
    fake = Fake([key("a")])
    fake.down = True
    keys = key_set(fake)
    assert keys.key("a") is None and keys.key("a") is None and len(fake.calls) == 1
    fake.down = False
    fake.now += 5
    assert keys.key("a") is not None


def test_many_threads_at_once_make_one_fetch_and_few_wait_for_it() -> None:
    fake = Fake([key("a")])
    fake.gate = threading.Event()
    keys = key_set(fake)
    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(keys.key("a"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    while len(found) < 8 - MAX_WAITERS:  # the others answer at once, without keys
        threading.Event().wait(0.01)
    fake.gate.set()
    for thread in threads:
        thread.join(30)
    assert len(found) == 8 and len(fake.calls) == 1
    assert sum(1 for k in found if k) == MAX_WAITERS
    assert keys.key("a") is not None and len(fake.calls) == 1


def test_discovery_finds_the_jwks_and_checks_the_issuer() -> None:
    fake = Fake([key("a")])
    keys = key_set(fake, "", "https://idp.example")
    assert keys.key("a") is not None
    assert fake.calls == ["https://idp.example/.well-known/openid-configuration", URL]
    other = key_set(Fake([key("a")]), "", "https://idp.example/realm")
    assert other.key("a") is None  # the document names another issuer


def test_a_token_without_kid_gets_the_only_key() -> None:
    keys = key_set(Fake([key("a")]))
    assert keys.key("") is not None
    assert key_set(Fake([key("a"), key("b")])).key("") is None


def test_only_asymmetric_signing_keys_are_kept() -> None:
    document = {"keys": [key("a"), key("e", use="enc"), {"kty": "oct", "kid": "h", "k": "c2Vj"},
                         {"kty": "EC", "kid": "ec", "crv": "P-256"}, "junk"]}
    assert sorted(signing_keys(document, URL)) == ["a", "ec"]
    with pytest.raises(FetchFailed, match="not a JWKS"):
        signing_keys({"keys": "x"}, URL)
