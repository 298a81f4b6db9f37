"""Opening a feedback store by URL scheme (``router.learning.backends``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from router.config import FeedbackConfig
from router.errors import InvalidRequest
from router.learning import backends
from router.learning.backends import open_store, scheme
from router.learning.file_store import FileStore
from router.learning.folder import feedback_dir
from router.learning.store import FeedbackStore


def test_no_url_is_the_store_in_the_index_folder(tmp_path: Path) -> None:
    policy = FeedbackConfig(max_rows_per_skill=7)
    for url in ("", "file:", "FILE:"):
        store = open_store(tmp_path, policy, url)
        assert isinstance(store, FileStore) and store.policy is policy
        assert store.location == str(feedback_dir(tmp_path))


def test_the_scheme_names_the_backend() -> None:
    assert scheme("") == "file"
    assert scheme("postgresql://router@db/feedback") == "postgresql"
    assert scheme("PostgreSQL://db") == "postgresql"
    assert scheme("no-scheme-here") == ""


def test_an_unknown_scheme_is_refused_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest) as refused:
        open_store(tmp_path, FeedbackConfig(), "mysql://router:s3cret@db/feedback")
    assert "'mysql'" in str(refused.value) and "file:" in str(refused.value)
    assert "postgresql:" in str(refused.value)
    assert "s3cret" not in str(refused.value)
    with pytest.raises(InvalidRequest, match="'somewhere'"):
        open_store(tmp_path, FeedbackConfig(), "somewhere")


def test_the_file_store_needs_its_index_folder_and_no_other_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match="index folder"):
        open_store(None, FeedbackConfig())
    with pytest.raises(InvalidRequest, match="give no path"):
        open_store(tmp_path, FeedbackConfig(), "file:///srv/feedback")


def test_a_policy_out_of_bounds_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match=r"feedback\.max_rows_per_skill"):
        open_store(tmp_path, FeedbackConfig(max_rows_per_skill=0))


def test_a_backend_is_one_registration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[str, Path | None]] = []

    def open_memory(url: str, index_dir: Path | None, policy: FeedbackConfig) -> FeedbackStore:
        opened.append((url, index_dir))
        return FileStore(tmp_path / "elsewhere", policy)

    monkeypatch.setitem(backends.BACKENDS, "memory", open_memory)
    store = open_store(tmp_path, FeedbackConfig(), "memory://x")
    assert opened == [("memory://x", tmp_path)]
    assert store.location == str(feedback_dir(tmp_path / "elsewhere"))
