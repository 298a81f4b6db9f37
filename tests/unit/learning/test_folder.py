"""The feedback folder on disk: per-process segments, full reads, safe bounded compaction."""

from __future__ import annotations

import json
import time
from pathlib import Path

from router.config import FeedbackConfig
from router.learning.file_store import FileStore
from router.learning.folder import COMPACTED_PREFIX, SEGMENT_PREFIX, data_files, feedback_dir
from router.learning.rows import ACTIVATE, DAY_SECONDS, FEEDBACK, ROUTE, Row
from router.learning.segments import SegmentWriter
from router.learning.stats import skill_stats
from router.learning.traffic import fingerprint, learned_examples

POLICY = FeedbackConfig(max_rows_per_skill=3)


def activation(query: str, skill: str, session: str, ts: float | None = None) -> Row:
    return Row(kind=ACTIVATE, ts=time.time() if ts is None else ts, session=session,
               skill=skill, query=query)


def write(index: Path, rows: list[Row], close: bool = True) -> SegmentWriter:
    writer = SegmentWriter(feedback_dir(index))
    writer.append(rows)
    if close:
        writer.close()
    return writer


def names(index: Path) -> list[str]:
    return [p.name for p in data_files(feedback_dir(index))]


def test_each_writer_has_its_own_segment_and_reads_merge_them(tmp_path: Path) -> None:
    first = write(tmp_path, [activation("merge pdfs", "pdf", "a")], close=False)
    second = write(tmp_path, [activation("split pdfs", "pdf", "b")], close=False)
    assert len(names(tmp_path)) == 2 and all(n.startswith(SEGMENT_PREFIX)
                                             for n in names(tmp_path))
    assert {r.query for r in FileStore(tmp_path).read_rows()} == {"merge pdfs", "split pdfs"}
    first.close()
    second.close()


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, [activation("merge pdfs", "pdf", "a")])
    segment = feedback_dir(tmp_path) / names(tmp_path)[0]
    with segment.open("a", encoding="utf-8") as handle:
        handle.write('{"kind": "activate", "ts": 1')
    assert [r.query for r in FileStore(tmp_path).read_rows()] == ["merge pdfs"]


def test_compaction_takes_closed_segments_and_leaves_live_ones(tmp_path: Path) -> None:
    write(tmp_path, [activation("merge pdfs", "pdf", "a")])
    write(tmp_path, [activation("split pdfs", "pdf", "b")])
    live = write(tmp_path, [activation("chart", "csv", "c")], close=False)
    assert FileStore(tmp_path, POLICY).compact()
    files = names(tmp_path)
    assert sum(n.startswith(COMPACTED_PREFIX) for n in files) == 1
    assert sum(n.startswith(SEGMENT_PREFIX) for n in files) == 1  # the live one
    assert {r.query for r in FileStore(tmp_path).read_rows() if r.query} == {
        "merge pdfs", "split pdfs", "chart"}
    live.append([activation("plot", "csv", "d")])  # still writable after the compaction
    assert "plot" in {r.query for r in FileStore(tmp_path).read_rows()}
    live.close()


def test_compaction_bounds_rows_per_skill_and_keeps_the_counters(tmp_path: Path) -> None:
    now = time.time()
    rows = [activation(f"q{i}", "pdf", f"s{i}", ts=now - 100 + i) for i in range(10)]
    rows.append(Row(kind=ROUTE, ts=now - 2 * 3600, session="s", route_id="r", query="old",
                    shown=("pdf", "csv"), retrieved=("pdf",)))
    rows.append(Row(kind=FEEDBACK, ts=now, skill="pdf", outcome="success", session="s0"))
    write(tmp_path, rows)
    before = skill_stats(FileStore(tmp_path).read_rows(), POLICY, now)
    assert FileStore(tmp_path, POLICY).compact(now)
    after_rows = FileStore(tmp_path).read_rows()
    assert skill_stats(after_rows, POLICY, now) == before
    # the cap keeps the first three (the later ones have no more support: they evict nothing)
    assert {r.query for r in after_rows if r.kind == ACTIVATE} == {"q0", "q1", "q2"}
    assert not any(r.kind == ROUTE for r in after_rows)  # its message is gone after an hour
    pdf = next(s for s in before if s.skill == "pdf")
    assert (pdf.routed, pdf.shown, pdf.activated, pdf.succeeded) == (1, 1, 10, 1)
    assert FileStore(tmp_path, POLICY).compact(now)  # compacting again changes nothing
    assert skill_stats(FileStore(tmp_path).read_rows(), POLICY, now) == before


def test_retention_drops_old_rows_from_disk(tmp_path: Path) -> None:
    now = time.time()
    write(tmp_path, [activation("ancient", "pdf", "a", ts=now - 91 * DAY_SECONDS),
                     activation("recent", "pdf", "b", ts=now)])
    FileStore(tmp_path, FeedbackConfig(retention_days=90)).compact(now)
    text = "".join(p.read_text() for p in data_files(feedback_dir(tmp_path)))
    assert "recent" in text and "ancient" not in text


def test_an_interrupted_compaction_is_finished_and_counts_rows_once(tmp_path: Path) -> None:
    write(tmp_path, [activation("merge pdfs", "pdf", "a"), activation("split", "pdf", "b")])
    folder = feedback_dir(tmp_path)
    segment = names(tmp_path)[0]
    rows = FileStore(tmp_path).read_rows()
    # What a compaction leaves when killed after syncing its output, before removing inputs.
    pending = folder / f"{COMPACTED_PREFIX}1-abc.jsonl.pending"
    pending.write_text(json.dumps({"kind": "header", "inputs": [segment]}) + "\n" +
                       "".join(r.to_json() + "\n" for r in rows), encoding="utf-8")
    again = FileStore(tmp_path).read_rows()
    assert sorted(r.rid for r in again) == sorted(r.rid for r in rows)
    assert names(tmp_path) == [f"{COMPACTED_PREFIX}1-abc.jsonl"]


def test_a_held_compaction_lock_makes_compaction_step_aside(tmp_path: Path) -> None:
    import fcntl
    import os

    write(tmp_path, [activation("merge pdfs", "pdf", "a")])
    fd = os.open(feedback_dir(tmp_path) / ".compact.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert not FileStore(tmp_path, POLICY).compact()
    finally:
        os.close(fd)
    assert FileStore(tmp_path, POLICY).compact()


def test_learned_examples_and_their_fingerprint(tmp_path: Path) -> None:
    policy = FeedbackConfig(min_sessions=2)
    assert learned_examples(tmp_path, policy) == [] and fingerprint([]) == ""
    write(tmp_path, [activation("merge pdfs", "pdf", "a")])
    assert learned_examples(tmp_path, policy) == []
    write(tmp_path, [activation("split pdfs", "pdf", "b")])
    examples = learned_examples(tmp_path, policy)
    assert [e.query for e in examples] == ["merge pdfs", "split pdfs"]
    mark = fingerprint(examples)
    assert mark and mark == fingerprint(learned_examples(tmp_path, policy))
    assert learned_examples(tmp_path, FeedbackConfig(enabled=False)) == []


def test_concurrent_appends_share_syncs_and_rotate_without_loss(tmp_path: Path) -> None:
    import threading

    writer = SegmentWriter(feedback_dir(tmp_path), max_rows=50)

    def work(k: int) -> None:
        for i in range(40):
            writer.append([activation(f"q{i}", f"skill-{k}", f"s{k}")])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()
    assert len(FileStore(tmp_path).read_rows()) == 240
    assert len(names(tmp_path)) >= 240 // 50
