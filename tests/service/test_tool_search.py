"""Tool search over a real port: an index of the demo catalog and two real MCP servers over
stdio (``tests.support.mcp_servers``) answers Route in the Anthropic and OpenAI formats with
JSON the SDKs' own types accept, lists the tools with their annotations, activates a tool from
its record, and a Reindex lists the servers again; a server that fails leaves a diagnostic."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic.types import ToolReferenceBlock
from openai.types.responses import FunctionTool

from router.cli import main
from router.v1 import router_pb2 as pb
from tests.support import REPO
from tests.support.indexes import open_engine
from tests.support.mcp_servers import (  # noqa: F401  (fixtures)
    FS_TOOLS,
    GIT_TOOLS,
    fs_server,
    git_server,
    mcp_repo,
)
from tests.support.servers import Served, serving

DEMO = REPO / "examples" / "skills"
ANTHROPIC = pb.CATALOG_FORMAT_ANTHROPIC_TOOL_REFERENCES
OPENAI = pb.CATALOG_FORMAT_OPENAI_TOOL_SEARCH_OUTPUT


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, git_server: str,  # noqa: F811
          fs_server: str) -> Path:  # noqa: F811
    out = tmp_path_factory.mktemp("tool-search") / "index"
    argv = ["index", "--bundled", str(DEMO), "--no-project", "--no-home", "--out", str(out),
            "--model", "hash", "--mcp-server", git_server, "--mcp-server", fs_server,
            "--mcp-server", "broken=/nonexistent/mcp-server --flag"]
    assert main(argv) == 0  # a server that fails does not fail the build
    return out


@pytest.fixture(scope="module")
def served(index: Path) -> Iterator[Served]:
    with serving(open_engine(index)) as running:
        yield running


def test_both_servers_tools_are_indexed_beside_the_demo_catalog(served: Served) -> None:
    answer = served.stub.ListSkills(pb.ListSkillsRequest(all_catalogs=True))
    listed = list(answer.skills)
    by_catalog: dict[str, int] = {}
    for info in listed:
        by_catalog[info.catalog] = by_catalog.get(info.catalog, 0) + 1
    assert by_catalog == {"default": 49, "git": GIT_TOOLS, "fs": FS_TOOLS}
    log = next(s for s in listed if s.tool_name == "git_log")
    assert (log.name, log.catalog, log.kind) == ("git-log", "git", pb.SKILL_KIND_MCP_TOOL)
    notes = json.loads(log.annotations_json)
    assert notes["readOnlyHint"] is True and notes["destructiveHint"] is False
    reset = next(s for s in listed if s.tool_name == "git_reset")
    assert json.loads(reset.annotations_json)["destructiveHint"] is True
    assert next(s for s in listed if s.name == "convert-timezone").tool_name == \
        "convert-timezone"
    assert next(s for s in listed if s.name == "pdf-extract").tool_name == ""
    [broken] = [d for d in answer.diagnostics if "broken" in d.message]
    assert broken.level == pb.DIAGNOSTIC_LEVEL_ERROR and "/nonexistent/mcp-server" in \
        broken.message


def test_anthropic_format_gives_tool_references_with_git_log(served: Served) -> None:
    reply = served.stub.Route(pb.RouteRequest(message="show me the last commits in the git log",
                                              format=ANTHROPIC))
    blocks = [ToolReferenceBlock.model_validate(b) for b in json.loads(reply.catalog_text)]
    assert "git_log" in [b.tool_name for b in blocks]
    assert [b.tool_name for b in blocks] == [s.tool_name for s in reply.skills]
    assert all(s.parameters_json for s in reply.skills)  # no instruction-only skill
    assert reply.shown_count == len(blocks) and reply.route_id


def test_openai_format_gives_functions_with_the_server_s_schema(served: Served) -> None:
    reply = served.stub.Route(pb.RouteRequest(message="list the files in this directory",
                                              format=OPENAI))
    doc = json.loads(reply.catalog_text)
    assert (doc["type"], doc["execution"]) == ("tool_search_output", "client")
    tools = [FunctionTool.model_validate(t) for t in doc["tools"]]
    listing = next(t for t in tools if t.name == "list_directory")
    routed = next(s for s in reply.skills if s.tool_name == "list_directory")
    assert listing.parameters == json.loads(routed.parameters_json)
    assert listing.parameters is not None and listing.parameters["required"] == ["path"]
    assert all(s.parameters_json for s in reply.skills) and not reply.activate_tool_json


def test_a_tool_activates_from_its_record(served: Served) -> None:
    reply = served.stub.Activate(pb.ActivateRequest(name="git-log", session_id="tools-1"))
    assert "`git_log`" in reply.content and "repo_path" in reply.content
    assert list(reply.resources) == []


def test_a_reindex_lists_the_servers_again(served: Served) -> None:
    reply = served.stub.Reindex(pb.ReindexRequest(), timeout=120)
    assert (reply.added, reply.removed, reply.changed) == (0, 0, 0)
    assert reply.unchanged == 49 + GIT_TOOLS + FS_TOOLS


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_tools_lists_every_callable_skill_deferred_with_the_route_names(
        index: Path, served: Served, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--index", str(index), "--format", fmt]) == 0
    local = json.loads(capsys.readouterr().out)
    target = f"127.0.0.1:{served.running.port}"
    assert main(["tools", "--target", target, "--format", fmt]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert remote == local and len(local) == 1 + GIT_TOOLS + FS_TOOLS  # convert-timezone too
    assert all(t["defer_loading"] is True for t in local)
    names = {t["name"] for t in local}
    assert {"convert-timezone", "git_log", "list_directory"} <= names
    reply = served.stub.Route(pb.RouteRequest(message="show me the last commits in the git log",
                                              format=ANTHROPIC))
    assert {s.tool_name for s in reply.skills} <= names
