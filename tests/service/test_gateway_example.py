"""examples/gateway.py run as a separate process against a server started here."""

from __future__ import annotations

import ast
import subprocess
import sys

from router.service.server import RouterServer
from tests.support import REPO
from tests.support.ports import free_port

GATEWAY = REPO / "examples" / "gateway.py"


def run_gateway(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(GATEWAY), *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_gateway_runs_a_turn_end_to_end(tree_server: RouterServer) -> None:
    done = run_gateway("--target", f"127.0.0.1:{tree_server.port}")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model calls activate_skill(name='pdf-tools')" in out
    assert "   revealed: ['pdf-tools'" in out
    # what the first turn revealed is not revealed again (the active skill frees its slot,
    # so the next candidate may be new)
    first = out.split("   revealed: ", 1)[1].split("\n", 1)[0]
    again = out.split("the same request again: revealed ", 1)[1].split("\n", 1)[0]
    assert not set(ast.literal_eval(first)) & set(ast.literal_eval(again))
    # after compaction the turn's retrieved skills are revealed again; the active one's
    # content was kept, so it is not
    reset = out.split("after compaction (context_reset): revealed ", 1)[1].split("\n", 1)[0]
    assert reset.endswith("active ['pdf-tools'] (its content was kept)")
    assert "pdf-tools" not in ast.literal_eval(reset.split(", active ", 1)[0])
    assert '<skill_content name="pdf-tools">' in out
    assert "skill content kept: 1" in out
    assert "references/guide.md: 8 bytes, text/markdown" in out
    assert "already_active=True, content: 0 characters" in out
    assert "A user types /pdf-tools in a new conversation" in out
    assert "a later activate_skill('pdf-tools') there: already_active=True" in out
    assert "feedback success for pdf-tools: recorded=True" in out
    assert out.rstrip().endswith("turn complete")


def test_gateway_reports_unreachable_server() -> None:
    done = run_gateway("--target", f"127.0.0.1:{free_port()}", "--timeout", "1")
    assert done.returncode == 1
    assert "cannot reach skill-router at 127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr
