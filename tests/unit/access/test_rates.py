"""``router.access.rates``: the token bucket on a test clock, and ``rate:`` in the principals
file (defaults, and a clear error for each bad value)."""

from __future__ import annotations

import pytest

from router.access.principals import parse_principals
from router.access.rates import Rate, RateLimiter, retry_after_ms
from router.errors import InvalidRequest

DIGEST = "a" * 64


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_starts_full_refills_at_its_rate_and_never_past_its_burst() -> None:
    clock = Clock()
    limiter, rate = RateLimiter(clock), Rate(2.0, 3)
    assert [limiter.take("a", rate) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a", rate) == pytest.approx(0.5)
    assert limiter.take("b", rate) == 0.0  # each principal its own bucket
    clock.now = 0.25
    assert limiter.take("a", rate) == pytest.approx(0.25)  # half a token back
    clock.now = 0.5
    assert limiter.take("a", rate) == 0.0
    clock.now = 100.0  # a long pause refills to the burst, no more
    assert [limiter.take("a", rate) for _ in range(4)][-1] > 0.0
    assert retry_after_ms(0.5) == 500 and retry_after_ms(0.0001) == 1


def test_a_changed_rate_starts_a_new_bucket() -> None:
    limiter = RateLimiter(Clock())
    assert limiter.take("a", Rate(1.0, 1)) == 0.0
    assert limiter.take("a", Rate(1.0, 1)) > 0.0
    assert limiter.take("a", Rate(5.0, 2)) == 0.0  # reloaded with a new rate


def _file(rate: str) -> str:
    return (f'principals:\n  - name: gw\n    token_sha256: "{DIGEST}"\n    roles: [route]\n'
            f'    catalogs: "*"\n    rate: {rate}\n')


def test_the_rate_of_a_principal_and_its_default_burst() -> None:
    (entry,) = parse_principals(_file("{per_second: 2, burst: 3}")).entries
    assert entry.rate == Rate(2.0, 3)
    (entry,) = parse_principals(_file("{per_second: 2.5}")).entries
    assert entry.rate == Rate(2.5, 3)
    (entry,) = parse_principals(_file("{per_second: 2}").replace("    rate: {per_second: 2}\n",
                                                               "")).entries
    assert entry.rate is None


@pytest.mark.parametrize(("rate", "says"), [
    ("5", "rate must be a mapping"),
    ("{burst: 3}", "rate takes per_second"),
    ("{per_second: 2, every: 3}", "not every"),
    ("{per_second: 0}", "above 0"),
    ("{per_second: fast}", "above 0"),
    ("{per_second: 2, burst: 0}", "at least 1"),
    ("{per_second: 2, burst: 1.5}", "whole number"),
])
def test_a_bad_rate_is_named_with_its_line(rate: str, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says) as found:
        parse_principals(_file(rate), "p.yaml")
    assert "p.yaml:" in str(found.value)
