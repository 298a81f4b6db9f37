"""Per-conversation activation memory: dedup, expiry, LRU bound, atomicity."""

from __future__ import annotations

import pytest

from router.engine.activated import SessionStore
from tests.support.race import race


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_first_activation_is_new_then_remembered() -> None:
    store = SessionStore()
    assert store.mark_active("s1", "pdf") is True
    assert store.mark_active("s1", "pdf") is False
    assert store.is_active("s1", "pdf") is True
    assert store.is_active("s1", "docx") is False
    assert store.is_active("s2", "pdf") is False
    assert store.mark_active("s2", "pdf") is True
    store.mark_active("s1", "docx")
    assert store.active("s1") == frozenset({"pdf", "docx"})
    assert store.active("unknown") == frozenset()


def test_empty_session_id_has_no_memory() -> None:
    store = SessionStore()
    assert store.mark_active("", "pdf") is True
    assert store.mark_active("", "pdf") is True
    assert store.is_active("", "pdf") is False
    assert store.active("") == frozenset()
    assert len(store) == 0


def test_sessions_expire_after_idle_ttl() -> None:
    clock = FakeClock()
    store = SessionStore(ttl_seconds=60, clock=clock)
    store.mark_active("s1", "pdf")
    clock.now += 59
    assert store.is_active("s1", "pdf") is True  # touching renews the session
    clock.now += 59
    assert store.is_active("s1", "pdf") is True
    clock.now += 60
    assert store.is_active("s1", "pdf") is False
    assert len(store) == 0
    assert store.mark_active("s1", "pdf") is True


def test_expiry_only_drops_idle_sessions() -> None:
    clock = FakeClock()
    store = SessionStore(ttl_seconds=60, clock=clock)
    store.mark_active("old", "a")
    clock.now += 40
    store.mark_active("young", "a")
    clock.now += 30
    assert store.active("old") == frozenset()
    assert store.active("young") == frozenset({"a"})


def test_lru_bound_evicts_least_recently_used_session() -> None:
    store = SessionStore(max_sessions=2)
    store.mark_active("s1", "a")
    store.mark_active("s2", "a")
    assert store.is_active("s1", "a")  # s1 is now the most recently used
    store.mark_active("s3", "a")
    assert len(store) == 2
    assert store.is_active("s2", "a") is False
    assert store.is_active("s1", "a") is True
    assert store.is_active("s3", "a") is True


def test_per_session_skill_cap_forgets_oldest() -> None:
    store = SessionStore(max_skills_per_session=2)
    for name in ("a", "b", "c"):
        assert store.mark_active("s", name) is True
    assert store.active("s") == frozenset({"b", "c"})
    assert store.mark_active("s", "a") is True


def test_forget_drops_a_session() -> None:
    store = SessionStore()
    store.mark_active("s", "a")
    store.forget("s")
    store.forget("never-seen")
    assert store.is_active("s", "a") is False


def test_concurrent_marks_yield_exactly_one_new() -> None:
    store = SessionStore()
    assert sorted(race(20, lambda: store.mark_active("s", "pdf"))) == [False] * 19 + [True]


@pytest.mark.parametrize("kwargs", [{"max_sessions": 0}, {"ttl_seconds": 0},
                                    {"max_skills_per_session": 0}])
def test_bounds_must_be_positive(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SessionStore(**kwargs)  # type: ignore[arg-type]
