"""The key fetch against a provider on loopback that hangs, or trickles its answer a byte at a
time: the whole fetch ends within its deadline, callers wait for it no longer than that, and the
next fetch is tried only ``REFETCH_SECONDS`` after the last one ended."""

from __future__ import annotations

import threading
import time

import pytest

from router.access.jwks import FETCH_SECONDS, REFETCH_SECONDS, FetchFailed, KeySet, http_fetch
from tests.support.slow_idp import slow_provider

MARGIN = 5.0  # for a loaded machine; the old per-read timeout never ended a trickle at all


@pytest.mark.parametrize("mode", ["hang", "trickle"])
def test_a_fetch_ends_within_its_deadline(mode: str) -> None:
    with slow_provider(mode) as provider:
        outcome: list[BaseException] = []

        def fetch() -> None:
            try:
                http_fetch(provider.url)
            except FetchFailed as exc:
                outcome.append(exc)

        started = time.monotonic()
        thread = threading.Thread(target=fetch, daemon=True)
        thread.start()
        thread.join(FETCH_SECONDS + MARGIN)
        assert not thread.is_alive(), f"a {mode}ing provider held the fetch"
        assert time.monotonic() - started >= FETCH_SECONDS - 0.5
        assert outcome and "within" in str(outcome[0])


def test_callers_wait_no_longer_than_the_deadline_and_the_back_off_runs_from_the_end() -> None:
    with slow_provider("trickle") as provider:
        keys = KeySet(provider.url)
        started = time.monotonic()
        assert keys.key("k1") is None
        waited = time.monotonic() - started
        assert FETCH_SECONDS - 0.5 <= waited < FETCH_SECONDS + MARGIN
        ended = time.monotonic()
        quick = time.monotonic()
        for index in range(50):  # within the back-off: refused at once, nothing fetched
            assert keys.key(f"junk{index}") is None
        assert time.monotonic() - quick < 1.0
        if time.monotonic() - ended < REFETCH_SECONDS - 0.5:
            assert provider.connections == 1


def test_a_caller_whose_key_is_cached_never_waits_for_a_hanging_provider() -> None:
    with slow_provider("hang") as provider:
        now = [1000.0]
        answers = iter([({"keys": [{"kty": "RSA", "kid": "k1", "n": "AQAB", "e": "AQAB"}]},
                         "max-age=60")])

        def fetch(url: str) -> tuple[object, str]:
            first = next(answers, None)
            return first if first is not None else http_fetch(provider.url)

        keys = KeySet(provider.url, fetch=fetch, clock=lambda: now[0])
        assert keys.key("k1") is not None
        now[0] += 61  # expired: the next look fetches again, from a provider that hangs
        started = time.monotonic()
        for _ in range(20):
            assert keys.key("k1") is not None
        assert time.monotonic() - started < 1.0
        assert keys.settled(FETCH_SECONDS + MARGIN)  # the fetch behind them ended
