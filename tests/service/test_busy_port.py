"""A server on a port already in use refuses to start, never sharing the port; and each
command that serves (``serve``, ``ops``, ``mcp --transport http``) says so the same way: one
``error:`` line naming the address and the flag that changes it, no native gRPC log line, no
"listening" line, exit 1."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.engine import Engine
from router.service.server import build_server
from tests.support.learning import make_index
from tests.support.processes import cli_argv
from tests.support.servers import server_config, start_server


def test_a_second_server_on_a_busy_port_fails_to_start(engine: Engine) -> None:
    first = start_server(engine)
    try:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            second = build_server(engine, server_config(), f"127.0.0.1:{first.port}")
            second.server.stop(0)  # only reached when the bind wrongly succeeded
    finally:
        first.stop(0)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_index(tmp_path_factory.mktemp("busy"))


@pytest.fixture()
def taken() -> Iterator[int]:
    """A loopback port another process listens on."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        yield holder.getsockname()[1]
    finally:
        holder.close()


COMMANDS = {
    "serve": ("serve", "--host", "127.0.0.1", "--metrics-port", "0", "--poll-seconds", "0",
              "--index"),
    "ops": ("ops", "--host", "127.0.0.1", "--target", "127.0.0.1:9"),
    "mcp": ("mcp", "--transport", "http", "--host", "127.0.0.1", "--index"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_server_says_a_taken_port_in_one_line(command: str, index: Path,
                                                    taken: int) -> None:
    argv = [*COMMANDS[command], *([str(index)] if COMMANDS[command][-1] == "--index" else []),
            "--port", str(taken)]
    done = subprocess.run(cli_argv(*argv), capture_output=True, text=True, timeout=120,
                          check=False)
    lines = done.stderr.splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert f"cannot listen on 127.0.0.1:{taken}" in lines[0] and "--port" in lines[0]
    assert ("make run PORT=" in lines[0]) == (command == "serve")
    assert "listening" not in done.stdout + done.stderr
