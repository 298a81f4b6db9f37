"""MCP servers' tools as skills (pure): the spec, the names, the record a tool skill keeps."""

from __future__ import annotations

import json

import pytest

from router.errors import InvalidRequest
from router.skills.mcp_tools import (
    api_name_for,
    parse_spec,
    parse_specs,
    skill_name_for,
    tool_document,
    tool_skills,
)
from router.skills.model import Level, SkillKind

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def tool(name: str, description: str = "Reads a file.", **more: object) -> dict[str, object]:
    return {"name": name, "description": description, "inputSchema": SCHEMA, **more}


def test_a_spec_is_a_command_line_split_as_a_shell_would_or_a_url() -> None:
    spec = parse_spec("git=python -m mcp_server_git --repository '/tmp/my repo'")
    assert (spec.name, spec.command) == ("git", ("python", "-m", "mcp_server_git",
                                                 "--repository", "/tmp/my repo"))
    assert parse_spec("docs=https://mcp.example.com/mcp").url == "https://mcp.example.com/mcp"


@pytest.mark.parametrize("bad", ["git", "git=", "Git=server", "project=server", "x='open"])
def test_a_malformed_spec_is_refused_with_what_to_give(bad: str) -> None:
    with pytest.raises(InvalidRequest):
        parse_spec(bad)


def test_a_server_named_twice_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="more than once"):
        parse_specs(["a=one", "a=two"])


def test_names_map_to_skill_names_and_api_names() -> None:
    assert skill_name_for("git_log") == "git-log"
    assert skill_name_for("Read.File/v2") == "read-file-v2"
    assert api_name_for("search.files v2") == "search_files_v2"
    assert len(api_name_for("x" * 100)) == 64


def test_each_tool_is_a_callable_skill_of_its_server_s_catalog() -> None:
    skills, problems = tool_skills({"git": [tool("git_log", "Shows the commit logs.",
                                                 annotations={"readOnlyHint": True,
                                                              "destructiveHint": False,
                                                              "other": 1})]})
    assert problems == []
    [skill] = skills
    assert (skill.name, skill.catalog, skill.tool_name, skill.kind) == (
        "git-log", "git", "git_log", SkillKind.MCP_TOOL)
    assert skill.parameters == SCHEMA and skill.location == "mcp://git/git_log"
    assert skill.annotations == {"readOnlyHint": True, "destructiveHint": False}
    record = json.loads(tool_document(skill))
    assert (record["name"], record["inputSchema"]) == ("git_log", SCHEMA)
    assert skill.content_hash and skill.routable


def test_two_servers_equal_names_are_told_apart_by_their_server() -> None:
    skills, problems = tool_skills({"fs": [tool("read_file"), tool("list_directory")],
                                    "docs": [tool("read_file")]})
    assert problems == []
    names = sorted((s.catalog, s.name, s.tool_name) for s in skills)
    assert names == [("docs", "docs-read-file", "docs__read_file"),
                     ("fs", "fs-read-file", "fs__read_file"),
                     ("fs", "list-directory", "list_directory")]


def test_a_name_another_source_holds_is_told_apart_too() -> None:
    skills, _ = tool_skills({"tz": [tool("convert-timezone")]}, taken={"convert-timezone"})
    assert [(s.name, s.tool_name) for s in skills] == [("tz-convert-timezone",
                                                         "tz__convert-timezone")]


def test_a_tool_without_description_or_schema_or_with_a_clashing_name_is_a_diagnostic() -> None:
    skills, problems = tool_skills({"s": [tool("ok"), tool("no_text", ""),
                                          {**tool("bad_schema"), "inputSchema": {"type": 5}},
                                          tool("Ok")]})
    assert [s.name for s in skills] == ["ok"]
    assert [p.level for p in problems] == [Level.ERROR] * 3
    assert all(p.catalog == "s" for p in problems)
