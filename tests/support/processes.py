"""Subprocesses: a fresh interpreter, and ``python -m router.cli`` run from the repository."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support import REPO


def python_stdout(script: str) -> str:
    """What ``python -c script`` prints in a fresh interpreter (it must succeed)."""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "router.cli", *args]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``skill-router args...`` in a subprocess; it must succeed."""
    return subprocess.run(cli_argv(*args), cwd=REPO, capture_output=True, text=True, check=True)


@contextmanager
def cli_process(*args: str, **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """``skill-router args...`` started in the background, unbuffered, its stdout (and stderr
    unless ``popen`` says otherwise) piped; ``env`` adds to the environment. Still running on
    exit: SIGTERM, then kill."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **popen.pop("env", {})}
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    proc = subprocess.Popen(cli_argv(*args), cwd=REPO, text=True, env=env, **popen)
    try:
        yield proc
    finally:
        stop(proc, 10)


def stop(proc: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM ``proc`` if it still runs and wait ``timeout`` s for it; then kill it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
