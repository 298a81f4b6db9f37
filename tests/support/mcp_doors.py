"""Start the MCP door the way a host does: ``python -m router.cli mcp ...`` in a subprocess,
over stdio or streamable HTTP on a free loopback port; the skills tree the door tests serve."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcp import StdioServerParameters

from tests.support import REPO
from tests.support.ports import free_port
from tests.support.skills import Tree, write_tree

BINARY = b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary"
START_DEADLINE = 120.0  # generous: a shared machine may be slow; we stop as soon as it answers


def write_door_tree(base: Path) -> Tree:
    """The service tests' skills tree plus a small binary file bundled with pdf-tools."""
    tree = write_tree(base)
    (tree.root / "pdf-tools" / "assets").mkdir()
    (tree.root / "pdf-tools" / "assets" / "logo.png").write_bytes(BINARY)
    return tree


def door_env() -> dict[str, str]:
    """This checkout first on the path, whatever the working directory."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{path}" if path else str(REPO)}


def door_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "router.cli", "mcp", *args]


def stdio_params(*args: str) -> StdioServerParameters:
    """What a host's MCP configuration says: the command and its arguments."""
    command = door_command(*args)
    return StdioServerParameters(command=command[0], args=command[1:], env=door_env(),
                                 cwd=str(REPO))


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class RunningDoor:
    """A door process on a port: its URL and its stderr so far."""

    url: str
    port: int
    _log: IO[bytes]
    pid: int = 0

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")


@contextmanager
def running_door(args: Sequence[str], env: dict[str, str] | None = None,
                 host: str = "127.0.0.1") -> Iterator[RunningDoor]:
    """A door listening on ``host`` at a free port, once it accepts connections (on
    127.0.0.1, which ``0.0.0.0`` includes); its URL names 127.0.0.1."""
    port = free_port()
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a full pipe would block it
        process = subprocess.Popen(
            door_command(*args, "--transport", "http", "--host", host, "--port", str(port)),
            env={**door_env(), **(env or {})}, cwd=str(REPO), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_until_listening(process, port, log)
            yield RunningDoor(f"http://127.0.0.1:{port}/mcp", port, log, process.pid)
            assert process.poll() is None, "the door died while serving"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def http_door(args: Sequence[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """A door on a free loopback port; yields its URL once it accepts connections."""
    with running_door(args, env) as door:
        yield door.url


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: IO[bytes]) -> None:
    """Return once the door ``process`` accepts connections on ``port``; RuntimeError with its
    ``log`` when it exits first, or when it does not start within START_DEADLINE."""
    deadline = time.monotonic() + START_DEADLINE
    while not _answers(port):
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the door exited with {process.returncode}: "
                               f"{log.read().decode(errors='replace')}")
        if time.monotonic() > deadline:
            raise RuntimeError("the door did not start listening")
        time.sleep(0.05)  # polling for the observed event (the port answers), not a wait
