"""How a database store writes (``router.learning.pg_writer``, ``router.learning.spool``):
Route rows batched off the call, every row spooled while the database fails and replayed once,
nothing lost to kill -9. A fake ``insert`` stands for the database."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from router.learning.pg_writer import PgWriter
from router.learning.rows import ACTIVATE, ROUTE, Row
from router.learning.spool import Spool

WAIT_S = 30.0  # generous: these wait for an observed event, never for a set time


def eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, "not observed in time"
        time.sleep(0.01)


class Database:
    """Rows by id, like ``ON CONFLICT (rid) DO NOTHING``; ``up`` false fails every call."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.calls: list[int] = []
        self.up = True
        self.gate = threading.Event()
        self.gate.set()

    def insert(self, rows: Sequence[Row]) -> None:
        self.gate.wait()
        if not self.up:
            raise OSError("connection refused")
        self.calls.append(len(rows))
        for row in rows:
            self.rows.setdefault(row.rid, row)

    def probe(self) -> None:
        if not self.up:
            raise OSError("connection refused")


def route_row(i: int) -> Row:
    return Row(kind=ROUTE, ts=1.0 + i, session="s", route_id=f"r{i}", query="q", principal="p",
               rid=f"route-{i}")


def activation(i: int) -> Row:
    return Row(kind=ACTIVATE, ts=1.0 + i, session="s", skill="pdf", route_id=f"r{i}",
               rid=f"activation-{i}")


def test_route_rows_are_sent_off_the_call_in_one_statement(tmp_path: Path) -> None:
    db = Database()
    db.gate.clear()  # the database does not answer yet
    writer = PgWriter(db.insert, Spool(tmp_path, 100))
    for i in range(5):
        writer.append(route_row(i), durable=False)  # returns with the database not answering
    assert writer.local_route("r3") == route_row(3)  # found here before it is sent
    db.gate.set()
    eventually(lambda: len(db.rows) == 5)
    assert db.calls == [5]
    writer.close()


def test_a_durable_row_is_in_the_database_when_append_returns(tmp_path: Path) -> None:
    db = Database()
    writer = PgWriter(db.insert, Spool(tmp_path, 100))
    writer.append(activation(1), durable=True)
    assert list(db.rows) == [activation(1).rid]
    writer.close()


def test_rows_are_spooled_while_the_database_is_down_and_replayed_once(tmp_path: Path) -> None:
    db = Database()
    writer = PgWriter(db.insert, Spool(tmp_path, 100), probe=db.probe)
    db.up = False
    writer.append(activation(1), durable=True)  # answers: the row is in the spool
    assert writer.down and writer.spool.rows == 1
    calls = len(db.calls)
    for i in range(2, 6):
        writer.append(activation(i), durable=True)
        writer.append(route_row(i), durable=False)
    assert len(db.calls) == calls  # nobody waited on the database again
    eventually(lambda: writer.spool.rows == 9)
    db.up = True
    eventually(lambda: len(db.rows) == 9 and not writer.down)
    assert writer.spool.rows == 0
    assert not list(tmp_path.glob("seg-*"))  # replayed and removed
    writer.close()


def test_a_full_spool_drops_and_counts(tmp_path: Path) -> None:
    spool = Spool(tmp_path, 3)
    spool.append([activation(i) for i in range(2)], durable=True)
    spool.append([activation(5), activation(6)], durable=True)  # over the bound: dropped whole
    spool.append([activation(7)], durable=True)
    assert (spool.rows, spool.dropped) == (3, 2)
    spool.close()


def test_a_replay_cut_short_sends_each_row_again_and_the_database_keeps_one(
        tmp_path: Path) -> None:
    spool = Spool(tmp_path, 100)
    spool.append([activation(i) for i in range(4)], durable=True)
    db = Database()
    sent: list[int] = []

    def fails_after_storing(rows: Sequence[Row]) -> None:
        db.insert(rows)
        sent.append(len(rows))
        if len(sent) == 1:
            raise OSError("connection lost before the commit was acknowledged")

    with contextlib.suppress(OSError):
        spool.replay(fails_after_storing)
    assert spool.rows == 4  # kept: not known to be stored
    assert spool.replay(db.insert) == 4
    assert len(db.rows) == 4 and spool.rows == 0


def test_a_killed_process_loses_no_spooled_row(tmp_path: Path) -> None:
    code = (
        "import os, signal, sys\n"
        "from router.learning.rows import ACTIVATE, Row\n"
        "from router.learning.spool import Spool\n"
        "spool = Spool(sys.argv[1], 100)\n"
        "spool.append([Row(kind=ACTIVATE, ts=1.0, skill='pdf', session='s')], durable=True)\n"
        "print('answered', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False,
                          cwd=Path(__file__).resolve().parents[3], env=dict(os.environ))
    assert done.returncode == -signal.SIGKILL and "answered" in done.stdout
    restarted = Spool(tmp_path, 100)
    assert restarted.rows == 1
    db = Database()
    assert restarted.replay(db.insert) == 1
    assert [r.skill for r in db.rows.values()] == ["pdf"]
