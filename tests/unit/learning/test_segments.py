"""When this process's segment is synced: durable rows before the append returns, Route rows by
a background thread every interval, a burst of them in one sync that no append waits for."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from router.learning.file_store import FileStore
from router.learning.folder import feedback_dir
from router.learning.rows import ACTIVATE, ROUTE, Row
from router.learning.segments import SegmentWriter
from tests.support.monitoring import until

NEVER = 3600.0  # a syncer interval no test outlives


def route(query: str) -> Row:
    return Row(kind=ROUTE, ts=time.time(), session="s", route_id=query, query=query)


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors ``os.fsync`` was called on, in order (not by the syncers of stores an
    earlier test left open: they run on in this process)."""
    calls: list[int] = []
    real = os.fsync
    earlier = set(syncers())

    def counted(fd: int) -> None:
        if threading.current_thread() not in earlier:
            calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return calls


def syncers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feedback-sync"]


def test_a_burst_of_route_rows_waits_for_no_sync_and_close_syncs_it_once(
        tmp_path: Path, fsyncs: list[int]) -> None:
    before = len(syncers())
    writer = SegmentWriter(feedback_dir(tmp_path), sync_interval=NEVER)
    writer.append([route("r0")], durable=False)  # opens the segment (its folder is synced)
    opened = len(fsyncs)
    for i in range(1, 100):
        writer.append([route(f"r{i}")], durable=False)
    assert len(fsyncs) == opened and writer.unsynced == 100
    assert len(syncers()) == before + 1
    assert len(FileStore(tmp_path).read_rows()) == 100  # written, so readable, before any sync
    writer.close()
    assert len(fsyncs) == opened + 1 and writer.unsynced == 0
    assert len(syncers()) == before  # close stopped it


def test_route_rows_are_synced_by_the_syncer_and_a_parked_one_wakes_for_the_next(
        tmp_path: Path, fsyncs: list[int]) -> None:
    writer = SegmentWriter(feedback_dir(tmp_path), sync_interval=0.01)
    writer.append([route("first")], durable=False)
    until(lambda: writer.unsynced == 0, "the first Route row synced")
    # it parks after an interval with nothing to sync, clearing the event it then waits on
    until(lambda: not writer._wake.is_set(), "the syncer parked")
    synced = len(fsyncs)
    writer.append([route("second")], durable=False)
    until(lambda: writer.unsynced == 0, "the second Route row synced")
    assert len(fsyncs) == synced + 1
    writer.close()
    assert [r.query for r in FileStore(tmp_path).read_rows()] == ["first", "second"]


def test_a_durable_append_syncs_before_it_returns_with_the_route_rows_before_it(
        tmp_path: Path, fsyncs: list[int]) -> None:
    writer = SegmentWriter(feedback_dir(tmp_path), sync_interval=NEVER)
    for i in range(3):
        writer.append([route(f"r{i}")], durable=False)
    opened = len(fsyncs)
    writer.append([Row(kind=ACTIVATE, ts=time.time(), session="s", skill="pdf", query="r2")])
    assert len(fsyncs) == opened + 1 and writer.unsynced == 0
    writer.close()


def test_after_close_the_next_route_row_opens_a_segment_and_starts_a_syncer(
        tmp_path: Path) -> None:
    writer = SegmentWriter(feedback_dir(tmp_path), sync_interval=0.01)
    writer.append([route("before")], durable=False)
    writer.close()
    writer.append([route("after")], durable=False)
    until(lambda: writer.unsynced == 0, "the Route row after close synced")
    writer.close()
    assert sorted(r.query for r in FileStore(tmp_path).read_rows()) == ["after", "before"]
    assert len(os.listdir(feedback_dir(tmp_path))) >= 2  # two segments
