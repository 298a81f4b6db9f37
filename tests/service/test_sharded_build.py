"""A sharded build (``index --shard I/N`` in parallel processes, then ``index --merge``) gives
the same index as a one-process build, and a missing, stale or corrupt partial is refused while
the current index keeps serving."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from router.builder.shards import ShardSpec, shard_of
from router.cli import main
from router.common.checkpoints import PAUSE_ENV
from router.index.store import load_index
from router.index.versions.layout import SHARDS_DIR, current_version
from router.v1 import router_pb2 as pb
from tests.support import REPO
from tests.support.indexes import index_argv, open_engine
from tests.support.processes import cli_argv, cli_process
from tests.support.servers import serving
from tests.support.skills import add_skill, write_catalog

SHARDS = 3
QUERIES = ("extract the tables from these PDF files", "write git commit messages",
           "summarise CSV spreadsheets and charts", "build Docker images")


def _shards_in_parallel(skills: Path, out: Path, indexes: range) -> None:
    """Start every shard's ``skill-router index --shard`` process at once; all must succeed."""
    procs = [subprocess.Popen(cli_argv(*index_argv(skills, out), "--shard", f"{i}/{SHARDS}"),
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for i in indexes]
    for proc in procs:
        out_text, err_text = proc.communicate(timeout=300)
        assert proc.returncode == 0, err_text
        assert "shard " in out_text


def _merge(skills: Path, out: Path) -> int:
    return main([*index_argv(skills, out), "--merge"])


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "skills", 24)


def test_sharded_build_equals_a_one_process_build(catalog: Path, tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    assert main(index_argv(catalog, whole)) == 0
    _shards_in_parallel(catalog, sharded, range(SHARDS))
    assert _merge(catalog, sharded) == 0
    assert not list((sharded / SHARDS_DIR).rglob("part-*"))  # merged partials are removed
    one, merged = load_index(whole), load_index(sharded)
    assert [s.to_dict() for s in merged.skills] == [s.to_dict() for s in one.skills]
    assert np.allclose(merged.vectors, one.vectors, atol=1e-6)
    with serving(open_engine(whole)) as a, serving(open_engine(sharded)) as b:
        for message in QUERIES:
            request = pb.RouteRequest(message=message, top_k=3)
            left, right = a.stub.Route(request), b.stub.Route(request)
            assert [(s.name, s.score) for s in left.skills] == \
                   [(s.name, s.score) for s in right.skills]
            assert left.catalog_text == right.catalog_text


def test_every_skill_lands_in_exactly_one_stable_shard() -> None:
    names = [f"skill-{i}" for i in range(200)]
    first = [shard_of(n, SHARDS) for n in names]
    assert first == [shard_of(n, SHARDS) for n in names]  # stable across calls
    assert set(first) == set(range(SHARDS))  # no shard left empty by a skewed hash
    with pytest.raises(Exception, match="I/N"):
        ShardSpec.parse("3")
    with pytest.raises(Exception, match="0 <= I < N"):
        ShardSpec.parse("3/3")


def test_a_missing_partial_is_refused_and_the_current_index_keeps_serving(
        catalog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "index"
    assert main(index_argv(catalog, out)) == 0
    served = current_version(out)
    _shards_in_parallel(catalog, out, range(SHARDS - 1))
    # The last shard is killed while it discovers (a pause point it reports on stderr).
    with cli_process(*index_argv(catalog, out), "--shard", f"{SHARDS - 1}/{SHARDS}",
                     stdout=subprocess.DEVNULL, env={PAUSE_ENV: "discovering"}) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.strip() == "build paused at discovering":
                break
        proc.kill()
        proc.wait()
    # A shard killed mid-write leaves only a temporary folder, never a partial.
    partial_root = next((out / SHARDS_DIR).glob(f"*/{SHARDS}"))
    (partial_root / f".tmp-{SHARDS - 1}-killed").mkdir()
    assert _merge(catalog, out) == 1
    assert f"partial(s) [{SHARDS - 1}] missing" in capsys.readouterr().err
    assert current_version(out) == served
    assert open_engine(out).info().version == served


def test_a_stale_or_corrupt_partial_is_refused(catalog: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "index"
    assert main(index_argv(catalog, out)) == 0
    served = current_version(out)
    _shards_in_parallel(catalog, out, range(SHARDS))
    add_skill(catalog, "skill-new", "Handles late additions to the catalog.")
    assert _merge(catalog, out) == 1  # built from another catalog
    assert "the catalog, the discovery settings or the model" in capsys.readouterr().err
    (catalog / "skill-new" / "SKILL.md").unlink()
    (catalog / "skill-new").rmdir()
    vectors = next((out / SHARDS_DIR).glob(f"*/{SHARDS}/part-0/vectors.npy"))
    data = bytearray(vectors.read_bytes())
    data[-4:] = b"\x00\x00\x80\x7f"  # one float of the last row flipped to infinity
    vectors.write_bytes(bytes(data))
    assert _merge(catalog, out) == 1
    assert "does not match its checksum" in capsys.readouterr().err
    assert current_version(out) == served
