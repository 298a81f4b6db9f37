"""The in-process memory of what each session was shown (``router.learning.shown``)."""

from __future__ import annotations

from router.learning.shown import LocalShown


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_turns_reveals_reset_and_bound() -> None:
    memory = LocalShown(limit=3)
    assert memory.begin("s").turn == 1
    memory.add("s", ["a", "b"])
    seen = memory.begin("s", revealed=["c"])
    assert (seen.turn, seen.pairs()) == (2, (("a", 1), ("b", 1), ("c", 2)))
    memory.add("s", ["d", "a"])  # past the bound: the oldest goes first; "a" keeps its turn
    assert memory.recall("s").pairs() == (("b", 1), ("c", 2), ("d", 2))
    seen = memory.begin("s", reset=True, revealed=["x"])
    assert (seen.turn, seen.pairs()) == (3, (("x", 3),))
    assert memory.begin("").turn == 0 and memory.recall("").shown == {}
    memory.add("", ["a"])
    assert memory.recall("").shown == {}


def test_a_session_is_forgotten_after_its_lifetime() -> None:
    clock = Clock()
    memory = LocalShown(limit=256, ttl_seconds=60, clock=clock)
    memory.begin("s")
    memory.add("s", ["a"])
    clock.now = 59
    assert memory.begin("s").shown == {"a": 1}
    clock.now = 118.0
    assert memory.recall("s").turn == 2
    clock.now = 200
    assert memory.recall("s").shown == {}
    assert memory.begin("s").turn == 1


def test_sessions_are_bounded() -> None:
    memory = LocalShown(limit=8, max_sessions=2)
    for session in ("a", "b", "c"):
        memory.begin(session)
        memory.add(session, ["x"])
    assert memory.recall("a").shown == {} and memory.recall("c").shown == {"x": 1}
