"""What a process keeps of reading a file is keyed by the file as it is on disk: the same file
keeps its key, a rewrite or a replacement gets another, and the located key names the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from router.common.memo import file_identity, file_key


def test_a_file_keeps_its_identity_until_it_is_rewritten_or_replaced(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text("{}", encoding="utf-8")
    first = file_identity(path)
    assert file_identity(path) == first
    moved = tmp_path / "moved.json"
    os.rename(path, moved)
    assert file_identity(moved) == first  # renamed into place: the same file
    assert file_key(moved) == (str(moved), first)
    moved.write_text('{"a": 1}', encoding="utf-8")
    assert file_identity(moved) != first
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}', encoding="utf-8")
    os.replace(other, moved)
    assert file_identity(moved) != first
    with pytest.raises(OSError):
        file_identity(tmp_path / "none.json")
