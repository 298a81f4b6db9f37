"""The feedback folder on disk, ``<index_dir>/feedback/``, shared by every replica: the file
store's layout, its locks, full reads and compaction (``router.learning.file_store``).

No file is written by two processes. Each process appends to its own segment,
``seg-<host>-<pid>-<start>-<n>.jsonl`` (``router.learning.segments``), before the call that
wrote it answers, so what a server acknowledged survives ``kill -9``; an Activate's or a
Feedback's row is also synced to disk by then, a Route's within ``SYNC_INTERVAL_S``. A writer
holds an exclusive ``flock`` on its open segment and moves to a new one after
``SEGMENT_MAX_ROWS`` rows or a day.

Compaction (any process, one at a time: it holds ``.compact.lock`` exclusively) merges the
segments no process holds any more and the earlier compacted files into one new
``compacted-*.jsonl`` (see ``router.learning.stats.compact_rows`` for what it keeps). Its output
is first synced as ``*.jsonl.pending`` naming its inputs, then the inputs are removed, then it is
renamed into place; a compaction interrupted anywhere is finished by the next one (or the next
full read), and a row present twice meanwhile counts once (rows carry unique ids). Full reads
hold the lock shared, so they never see a half-finished compaction. A torn last line (a crash
mid-write) is skipped.
Rows hold users' text: the folder is owner-only (0700), every file in it is created 0600.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from router.config import FeedbackConfig
from router.learning.rows import DAY_SECONDS, PURGE, Row, parse_row, unique
from router.learning.stats import compact_rows

log = logging.getLogger(__name__)

FOLDER = "feedback"
SEGMENT_PREFIX = "seg-"
COMPACTED_PREFIX = "compacted-"
SUFFIX = ".jsonl"
PENDING = ".pending"
LOCK_FILE = ".compact.lock"
SEGMENT_MAX_ROWS = 10_000
SEGMENT_MAX_SECONDS = DAY_SECONDS


def feedback_dir(index_dir: str | Path) -> Path:
    return Path(index_dir) / FOLDER


def data_files(folder: Path) -> list[Path]:
    """Segments and compacted files (not pending ones), sorted by name."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    return [folder / n for n in names if n.endswith(SUFFIX)
            and (n.startswith(SEGMENT_PREFIX) or n.startswith(COMPACTED_PREFIX))]


def private_folder(folder: Path) -> None:
    """``folder`` created owner-only, or made so if an older server left it open to others."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)


def sync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_lines(data: bytes) -> list[Row]:
    """Rows of complete lines (a last line without its newline is a torn write: skipped)."""
    rows = []
    for line in data.split(b"\n")[:-1]:
        row = parse_row(line.decode("utf-8", errors="replace"))
        if row is not None:
            rows.append(row)
    return rows


@contextlib.contextmanager
def _locked(folder: Path, mode: int) -> Iterator[bool]:
    """Hold the compaction lock (``fcntl.LOCK_SH`` / ``LOCK_EX``, maybe ``| LOCK_NB``);
    yields False when a non-blocking request found it taken."""
    private_folder(folder)
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, mode)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _finish_pending(folder: Path) -> None:
    """Complete compactions that stopped after syncing their output (lock held)."""
    for pending in sorted(folder.glob(f"{COMPACTED_PREFIX}*{SUFFIX}{PENDING}")):
        with pending.open("rb") as handle:
            header = json.loads(handle.readline() or b"{}")
        for name in header.get("inputs", []):
            (folder / Path(str(name)).name).unlink(missing_ok=True)
        pending.rename(folder / pending.name.removesuffix(PENDING))
        log.info("finished an interrupted feedback compaction (%s)", pending.name)
    sync_dir(folder)


def read_folder(folder: Path) -> list[Row]:
    """Every row stored in ``folder``, each once."""
    if not folder.is_dir():
        return []
    if any(folder.glob(f"*{PENDING}")):
        with _locked(folder, fcntl.LOCK_EX):
            _finish_pending(folder)
    with _locked(folder, fcntl.LOCK_SH):
        rows: list[Row] = []
        for path in data_files(folder):
            with contextlib.suppress(FileNotFoundError):
                rows.extend(parse_lines(path.read_bytes()))
    return list(unique(rows))


def _closed_inputs(folder: Path) -> list[tuple[Path, int | None]]:
    """Compacted files, and segments whose writer has closed them (their flock is free; the
    returned descriptor holds it until the compaction ends)."""
    inputs: list[tuple[Path, int | None]] = []
    for path in data_files(folder):
        if path.name.startswith(COMPACTED_PREFIX):
            inputs.append((path, None))
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)  # a live writer's segment
            continue
        inputs.append((path, fd))
    return inputs


def compact_folder(folder: Path, policy: FeedbackConfig, now: float | None = None) -> bool:
    """Merge ``folder``'s closed segments and compacted files into one bounded file. False when
    another process is compacting or reading (it is then left to later)."""
    if not folder.is_dir():
        return False
    with _locked(folder, fcntl.LOCK_EX | fcntl.LOCK_NB) as held:
        if not held:
            return False
        _finish_pending(folder)
        inputs = _closed_inputs(folder)
        try:
            _merge(folder, [p for p, _ in inputs], policy, time.time() if now is None else now)
        finally:
            for _, fd in inputs:
                if fd is not None:
                    os.close(fd)
    return True


def _merge(folder: Path, inputs: list[Path], policy: FeedbackConfig, now: float) -> None:
    if not inputs:
        return
    rows: list[Row] = []
    purges: list[Row] = []
    for path in data_files(folder):
        found = parse_lines(path.read_bytes())
        if path in inputs:
            rows.extend(found)
        else:  # a live segment: its rows stay there, but its purges apply to everything
            purges.extend(row for row in found if row.kind == PURGE)
    kept = compact_rows([*rows, *purges], policy, now)
    live = {p.rid for p in purges}  # purges still in live segments stay there
    kept = [row for row in kept if row.kind != PURGE or row.rid not in live]
    name = f"{COMPACTED_PREFIX}{time.time_ns()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
    temporary, pending = folder / f".new-{name}", folder / f"{name}{PENDING}"
    header = json.dumps({"kind": "header", "inputs": [p.name for p in inputs]})
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # users' text
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(header + "\n" + "".join(row.to_json() + "\n" for row in kept))
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(temporary, pending)
    sync_dir(folder)
    _finish_pending(folder)
    log.info("compacted feedback: %d files, %d rows -> %d rows", len(inputs), len(rows),
             len(kept))
