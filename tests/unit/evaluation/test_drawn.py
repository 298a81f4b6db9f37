"""``skill-router eval --draw N``: a catalog drawn from a labelled one, requests for undrawn
skills relabelled "nothing fits"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.cli import main
from router.errors import InvalidRequest
from router.evaluation import drawn
from router.evaluation.metrics import Labelled
from tests.support.skills import add_skill

CATALOG = {"alpha-pdf": "Extracts tables from PDF documents.",
           "beta-git": "Writes git commit messages.",
           "delta-docker": "Builds Docker images and containers.",
           "gamma-sql": "Tunes SQL queries and database schemas."}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    for name, description in CATALOG.items():
        add_skill(tmp_path / "skills", name, description)
    return tmp_path / "skills"


def test_a_draw_copies_a_seeded_sample_and_is_reused(catalog: Path, tmp_path: Path) -> None:
    first = drawn.draw(catalog, 2, 7, tmp_path / "cache")
    assert len(first.names) == 2 and first.names <= set(CATALOG)
    assert sorted(p.name for p in first.root.iterdir() if p.is_dir()) == sorted(first.names)
    for name in first.names:
        assert (first.root / name / "SKILL.md").read_bytes() == \
            (catalog / name / "SKILL.md").read_bytes()
    marker = first.root / drawn.MARKER
    stamp = marker.stat().st_mtime_ns
    assert drawn.draw(catalog, 2, 7, tmp_path / "cache") == first  # same seed: same draw
    assert marker.stat().st_mtime_ns == stamp  # reused, not copied again
    others = {drawn.draw(catalog, 2, seed, tmp_path / "cache").names for seed in range(8)}
    assert len(others) > 1  # the seed moves the sample
    for bad in (0, 4, 9):
        with pytest.raises(InvalidRequest, match="--draw must be between 1 and 3"):
            drawn.draw(catalog, bad, 0, tmp_path / "cache")


def test_requests_for_undrawn_skills_are_relabelled_nothing_fits() -> None:
    requests = [Labelled("in", "a", ("alpha-pdf",)), Labelled("out", "b", ("beta-git",)),
                Labelled("part", "c", ("alpha-pdf", "beta-git")),
                Labelled("chat", "d", (), tags=("off_topic",))]
    got = drawn.relabel(requests, frozenset({"alpha-pdf", "gamma-sql"}))
    assert [(r.id, r.expected, r.tags) for r in got] == [
        ("in", ("alpha-pdf",), ()), ("out", (), (drawn.NOTHING_FITS,)),
        ("chat", (), ("off_topic",))]


def test_eval_with_a_draw_scores_what_was_drawn_and_counts_nothing_fits(
        catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SKILL_ROUTER_INDEX_MODEL", "hash")
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q-{name}", "query": description,
                                           "expected": [name]}) + "\n"
                               for name, description in CATALOG.items()), encoding="utf-8")
    argv = ["eval", "--queries", str(queries), "--root", str(catalog), "--cache",
            str(tmp_path / "cache"), "--format", "json", "--no-naive", "--tags"]
    assert main([*argv, "--draw", "3", "--draw-seed", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    scores = report["scores"]["all"]
    assert (scores["n"], scores["off-topic n"]) == (4, 1)  # three drawn, one asked for in vain
    assert scores["R@1"] == 1.0  # each drawn skill found by its own description
    assert report["tags"][drawn.NOTHING_FITS]["n"] == 1
    assert main([*argv[:3], "--index", str(tmp_path), "--draw", "3"]) == 2
    assert "--draw draws from a catalog folder" in capsys.readouterr().err
    assert main([*argv, "--draw", "4"]) == 2  # the whole catalog: nothing left to ask for
    assert "--draw must be between 1 and 3" in capsys.readouterr().err
