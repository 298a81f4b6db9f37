"""The encoder pairs builder: skill names, dedupe, the tool-level split, the eval overlap filter."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from router.encoders.tools_model.rows import Row, Tool
from scripts.encoder_pairs import apibench, bfcl
from scripts.encoder_pairs.build import main
from scripts.encoder_pairs.common import (
    assign_splits,
    cap_per_tool,
    clean_description,
    dedupe,
    is_validation_tool,
    make_row,
    to_skill_name,
    tool_key,
)
from scripts.encoder_pairs.overlap import drop_overlap, load_eval_sets


@pytest.mark.parametrize(("raw", "name"), [
    ("math.factorial", "math-factorial"),
    ("getWeather", "get-weather"),
    ("HTTPServer_v2", "http-server-v2"),
    ("princeton-nlp/unsup-simcse-roberta-base", "princeton-nlp-unsup-simcse-roberta-base"),
    ("  __Café--Menu__ ", "cafe-menu"),
    ("a" * 70 + ".b", "a" * 64),
    ("地图", ""),
])
def test_names_take_the_agent_skills_form(raw: str, name: str) -> None:
    assert to_skill_name(raw) == name


def test_descriptions_are_one_capped_line_and_poor_ones_list_parameters() -> None:
    assert clean_description("Find  the\n area of a triangle.") == "Find the area of a triangle."
    assert clean_description("Get user.", ["user_id", "fields"]) == (
        "Get user. Parameters: user_id, fields.")
    long = clean_description("word " * 400)
    assert len(long) <= 1024 and "\n" not in long and not long.endswith(" ")


def _tool(name: str, description: str = "") -> Tool:
    return Tool(name, description or f"Does the {name} thing for the caller.")


def test_a_row_without_request_or_description_is_dropped() -> None:
    assert make_row("x/1", "x", "  ", [_tool("a")]) is None
    assert make_row("x/1", "x", "do it", [None]) is None
    row = make_row("x/1", "x", "do  it", [_tool("a")], [_tool("a"), _tool("b")])
    assert row is not None
    assert row.request == "do it" and [t.name for t in row.distractors] == ["b"]


def test_dedupe_keeps_one_row_per_normalised_request_and_tool_set() -> None:
    rows = [
        Row("s/2", "s", "What's the WEATHER in Paris?", (_tool("weather"),)),
        Row("s/1", "s", "what s the weather in paris", (_tool("weather"),)),
        Row("s/3", "s", "what s the weather in paris", (_tool("forecast"),)),
    ]
    assert [r.id for r in dedupe(rows)] == ["s/1", "s/3"]


def test_the_cap_keeps_at_most_n_rows_per_tool() -> None:
    rows = [Row(f"s/{i}", "s", f"request number {i}", (_tool("same"),)) for i in range(9)]
    rows.append(Row("s/x", "s", "another", (_tool("other"),)))
    kept = cap_per_tool(rows, 3)
    assert sum(1 for r in kept if r.tools[0].name == "same") == 3
    assert any(r.id == "s/x" for r in kept)
    assert [r.id for r in kept] == [r.id for r in cap_per_tool(reversed(rows), 3)]


def test_no_validation_tool_is_seen_in_training() -> None:
    tools = [_tool(f"tool-{i}") for i in range(200)]
    held = [t for t in tools if is_validation_tool(t)]
    assert 5 <= len(held) <= 40  # about 10%
    rows = [Row(f"s/{i}", "s", f"request {i}", (tools[i], tools[(i * 7) % 200]),
                (tools[(i + 1) % 200], tools[(i + 3) % 200])) for i in range(200)]
    split = assign_splits(rows)
    train = [r for r in split if r.split == "train"]
    validation = [r for r in split if r.split == "validation"]
    assert train and validation
    held_keys = {tool_key(t) for t in held}
    for row in train:
        assert not {tool_key(t) for t in (*row.tools, *row.distractors)} & held_keys
    for row in validation:
        assert {tool_key(t) for t in row.tools} & held_keys


def _eval_files(tmp_path: Path) -> tuple[Path, Path]:
    skills = tmp_path / "eval" / "skills"
    (skills / "get-forecast").mkdir(parents=True)
    (skills / "get-forecast" / "SKILL.md").write_text(
        "---\nname: get-forecast\ndescription: Get the weather forecast for a city over the "
        "next seven days\n---\nbody\n", encoding="utf-8")
    (skills / "convert-units").mkdir()
    (skills / "convert-units" / "manifest.json").write_text(json.dumps(
        {"name": "convert-units", "description": "Converts a quantity between units of length, "
         "mass and volume"}), encoding="utf-8")
    queries = tmp_path / "eval" / "queries.jsonl"
    queries.write_text(json.dumps({"query": "Find the area of a triangle with base 10 and "
                                   "height 5 units."}) + "\n", encoding="utf-8")
    return skills, queries


def test_rows_matching_an_eval_request_or_skill_description_are_dropped(tmp_path: Path) -> None:
    sets = load_eval_sets(*[[p] for p in _eval_files(tmp_path)])
    rows = [
        Row("s/exact", "s", "find the AREA of a triangle with base 10 and height 5 units",
            (_tool("area"),)),
        Row("s/near", "s", "Please find the area of a triangle with base 10 and height 5 units!",
            (_tool("area"),)),
        Row("s/desc", "s", "Will it rain in Oslo tomorrow?",
            (_tool("forecast", "Gets the weather forecast for a city over the next seven days."),)),
        Row("s/manifest", "s", "How many grams in a pound?",
            (_tool("units", "Converts a quantity between units of length, mass and volume."),)),
        Row("s/keep", "s", "Find the perimeter of a square with side 4.", (_tool("perimeter"),),
            (_tool("forecast", "Get the weather forecast for a city over the next seven days"),)),
    ]
    kept, counts = drop_overlap(rows, sets)
    assert [r.id for r in kept] == ["s/keep"]
    assert kept[0].distractors == ()
    assert (counts.request, counts.tool_description, counts.distractors_removed) == (2, 2, 1)


def test_the_command_builds_a_deterministic_filtered_file(tmp_path: Path) -> None:
    data = tmp_path / "gorilla" / bfcl.DATA
    (data / "possible_answer").mkdir(parents=True)
    functions = [
        {"name": "geometry.area_triangle", "description": "Calculate the area of a triangle.",
         "parameters": {"properties": {"base": {}, "height": {}}}},
        {"name": "getWeather", "description": "Get the current weather for a city by name.",
         "parameters": {"properties": {"city": {}}}},
    ]
    questions = [
        ("multiple_0", "Find the area of a triangle with base 10 and height 5 units.",
         "geometry.area_triangle"),
        ("multiple_1", "How warm is it in Lisbon right now?", "getWeather"),
        ("multiple_2", "How warm is it in  Lisbon right now", "getWeather"),
    ]
    for cat in bfcl.CATEGORIES:
        items = questions if cat == "multiple" else []
        (data / f"BFCL_v4_{cat}.json").write_text("".join(
            json.dumps({"id": i, "question": [[{"role": "user", "content": q}]],
                        "function": functions}) + "\n" for i, q, _ in items), encoding="utf-8")
        (data / "possible_answer" / f"BFCL_v4_{cat}.json").write_text("".join(
            json.dumps({"id": i, "ground_truth": [{f: {}}]}) + "\n" for i, _, f in items),
            encoding="utf-8")
    for path in apibench.files_read():  # APIBench, in the same repository: empty here
        (tmp_path / "gorilla" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "gorilla" / path).write_text("", encoding="utf-8")
    skills, queries = _eval_files(tmp_path)
    args = ["--gorilla", str(tmp_path / "gorilla"), "--eval-skills", str(skills),
            "--eval-queries", str(queries)]
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    assert main([*args, "--out", str(first)]) == 0
    assert main([*args, "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(first.read_bytes()).splitlines()]
    assert [r["id"] for r in rows] == ["bfcl/multiple/1"]
    assert rows[0]["tools"] == [{"name": "get-weather",
                                 "description": "Get the current weather for a city by name."}]
    assert [d["name"] for d in rows[0]["distractors"]] in ([], ["geometry-area-triangle"])


def test_a_source_inside_an_eval_set_is_refused(tmp_path: Path) -> None:
    skills, queries = _eval_files(tmp_path)
    code = main(["--gorilla", str(skills.parent), "--eval-skills", str(skills),
                 "--eval-queries", str(queries), "--out", str(tmp_path / "x.jsonl.gz")])
    assert code == 1
