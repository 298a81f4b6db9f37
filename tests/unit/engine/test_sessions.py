"""Every session state runs the session state contract: without a feedback store, over the file
store, and over the PostgreSQL store (a real server, ``tests.support.postgres``); and the
contract catches a state that forgets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

from router.config import FeedbackConfig
from router.engine.sessions import KeptSessionState, SessionLimits, SessionState
from router.learning.backends import open_store
from router.learning.file_store import FileStore
from router.learning.store import FeedbackStore
from tests.support.postgres import postgres_dsn  # noqa: F401  (the fixture)
from tests.support.session_state_contract import LIMITS, SessionStateContract
from tests.unit.learning.test_pg_store import new_database


class TestNoStore(SessionStateContract):
    def open(self, place: Path, limits: SessionLimits = LIMITS) -> SessionState:
        return KeptSessionState(None, limits)


class TestFileStore(SessionStateContract):
    def open(self, place: Path, limits: SessionLimits = LIMITS) -> SessionState:
        return KeptSessionState(FileStore(place, FeedbackConfig()), limits)


class TestPgStore(SessionStateContract):
    SHARED_OWNERS = True
    SHARED_SHOWN = True
    stores: list[FeedbackStore]

    @pytest.fixture(autouse=True)
    def _server(self, postgres_dsn: str, tmp_path: Path,  # noqa: F811
                monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        self.server, self.stores = postgres_dsn, []
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the spool's folder
        yield
        for store in self.stores:
            store.close()

    def open(self, place: Path, limits: SessionLimits = LIMITS) -> SessionState:
        # One database per place: opening the same place again is another replica.
        name = "s_" + hashlib.sha256(str(place).encode()).hexdigest()[:20]
        store = open_store(None, FeedbackConfig(), new_database(self.server, name))
        self.stores.append(store)
        return KeptSessionState(store, limits)


class _ForgetsProjectNames(KeptSessionState):
    def remember_project(self, principal: str, session_id: str, names: Iterable[str]) -> None:
        return None


class _ForgetsShown(KeptSessionState):
    def record_shown(self, session_id: str, names: Sequence[str]) -> None:
        return None


class _ForgetsOwners(KeptSessionState):
    def claim(self, session_id: str, principal: str) -> str:
        return principal


class _Broken(SessionStateContract):
    def __init__(self, kind: type[KeptSessionState]) -> None:
        self.kind = kind

    def open(self, place: Path, limits: SessionLimits = LIMITS) -> SessionState:
        return self.kind(None, limits)


def test_the_contract_catches_a_state_that_forgets(tmp_path: Path) -> None:
    names = _Broken(_ForgetsProjectNames)
    with pytest.raises(AssertionError):
        names.test_project_names_are_the_latest_turns_per_caller(names.open(tmp_path))
    shown = _Broken(_ForgetsShown)
    with pytest.raises(AssertionError):
        shown.test_a_session_remembers_what_it_was_shown_and_on_which_turn(
            shown.open(tmp_path))
    owners = _Broken(_ForgetsOwners)
    with pytest.raises(AssertionError):
        owners.test_the_first_claimant_owns_a_session(owners.open(tmp_path))
