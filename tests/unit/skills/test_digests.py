"""Per-file digests (router.skills.digests): what is recorded, the bounds, reuse across builds,
the racily-clean rule, and the serve-time check."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from router.errors import StaleFile
from router.skills import digests
from router.skills.digests import FileDigest, SkillDigests
from router.skills.limits import RESOURCE_MAX_BYTES
from router.skills.model import Skill
from tests.support.skills import write_skill


def _skill(folder: Path) -> Skill:
    path = write_skill(folder)
    return Skill(name=folder.name, description="d", location=str(path), base_dir=str(folder))


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _age(path: Path, seconds: int = 60) -> None:
    old = path.stat().st_mtime_ns - seconds * 1_000_000_000
    os.utime(path, ns=(old, old))


def test_skill_file_first_then_bundled_files_with_size_and_digest(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "alpha")
    (tmp_path / "alpha" / "scripts").mkdir()
    (tmp_path / "alpha" / "scripts" / "run.py").write_bytes(b"print(1)\n")
    (tmp_path / "alpha" / ".hidden").write_bytes(b"x")
    got = digests.skill_digests(skill)
    assert got.complete
    assert [f.path for f in got.files] == ["SKILL.md", "scripts/run.py"]
    run = got.files[1]
    assert (run.size, run.digest) == (9, _sha(b"print(1)\n"))
    assert got.files[0].digest == _sha((tmp_path / "alpha" / "SKILL.md").read_bytes())


def test_bounds_mark_the_skill_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    skill = _skill(tmp_path / "many")
    for i in range(4):
        (tmp_path / "many" / f"f{i}.txt").write_text(str(i), encoding="utf-8")
    monkeypatch.setattr(digests, "DIGEST_FILES_CAP", 3)
    got = digests.skill_digests(skill)
    assert not got.complete and len(got.files) == 3
    big = _skill(tmp_path / "big")
    with open(tmp_path / "big" / "data.bin", "wb") as fh:
        fh.truncate(RESOURCE_MAX_BYTES + 1)
    got = digests.skill_digests(big)
    assert not got.complete and [f.path for f in got.files] == ["SKILL.md"]


def test_unchanged_files_reuse_the_record_and_changed_ones_are_hashed(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "alpha")
    notes = tmp_path / "alpha" / "notes.md"
    notes.write_bytes(b"one")
    for path in (notes, tmp_path / "alpha" / "SKILL.md"):
        _age(path)
    first = digests.skill_digests(skill)
    assert all(f.mtime_ns for f in first.files)  # old enough to be trusted
    # a record that lies about the digest shows that an unchanged file is not read again
    fake = SkillDigests(tuple(FileDigest(f.path, f.size, "sha256:" + "0" * 64, f.mtime_ns)
                              for f in first.files))
    assert digests.skill_digests(skill, fake).files == fake.files
    notes.write_bytes(b"two")  # same size, new time: hashed again
    again = digests.skill_digests(skill, fake)
    assert again.get("notes.md") is not None
    assert again.get("notes.md").digest == _sha(b"two")  # type: ignore[union-attr]


def test_a_racily_recent_file_is_never_reused(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "alpha")
    got = digests.skill_digests(skill)
    assert got.files[0].mtime_ns == 0  # just written: within RACY_NS of the hash


def test_fingerprint_follows_content_not_time(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "alpha")
    before = digests.fingerprint({"alpha": digests.skill_digests(skill)})
    _age(Path(skill.location))
    assert digests.fingerprint({"alpha": digests.skill_digests(skill)}) == before
    Path(skill.location).write_text("---\nname: alpha\ndescription: e\n---\n", encoding="utf-8")
    assert digests.fingerprint({"alpha": digests.skill_digests(skill)}) != before


def test_written_and_loaded_back(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "alpha")
    recorded = {"alpha": digests.skill_digests(skill)}
    digests.write(tmp_path, recorded)
    assert digests.load(tmp_path) == recorded
    assert digests.load(tmp_path / "nowhere") is None


def test_verify_refuses_other_bytes_and_unrecorded_files() -> None:
    record = SkillDigests((FileDigest("SKILL.md", 3, _sha(b"abc")),
                           FileDigest("a/b.md", 1, _sha(b"x"))))
    digests.verify("s", record, "SKILL.md", b"abc")
    digests.verify("s", record, "a//b.md", b"x")  # the path as ReadResource normalises it
    digests.verify("s", None, "anything", b"unchecked")  # an index from before digests
    with pytest.raises(StaleFile, match=r"'SKILL\.md' of skill 's' changed on disk.*Reindex"):
        digests.verify("s", record, "SKILL.md", b"abd")
    with pytest.raises(StaleFile, match="changed on disk"):
        digests.verify("s", record, "SKILL.md", b"abcd")
    with pytest.raises(StaleFile, match=r"'new\.md' of skill 's' was not in the index.*Reindex"):
        digests.verify("s", record, "new.md", b"")


def test_an_index_without_digests_is_served_unchecked_and_listed_dynamic(tmp_path: Path
                                                                        ) -> None:
    from dataclasses import replace

    from router.config import Config
    from router.door.backend import EngineBackend
    from router.encoders.hashing import HashEmbedder
    from router.engine import Engine
    from router.index.store import load_index
    from router.mcp.entries import refusal, to_wire
    from tests.support.indexes import index_folder

    skill = _skill(tmp_path / "skills" / "alpha")
    index = index_folder(tmp_path / "skills", tmp_path / "index")
    legacy = replace(load_index(index), digests=None)  # as loaded from an older version folder
    engine = Engine(legacy, Config(), HashEmbedder())
    (Path(skill.base_dir) / "notes.md").write_text("late", encoding="utf-8")
    assert engine.read_resource("alpha", "notes.md").content == b"late"
    entry = EngineBackend(engine).skill_entries()[0]
    assert to_wire(entry)["resources"] == "dynamic" and not refusal(entry)
    current = Engine(load_index(index), Config(), HashEmbedder())
    with pytest.raises(StaleFile):
        current.read_resource("alpha", "notes.md")
