"""Learning from traffic across processes: replicas sharing one index folder, a Reindex that
swaps in the learned examples, and nothing acknowledged lost to ``kill -9``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import grpc
import pytest

from router.config import FeedbackConfig
from router.index.versions.layout import VERSIONS, current_version, read_manifest
from router.learning.traffic import fingerprint, learned_examples
from router.v1 import router_pb2 as pb
from router.v1 import router_pb2_grpc as pb_grpc
from tests.support import REPO
from tests.support.learning import (
    CSV,
    DOCKER,
    GIT,
    PDF,
    SKILL_OF,
    SQL,
    activate,
    make_index,
    open_engine,
    outcomes,
    positives,
    route,
)
from tests.support.servers import serving

# (session, message routed, skill activated or "" for none, report WRONG_SKILL?)
SCRIPT: tuple[tuple[str, str, str, bool], ...] = (
    ("a", PDF, "skill-0", False), ("b", PDF, "skill-0", False), ("a", GIT, "", False),
    ("c", CSV, "", False), ("b", SQL, "skill-4", True), ("c", DOCKER, "skill-5", False),
    ("a", CSV, "skill-2", False), ("d", CSV, "skill-2", False), ("d", GIT, "skill-1", False),
    ("c", GIT, "skill-1", False),
)


def play(stubs: list[pb_grpc.SkillRouterStub]) -> None:
    """Run SCRIPT, each call on the next stub in turn (a round-robin load balancer)."""
    calls = 0

    def stub() -> pb_grpc.SkillRouterStub:
        nonlocal calls
        calls += 1
        return stubs[calls % len(stubs)]

    for session, message, skill, wrong in SCRIPT:
        turn = route(stub(), message, session)
        assert [s.name for s in turn.skills if s.reason == pb.ROUTE_REASON_RETRIEVED] == [
            SKILL_OF[message]]
        if skill:
            activate(stub(), skill, session, turn.route_id)
        if wrong:
            stub().Feedback(pb.FeedbackRequest(session_id=session, skill=skill,
                                               outcome=pb.FEEDBACK_OUTCOME_WRONG_SKILL,
                                               route_id=turn.route_id))


def test_three_replicas_on_one_index_record_what_one_server_would(tmp_path: Path) -> None:
    single, shared = make_index(tmp_path / "one"), make_index(tmp_path / "three")
    with serving(open_engine(single)) as one:
        play([one.stub])
    with ExitStack() as stack:
        replicas = [stack.enter_context(serving(open_engine(shared))) for _ in range(3)]
        play([r.stub for r in replicas])
    expected = positives(single)
    assert expected == {("a", PDF, "skill-0"), ("b", PDF, "skill-0"), ("b", SQL, "skill-4"),
                        ("a", CSV, "skill-2"), ("d", CSV, "skill-2"), ("d", GIT, "skill-1"),
                        ("c", GIT, "skill-1")}
    assert positives(shared) == expected
    assert [(r.session, r.query) for r in outcomes(shared)] == [("b", SQL)]
    policy = FeedbackConfig()
    assert learned_examples(shared, policy) == learned_examples(single, policy)


def test_an_empty_reindex_swaps_in_the_new_learned_examples(tmp_path: Path) -> None:
    index = make_index(tmp_path)
    with serving(open_engine(index)) as served:
        assert not served.stub.Reindex(pb.ReindexRequest()).swapped  # nothing learned yet
        for session in ("a", "b"):
            turn = route(served.stub, PDF, session)
            activate(served.stub, "skill-0", session, turn.route_id)
        reply = served.stub.Reindex(pb.ReindexRequest())
        assert reply.swapped and reply.changed == reply.added == reply.removed == 0
        assert served.stub.GetIndexInfo(pb.GetIndexInfoRequest()).version == reply.index_version
        assert not served.stub.Reindex(pb.ReindexRequest()).swapped  # nothing new since
    learned = learned_examples(index, FeedbackConfig())
    assert [(e.query, e.skills) for e in learned] == [(PDF, ("skill-0",))]
    version = current_version(index)
    settings = read_manifest(index / VERSIONS / version)["settings"]
    assert settings["learned_examples"] == {"fingerprint": fingerprint(learned), "count": 1}


def _serve(index: Path) -> tuple[subprocess.Popen[str], int]:
    argv = [sys.executable, "-m", "router.cli", "serve", "--index", str(index), "--host",
            "127.0.0.1", "--port", "0", "--metrics-port", "0", "--poll-seconds", "0"]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"listening on [^ ]+:(\d+)", line)
    assert found, f"no 'listening on' line: {line!r}"
    return proc, int(found.group(1))


@pytest.fixture()
def servers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_nothing_acknowledged_is_lost_to_kill_9(tmp_path: Path,
                                               servers: list[subprocess.Popen[str]]) -> None:
    index = make_index(tmp_path)
    proc, port = _serve(index)
    servers.append(proc)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]
        play([stub])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    acknowledged = positives(index)
    assert len(acknowledged) == 7 and len(outcomes(index)) == 1
    proc, port = _serve(index)
    servers.append(proc)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.SkillRouterStub(channel)  # type: ignore[no-untyped-call]
        reply = stub.Reindex(pb.ReindexRequest(), timeout=60)
    assert reply.swapped
    assert positives(index) == acknowledged
    learned = learned_examples(index, FeedbackConfig())
    assert {(e.query, e.skills) for e in learned} >= {(PDF, ("skill-0",)),
                                                      (CSV, ("skill-2",)),
                                                      (GIT, ("skill-1",))}
    settings = read_manifest(index / VERSIONS / current_version(index))["settings"]
    assert settings["learned_examples"]["count"] == len(learned)
