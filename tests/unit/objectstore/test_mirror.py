"""Index versions in object storage (``router.objectstore``) against an S3 server on loopback
(moto's server mode): publish, fetch and verify, the cache, pruning and the pointer's race."""

from __future__ import annotations

import io
import shutil
import tarfile
import threading
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from router.errors import IndexCorrupt, IndexUnavailable, InvalidRequest
from router.index.store import load_index
from router.index.versions.layout import CURRENT, VERSIONS, current_version
from router.objectstore import publish as publishing
from router.objectstore.bucket import Bucket
from router.objectstore.location import ObjectLocation, cache_root, is_remote
from router.objectstore.mirror import RemoteIndex
from router.objectstore.skill_files import PACK
from router.skills.sources.version_files import FILES
from tests.support.indexes import index_folder
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.skills import add_skill, write_catalog


def test_a_location_is_parsed_and_cached_apart() -> None:
    assert is_remote("s3://b-1/x") and not is_remote("/srv/index")
    place = ObjectLocation.parse("s3://my-bucket/fleet/prod/")
    assert (place.bucket, place.prefix, place.key(CURRENT)) == ("my-bucket", "fleet/prod",
                                                                "fleet/prod/CURRENT")
    assert place.relative("fleet/prod/versions/v/a") == "versions/v/a"
    assert cache_root("s3://my-bucket/a_b", "/c") != cache_root("s3://my-bucket/a/b", "/c")
    for bad in ("s3://", "s3://B/x", "s3://ok-bucket/a/../b", "/srv/index"):
        with pytest.raises(InvalidRequest):
            ObjectLocation.parse(bad)


class Counting(Bucket):
    downloads = 0

    def download(self, relative: str, path: Path) -> None:
        type(self).downloads += 1
        super().download(relative, path)


def built(tmp_path: Path, s3: S3, name: str = "a") -> tuple[RemoteIndex, str, Path]:  # noqa: F811
    """A catalog with a bundled file, built in a publisher's cache and published."""
    skills = write_catalog(tmp_path / "skills", 3)
    (skills / "skill-0" / "notes.md").write_text("bundled notes\n", encoding="utf-8")
    publisher = RemoteIndex(s3.url(), str(tmp_path / name), keep=2)
    index_folder(skills, publisher.root)
    version = current_version(publisher.root)
    publisher.publish(version)
    return publisher, version, skills


def keys(s3: S3) -> list[str]:  # noqa: F811
    got = boto3.client("s3").list_objects_v2(Bucket=s3.bucket).get("Contents", [])
    return sorted(item["Key"] for item in got)


def test_a_published_version_is_fetched_verified_and_served(tmp_path: Path,
                                                            s3: S3) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    names = keys(s3)
    assert f"index/{CURRENT}" in names and f"index/{VERSIONS}/{version}/manifest.json" in names
    assert f"index/{VERSIONS}/{version}/{PACK}" in names  # the skill files, in one object
    assert not any(n.startswith(f"index/{VERSIONS}/{version}/{FILES}/") for n in names)
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"))
    assert reader.sync() == version
    snapshot = load_index(reader.root)  # every checksum, the skill files' among them
    assert snapshot.info.version == version and snapshot.info.skill_count == 3
    assert len(list((reader.root / VERSIONS / version / FILES).iterdir())) == 4  # 3 + notes


def test_a_cached_version_is_not_fetched_again(tmp_path: Path, s3: S3) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    Counting.downloads = 0
    assert RemoteIndex(s3.url(), str(tmp_path / "r"), bucket=Counting).start()
    fetched = Counting.downloads
    assert fetched > 0
    again = RemoteIndex(s3.url(), str(tmp_path / "r"), bucket=Counting)
    assert again.start() and Counting.downloads == fetched  # a restart reads the cache
    assert current_version(again.root) == version


