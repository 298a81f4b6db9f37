"""Whoever can write to the bucket, against a replica (moto's S3 server on loopback): a 2 KiB
tar whose GNU sparse member claims 768 MiB costs the fetching process under 200 MB and is
refused, and remembered as refused (MemoryError too); a version whose records point its skills
at a folder of the replica's disk (``/``), carrying no files, is refused, and a version without
records serves no file of that folder."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import boto3
import pytest

from router.errors import IndexCorrupt, NotFound
from router.index.versions.layout import CURRENT, MANIFEST, VERSIONS, checksums
from router.objectstore import mirror
from router.objectstore.bucket import Bucket
from router.objectstore.mirror import RemoteIndex
from router.objectstore.skill_files import PACK
from router.skills import digests
from router.skills.model import Skill
from router.skills.sources.disk import DiskSource
from router.skills.sources.version_files import FILES, VersionFilesSource
from tests.support import REPO
from tests.support.indexes import index_folder
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.skills import write_catalog

CLAIMED = 768 << 20
RSS_BOUND_MB = 200


class Counting(Bucket):
    downloads = 0

    def download(self, relative: str, path: Path) -> None:
        type(self).downloads += 1
        super().download(relative, path)


def published(tmp_path: Path, s3: S3) -> tuple[RemoteIndex, str]:  # noqa: F811
    skills = write_catalog(tmp_path / "skills", 2)
    publisher = RemoteIndex(s3.url(), str(tmp_path / "publisher"), keep=2)
    index_folder(skills, publisher.root)
    version = (publisher.root / CURRENT).read_text().strip()
    publisher.publish(version)
    return publisher, version


def sparse_tar(name: str, claimed: int) -> bytes:
    """One old-GNU sparse member ``name`` of one 512-byte data block at the end of ``claimed``
    bytes: 2 KiB on disk, ``claimed`` bytes to whoever reads it whole."""
    info = tarfile.TarInfo(name)
    info.size, info.type = 512, tarfile.GNUTYPE_SPARSE
    header = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    header[386:398] = b"%011o\0" % (claimed - 512)  # the data block's offset
    header[398:410] = b"%011o\0" % 512  # its length
    header[482] = 0  # no extended sparse headers
    header[483:495] = b"%011o\0" % claimed  # the real size
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header) + b"x" * 512 + b"\0" * 1024


def put(s3: S3, key: str, body: bytes) -> None:  # noqa: F811
    boto3.client("s3").put_object(Bucket=s3.bucket, Key=f"index/{key}", Body=body)


def test_a_sparse_member_costs_little_memory_and_is_refused(tmp_path: Path,
                                                            s3: S3) -> None:  # noqa: F811
    publisher, version = published(tmp_path, s3)
    recorded = next(iter((publisher.root / VERSIONS / version / FILES).iterdir())).name
    body = sparse_tar(f"{FILES}/{recorded}", CLAIMED)
    assert len(body) == 2048
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:  # headers only: nothing read whole
        member = tar.next()
        assert member is not None and member.issparse() and member.size == CLAIMED
    put(s3, f"{VERSIONS}/{version}/{PACK}", body)
    script = textwrap.dedent(f"""
        import resource, sys
        from router.errors import IndexCorrupt
        from router.objectstore.mirror import RemoteIndex
        reader = RemoteIndex({s3.url()!r}, {str(tmp_path / "reader")!r})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            reader.sync()
            outcome = "served"
        except IndexCorrupt as exc:
            outcome = "refused: " + str(exc)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) // 1024)
        print(outcome)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**__import__("os").environ, **s3.env})
    assert done.returncode == 0, done.stderr
    grown_mb, outcome = done.stdout.splitlines()[:2]
    print(f"peak RSS growth: {grown_mb} MB")
    assert int(grown_mb) < RSS_BOUND_MB, f"the fetch grew the process by {grown_mb} MB"
    assert outcome.startswith("refused") and "not a skill file" in outcome, outcome


def test_any_failure_of_a_version_is_remembered_memory_error_too(
        tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    published(tmp_path, s3)

    def exhausted(archive: Path, folder: Path) -> None:
        raise MemoryError

    monkeypatch.setattr(mirror, "unpack", exhausted)
    Counting.downloads = 0
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"), bucket=Counting)
    with pytest.raises(IndexCorrupt, match="MemoryError"):
        reader.sync()
    fetched = Counting.downloads
    with pytest.raises(IndexCorrupt, match="MemoryError"):
        reader.sync()
    assert Counting.downloads == fetched  # not fetched again at every poll
    assert not (reader.root / CURRENT).exists()


def tampered(tmp_path: Path, s3: S3, *, keep_digests: bool) -> str:  # noqa: F811
    """The published version rewritten as a bucket writer would: every skill's folder ``/``,
    no files carried, the checksums recomputed."""
    publisher, version = published(tmp_path, s3)
    folder = tmp_path / "forged"
    shutil.copytree(publisher.root / VERSIONS / version, folder)
    shutil.rmtree(folder / FILES)
    records = json.loads((folder / "skills.json").read_text())
    for skill in records["skills"]:
        skill["base_dir"], skill["location"] = "/", "/SKILL.md"
    (folder / "skills.json").write_text(json.dumps(records))
    if not keep_digests:
        (folder / digests.DIGESTS_FILE).unlink()
        boto3.client("s3").delete_object(
            Bucket=s3.bucket, Key=f"index/{VERSIONS}/{version}/{digests.DIGESTS_FILE}")
    manifest = json.loads((folder / MANIFEST).read_text())
    manifest["files"] = checksums(folder)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    for name in ("skills.json", MANIFEST):
        put(s3, f"{VERSIONS}/{version}/{name}", (folder / name).read_bytes())
    boto3.client("s3").delete_object(Bucket=s3.bucket, Key=f"index/{VERSIONS}/{version}/{PACK}")
    return version


def test_a_version_naming_a_disk_folder_and_carrying_no_files_is_refused(
        tmp_path: Path, s3: S3) -> None:  # noqa: F811
    tampered(tmp_path, s3, keep_digests=True)
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"))
    with pytest.raises(IndexCorrupt, match="carries none"):
        reader.sync()
    assert not (reader.root / CURRENT).exists()


def test_a_bucket_replica_never_serves_a_folder_a_version_names(tmp_path: Path,
                                                                s3: S3) -> None:  # noqa: F811
    version = tampered(tmp_path, s3, keep_digests=False)  # records nothing: loads as old
    reader = RemoteIndex(s3.url(), str(tmp_path / "reader"))
    assert reader.sync() == version
    folder = str(reader.root / VERSIONS / version)
    records = json.loads((Path(folder) / "skills.json").read_text())["skills"]
    skill = Skill.from_dict(records[0])
    assert skill.base_dir == "/"
    source = VersionFilesSource(lambda: (folder, None), DiskSource(), disk=lambda: False)
    for path in ("etc/hostname", "etc/passwd"):
        with pytest.raises(NotFound):
            source.fetch(skill, path)
    with pytest.raises(NotFound):
        source.fetch_skill_file(skill)
    assert not source.list_files(skill).files
