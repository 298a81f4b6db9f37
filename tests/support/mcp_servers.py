"""Two real MCP servers over stdio for the tests of MCP servers as a skill source:
``mcp-server-git`` (PyPI, a dev dependency: ``python -m mcp_server_git``) and
``@modelcontextprotocol/server-filesystem`` (npm, pinned), installed once into ``.mcp-servers/``
(ignored by git) by the first session that needs it. A test skips, saying why, only where a
server cannot be had (no node or npm, no registry, the package not installed)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

FS_PACKAGE = "@modelcontextprotocol/server-filesystem"
FS_VERSION = "2026.8.31"
CACHE = REPO / ".mcp-servers"
FS_SCRIPT = CACHE / "node_modules" / FS_PACKAGE / "dist" / "index.js"
GIT_TOOLS = 12  # what mcp-server-git 2026.10.19 lists
FS_TOOLS = 14  # what server-filesystem 2026.8.31 lists


def _install_fs() -> str:
    """Install the filesystem server into the cache; "" when done, else why not."""
    if FS_SCRIPT.exists():
        return ""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        return "node and npm are needed for the filesystem MCP server"
    try:
        run = subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                              f"{FS_PACKAGE}@{FS_VERSION}"], capture_output=True, text=True,
                             timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return f"npm install {FS_PACKAGE} did not finish in 600 s"
    if run.returncode != 0 or not FS_SCRIPT.exists():
        return f"npm install {FS_PACKAGE}@{FS_VERSION} failed: {run.stderr.strip()[-300:]}"
    return ""


@pytest.fixture(scope="session")
def mcp_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with two commits, the folder both servers are given."""
    if shutil.which("git") is None:
        pytest.skip("git is needed for the MCP servers' repository")
    repo = tmp_path_factory.mktemp("mcp-repo")
    env = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("README.md", "notes.txt"):
        (repo / name).write_text(f"{name}\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(repo), "add", name], check=True)
        subprocess.run(["git", *env, "-C", str(repo), "commit", "-q", "-m", f"add {name}"],
                       check=True)
    return repo


@pytest.fixture(scope="session")
def git_server(mcp_repo: Path) -> str:
    """``NAME=COMMAND`` of the git server, catalog ``git``."""
    if importlib.util.find_spec("mcp_server_git") is None:
        pytest.skip("mcp-server-git is not installed (pip install -e '.[dev]')")
    return f"git={sys.executable} -m mcp_server_git --repository {mcp_repo}"


@pytest.fixture(scope="session")
def fs_server(mcp_repo: Path) -> str:
    """``NAME=COMMAND`` of the filesystem server, catalog ``fs``."""
    why = _install_fs()
    if why:
        pytest.skip(why)
    return f"fs=node {FS_SCRIPT} {mcp_repo}"