def test_a_version_without_its_manifest_is_never_pointed_at(tmp_path: Path,
                                                            s3: S3) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    boto3.client("s3").delete_object(Bucket=s3.bucket,
                                     Key=f"index/{VERSIONS}/{version}/manifest.json")
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"))
    with pytest.raises(IndexUnavailable, match="not complete"):
        reader.sync()
    assert not (reader.root / CURRENT).exists()


def test_a_damaged_object_is_refused_before_the_swap(tmp_path: Path,
                                                     s3: S3) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    boto3.client("s3").put_object(Bucket=s3.bucket, Body=b"not vectors",
                                  Key=f"index/{VERSIONS}/{version}/vectors.npy")
    Counting.downloads = 0
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"), bucket=Counting)
    with pytest.raises(IndexCorrupt, match=r"vectors\.npy"):
        reader.sync()
    assert not (reader.root / CURRENT).exists()
    assert not (reader.root / VERSIONS / version).exists()
    fetched = Counting.downloads
    with pytest.raises(IndexCorrupt, match=r"vectors\.npy"):
        reader.sync()
    assert Counting.downloads == fetched  # a damaged version is not downloaded again


def test_the_serve_start_keeps_the_cache_when_the_bucket_is_unreachable(
        tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    RemoteIndex(s3.url(), str(tmp_path / "r")).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    cached = RemoteIndex(s3.url(), str(tmp_path / "r"))
    assert current_version(cached.start()) == version
    with pytest.raises(IndexUnavailable, match="s3://"):
        RemoteIndex(s3.url(), str(tmp_path / "empty")).start()


def test_an_empty_bucket_says_how_to_publish(tmp_path: Path, s3: S3) -> None:  # noqa: F811
    with pytest.raises(IndexUnavailable, match="index --out s3://"):
        RemoteIndex(s3.url(), str(tmp_path / "r")).start()


def test_old_versions_are_pruned_but_not_one_still_being_written(
        tmp_path: Path, s3: S3) -> None:  # noqa: F811
    publisher, first, skills = built(tmp_path, s3)
    versions = [first]
    for i in range(2):
        add_skill(skills, f"extra-{i}", f"Handles extra topic {i}.")
        index_folder(skills, publisher.root)
        versions.append(current_version(publisher.root))
        publishing.publish(publisher.root, versions[-1], publisher.bucket, keep=1)
    listed = publishing._by_version(publisher.bucket.listing(VERSIONS))
    assert sorted(listed) == sorted(versions)  # all younger than the stale window: kept
    assert publishing.prune(publisher.bucket, 1, stale_seconds=0) == tuple(versions[1::-1])
    assert sorted(publishing._by_version(publisher.bucket.listing(VERSIONS))) == [versions[-1]]
    assert publisher.bucket.read_current() is not None
    assert publisher.bucket.read_current()[0] == versions[-1]  # type: ignore[index]


def test_a_publisher_that_lost_the_race_learns_it(tmp_path: Path, s3: S3) -> None:  # noqa: F811
    publisher, version, _ = built(tmp_path, s3)
    bucket = publisher.bucket
    read = bucket.read_current()
    assert read is not None and read[0] == version
    assert bucket.write_current("other-version", read[1])
    assert not bucket.write_current("stale-version", read[1])  # its read is out of date
    assert not bucket.write_current("first-version", None)  # there is one already
    assert bucket.read_current()[0] == "other-version"  # type: ignore[index]


def test_a_skill_file_changed_since_the_build_is_not_carried(tmp_path: Path,
                                                             s3: S3) -> None:  # noqa: F811
    skills = write_catalog(tmp_path / "skills", 2)
    publisher = RemoteIndex(s3.url(), str(tmp_path / "a"))
    index_folder(skills, publisher.root)
    (skills / "skill-1" / "SKILL.md").write_text("---\nname: skill-1\ndescription: new\n---\n",
                                                 encoding="utf-8")
    version = current_version(publisher.root)
    publisher.publish(version)
    shutil.rmtree(skills)
    carried = list((publisher.root / VERSIONS / version / FILES).iterdir())
    assert len(carried) == 1  # skill-0's SKILL.md only


def test_a_skill_file_pack_naming_anything_else_is_refused(tmp_path: Path,
                                                          s3: S3) -> None:  # noqa: F811
    _, version, _ = built(tmp_path, s3)
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w") as tar:
        member = tarfile.TarInfo("../../escaped")
        member.size = 3
        tar.addfile(member, io.BytesIO(b"bad"))
    boto3.client("s3").put_object(Bucket=s3.bucket, Body=packed.getvalue(),
                                  Key=f"index/{VERSIONS}/{version}/{PACK}")
    reader = RemoteIndex(s3.url(), str(tmp_path / "cache" / "reader"))
    with pytest.raises(IndexCorrupt, match="not a skill file"):
        reader.sync()
    assert not (reader.root / CURRENT).exists()
    assert not list(tmp_path.rglob("escaped"))


def test_a_sync_leaves_a_version_being_rebuilt_here_alone(tmp_path: Path,
                                                         s3: S3) -> None:  # noqa: F811
    _, published, skills = built(tmp_path, s3)
    replica = RemoteIndex(s3.url(), str(tmp_path / "replica"))
    replica.start()
    add_skill(skills, "skill-new", "Handles weather forecasts for a city.")
    index_folder(skills, replica.root)  # a Reindex here: built, not yet published
    rebuilt = current_version(replica.root)
    with replica.rebuilding(load_index(replica.root).skills):
        assert replica.sync() == rebuilt and current_version(replica.root) == rebuilt
    assert replica.sync() == published  # unpublished after all: the bucket's version again
    assert current_version(replica.root) == published


def test_two_publishers_at_once_leave_two_whole_versions(tmp_path: Path,
                                                        s3: S3) -> None:  # noqa: F811
    skills = write_catalog(tmp_path / "skills", 3)
    publishers = [RemoteIndex(s3.url(), str(tmp_path / name)) for name in ("a", "b")]
    versions = []
    for publisher in publishers:
        index_folder(skills, publisher.root)
        versions.append(current_version(publisher.root))
    errors: list[BaseException] = []

    def run(publisher: RemoteIndex, version: str) -> None:
        try:
            publisher.publish(version)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=pair)
               for pair in zip(publishers, versions, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert publishers[0].bucket.read_current()[0] in versions  # type: ignore[index]
    for version in versions:  # each one whole: it fetches and verifies
        assert RemoteIndex(s3.url(), str(tmp_path / f"r-{version}")).fetch(version).is_dir()


class NoConditions:
    """A store that refuses conditional writes (``NotImplemented``), as some S3 clones do."""

    def __init__(self) -> None:
        self.puts: list[dict[str, object]] = []

    def put_object(self, **args: object) -> None:
        if "IfMatch" in args or "IfNoneMatch" in args:
            raise ClientError({"Error": {"Code": "NotImplemented", "Message": "no"}},
                              "PutObject")
        self.puts.append(args)


def test_a_store_without_conditional_writes_gets_a_plain_one() -> None:
    client = NoConditions()
    bucket = Bucket(ObjectLocation("some-bucket", "p"), client)
    assert bucket.write_current("v1", None) and bucket.write_current("v2", '"etag"')
    assert [p["Body"] for p in client.puts] == [b"v1\n", b"v2\n"]
    assert all(p["Key"] == "p/CURRENT" for p in client.puts)


def test_a_missing_bucket_or_credentials_is_a_clear_error(
        tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    with pytest.raises(IndexUnavailable, match="NoSuchBucket"):
        RemoteIndex("s3://no-such-bucket-here/x", str(tmp_path / "r")).start()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # it keeps the credentials it found
    with pytest.raises(IndexUnavailable, match="no AWS credentials"):
        RemoteIndex(s3.url(), str(tmp_path / "r")).start()
