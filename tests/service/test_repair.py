"""A broken index folder is repaired, not carried: a Reindex that finds no skill changed still
fixes a missing or misdirected CURRENT, a damaged version never holds a retention slot, and
start-up on a damaged current version serves the newest good one."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from router.cli import main
from router.config import IndexConfig
from router.encoders.hashing import HashEmbedder
from router.index.query_encoder import serving_embedder
from router.index.store import load_index
from router.index.versions.layout import CURRENT, VERSIONS, current_version
from router.index.versions.retention import prune
from tests.support.indexes import index_argv, open_engine
from tests.support.skills import add_skill, write_catalog


def build_twice(base: Path) -> tuple[Path, str, str]:
    """(index folder, older version, newer and current version)."""
    skills, out = write_catalog(base / "skills"), base / "index"
    assert main(index_argv(skills, out)) == 0
    first = current_version(out)
    add_skill(skills, "skill-late", "Formats invoices as PDF files.")
    assert main(index_argv(skills, out)) == 0
    return out, first, current_version(out)


def damage(out: Path, version: str) -> None:
    path = out / VERSIONS / version / "dense.faiss"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def info_works(out: Path) -> bool:
    return main(["info", "--index", str(out)]) == 0


def test_a_reindex_with_nothing_changed_restores_a_deleted_current(tmp_path: Path) -> None:
    out, _, served = build_twice(tmp_path)
    engine = open_engine(out)
    (out / CURRENT).unlink()
    assert not info_works(out)
    result = engine.reindex()
    assert not result.changes.any and result.index_version == served
    assert current_version(out) == served and info_works(out)
    assert open_engine(out).info().version == served  # a restart works too


def test_a_reindex_repoints_current_away_from_a_damaged_version(tmp_path: Path) -> None:
    out, first, served = build_twice(tmp_path)
    engine = open_engine(out)
    damage(out, first)
    (out / CURRENT).write_text(first + "\n")
    assert not info_works(out)
    engine.reindex()
    assert current_version(out) == served and info_works(out)


def test_a_reindex_rebuilds_when_the_served_version_is_damaged_on_disk(tmp_path: Path) -> None:
    out, _, served = build_twice(tmp_path)
    engine = open_engine(out)
    damage(out, served)
    assert not info_works(out)
    result = engine.reindex()
    assert result.swapped and result.index_version != served
    assert engine.info().version == current_version(out) == result.index_version
    assert info_works(out) and load_index(out).info.skill_count == engine.info().skill_count


def test_a_damaged_version_named_newest_does_not_hold_a_slot(tmp_path: Path) -> None:
    out, first, served = build_twice(tmp_path)
    future = "29991231T235959000000Z-ffffff"
    shutil.copytree(out / VERSIONS / first, out / VERSIONS / future)
    damage(out, future)
    unreadable = out / VERSIONS / "29991231T235958000000Z-eeeeee"
    unreadable.mkdir()
    done = prune(out, keep=2)
    assert sorted(done.versions) == sorted([future, unreadable.name])
    assert sorted(p.name for p in (out / VERSIONS).iterdir()) == sorted([first, served])


@pytest.mark.parametrize("breakage", ["damaged", "missing CURRENT", "truncated manifest"])
def test_start_up_serves_the_newest_good_version_with_an_error_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, breakage: str) -> None:
    out, first, second = build_twice(tmp_path)
    newest = second
    if breakage == "damaged":
        damage(out, second)
        newest = first
    elif breakage == "missing CURRENT":
        (out / CURRENT).unlink()
    else:
        manifest = out / VERSIONS / second / "manifest.json"
        manifest.write_bytes(manifest.read_bytes()[:40])
        newest = first
    with caplog.at_level(logging.ERROR):
        assert isinstance(serving_embedder(out, IndexConfig()), HashEmbedder)
        engine = open_engine(out)
    assert engine.info().version == newest
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and f"serving the newest good version {newest}" in errors[0]


def test_start_up_without_any_good_version_still_fails(tmp_path: Path) -> None:
    out, first, second = build_twice(tmp_path)
    damage(out, first)
    damage(out, second)
    with pytest.raises(Exception, match="checksum mismatch"):
        open_engine(out)
