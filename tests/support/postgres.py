"""A PostgreSQL server for tests: ``SKILL_ROUTER_TEST_POSTGRES_DSN`` when set, else a
throwaway cluster (``initdb`` and ``pg_ctl`` of PostgreSQL 15, run as the ``postgres``
user, listening on a free loopback port, trust auth) stopped at the end of the session.
Skips only when neither is possible."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
DSN_ENV = "SKILL_ROUTER_TEST_POSTGRES_DSN"


def _as_postgres(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", "postgres", "--", *argv],
                          capture_output=True, text=True, timeout=120, check=False)


def _unavailable() -> str:
    """Why no throwaway cluster can start here ("" when it can)."""
    if not (BIN / "initdb").exists():
        return f"no {BIN}/initdb (install postgresql-15) and no {DSN_ENV}"
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return f"not root (initdb must run as postgres) and no {DSN_ENV}"
    return ""


def _wait_ready(port: int, sockets: Path) -> None:
    """Until pg_isready says the server accepts connections (it waits itself)."""
    done = _as_postgres(str(BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(port),
                        "-t", "60")
    if done.returncode != 0:
        raise RuntimeError(f"PostgreSQL did not become ready: {done.stdout}{done.stderr}")


class Cluster:
    """A throwaway PostgreSQL 15 cluster on a free loopback port: ``start``, ``stop`` (and
    ``start`` again, on the same port and data), ``remove``."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="skill-router-pg-"))
        self.data, self.sockets = self.root / "data", self.root / "sockets"
        self.sockets.mkdir()
        shutil.chown(self.root, "postgres")
        shutil.chown(self.sockets, "postgres")
        self.port = free_port()
        init = _as_postgres(str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres",
                            "--auth=trust", "-E", "UTF8")
        if init.returncode != 0:
            self.remove()
            raise RuntimeError(f"initdb failed: {init.stderr}")

    @property
    def dsn(self) -> str:
        """The server's DSN, no database named."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/"

    def start(self) -> None:
        start = _as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-l",
                             str(self.root / "log"), "-o",
                             f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1",
                             "-w", "start")
        if start.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {start.stderr}"
                               f"{(self.root / 'log').read_text(errors='replace')}")
        _wait_ready(self.port, self.sockets)

    def stop(self) -> None:
        _as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def cluster() -> Iterator[Cluster]:
    """A started ``Cluster`` (skipped where none can run), stopped and removed after."""
    why = _unavailable()
    if why:
        pytest.skip(why)
    server = Cluster()
    try:
        server.start()
        yield server
    finally:
        server.stop()
        server.remove()


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN of a server where the tests may create databases (no database named)."""
    given = os.environ.get(DSN_ENV, "")
    if given:
        yield given
        return
    with cluster() as server:
        yield server.dsn
