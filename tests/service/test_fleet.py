"""Three ``serve`` processes that share only a PostgreSQL feedback store and an index in object
storage (a real server each: ``tests.support.postgres``, ``tests.support.objects``): a Route on
one replica, its Activate on a second (the skill's files only in the published version) and
its Feedback on a third; ownership refused across replicas; SkillStats of every replica's
activations on any; a replica killed after its answer; the database stopped and started; a new
version published with the replicas' learned traffic; a purge seen everywhere at once."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest

from router.cli import main
from router.v1 import router_pb2 as pb
from tests.support.indexes import index_argv
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.postgres import Cluster, cluster
from tests.support.principals import entry, write_principals
from tests.support.processes import cli_process
from tests.support.servers import make_stub
from tests.support.skills import add_skill, write_catalog

TOKENS = {"alice": "tok-alice", "bob": "tok-bob", "ops": "tok-ops"}
REQUEST = "merge two PDF files and tables"


def eventually(check: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while not check():
        assert time.monotonic() < deadline, "not observed in time"
        pause.wait(0.05)


def principals_of_the_fleet(path: Path) -> Path:
    return write_principals(path, *(
        entry(name, token, ["ops", "admin"] if name == "ops" else ["route"])
        for name, token in TOKENS.items()))


def publish(skills: Path, url: str, store: str) -> None:
    argv = index_argv(skills, Path("unused"))
    argv[argv.index("--out") + 1] = url
    assert main([*argv, "--feedback-store", store]) == 0


class Replica:
    """One ``serve`` process and a stub per principal."""

    def __init__(self, proc: subprocess.Popen[str], address: str) -> None:
        self.proc = proc
        self.channel = grpc.insecure_channel(address)
        self.stub = make_stub(self.channel)

    def call(self, who: str, method: str, request: Any) -> Any:
        metadata = (("authorization", f"Bearer {TOKENS[who]}"),)
        return getattr(self.stub, method)(request, metadata=metadata, timeout=30)

    def refused(self, who: str, method: str, request: Any) -> grpc.StatusCode:
        with pytest.raises(grpc.RpcError) as caught:
            self.call(who, method, request)
        return caught.value.code()  # type: ignore[no-any-return]


def start(stack: ExitStack, tmp: Path, name: str, index: str, store: str,
          principals: Path) -> Replica:
    env = {"SKILL_ROUTER_INDEX_CACHE_DIR": str(tmp / name / "cache"),
           "SKILL_ROUTER_FEEDBACK_SPOOL_DIR": str(tmp / name / "spool")}
    log = stack.enter_context((tmp / f"{name}.log").open("w"))
    proc = stack.enter_context(cli_process(
        "serve", "--index", index, "--feedback-store", store, "--principals", str(principals),
        "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0", "--poll-seconds", "0.2",
        stderr=log, env=env))
    assert proc.stdout is not None
    found = re.search(r"listening on ([^ ]+:\d+)", proc.stdout.readline())
    assert found, (tmp / f"{name}.log").read_text()
    replica = Replica(proc, found.group(1))
    stack.callback(replica.channel.close)
    return replica


def rows(url: str, kind: str, session_prefix: str) -> int:
    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT count(*) FROM feedback_rows WHERE kind = %s AND "
                             "session LIKE %s", (kind, session_prefix + "%")).fetchone()
    return int(found[0]) if found else 0


@pytest.fixture
def database() -> Iterator[Cluster]:
    with cluster() as server:
        yield server


def test_three_replicas_share_only_the_database_and_the_bucket(
        tmp_path: Path, s3: S3, database: Cluster,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "publisher-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "publisher-state"))
    store = database.dsn + "postgres"
    source = write_catalog(tmp_path / "skills", 3)
    publish(source, s3.url(), store)
    hidden = source.rename(tmp_path / "skills-elsewhere")  # no replica can read them
    principals = principals_of_the_fleet(tmp_path / "principals.yaml")
    with ExitStack() as stack:
        a, b, c = (start(stack, tmp_path, name, s3.url(), store, principals)
                   for name in ("a", "b", "c"))
        # A Route on one replica, its Activate on another, its Feedback on a third.
        routed = a.call("alice", "Route", pb.RouteRequest(message=REQUEST, session_id="s1"))
        skill = next(s.name for s in routed.skills if s.reason == pb.ROUTE_REASON_RETRIEVED)
        done = b.call("alice", "Activate", pb.ActivateRequest(
            name=skill, session_id="s1", route_id=routed.route_id))
        assert f"# {skill}" in done.content  # from the version's files
        told = c.call("alice", "Feedback", pb.FeedbackRequest(
            session_id="s1", skill=skill, outcome=pb.FEEDBACK_OUTCOME_SUCCESS,
            route_id=routed.route_id))
        assert told.recorded
        for replica in (a, b, c):  # another principal, on any replica, at once
            assert replica.refused("bob", "Activate", pb.ActivateRequest(
                name=skill, session_id="s1")) == grpc.StatusCode.PERMISSION_DENIED
            assert replica.refused("bob", "Feedback", pb.FeedbackRequest(
                skill=skill, outcome=pb.FEEDBACK_OUTCOME_FAILURE,
                route_id=routed.route_id)) == grpc.StatusCode.PERMISSION_DENIED
        # Every replica's activations counted on any.
        a.call("alice", "Activate", pb.ActivateRequest(name=skill, session_id="s2"))
        c.call("alice", "Activate", pb.ActivateRequest(name=skill, session_id="s3"))
        for replica in (a, b, c):
            stats = replica.call("ops", "SkillStats", pb.SkillStatsRequest())
            counted = {s.skill: s for s in stats.skills}[skill]
            assert (counted.activated, counted.succeeded) == (3, 1)
        # kill -9 right after an answer loses no acknowledged activation.
        b.call("alice", "Activate", pb.ActivateRequest(name=skill, session_id="killed"))
        os.kill(b.proc.pid, signal.SIGKILL)
        assert rows(store, "activate", "killed") == 1
        # The database stopped: 10 Routes and Activates answer; their rows arrive after.
        database.stop()
        for i in range(10):
            turn = a.call("alice", "Route", pb.RouteRequest(message=REQUEST,
                                                            session_id=f"out-{i}"))
            assert any(s.name == skill for s in turn.skills)
            c.call("alice", "Activate", pb.ActivateRequest(
                name=skill, session_id=f"out-{i}", route_id=turn.route_id))
        database.start()
        eventually(lambda: rows(store, "activate", "out-") == 10
                   and rows(store, "route", "out-") == 10, 30.0)
        # A new version built from every replica's traffic reaches the replicas.
        first = a.call("ops", "GetIndexInfo", pb.GetIndexInfoRequest())
        assert first.example_count == 0  # built before any traffic
        add_skill(hidden, "skill-new", "Handles weather forecasts for a city.")
        publish(hidden, s3.url(), store)
        for replica in (a, c):
            eventually(lambda r=replica: r.call(  # type: ignore[misc]
                "ops", "GetIndexInfo", pb.GetIndexInfoRequest()).version != first.version,
                30.0)
            info = replica.call("ops", "GetIndexInfo", pb.GetIndexInfoRequest())
            assert info.skill_count == 4 and info.example_count >= 1  # learned from the fleet
        # A purge on one replica is seen on the others at once.
        listed = c.call("ops", "ListExamples", pb.ListExamplesRequest(skill=skill))
        assert listed.examples
        a.call("ops", "PurgeExamples", pb.PurgeExamplesRequest(skill=skill))
        assert not c.call("ops", "ListExamples", pb.ListExamplesRequest(skill=skill)).examples
    shutil.rmtree(hidden, ignore_errors=True)
