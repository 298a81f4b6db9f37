"""The one file hasher and the one check of a folder against its recorded checksums
(router.common.integrity), and the index layout's one listing of version folders."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from router.common import integrity
from router.index.versions.layout import VERSIONS, mismatched, version_names


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "v"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a" * 3000)
    (folder / "sub" / "b.txt").write_text("b")
    (folder / "manifest.json").write_text("{}")
    return folder


def test_the_hasher_reads_a_file_in_chunks_and_stops_past_its_cap(tmp_path: Path) -> None:
    data = b"x" * (integrity.CHUNK * 2 + 5)
    (tmp_path / "f").write_bytes(data)
    assert integrity.sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()
    assert integrity.sha256_read(io.BytesIO(data), cap=len(data)) == (
        len(data), hashlib.sha256(data).hexdigest())
    assert integrity.sha256_read(io.BytesIO(data), cap=len(data) - 1) is None


def test_a_folder_matches_what_was_recorded_until_a_file_changes(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    recorded = integrity.checksums(folder, skip=("manifest.json",))
    assert sorted(recorded) == ["a.bin", "sub/b.txt"]
    assert integrity.mismatched(folder, recorded, skip=("manifest.json",)) == []
    (folder / "sub" / "b.txt").write_text("B")
    (folder / "extra").write_text("?")
    (folder / "a.bin").unlink()
    assert integrity.mismatched(folder, recorded, skip=("manifest.json",)) == [
        "a.bin", "extra", "sub/b.txt"]
    assert mismatched(folder, recorded) == ["a.bin", "extra", "sub/b.txt"]  # the index's


def test_a_subfolder_or_the_listed_files_only_are_compared(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    recorded = integrity.checksums(folder)
    (folder / "a.bin").write_bytes(b"changed")
    (folder / "sub" / "new").write_text("n")
    assert integrity.mismatched(folder, recorded, subfolder="sub") == ["sub/new"]
    assert integrity.mismatched(folder, {"a.bin": recorded["a.bin"]}, listed_only=True) == [
        "a.bin"]
    assert integrity.mismatched(folder, {"sub/b.txt": recorded["sub/b.txt"]},
                                listed_only=True) == []
    assert integrity.mismatched(folder, {"gone": "0"}, listed_only=True) == ["gone"]


def test_versions_are_listed_newest_first_without_hidden_folders(tmp_path: Path) -> None:
    assert version_names(tmp_path) == []
    for name in ("20250101T000000Z-aa", "20260101T000000Z-bb", ".tmp-x"):
        (tmp_path / VERSIONS / name).mkdir(parents=True)
    (tmp_path / VERSIONS / "20270101T000000Z-file").write_text("not a folder")
    assert version_names(tmp_path) == ["20260101T000000Z-bb", "20250101T000000Z-aa"]
