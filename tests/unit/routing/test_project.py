"""Project skills sent with a turn: lenient checks, the bounds, the catalog size they add, and
embeddings made once per content with the full-precision encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from router.config import IndexConfig
from router.encoders.hashing import HashEmbedder
from router.engine.project_turns import ProjectTurns
from router.errors import InvalidRequest
from router.routing import catalog
from router.routing.model import CatalogFormat, InlineSkill
from router.routing.project import project_skills
from router.skills.model import PROJECT_CATALOG, Level
from tests.support.embedders import CountingEmbedder


def test_usable_skills_are_kept_and_the_rest_noted() -> None:
    skills, notes = project_skills([
        InlineSkill("lint-repo", "Lint  the\nrepository.", "/r/lint-repo/SKILL.md"),
        InlineSkill("", "No name."), InlineSkill("bad\x00", "Control."),
        InlineSkill("no-desc", ""), InlineSkill("lint-repo", "Again."),
        InlineSkill("Odd_Name", "Kept with a warning.", "/r/odd/SKILL.md")])
    assert [(s.name, s.catalog, s.description) for s in skills] == [
        ("lint-repo", PROJECT_CATALOG, "Lint the repository."),
        ("Odd_Name", PROJECT_CATALOG, "Kept with a warning.")]
    assert skills[0].base_dir == "/r/lint-repo"
    assert [n.level for n in notes] == [Level.ERROR, Level.ERROR, Level.ERROR, Level.WARNING,
                                        Level.WARNING]


def test_the_bounds_raise() -> None:
    with pytest.raises(InvalidRequest, match="at most 256 a turn"):
        project_skills([InlineSkill(f"s{i}", "d") for i in range(257)])
    with pytest.raises(InvalidRequest, match=r"project_skills\[1\] \('big'\).*at most 1024"):
        project_skills([InlineSkill("ok", "d"), InlineSkill("big", "x" * 1025)])


@pytest.mark.parametrize("fmt", list(CatalogFormat))
@pytest.mark.parametrize("mode", ["tool", "file"])
def test_the_grown_size_is_the_rendered_size(fmt: CatalogFormat, mode: str) -> None:
    base = [catalog.Entry(f"skill-{i}", f"Does thing {i} <&>.", f"/s/{i}") for i in range(5)]
    added = [catalog.Entry("new-one", "A new one.", "/p/new"), catalog.Entry("x", "é\u2028")]
    removed = base[1:3]
    size = len(catalog.render(base, fmt, mode))
    after = [e for e in base if e not in removed] + added
    assert catalog.grown_size(size, len(base), added, removed, fmt, mode) == \
        len(catalog.render(after, fmt, mode))
    assert catalog.grown_size(0, 0, added, [], fmt, mode) == len(catalog.render(added, fmt, mode))
    assert catalog.grown_size(size, len(base), [], base, fmt, mode) == 0


def test_embeddings_are_made_once_per_content(tmp_path: Path) -> None:
    from router.access.model import ANONYMOUS
    from router.routing.model import RouteQuery
    from tests.support.skills import skill_record
    from tests.support.snapshots import snapshot_of

    snap = snapshot_of([skill_record("pdf-tools", "PDF files."),
                        skill_record("git-commit", "Commit messages.")])
    turns = ProjectTurns(IndexConfig(), None)
    embedder = CountingEmbedder()
    query = RouteQuery("lint it", project_skills=(InlineSkill("lint-repo", "Lint the repo."),))
    first, _ = turns.lay(snap, snap.everything, query, ANONYMOUS, embedder)
    second, _ = turns.lay(snap, snap.everything, query, ANONYMOUS, embedder)
    assert len(embedder.texts) == 1 and first is not None and second is not None
    assert np.array_equal(first.vectors, second.vectors)
    assert second.view.position("lint-repo") == len(snap.skills)


def test_an_int8_serving_encoder_is_not_used_for_project_skills(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    full = HashEmbedder()

    def query_embedder(model: str, index_dir: object, *, backend: str, **_: object) -> object:
        made.append(backend)
        return full

    monkeypatch.setattr("router.index.query_encoder.query_embedder", query_embedder)
    copy = _Int8Copy()
    turns = ProjectTurns(IndexConfig(query_backend="onnx-int8"), tmp_path)
    assert turns._embedder(copy) is full and made == ["onnx"]
    assert ProjectTurns(IndexConfig(query_backend="onnx"), tmp_path)._embedder(full) is full
    # a copy that fell back to float32, or an encoder handed to the Engine: used as it is
    served = HashEmbedder()
    assert turns._embedder(served) is served and made == ["onnx"]


class _Int8Copy(HashEmbedder):
    vectors = "int8-QInt8/int8-matmul-per-channel-smoothed"
