"""The MCP door over stdio, as a host launches it: ``python -m router.cli mcp --index DIR``."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent

from router.engine import Engine
from tests.support import REPO
from tests.support.mcp_doors import door_command, door_env, stdio_params
from tests.support.skills import Tree

ANSWER_DEADLINE = 60.0


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.anyio
async def test_a_stdio_session_with_an_always_on_skill(tree: Tree, tree_engine: Engine,
                                                      tmp_path: Path) -> None:
    config = tmp_path / "router.yaml"
    config.write_text("routing:\n  always_on: [git-helper]\n", encoding="utf-8")
    params = stdio_params("--index", str(tree.index))
    params.args[2:2] = ["--config", str(config)]  # a global flag, before the command
    async with Client(params) as host:
        tools = {t.name for t in (await host.list_tools()).tools}
        found = await host.call_tool("search_skills", {"query": "extract tables from a PDF",
                                                       "top_k": 1})
        off_topic = await host.call_tool("search_skills", {"query": "bake sourdough bread"})
        first = await host.call_tool("activate_skill", {"name": "pdf-tools"})
        second = await host.call_tool("activate_skill", {"name": "pdf-tools"})
        refused = await host.call_tool("read_skill_resource",
                                       {"name": "pdf-tools", "path": "../secret.txt"})
        guide = await host.read_resource("skill://pdf-tools/references/guide.md")
    assert tools == {"search_skills", "activate_skill", "read_skill_resource"}
    reasons = {s["name"]: s["reason"] for s in found.structured_content["skills"]}  # type: ignore[index]
    assert reasons == {"git-helper": "always_on", "pdf-tools": "retrieved"}
    # The always-on skill is shown on every turn, so an off-topic request still lists it.
    assert [s["name"] for s in off_topic.structured_content["skills"]] == ["git-helper"]  # type: ignore[index]
    assert text(first).startswith('<skill_content name="pdf-tools">')
    assert "already active" in text(second) and "<skill_content" not in text(second)
    assert refused.is_error and "'..'" in text(refused)
    assert getattr(guide.contents[0], "text", "") == "# Guide\n"


def _reader(stream: Any, lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


def test_a_malformed_line_gets_an_error_and_the_server_keeps_running(
        tree: Tree, tree_engine: Engine) -> None:
    process = subprocess.Popen(door_command("--index", str(tree.index)), cwd=str(REPO),
                               env=door_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None and process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_reader, args=(process.stdout, lines), daemon=True).start()
    try:
        process.stdin.write("this is not json\n")
        process.stdin.write('{"jsonrpc": "2.0", "id": 1}\n')  # JSON, but not a message
        process.stdin.write('{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        process.stdin.flush()
        answers = [json.loads(lines.get(timeout=ANSWER_DEADLINE)) for _ in range(3)]
        process.stdin.close()
        assert process.wait(timeout=ANSWER_DEADLINE) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answers[0] == {"jsonrpc": "2.0", "id": None,
                          "error": {"code": -32700,
                                    "message": "Parse error: the line is not valid JSON"}}
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32600
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}  # still serving
    assert lines.empty()  # nothing else reached stdout


def test_a_missing_index_is_one_line_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    done = subprocess.run(door_command("--index", str(tmp_path / "nothing-here")), cwd=str(REPO),
                          env=door_env(), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=ANSWER_DEADLINE)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("error: ") and "nothing-here" in done.stderr
