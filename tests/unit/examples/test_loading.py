"""Example requests from every file format; malformed input is a diagnostic, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from router.examples.loading import (
    fingerprint,
    parse_evals,
    parse_example_lines,
    parse_trigger_evals,
    read_example_files,
    read_skill_examples,
)
from router.examples.model import Example, ExampleSource
from router.skills.model import Skill

EVALS = {"skill_name": "csv-analyzer", "evals": [
    {"id": 1, "prompt": "Find the top 3 months by revenue in this CSV", "files": []},
    {"id": 2, "expected_output": "no prompt here"},
    {"id": 3, "prompt": "  chart   sales  by region "}]}


def test_evals_prompts_are_positive_examples() -> None:
    found, problems = parse_evals(json.dumps(EVALS), "csv-analyzer", "evals.json")
    assert [e.query for e in found] == ["Find the top 3 months by revenue in this CSV",
                                        "chart sales by region"]
    assert all(e.skills == ("csv-analyzer",) and e.source is ExampleSource.EVALS
               for e in found)
    assert len(problems) == 1 and "evals[1]" in problems[0].message


def test_trigger_evals_split_into_positives_and_negatives() -> None:
    items = [{"query": "make a pivot of this csv", "should_trigger": True},
             {"query": "what is the capital of Peru", "should_trigger": False},
             {"prompt": "sum column B", "should_trigger": True},
             {"query": "no flag"}, "not an object"]
    for text in (json.dumps(items), json.dumps({"queries": items})):
        found, problems = parse_trigger_evals(text, "csv", "trigger.json")
        assert [(e.query, e.skills, e.negatives) for e in found] == [
            ("make a pivot of this csv", ("csv",), ()),
            ("what is the capital of Peru", (), ("csv",)),
            ("sum column B", ("csv",), ())]
        assert len(problems) == 2


def test_example_lines_ignore_extra_keys_and_skip_bad_lines() -> None:
    text = "\n".join([
        json.dumps({"id": "x1", "query": "merge two PDFs", "skills": ["pdf", "pdf"]}),
        json.dumps({"query": "hello there", "skills": []}),
        "{not json",
        json.dumps({"query": "", "skills": ["pdf"]}),
        json.dumps({"query": "ok", "skills": "pdf"}),
        json.dumps(["a", "list"]),
        ""])
    found, problems = parse_example_lines(text, "ex.jsonl")
    assert [(e.query, e.skills) for e in found] == [("merge two PDFs", ("pdf",)),
                                                   ("hello there", ())]
    assert [p.path for p in problems] == ["ex.jsonl:3", "ex.jsonl:4", "ex.jsonl:5",
                                          "ex.jsonl:6"]


def test_unparsable_files_are_diagnostics() -> None:
    for parse in (parse_evals, parse_trigger_evals):
        found, problems = parse("{oops", "s", "f.json")
        assert found == [] and "not JSON" in problems[0].message
        found, problems = parse(json.dumps(42), "s", "f.json")
        assert found == [] and problems


def test_readers_find_skill_files_and_report_missing_ones(tmp_path: Path) -> None:
    folder = tmp_path / "csv-analyzer"
    (folder / "evals").mkdir(parents=True)
    (folder / "evals" / "evals.json").write_text(json.dumps(EVALS), encoding="utf-8")
    (folder / "evals" / "trigger_evals.json").write_text(
        json.dumps([{"query": "weather in Oslo", "should_trigger": False}]), encoding="utf-8")
    (folder / "evals" / "trigger-eval.json").write_bytes(b"\xff\xfe broken")
    skill = Skill(name="csv-analyzer", description="d", location=str(folder / "SKILL.md"),
                  base_dir=str(folder), content_hash="h")
    found, problems = read_skill_examples([skill])
    assert len(found) == 3 and found[-1].negatives == ("csv-analyzer",)
    assert any("trigger-eval.json" in p.path for p in problems)
    found, problems = read_example_files([tmp_path / "missing.jsonl"])
    assert found == [] and "unreadable" in problems[0].message


def test_fingerprint_ignores_order_but_not_content() -> None:
    a, b = Example("q1", ("s",)), Example("q2", (), ("s",))
    assert fingerprint([a, b]) == fingerprint([b, a])
    assert fingerprint([a, b]) != fingerprint([a, Example("q2", ("s",))])
