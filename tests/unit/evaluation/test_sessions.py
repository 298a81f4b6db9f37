"""How ``skill-router eval --sessions`` draws its sessions (``router.evaluation.sessions``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.cli import main
from router.evaluation.metrics import Labelled
from router.evaluation.sessions import KINDS, plan
from tests.support.skills import add_skill

REQUESTS = [Labelled(f"r{i}", f"request {i} for {skill}", (skill,))
            for i, skill in enumerate(["a", "a", "a", "b", "b", "c", "c", "d"])]
REQUESTS.append(Labelled("off", "nothing fits", ()))


def test_each_kind_of_session_wants_what_it_says() -> None:
    drawn = plan(REQUESTS, sessions=3, turns=4, seed=1)
    assert [p.kind for p in drawn] == list(KINDS) * 3
    for p in drawn:
        wanted = [skill for _, skill in p.turns]
        assert len(p.turns) == 4 and all(f"for {skill}" in m for m, skill in p.turns)
        if p.kind == KINDS[0]:
            assert len(set(wanted)) == 1 and wanted[0] in "abc"  # a skill asked several ways
        elif p.kind == KINDS[1]:
            assert wanted[0] == wanted[1] != wanted[2] == wanted[3]
        else:
            assert len({m for m, _ in p.turns}) == 4
    assert drawn == plan(REQUESTS, sessions=3, turns=4, seed=1)  # seeded


def test_nothing_to_draw_from_is_said() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        plan(REQUESTS, sessions=0, turns=4, seed=0)
    with pytest.raises(ValueError, match="expects a skill"):
        plan(REQUESTS[-1:], sessions=1, turns=4, seed=0)


def test_the_cost_report_routes_every_turn_and_keeps_the_promises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SKILL_ROUTER_INDEX_MODEL", "hash")
    asks = {"alpha-pdf": ["extract the tables from a PDF", "read PDF documents tables"],
            "beta-git": ["write a git commit message", "git commit messages please"],
            "gamma-sql": ["tune these SQL queries", "SQL database schemas"]}
    for name, texts in asks.items():
        add_skill(tmp_path / "skills", name, f"Handles {texts[0]}; {texts[1]}.")
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"id": f"{name}-{i}", "query": text,
                                           "expected": [name]}) + "\n"
                               for name, texts in asks.items()
                               for i, text in enumerate(texts)), encoding="utf-8")
    argv = ["eval", "--queries", str(queries), "--root", str(tmp_path / "skills"), "--cache",
            str(tmp_path / "cache"), "--sessions", "2", "--turns", "4"]
    assert main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report) == list(KINDS)
    for row in report.values():
        assert row["sessions"] == 2
        assert (row["stable_moved"], row["repeated_reveals"], row["unrevealed_retrieved"]) == (
            0, 0, 0)
        assert all(row[f"{api}_{layout}"] > 0 for api in ("anthropic", "openai")
                   for layout in ("whole", "per_turn", "reveal"))
        assert row["wanted_so_far"] >= row["wanted_this_turn"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "| one intent (2) |" in table and "checks: stable_moved 0" in table
