"""The content scan's worker kept running between the scans of one process.

Starting the worker is most of a small scan: importing cisco-ai-skill-scanner and building its
analyzers (YARA rules among them) takes about five seconds, against milliseconds to scan the
one skill a Reindex found changed. So the first scan of a process starts the worker in its
serving mode (``scan_worker.py --serve``: a request a line, an answer a line) and later scans,
of a Reindex, a server's next build or the next ``version`` question, reuse it. One worker is
kept per scanner folder, asked by one thread at a time; a worker that fails, times out or
answers that the scanner is missing is stopped and forgotten, so the next scan starts a fresh
one, as is one whose scanner was installed again since it started (the package's
``__init__.py`` changed: ``make scanner`` after an upgrade). The worker reads its requests
from a pipe: it ends when this process does.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

WORKER = Path(__file__).with_name("scan_worker.py")


class WorkerFailed(Exception):
    """The worker died, timed out or gave no answer; the message says which."""


class ScanProcess:
    """One worker process in serving mode, on the scanner's import path ``path``."""

    def __init__(self, path: str) -> None:
        self.installed = installed(path)
        env = dict(os.environ)
        if path:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (path, env.get("PYTHONPATH", ""))
                                                if p)
        # the worker's stderr, kept for the message when it fails; closed with it
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen([sys.executable, str(WORKER), "--serve"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, text=True, env=env)

    def ask(self, request: Any, timeout: float) -> str:
        """The worker's answer to ``request`` (one JSON line). Raises WorkerFailed."""
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
        except OSError as exc:
            raise WorkerFailed(f"its worker exited {self._proc.poll()}: {self._tail()}") from exc
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self.close()  # ends the read
            raise WorkerFailed(f"its worker gave no answer in {timeout:g} s")
        if not got or not got[0].strip():
            raise WorkerFailed(f"its worker exited {self._proc.wait()}: {self._tail()}")
        return got[0]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                pipe.close()
        self._stderr.close()

    def _tail(self, limit: int = 300) -> str:
        """The last line the worker wrote to stderr (a traceback's error), cut to ``limit``."""
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", "replace").strip()
        return text.splitlines()[-1][:limit] if text else "no message"


def installed(path: str) -> tuple[int, int] | None:
    """What says which scanner is installed under ``path``: its package's ``__init__.py``
    modification time and size (None when there is none there)."""
    try:
        found = os.stat(Path(path) / "skill_scanner" / "__init__.py")
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


_workers: dict[str, ScanProcess] = {}
_lock = threading.Lock()


def ask(request: Any, path: str, timeout: float) -> str:
    """``request``'s answer from the worker kept for ``path`` (started when there is none).
    Raises WorkerFailed (or OSError when it cannot start), the worker then forgotten."""
    with _lock:
        worker = _workers.get(path)
        if worker is not None and worker.installed != installed(path):
            _forget(path)  # installed again since it started
            worker = None
        if worker is None:
            worker = _workers[path] = ScanProcess(path)
        try:
            line = worker.ask(request, timeout)
        except WorkerFailed:
            _forget(path)
            raise
        try:
            usable = bool(json.loads(line).get("version"))
        except (ValueError, AttributeError):  # unreadable: the caller says so
            usable = False
        if not usable:  # or the scanner is missing there: a fresh worker next time (it may
            _forget(path)  # have been installed since)
        return line


def _forget(path: str) -> None:
    worker = _workers.pop(path, None)
    if worker is not None:
        worker.close()


@atexit.register
def stop_all() -> None:
    """Stop every kept worker (at exit; a test that wants a fresh one)."""
    with _lock:
        for path in list(_workers):
            _forget(path)
