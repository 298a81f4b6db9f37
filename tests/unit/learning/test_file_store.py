"""The file store (``router.learning.file_store``) runs the feedback store contract, and the
contract catches a store that loses rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.folder import feedback_dir
from router.learning.rows import Row
from router.learning.store import FeedbackStore
from tests.support.feedback_contract import POLICY, FeedbackStoreContract, example


class TestFileStore(FeedbackStoreContract):
    def open(self, place: Path, policy: FeedbackConfig = POLICY) -> FeedbackStore:
        return FileStore(place, policy)


class _LosesTheLastRow(FileStore):
    def read_rows(self) -> list[Row]:
        return super().read_rows()[:-1]


class _ForgetsOwners(FileStore):
    def claim_session(self, session_id: str, principal: str) -> str:
        return principal


class _Broken(FeedbackStoreContract):
    def __init__(self, kind: type[FileStore]) -> None:
        self.kind = kind

    def open(self, place: Path, policy: FeedbackConfig = POLICY) -> FeedbackStore:
        return self.kind(place, policy)


def test_the_contract_fails_a_store_that_loses_rows_or_owners(tmp_path: Path) -> None:
    with pytest.raises(AssertionError):
        _Broken(_LosesTheLastRow).test_rows_outlive_the_process_and_reach_every_replica(
            tmp_path / "a")
    store = _ForgetsOwners(tmp_path / "b")
    with pytest.raises(AssertionError):
        _Broken(_ForgetsOwners).test_a_session_is_its_first_claimants(store)


def test_nothing_is_created_before_the_first_append(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    assert store.read_rows() == [] and not store.compact()
    assert store.find_route("r") is None and store.claim_session("s", "p") == "p"
    store.close()
    assert not feedback_dir(tmp_path).exists()
    store.append(example("merge pdfs", "pdf", "a"))
    assert feedback_dir(tmp_path).is_dir() and store.location == str(feedback_dir(tmp_path))
    store.close()
