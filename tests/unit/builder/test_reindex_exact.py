"""A Reindex after one skill changed reuses what this process made of the unchanged ones (their
reading, words, vectors, the encoders' rows of the fixed requests), and the version it writes is
the one a full build of the same catalog writes, file for file: the same records, vectors, BM25
and FAISS files, examples, gate and fits, admission record and settings. (From 2,048 skills the
dense index's code books are kept instead, within a stated tolerance: router.index.codebooks.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from router.admission import imitation
from router.builder import admitting, version
from router.builder.admission_memo import ReadMemo, memo_key
from router.builder.pipeline import Served, recorded_settings
from router.builder.recipe import Recipe, Sources
from router.calibration import self_requests
from router.common.memo import Memo, forget_all
from router.config import Config, DiscoveryConfig, IndexConfig
from router.encoders.hashing import HashEmbedder
from router.encoders.kept import encode_kept
from router.index.store import load_index
from router.index.versions.layout import MANIFEST, VERSIONS, current_version
from router.skills.digests import DIGESTS_FILE, FileDigest, SkillDigests
from tests.support.embedders import CountingEmbedder
from tests.support.skills import skill_record, write_skill

CONFIG = Config(index=IndexConfig(model="hash"))
SOURCES = Sources(traffic=False)
TOPICS = ("invoices", "calendars", "spreadsheets", "photographs", "contracts", "recipes")
VOLATILE = {"version", "built_at", "files"}  # a version's name and time, its files' checksums


def _catalog(root: Path) -> Path:
    for i in range(12):
        topic = TOPICS[i % len(TOPICS)]
        write_skill(root / f"skill-{i}", f"skill-{i}", f"Handles {topic} (variant {i}).",
                    body=f"# Skill {i}\n\nThis skill reads the {topic} you give it and writes "
                         f"a summary of variant {i}. It also checks every {topic} entry "
                         f"for mistakes before it answers.\n")
    return root


def _recipe(skills: Path, index: Path) -> Recipe:
    discovery = DiscoveryConfig(project_dir=None, home_dir=None, bundled_roots=(str(skills),))
    return Recipe.for_index(CONFIG, discovery, index)


def _files(index: Path) -> dict[str, Any]:
    """Every file of the current version; the manifest without its volatile keys and the
    digests without modification times (a file hashed in the same second has none)."""
    folder = index / VERSIONS / current_version(index)
    out: dict[str, Any] = {str(p.relative_to(folder)): p.read_bytes()
                           for p in sorted(folder.rglob("*")) if p.is_file()}
    manifest = json.loads(out.pop(MANIFEST))
    out[MANIFEST] = {k: v for k, v in manifest.items() if k not in VOLATILE}
    digests = json.loads(out.pop(DIGESTS_FILE))["skills"]
    out[DIGESTS_FILE] = {name: [(f["path"], f["size"], f["digest"]) for f in d["files"]]
                         for name, d in digests.items()}
    return out


def _as_a_new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process kept of earlier builds."""
    forget_all()
    for cached in (imitation.skeleton, imitation._trigrams, self_requests._sentences):
        cached.cache_clear()
    monkeypatch.setattr(admitting, "MEMO", ReadMemo())


@pytest.mark.parametrize("compact_from", [version.COMPACT_FROM, 0])  # 0: one-line manifests
def test_one_changed_reindex_writes_what_a_full_build_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compact_from: int) -> None:
    monkeypatch.setattr(version, "COMPACT_FROM", compact_from)
    skills = _catalog(tmp_path / "skills")
    write_skill(skills / "reset-disk", "reset-disk", "Resets a test machine's disk (\u00e9).",
                body="# Reset\n\nRun `sudo rm -rf --no-preserve-root /` to reset.\n")
    served_index, fresh_index = tmp_path / "served", tmp_path / "fresh"
    query = HashEmbedder()
    recipe = _recipe(skills, served_index)
    assert recipe.build(SOURCES, serving=query).info is not None
    write_skill(skills / "skill-3", "skill-3", "Handles calendars and time zones now.",
                body="# Skill 3\n\nThis skill moves calendar events between time zones and "
                     "tells you which meetings overlap.\n")
    snapshot = load_index(served_index)
    changed = recipe.build(SOURCES, serving=query, served=Served(
        snapshot.info.version, snapshot.skills, recorded_settings(snapshot.info.path)))
    assert changed.info is not None and changed.changes.changed == 1
    _as_a_new_process(monkeypatch)  # what it kept, if stale, would show
    full = _recipe(skills, fresh_index).build(SOURCES, serving=HashEmbedder())
    assert full.info is not None
    incremental, rebuilt = _files(served_index), _files(fresh_index)
    assert incremental.keys() == rebuilt.keys()
    for name in incremental:
        assert incremental[name] == rebuilt[name], name
    settings = incremental[MANIFEST]["settings"]
    assert settings["admission_inputs"] and "gate" in incremental[MANIFEST]
    if compact_from == 0:  # the verdict records' kept texts spliced in: json.dumps's text
        text = (served_index / VERSIONS / current_version(served_index) / MANIFEST).read_text(
            encoding="utf-8")
        assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
        assert settings["admission"]["skills"]


def test_the_admission_memo_does_not_see_modification_times() -> None:
    skill = skill_record("alpha", "Does alpha.")

    def digests(mtime: int) -> SkillDigests:
        return SkillDigests((FileDigest("SKILL.md", 10, "sha256:" + "a" * 64, mtime),))

    assert memo_key(skill, "disk:", digests(0)) == memo_key(skill, "disk:", digests(5))
    other = SkillDigests((FileDigest("SKILL.md", 10, "sha256:" + "b" * 64, 5),))
    assert memo_key(skill, "disk:", other) != memo_key(skill, "disk:", digests(5))


def test_an_encoder_encodes_a_kept_text_once_and_another_encoder_again() -> None:
    first, second = CountingEmbedder(), CountingEmbedder()
    rows = encode_kept(first, ["one", "two"])
    again = encode_kept(first, ["two", "three", "one"])
    assert first.texts == ["one", "two", "three"]  # only the new text the second time
    assert np.array_equal(again, HashEmbedder().encode(["two", "three", "one"]))
    assert np.array_equal(rows, HashEmbedder().encode(["one", "two"]))
    encode_kept(second, ["one"])
    assert second.texts == ["one"]  # kept per encoder object, never by the model's name


def test_a_memo_keeps_the_most_recently_used() -> None:
    memo: Memo[str, int] = Memo(2)
    made: list[list[str]] = []

    def make(keys: list[str]) -> list[int]:
        made.append(keys)
        return [len(k) for k in keys]

    assert memo.many(["a", "bb", "a"], make) == [1, 2, 1] and made == [["a", "bb"]]
    assert memo.of("a", lambda: 0) == 1  # kept, and now the most recent
    memo.put("ccc", 3)  # "bb" goes
    assert memo.many(["bb", "ccc"], make) == [2, 3] and made[-1] == ["bb"]
    assert len(memo) == 2
