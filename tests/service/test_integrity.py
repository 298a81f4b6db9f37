"""Index integrity: a corrupt, partial or incompatible version is refused and the old one keeps
serving; a build killed at any point leaves the previous index current; old versions and
abandoned temporaries are cleaned up."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from router.cli import main
from router.common.checkpoints import PAUSE_ENV, POINTS
from router.door.poller import IndexPoller
from router.index.store import load_index
from router.index.versions.layout import VERSIONS, current_version
from router.index.versions.retention import prune
from router.v1 import router_pb2 as pb
from tests.support.indexes import cli_index, index_argv, index_catalog, open_engine
from tests.support.processes import cli_process
from tests.support.servers import serving
from tests.support.skills import add_skill, write_catalog


def build_twice(base: Path) -> tuple[Path, Path, str, str]:
    """(skills, index, first version, second version); the second one is current."""
    skills, out = index_catalog(base)
    first = current_version(out)
    add_skill(skills, "skill-late", "Formats invoices as PDF files.")
    cli_index(skills, out)
    return skills, out, first, current_version(out)


def _flip_faiss(folder: Path) -> None:
    path = folder / "dense.faiss"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate_manifest(folder: Path) -> None:
    path = folder / "manifest.json"
    path.write_bytes(path.read_bytes()[:40])


def _drop_vectors(folder: Path) -> None:
    (folder / "vectors.npy").unlink()


def _future_format(folder: Path) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["format_version"] = 99
    path.write_text(json.dumps(manifest))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "corrupt faiss": _flip_faiss, "truncated manifest": _truncate_manifest,
    "missing file": _drop_vectors, "future format": _future_format}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_new_version_is_refused_and_the_old_one_serves(
        damage: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    skills, out, first, second = build_twice(tmp_path)
    (out / "CURRENT").write_text(first + "\n")
    engine = open_engine(out)
    (out / "CURRENT").write_text(second + "\n")
    DAMAGE[damage](out / VERSIONS / second)
    poller = IndexPoller(engine, interval=60)
    with serving(engine) as served, caplog.at_level(logging.ERROR):
        assert poller.check() is False and poller.check() is False  # refused once, not retried
        reply = served.stub.Route(pb.RouteRequest(message="PDF tables"), timeout=5)
    assert reply.index_version == first == engine.info().version
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1 and second in refusals[0] and f"still serving {first}" in refusals[0]
    assert engine.reindex_stats().load_failures == 1
    add_skill(skills, "skill-fixed", "Repairs broken spreadsheets.")  # the next good build
    cli_index(skills, out)
    assert poller.check() is True and engine.info().version == current_version(out)


def test_retention_keeps_the_newest_and_the_current(tmp_path: Path) -> None:
    skills, root = write_catalog(tmp_path / "skills"), tmp_path / "index"
    assert main(index_argv(skills, root)) == 0
    built = root / VERSIONS / current_version(root)
    names = [f"2025010{i}T000000000000Z-aaaaaa" for i in range(1, 6)]
    for name in names:  # intact copies (a damaged version never holds a slot)
        shutil.copytree(built, root / VERSIONS / name)
    shutil.rmtree(built)
    (root / "CURRENT").write_text(names[0] + "\n")
    stale, fresh = root / ".tmp-stale", root / ".tmp-fresh"
    stale.mkdir()
    fresh.mkdir()
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    done = prune(root, keep=2)
    left = sorted(p.name for p in (root / VERSIONS).iterdir())
    assert left == sorted([names[0], names[3], names[4]])
    assert done.temporaries == (".tmp-stale",) and fresh.exists()


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """A 1,500-skill catalog with one index version built (removed afterwards)."""
    base = tmp_path_factory.mktemp("big")
    skills, out = index_catalog(base, 1500)
    yield skills, out, current_version(out)
    shutil.rmtree(base, ignore_errors=True)


def _paused_at(point: str, proc: subprocess.Popen[str]) -> None:
    """Wait until the build says it paused at ``point`` (it then waits to be killed)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.strip() == f"build paused at {point}":
            return
    pytest.fail(f"the build ended (code {proc.wait()}) without reaching {point!r}")


@pytest.mark.parametrize("point", ["starting", "discovering", "writing", "renaming"])
def test_a_killed_build_leaves_the_previous_index_current(
        point: str, big: tuple[Path, Path, str]) -> None:
    skills, out, old = big
    (out / "CURRENT").write_text(old + "\n")
    add_skill(skills, "skill-0", f"Changed for the {point} kill.")
    known = len(list((out / VERSIONS).iterdir()))
    assert point in POINTS
    with cli_process(*index_argv(skills, out), stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, env={PAUSE_ENV: point}) as proc:
        _paused_at(point, proc)  # killed there, never earlier or later
        proc.kill()
        proc.wait()
    snapshot = load_index(out)  # verifies every checksum
    assert proc.returncode == -9 and snapshot.info.version == old
    grown = len(list((out / VERSIONS).iterdir())) > known
    assert grown == (point == "renaming")  # only then is the new version in place
