"""The one contract every session state runs (``router.engine.sessions.SessionState``).

An implementation's test module subclasses ``SessionStateContract`` as ``Test<Implementation>``
and defines ``open(place, limits)``: a session state at ``place``, where opening the same
``place`` again is another replica sharing it (the file store: an index folder; PostgreSQL: a
database). ``SHARED_OWNERS`` says whether a claim made on one replica binds the others at once
(a store the fleet shares), ``SHARED_SHOWN`` whether what a session was shown is (the
PostgreSQL store). The base is not collected by itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from router.engine.sessions import SessionLimits, SessionState

LIMITS = SessionLimits(max_sessions=4, max_skills_per_session=3, project_sessions=2,
                       max_shown_per_session=3)


class SessionStateContract:
    """What the Engine relies on, whatever keeps a session's state."""

    SHARED_OWNERS = False
    SHARED_SHOWN = False

    def open(self, place: Path, limits: SessionLimits = LIMITS) -> SessionState:
        raise NotImplementedError  # each implementation's subclass opens its state at ``place``

    @pytest.fixture
    def place(self, tmp_path: Path) -> Path:
        return tmp_path

    @pytest.fixture
    def state(self, place: Path) -> SessionState:
        return self.open(place)

    # owner

    def test_the_first_claimant_owns_a_session(self, state: SessionState) -> None:
        assert state.claim("s1", "alice") == "alice"
        assert state.claim("s1", "bob") == "alice"
        assert state.claim("s1", "alice") == "alice"
        assert state.claim("s2", "bob") == "bob"

    def test_an_empty_session_id_is_whoever_asks(self, state: SessionState) -> None:
        assert state.claim("", "alice") == "alice"
        assert state.claim("", "bob") == "bob"

    def test_a_replica_sees_a_claim_where_owners_are_shared(self, place: Path,
                                                            state: SessionState) -> None:
        assert state.claim("s1", "alice") == "alice"
        other = self.open(place)
        assert other.claim("s1", "bob") == ("alice" if self.SHARED_OWNERS else "bob")

    # activated skills

    def test_a_skill_is_activated_once_a_session(self, state: SessionState) -> None:
        assert state.mark_active("s1", "pdf") is True
        assert state.mark_active("s1", "pdf") is False
        assert state.is_active("s1", "pdf") and not state.is_active("s2", "pdf")
        assert state.mark_active("s2", "pdf") is True
        assert state.active("s1") == frozenset({"pdf"})
        assert state.active("unknown") == frozenset()

    def test_no_session_remembers_nothing(self, state: SessionState) -> None:
        assert state.mark_active("", "pdf") is True
        assert state.mark_active("", "pdf") is True
        assert not state.is_active("", "pdf") and state.active("") == frozenset()

    def test_a_session_keeps_its_latest_skills_within_its_bound(self,
                                                                state: SessionState) -> None:
        for name in ("a", "b", "c", "d"):
            state.mark_active("s1", name)
        assert state.active("s1") == frozenset({"b", "c", "d"})  # the oldest forgotten
        assert state.mark_active("s1", "a") is True  # injected again: a repeat, never a loss

    def test_the_least_recent_sessions_are_forgotten_first(self, state: SessionState) -> None:
        for i in range(5):
            state.mark_active(f"s{i}", "pdf")
        assert not state.is_active("s0", "pdf")
        assert all(state.is_active(f"s{i}", "pdf") for i in range(1, 5))

    # project-skill names

    def test_project_names_are_the_latest_turns_per_caller(self, state: SessionState) -> None:
        state.remember_project("alice", "s1", ["lint", "deploy"])
        assert state.project_names("alice", "s1") == frozenset({"lint", "deploy"})
        assert state.project_names("bob", "s1") == frozenset()
        state.remember_project("alice", "s1", ["lint"])
        assert state.project_names("alice", "s1") == frozenset({"lint"})
        state.remember_project("alice", "s1", [])
        assert state.project_names("alice", "s1") == frozenset()

    def test_no_session_keeps_no_project_names(self, state: SessionState) -> None:
        state.remember_project("alice", "", ["lint"])
        assert state.project_names("alice", "") == frozenset()

    def test_project_names_are_kept_for_the_latest_sessions(self, state: SessionState) -> None:
        for session in ("s1", "s2", "s3"):
            state.remember_project("alice", session, [f"p-{session}"])
        assert state.project_names("alice", "s1") == frozenset()
        assert state.project_names("alice", "s3") == frozenset({"p-s3"})

    # what the session was shown

    def test_a_session_remembers_what_it_was_shown_and_on_which_turn(
            self, state: SessionState) -> None:
        assert state.begin_turn("s1").pairs() == ()
        state.record_shown("s1", ["a", "b", "a"])
        seen = state.begin_turn("s1", revealed=["c"])
        assert (seen.turn, seen.pairs()) == (2, (("a", 1), ("b", 1), ("c", 2)))
        state.record_shown("s1", ["b"])  # already shown: keeps its turn
        assert state.shown("s1").pairs() == (("a", 1), ("b", 1), ("c", 2))
        assert state.shown("s2").pairs() == () and state.shown("s1").turn == 2

    def test_a_reset_forgets_and_keeps_what_the_gateway_says(self, state: SessionState) -> None:
        state.begin_turn("s1")
        state.record_shown("s1", ["a", "b"])
        seen = state.begin_turn("s1", reset=True, revealed=["b"])
        assert (seen.turn, seen.pairs()) == (2, (("b", 2),))
        assert state.begin_turn("s1", reset=True).pairs() == ()

    def test_a_session_is_shown_at_most_its_bound(self, state: SessionState) -> None:
        state.begin_turn("s1")
        state.record_shown("s1", ["a", "b"])
        state.begin_turn("s1")
        state.record_shown("s1", ["c", "d"])
        assert state.shown("s1").pairs() == (("b", 1), ("c", 2), ("d", 2))  # oldest forgotten

    def test_no_session_is_shown_nothing(self, state: SessionState) -> None:
        assert state.begin_turn("", revealed=["a"]).pairs() == ()
        state.record_shown("", ["a"])
        assert state.shown("").pairs() == () and state.shown("").turn == 0

    def test_a_replica_sees_what_was_shown_where_it_is_shared(self, place: Path,
                                                             state: SessionState) -> None:
        state.begin_turn("s1")
        state.record_shown("s1", ["a"])
        assert state.shown("s1").pairs() == (("a", 1),)  # written by now (it may be queued)
        other = self.open(place)
        seen = other.begin_turn("s1")
        assert seen.pairs() == ((("a", 1),) if self.SHARED_SHOWN else ())
        assert seen.turn == (2 if self.SHARED_SHOWN else 1)
