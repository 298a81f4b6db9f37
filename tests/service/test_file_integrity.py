"""What was indexed is what is served: a skill file changed after the build is refused by
Activate and ReadResource over gRPC (FAILED_PRECONDITION, naming the file and saying to
Reindex) and served again, with its new digest in ListSkills, after a Reindex."""

from __future__ import annotations

import hashlib
from pathlib import Path

import grpc
import pytest

from router.v1 import router_pb2 as pb
from tests.support.indexes import cli_index, open_engine
from tests.support.servers import Served, serving
from tests.support.skills import write_catalog

NOTES = "# Notes\n\nKeep them short.\n"


def _catalog(tmp_path: Path) -> tuple[Path, Path]:
    skills = write_catalog(tmp_path / "skills", 3)
    (skills / "skill-0" / "notes.md").write_text(NOTES, encoding="utf-8")
    cli_index(skills, tmp_path / "index")
    return skills, tmp_path / "index"


def _refused(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    error = caught.value
    assert isinstance(error, grpc.Call)
    assert error.code() is grpc.StatusCode.FAILED_PRECONDITION, error.details()
    assert "Reindex" in (error.details() or "")
    return error


def _files(served: Served, name: str) -> dict[str, pb.SkillFile]:
    reply = served.stub.ListSkills(pb.ListSkillsRequest(include_files=True), timeout=10)
    info = next(s for s in reply.skills if s.name == name)
    assert info.files_recorded and info.files_complete
    return {f.path: f for f in info.files}


def test_changed_files_are_refused_until_a_reindex_records_them(tmp_path: Path) -> None:
    skills, index = _catalog(tmp_path)
    skill_md = skills / "skill-0" / "SKILL.md"
    with serving(open_engine(index)) as served:
        stub = served.stub
        files = _files(served, "skill-0")
        assert set(files) == {"SKILL.md", "notes.md"}
        assert files["notes.md"].digest == "sha256:" + hashlib.sha256(NOTES.encode()).hexdigest()
        assert files["notes.md"].size == len(NOTES.encode())
        assert "Steps." in stub.Activate(pb.ActivateRequest(name="skill-0"), timeout=10).content
        read = stub.ReadResource(pb.ReadResourceRequest(name="skill-0", path="notes.md"),
                                 timeout=10)
        assert read.content == NOTES.encode()

        # the same size, other bytes: only the digest can tell
        edited = NOTES.replace("short", "SHORT")
        (skills / "skill-0" / "notes.md").write_text(edited, encoding="utf-8")
        skill_md.write_text(skill_md.read_text(encoding="utf-8") + "Injected.\n",
                            encoding="utf-8")
        (skills / "skill-0" / "extra.md").write_text("new\n", encoding="utf-8")
        error = _refused(lambda: stub.ReadResource(
            pb.ReadResourceRequest(name="skill-0", path="notes.md"), timeout=10))
        assert "'notes.md'" in (error.details() or "") and "skill-0" in (error.details() or "")
        error = _refused(lambda: stub.Activate(
            pb.ActivateRequest(name="skill-0", session_id="s1"), timeout=10))
        assert "SKILL.md" in (error.details() or "")
        _refused(lambda: stub.ReadResource(
            pb.ReadResourceRequest(name="skill-0", path="./notes.md"), timeout=10))
        error = _refused(lambda: stub.ReadResource(
            pb.ReadResourceRequest(name="skill-0", path="extra.md"), timeout=10))
        assert "not in the index" in (error.details() or "")
        listed = stub.ListResources(pb.ListResourcesRequest(name="skill-0"), timeout=10)
        assert list(listed.resources) == ["notes.md"]  # extra.md is not listed until recorded
        # other skills are untouched
        assert stub.Activate(pb.ActivateRequest(name="skill-1"), timeout=10).content

        reindexed = stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert reindexed.swapped
        files = _files(served, "skill-0")
        assert set(files) == {"SKILL.md", "notes.md", "extra.md"}
        listed = stub.ListResources(pb.ListResourcesRequest(name="skill-0"), timeout=10)
        assert list(listed.resources) == ["extra.md", "notes.md"]
        assert files["notes.md"].digest == ("sha256:" +
                                            hashlib.sha256(edited.encode()).hexdigest())
        read = stub.ReadResource(pb.ReadResourceRequest(name="skill-0", path="notes.md"),
                                 timeout=10)
        assert read.content == edited.encode()
        assert "Injected." in stub.Activate(
            pb.ActivateRequest(name="skill-0", session_id="s2"), timeout=10).content


def test_a_bundled_file_change_alone_makes_reindex_build(tmp_path: Path) -> None:
    skills, index = _catalog(tmp_path)
    with serving(open_engine(index)) as served:
        same = served.stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert not same.swapped  # nothing changed: the version is kept
        (skills / "skill-0" / "notes.md").write_text(NOTES + "More.\n", encoding="utf-8")
        changed = served.stub.Reindex(pb.ReindexRequest(), timeout=60)
        assert changed.swapped and changed.unchanged == 3  # no SKILL.md changed
        read = served.stub.ReadResource(
            pb.ReadResourceRequest(name="skill-0", path="notes.md"), timeout=10)
        assert read.content.endswith(b"More.\n")
