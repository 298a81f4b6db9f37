"""The tool search formats: routed callable skills as the Anthropic ``tool_reference`` blocks
and the OpenAI ``tool_search_output`` item, checked with the SDKs' own types; instruction-only
skills left out; sizes and budgets counted as for every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic.types import ToolReferenceBlock
from openai.types.responses import FunctionTool
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)
from pydantic import TypeAdapter

from router.engine import Engine
from router.routing import catalog
from router.routing.model import CatalogFormat, RouteQuery
from tests.support.indexes import build_hash_index, open_engine
from tests.support.skills import skill_record

ANTHROPIC = CatalogFormat.ANTHROPIC_TOOL_REFERENCES
OPENAI = CatalogFormat.OPENAI_TOOL_SEARCH_OUTPUT
LOG_SCHEMA = {"type": "object", "properties": {"max_count": {"type": "integer"}}}
SKILLS = (
    skill_record("house-style", "Applies the house writing style to every answer.",
                 always_on=True),
    skill_record("git-helper", "Writes git commit messages and explains the git log history."),
    skill_record("git-log", "Shows the git log: the last commits of the repository.",
                 parameters=LOG_SCHEMA, tool_name="git_log", catalog="git"),
    skill_record("git-status", "Shows the git working tree status.",
                 parameters={"type": "object", "properties": {}}, tool_name="git_status",
                 catalog="git"),
    skill_record("convert-timezone", "Converts a time between time zones.",
                 parameters={"type": "object", "properties": {"time": {"type": "string"}}},
                 always_on=True),
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return open_engine(build_hash_index(SKILLS, Path(tmp_path_factory.mktemp("tools"))))


def route(engine: Engine, fmt: CatalogFormat, message: str = "show me the last commits in "
          "the git log", **more: int) -> tuple[list[str], str]:
    result = engine.route(RouteQuery(message=message, format=fmt, **more))
    return [s.name for s in result.skills], result.catalog_text


def test_anthropic_blocks_are_tool_references_the_sdk_accepts(engine: Engine) -> None:
    names, text = route(engine, ANTHROPIC)
    blocks = [ToolReferenceBlock.model_validate(b) for b in json.loads(text)]
    assert all(b.type == "tool_reference" for b in blocks)
    tools = [b.tool_name for b in blocks]
    assert tools[0] == "convert-timezone"  # always-on first
    assert "git_log" in tools
    assert "house-style" not in names and "git-helper" not in names  # instructions only


def test_openai_output_holds_functions_the_sdk_accepts(engine: Engine) -> None:
    names, text = route(engine, OPENAI)
    doc = json.loads(text)
    assert (doc["type"], doc["execution"]) == ("tool_search_output", "client")
    tools = [FunctionTool.model_validate(t) for t in doc["tools"]]
    log = next(t for t in tools if t.name == "git_log")
    assert log.parameters == LOG_SCHEMA and log.strict is False
    assert log.description == SKILLS[2].description
    assert len(tools) == len(names) and "git-helper" not in names
    TypeAdapter(ResponseToolSearchOutputItemParamParam).validate_python(
        {**doc, "call_id": "call_1"})  # the input item, once the gateway adds its call_id


def test_the_text_formats_still_show_instruction_only_skills(engine: Engine) -> None:
    names, _ = route(engine, CatalogFormat.XML)
    assert "house-style" in names  # always-on, instructions only


def test_the_routed_skills_carry_their_tool_name(engine: Engine) -> None:
    result = engine.route(RouteQuery(message="git log of the last commits", format=OPENAI))
    assert {s.name: s.tool_name for s in result.skills}["git-log"] == "git_log"
    assert not any(s.activate_tool_json for s in [result])  # the tools are the answer


def test_nothing_fits_is_an_empty_answer() -> None:
    assert catalog.render([], ANTHROPIC) == "" and catalog.render([], OPENAI) == ""


@pytest.mark.parametrize("fmt", [ANTHROPIC, OPENAI])
def test_sizes_and_budgets_count_as_for_every_format(engine: Engine, fmt: CatalogFormat) -> None:
    result = engine.route(RouteQuery(message="git log status", format=fmt))
    assert result.catalog_chars == len(result.catalog_text)
    every = [catalog.Entry(s.name, s.description, "", s.api_name, catalog_json(s.parameters))
             for s in SKILLS if s.parameters is not None]
    assert result.full_catalog_chars == len(catalog.render(every, fmt))
    entries = [catalog.Entry(s.name, s.description, "", s.tool_name, s.parameters_json)
               for s in result.skills]
    assert catalog.grown_size(len(catalog.render(entries[:1], fmt)), 1, entries[1:], (), fmt) \
        == len(catalog.render(entries, fmt))
    budget = len(catalog.render(entries[:1], fmt))
    cut = engine.route(RouteQuery(message="git log status", format=fmt,
                                  max_catalog_chars=budget))
    assert len(cut.skills) == 1 and len(cut.catalog_text) <= budget


def catalog_json(parameters: object) -> str:
    return json.dumps(parameters, ensure_ascii=False, sort_keys=True)
