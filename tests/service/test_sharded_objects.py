"""A sharded build through object storage (``router.objectstore.partials``): shard processes
and the merge share only the bucket (each its own cache), and the merged version equals a
one-process build."""

from __future__ import annotations

import subprocess
from pathlib import Path

import boto3
import numpy as np
import pytest

from router.cli import main
from router.config import Config, IndexConfig
from router.index.store import load_index
from router.objectstore.mirror import served_index
from tests.support import REPO
from tests.support.indexes import index_argv
from tests.support.objects import S3, s3, s3_endpoint  # noqa: F401  (the fixtures)
from tests.support.processes import cli_argv
from tests.support.skills import write_catalog

SHARDS = 2


def listing(s3: S3, folder: str) -> list[str]:  # noqa: F811
    client = boto3.client("s3")
    found = client.list_objects_v2(Bucket=s3.bucket, Prefix=f"index/{folder}/")
    return [item["Key"] for item in found.get("Contents", ())]


def argv(skills: Path, url: str) -> list[str]:
    args = index_argv(skills, Path("unused"))
    args[args.index("--out") + 1] = url
    return args


def test_shards_and_merge_share_only_the_bucket(tmp_path: Path, s3: S3,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    skills = write_catalog(tmp_path / "skills", 12)
    assert main(index_argv(skills, tmp_path / "whole")) == 0
    for i in range(SHARDS):  # each shard a process with its own cache: no shared folder
        done = subprocess.run(
            cli_argv(*argv(skills, s3.url()), "--shard", f"{i}/{SHARDS}"), cwd=REPO,
            capture_output=True, text=True, timeout=300, check=False,
            env={**s3.env, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                 "XDG_CACHE_HOME": str(tmp_path / f"shard-{i}")})
        assert done.returncode == 0, done.stderr
    assert len({k.split("/")[-2] for k in listing(s3, ".shards")}) == SHARDS  # both partials
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "merge"))
    assert main([*argv(skills, s3.url()), "--merge"]) == 0
    assert not listing(s3, ".shards")  # the merged partials are gone from the bucket
    served, _ = served_index(s3.url(), Config(index=IndexConfig(
        cache_dir=str(tmp_path / "replica"))))
    one, merged = load_index(tmp_path / "whole"), load_index(served)
    assert [s.name for s in merged.skills] == [s.name for s in one.skills]
    assert np.allclose(merged.vectors, one.vectors, atol=1e-6)
