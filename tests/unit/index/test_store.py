import json
from pathlib import Path

import numpy as np
import pytest

from router.builder.version import build_index
from router.calibration.gate import bundled_requests
from router.encoders.hashing import HashEmbedder
from router.errors import IndexCorrupt, IndexUnavailable
from router.index.store import load_index
from router.index.versions.layout import CURRENT, VERSIONS, current_version
from router.skills.model import Skill
from tests.support.embedders import CountingEmbedder
from tests.support.skills import skill_record


def skill(name: str, description: str) -> Skill:
    return skill_record(name, description, root="/s", content_hash=description)


SKILLS = [skill("pdf-tools", "Extracts tables from PDF files."),
          skill("git-helper", "Writes git commit messages.")]


def test_round_trip_is_sorted_and_identical(tmp_path: Path) -> None:
    info = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    snap = load_index(tmp_path)
    assert snap.info.version == info.version == current_version(tmp_path)
    assert [s.name for s in snap.skills] == ["git-helper", "pdf-tools"]
    assert snap.skills[1] == sorted(SKILLS, key=lambda s: s.name)[1]
    assert snap.dense.ntotal == 2 and len(snap.lexical) == 2
    assert np.allclose(np.linalg.norm(snap.vectors, axis=1), 1.0)


def test_missing_index_is_unavailable_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(IndexUnavailable, match="skill-router index"):
        load_index(tmp_path)


def test_incremental_build_reuses_unchanged_embeddings(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    calibration = len(bundled_requests())  # off-topic requests, embedded once then reused
    build_index(SKILLS, [], embedder, tmp_path)
    assert len(embedder.texts) == 2 + calibration
    changed = [SKILLS[0], skill("git-helper", "Writes and reviews git commit messages.")]
    info = build_index(changed, [], embedder, tmp_path)
    assert len(embedder.texts) == 3 + calibration and info.reused_embeddings == 1
    fresh = load_index(tmp_path)
    assert np.allclose(fresh.vectors, HashEmbedder().encode(
        [f"{s.name.replace('-', ' ')}: {s.description}" for s in fresh.skills]))


@pytest.mark.parametrize("target", ["dense.faiss", "skills.json", "vectors.npy",
                                    "lexical/data.npy", "lexical/vocab.json",
                                    "examples.json", "examples.npy"])
def test_a_corrupt_file_is_detected_and_never_served(tmp_path: Path, target: str) -> None:
    info = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    path = Path(info.path) / target
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt, match="checksum mismatch"):
        load_index(tmp_path)


def test_a_checksum_mismatch_is_reported_even_when_the_records_do_not_parse(
        tmp_path: Path) -> None:
    info = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    (Path(info.path) / "skills.json").write_text("{")
    with pytest.raises(IndexCorrupt, match=r"checksum mismatch in skills\.json"):
        load_index(tmp_path)
    with pytest.raises(IndexCorrupt, match="cannot load index"):
        load_index(tmp_path, verify=False)


def test_truncated_manifest_and_wrong_format_are_refused(tmp_path: Path) -> None:
    info = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    manifest = Path(info.path) / "manifest.json"
    data = json.loads(manifest.read_text())
    data["format_version"] = 999
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexCorrupt, match="rebuild"):
        load_index(tmp_path)
    manifest.write_text('{"format_version": 1, "fil')
    with pytest.raises(IndexCorrupt):
        load_index(tmp_path)


def test_half_written_build_is_never_current(tmp_path: Path) -> None:
    good = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    (tmp_path / ".tmp-half").mkdir()  # what a killed build leaves behind
    (tmp_path / ".tmp-half" / "skills.json").write_text("{")
    assert current_version(tmp_path) == good.version
    assert load_index(tmp_path).info.version == good.version
    assert sorted(p.name for p in (tmp_path / VERSIONS).iterdir()) == [good.version]


def test_current_pointer_is_validated(tmp_path: Path) -> None:
    build_index(SKILLS, [], HashEmbedder(), tmp_path)
    (tmp_path / CURRENT).write_text("../../etc\n")
    with pytest.raises(IndexCorrupt):
        load_index(tmp_path)


def test_read_info_reads_the_manifest_only(tmp_path: Path) -> None:
    from router.index.versions.layout import read_info

    built = build_index(SKILLS, [], HashEmbedder(), tmp_path)
    info = read_info(tmp_path)
    assert (info.version, info.model, info.skill_count) == (built.version, "hash-256", 2)
    (Path(built.path) / "manifest.json").write_text("{")
    with pytest.raises(IndexCorrupt, match="cannot read manifest"):
        read_info(tmp_path)


@pytest.mark.parametrize(("field", "value"), [
    ("gate", {"min_dense": "not a number"}),
    ("tuning", {"dense_weight": 0.5, "example_mode": "nearest", "expand_lexical": False}),
    ("tuning", {"dense_weight": 7, "example_mode": "view", "expand_lexical": False}),
])
def test_a_malformed_manifest_field_is_a_corrupt_index_not_a_crash(
        tmp_path: Path, field: str, value: object) -> None:
    from router.index.versions.layout import MANIFEST

    root = tmp_path / "index"
    build_index([skill_record("pdf-tools", "Extracts tables from PDF files.")], [],
                HashEmbedder(), root)
    manifest = root / VERSIONS / current_version(root) / MANIFEST
    data = json.loads(manifest.read_text())
    data[field] = value
    manifest.write_text(json.dumps(data))
    with pytest.raises(IndexCorrupt):
        load_index(root)
