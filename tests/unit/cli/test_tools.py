"""``skill-router tools``: every callable skill of an index as deferred tool definitions the
SDKs' own types accept, named as the Route tool search formats name them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic.types import ToolParam, ToolResultBlockParam
from openai.types.responses import FunctionTool
from pydantic import TypeAdapter

from router.cli import main
from router.routing.model import CatalogFormat, RouteQuery
from tests.support.indexes import build_hash_index, open_engine
from tests.support.skills import skill_record

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
SKILLS = (
    skill_record("house-style", "Applies the house writing style.", always_on=True),
    skill_record("list-directory", "Lists the files of a directory.", parameters=SCHEMA,
                 tool_name="list_directory", catalog="fs"),
    skill_record("convert-timezone", "Converts a time between time zones.",
                 parameters={"type": "object", "properties": {}}),
    skill_record("old-tool", "Lists files, the old way.", parameters=SCHEMA, deprecated=True),
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_hash_index(SKILLS, Path(tmp_path_factory.mktemp("tools")))


def tools(index: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["tools", "--index", str(index), "--format", fmt]) == 0
    printed: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return printed


def test_anthropic_definitions_are_deferred_tools(index: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    found = tools(index, "anthropic", capsys)
    for tool in found:
        TypeAdapter(ToolParam).validate_python(tool)
        assert tool["defer_loading"] is True
    assert sorted(t["name"] for t in found) == ["convert-timezone", "list_directory"]
    listing = next(t for t in found if t["name"] == "list_directory")
    assert listing["input_schema"] == SCHEMA


def test_openai_definitions_are_deferred_functions(index: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    found = [FunctionTool.model_validate(t) for t in tools(index, "openai", capsys)]
    assert all(t.defer_loading is True and t.type == "function" for t in found)
    assert sorted(t.name for t in found) == ["convert-timezone", "list_directory"]


def test_the_names_are_those_route_answers_with(index: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    declared = {t["name"] for t in tools(index, "anthropic", capsys)}
    result = open_engine(index).route(RouteQuery(
        message="list the files of a directory", format=CatalogFormat.ANTHROPIC_TOOL_REFERENCES))
    content = json.loads(result.catalog_text)
    TypeAdapter(ToolResultBlockParam).validate_python(
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": content})
    assert {b["tool_name"] for b in content} <= declared
    assert "list_directory" in {b["tool_name"] for b in content}
