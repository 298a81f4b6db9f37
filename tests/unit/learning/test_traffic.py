"""What a build takes from served traffic: ``read_traffic`` reads the store and changes no file,
``compact_traffic`` is the one step that rewrites it, and a ``Traffic``'s inputs are what the
manifest records about its examples."""

from __future__ import annotations

import time
from pathlib import Path

from router.config import FeedbackConfig
from router.learning.backends import open_store
from router.learning.rows import ACTIVATE, Row
from router.learning.traffic import (
    Traffic,
    compact_traffic,
    learned_examples,
    learned_settings,
    read_traffic,
)

POLICY = FeedbackConfig(min_sessions=2)
QUERIES = {"merge these pdfs": "pdf", "commit my work": "git", "chart this csv": "csv"}


def _teach(root: Path) -> None:
    """Each request activated in two sessions: enough support to count under ``POLICY``."""
    store = open_store(root, POLICY)
    now = time.time()
    for session in ("a", "b"):
        for query, skill in QUERIES.items():
            store.append(Row(kind=ACTIVATE, ts=now, session=session, skill=skill, query=query,
                             route_id=f"{session}-{skill}", shown=(skill, "other")))
    store.close()


def _files(root: Path) -> dict[str, bytes]:
    """Every file's bytes but the store's (empty) lock files, which a reader may create."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix != ".lock"}


def test_reading_traffic_changes_no_file(tmp_path: Path) -> None:
    _teach(tmp_path)
    before = _files(tmp_path)
    traffic = read_traffic(tmp_path, POLICY)
    assert {e.query: e.skills for e in traffic.examples} == {q: (s,) for q, s in QUERIES.items()}
    assert _files(tmp_path) == before  # nothing compacted or rewritten


def test_compaction_is_its_own_step_and_keeps_what_is_read(tmp_path: Path) -> None:
    _teach(tmp_path)
    before, read = _files(tmp_path), read_traffic(tmp_path, POLICY)
    compact_traffic(tmp_path, POLICY)
    assert _files(tmp_path) != before  # the segments were rewritten into a compacted file
    assert read_traffic(tmp_path, POLICY) == read
    assert learned_examples(tmp_path, POLICY) == list(read.examples)


def test_traffic_records_its_count_and_fingerprint(tmp_path: Path) -> None:
    _teach(tmp_path)
    traffic = read_traffic(tmp_path, POLICY)
    assert traffic.inputs == learned_settings(traffic.examples)
    assert traffic.inputs["learned_examples"]["count"] == len(QUERIES)
    assert traffic.inputs["learned_examples"]["fingerprint"]


def test_feedback_off_reads_nothing_and_writes_nothing(tmp_path: Path) -> None:
    _teach(tmp_path)
    before, off = _files(tmp_path), FeedbackConfig(enabled=False)
    compact_traffic(tmp_path, off)
    assert read_traffic(tmp_path, off) == Traffic() and _files(tmp_path) == before
    assert Traffic().inputs == {"learned_examples": {"fingerprint": "", "count": 0}}
