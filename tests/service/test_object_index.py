"""An index in object storage (an S3 server on loopback, ``tests.support.objects``): a
``serve --index s3://...`` replica swaps to a version ``index --out s3://...`` publishes, serves
a skill's files from the version with the skills folder gone, and a Reindex on a replica
publishes to the bucket for every replica."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import boto3
import grpc
import pytest
from botocore.config import Config as BotoConfig

from router.cli import main
from router.config import Config, IndexConfig
from router.door.poller import IndexPoller
from router.encoders.hashing import HashEmbedder
from router.engine import Engine
from router.objectstore.bucket import Bucket
from router.objectstore.mirror import RemoteIndex, served_index
from router.v1 import router_pb2 as pb
from tests.support.indexes import index_argv
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.processes import cli_process
from tests.support.servers import make_stub, serving
from tests.support.skills import add_skill, write_catalog

NOTES = b"bundled notes\n"


def publish(skills: Path, url: str) -> None:
    """``skill-router index`` of ``skills`` published to ``url``."""
    argv = index_argv(skills, Path("unused"))
    argv[argv.index("--out") + 1] = url
    assert main(argv) == 0


def catalog(tmp_path: Path) -> Path:
    skills = write_catalog(tmp_path / "skills", 3)
    (skills / "skill-0" / "notes.md").write_bytes(NOTES)
    return skills


def replica(tmp_path: Path, url: str, skills: Path) -> tuple[Engine, RemoteIndex]:
    """``skills`` published to ``url`` and an Engine serving it from a mirror of its own, as a
    replica's ``serve --index s3://...`` does."""
    publish(skills, url)
    config = Config(index=IndexConfig(cache_dir=str(tmp_path / "replica")))
    index_dir, remote = served_index(url, config)
    assert remote is not None
    engine = Engine.open(index_dir, config, HashEmbedder())
    engine.remote = remote
    return engine, remote


def eventually(check: Callable[[], bool], seconds: float = 60.0) -> None:
    """Wait until ``check()`` holds (a gross bound, not a timing)."""
    deadline, pause = time.monotonic() + seconds, threading.Event()
    while not check():
        assert time.monotonic() < deadline, "not observed in time"
        pause.wait(0.05)


@pytest.fixture(autouse=True)
def _caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "publisher-cache"))


def test_a_replica_swaps_to_a_published_version_and_needs_no_skills_folder(
        tmp_path: Path, s3: S3) -> None:  # noqa: F811
    skills = catalog(tmp_path)
    publish(skills, s3.url())
    argv = ("serve", "--index", s3.url(), "--host", "127.0.0.1", "--port", "0",
            "--metrics-port", "0", "--poll-seconds", "0.2")
    replica = {"SKILL_ROUTER_INDEX_CACHE_DIR": str(tmp_path / "replica")}
    with (tmp_path / "serve.log").open("w") as log, \
            cli_process(*argv, stderr=log, env=replica) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"listening on ([^ ]+:\d+)", line)
        assert found, (tmp_path / "serve.log").read_text()
        with grpc.insecure_channel(found.group(1)) as channel:
            stub = make_stub(channel)
            first = stub.GetIndexInfo(pb.GetIndexInfoRequest()).version
            add_skill(skills, "skill-new", "Handles weather forecasts for a city.")
            publish(skills, s3.url())
            eventually(lambda: stub.GetIndexInfo(pb.GetIndexInfoRequest()).skill_count == 4)
            assert stub.GetIndexInfo(pb.GetIndexInfoRequest()).version > first
            shutil.rmtree(skills)  # the replica has no skills folder from here on
            done = stub.Activate(pb.ActivateRequest(name="skill-new"))
            assert "# skill-new" in done.content and "Steps." in done.content
            assert list(stub.ListResources(pb.ListResourcesRequest(name="skill-0"))
                        .resources) == ["notes.md"]
            read = stub.ReadResource(pb.ReadResourceRequest(name="skill-0", path="notes.md"))
            assert read.content == NOTES and read.size == len(NOTES)
            with pytest.raises(grpc.RpcError) as missing:
                stub.ReadResource(pb.ReadResourceRequest(name="skill-0", path="other.md"))
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_reindex_on_a_replica_publishes_for_every_replica(tmp_path: Path,
                                                           s3: S3) -> None:  # noqa: F811
    skills = catalog(tmp_path)
    engine, remote = replica(tmp_path, s3.url(), skills)
    first = engine.info().version
    add_skill(skills, "skill-new", "Handles weather forecasts for a city.")
    with serving(engine) as served:
        reply = served.stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert reply.swapped and reply.added == 1 and reply.index_version != first
        assert remote.bucket.read_current()[0] == reply.index_version  # type: ignore[index]
        other = RemoteIndex(s3.url(), str(tmp_path / "other"))
        assert other.sync() == reply.index_version
        shutil.rmtree(skills)  # a replica without the skills would publish an empty catalog
        with pytest.raises(grpc.RpcError) as refused:
            served.stub.Reindex(pb.ReindexRequest(full=True), timeout=60)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "none of the skills' folders" in (refused.value.details() or "")
        assert remote.bucket.read_current()[0] == reply.index_version  # type: ignore[index]
    engine.close()


def test_the_poller_swaps_after_the_fetch_and_outlives_the_bucket_going_away(
        tmp_path: Path, s3: S3) -> None:  # noqa: F811
    skills = catalog(tmp_path)
    engine, remote = replica(tmp_path, s3.url(), skills)
    poller = IndexPoller(engine, interval=60)  # checked by hand below
    assert not poller.check()  # nothing new
    add_skill(skills, "skill-new", "Handles weather forecasts for a city.")
    publish(skills, s3.url())
    assert poller.check() and engine.info().skill_count == 4
    served = engine.info().version
    remote._bucket = Bucket(remote.location, boto3.client(
        "s3", endpoint_url="http://127.0.0.1:9", config=BotoConfig(retries={"max_attempts": 1})))
    assert not poller.check() and not poller.check()  # the bucket is unreachable
    assert engine.info().version == served and engine.reindex_stats().load_failures == 1
    engine.close()


def test_info_and_route_read_a_bucket_index(tmp_path: Path, s3: S3,  # noqa: F811
                                            capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    publish(catalog(tmp_path), s3.url())
    capsys.readouterr()
    monkeypatch.setenv("SKILL_ROUTER_INDEX_CACHE_DIR", str(tmp_path / "reader"))
    assert main(["info", "--index", s3.url()]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["skill_count"] == 3 and shown["path"].startswith(str(tmp_path / "reader"))
    assert main(["route", "PDF files and tables", "--index", s3.url(), "--json"]) == 0
    assert "skill-0" in capsys.readouterr().out
