"""Reindex without downtime: Routes never fail while the index is rebuilt and swapped."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from router.builder.pipeline import discovery_from_settings, recorded_settings
from router.cli import main
from router.door.poller import IndexPoller
from router.index.store import load_index
from router.index.versions.layout import VERSIONS, current_version
from router.v1 import router_pb2 as pb
from tests.support.indexes import build_hash_index, cli_index, index_catalog, open_engine
from tests.support.servers import serving
from tests.support.skills import DIAGNOSTICS, SKILLS, add_skill

MESSAGES = ("extract the tables from this PDF", "write a git commit message",
            "chart this CSV spreadsheet", "", "build a docker image")


def test_index_records_its_discovery_settings(tmp_path: Path) -> None:
    skills, out = index_catalog(tmp_path)
    info = load_index(out).info
    config = discovery_from_settings(recorded_settings(info.path), info.version)
    assert config.bundled_roots == (str(skills),)
    assert config.project_dir is None and config.home_dir is None


def _route_forever(stub: object, stop: threading.Event, seen: set[str],
                   failures: list[str]) -> int:
    calls = 0
    while not stop.is_set():
        message = MESSAGES[calls % len(MESSAGES)]
        try:
            reply = stub.Route(pb.RouteRequest(message=message or "PDF"),  # type: ignore[attr-defined]
                               timeout=10)
            seen.add(reply.index_version)
        except grpc.RpcError as exc:
            failures.append(f"{exc.code()}: {exc.details()}")  # type: ignore[attr-defined]
        calls += 1
    return calls


def test_routes_never_fail_during_three_reindexes(tmp_path: Path) -> None:
    skills, out = index_catalog(tmp_path)
    engine = open_engine(out)
    existed = {engine.info().version}
    stop, seen, failures = threading.Event(), set[str](), list[str]()
    with serving(engine) as served, ThreadPoolExecutor(4) as pool:
        workers = [pool.submit(_route_forever, served.stub, stop, seen, failures)
                   for _ in range(4)]
        edits: list[Callable[[], None]] = [
            lambda: add_skill(skills, "skill-new", "Translates documents."),
            lambda: add_skill(skills, "skill-1", "Now about YAML files."),
            lambda: shutil.rmtree(skills / "skill-2")]
        replies = []
        for edit in edits:
            edit()
            reply = served.stub.Reindex(pb.ReindexRequest(), timeout=30)
            existed.add(reply.index_version)
            replies.append(reply)
        stop.set()
        calls = sum(w.result() for w in workers)
    assert failures == [] and calls > 20
    assert seen <= existed and len(existed) == 4
    assert [(r.added, r.changed, r.removed, r.swapped) for r in replies] == [
        (1, 0, 0, True), (0, 1, 0, True), (0, 0, 1, True)]
    assert replies[-1].unchanged == 6 and replies[-1].index_version == engine.info().version
    assert len(list((out / VERSIONS).iterdir())) == 3  # index.keep_versions


def test_reindex_without_changes_keeps_the_version(tmp_path: Path) -> None:
    _, out = index_catalog(tmp_path)
    engine = open_engine(out)
    before = engine.info().version
    with serving(engine) as served:
        same = served.stub.Reindex(pb.ReindexRequest(), timeout=30)
        full = served.stub.Reindex(pb.ReindexRequest(full=True), timeout=30)
    assert (same.swapped, same.index_version, same.unchanged) == (False, before, 6)
    assert full.swapped and full.index_version != before and full.unchanged == 6


def test_concurrent_reindexes_are_serialised(tmp_path: Path) -> None:
    skills, out = index_catalog(tmp_path)
    engine = open_engine(out)
    add_skill(skills, "skill-extra", "Summarises meeting notes.")
    with serving(engine) as served, ThreadPoolExecutor(3) as pool:
        replies = list(pool.map(lambda _: served.stub.Reindex(pb.ReindexRequest(), timeout=30),
                                range(3)))
    assert sorted(r.swapped for r in replies) == [False, False, True]
    assert sum(r.added for r in replies) == 1


def test_a_reindex_that_cannot_wait_is_rejected_clearly(tmp_path: Path) -> None:
    _, out = index_catalog(tmp_path)
    engine = open_engine(out, reindex_wait_seconds=0.1)
    with serving(engine) as served, engine.index_lock, pytest.raises(grpc.RpcError) as err:
        served.stub.Reindex(pb.ReindexRequest(), timeout=10)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert "already running" in str(err.value.details())  # type: ignore[attr-defined]


def test_index_without_recorded_settings_is_refused(tmp_path: Path) -> None:
    engine = open_engine(build_hash_index(SKILLS, tmp_path, DIAGNOSTICS))
    with serving(engine) as served, pytest.raises(grpc.RpcError) as err:
        served.stub.Reindex(pb.ReindexRequest(), timeout=10)
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert "skill-router index" in str(err.value.details())  # type: ignore[attr-defined]


def test_cli_reindex_calls_the_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skills, out = index_catalog(tmp_path)
    engine = open_engine(out)
    add_skill(skills, "skill-cli", "Renames files in bulk.")
    with serving(engine) as served:
        capsys.readouterr()
        code = main(["reindex", "--target", f"127.0.0.1:{served.running.port}"])
    reply = json.loads(capsys.readouterr().out)
    assert code == 0 and reply["added"] == 1 and reply["swapped"]
    assert reply["index_version"] == engine.info().version


def test_poller_picks_up_a_version_written_by_a_batch_job(tmp_path: Path) -> None:
    skills, out = index_catalog(tmp_path)
    engine = open_engine(out)
    poller = IndexPoller(engine, interval=0.05).start()
    try:
        add_skill(skills, "skill-batch", "Converts images between formats.")
        cli_index(skills, out)
        fresh = current_version(out)
        deadline = time.monotonic() + 120  # the swap is the event; this only bounds a hang
        while engine.info().version != fresh and time.monotonic() < deadline:
            threading.Event().wait(0.05)
    finally:
        poller.stop()
    assert engine.info().version == fresh and engine.info().skill_count == 7


def test_a_servers_reindexes_make_their_build_encoder_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from router.builder.plan import BuildPlan

    made: list[object] = []
    original = BuildPlan.make_encoder

    def counted(plan: BuildPlan) -> object:
        made.append(original(plan))
        return made[-1]

    skills, out = index_catalog(tmp_path)
    engine = open_engine(out)
    monkeypatch.setattr(BuildPlan, "make_encoder", counted)  # after the first build
    with serving(engine) as served:
        add_skill(skills, "skill-new", "Translates documents.")
        first = served.stub.Reindex(pb.ReindexRequest(), timeout=30)
        add_skill(skills, "skill-1", "Now about YAML files.")
        second = served.stub.Reindex(pb.ReindexRequest(), timeout=30)
    assert (first.added, second.changed) == (1, 1) and first.swapped and second.swapped
    assert len(made) == 1  # the second Reindex embedded with the first one's encoder
