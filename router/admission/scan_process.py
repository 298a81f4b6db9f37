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

A large scan (a catalog's first build) is asked as several requests at once (``ask_all``):
they are shared out over up to ``workers`` processes, each taking the next request as it
finishes one; the processes beyond the first are stopped when the scan is done, so a server
keeps one between its Reindexes.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
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


_workers: dict[str, list[ScanProcess]] = {}  # by scanner folder; the first one is kept
_lock = threading.Lock()


def ask(request: Any, path: str, timeout: float) -> str:
    """``request``'s answer from the worker kept for ``path`` (started when there is none).
    Raises WorkerFailed (or OSError when it cannot start), the worker then forgotten."""
    return ask_all([request], path, timeout)[0]


def ask_all(requests: Sequence[Any], path: str, timeout: float, workers: int = 1
            ) -> list[str]:
    """Each of ``requests``' answers, in order, from up to ``workers`` worker processes for
    ``path`` at once (the kept one first; the others started for this call and stopped after
    it), each request within ``timeout``. Raises WorkerFailed (or OSError) when any request
    failed, the failed workers then forgotten."""
    with _lock:
        kept = _workers.get(path, [])
        if kept and kept[0].installed != installed(path):
            _forget(path)  # installed again since it started
            kept = []
        if not kept:
            kept = _workers[path] = [ScanProcess(path)]
        pool = list(kept)
        try:
            for _ in range(min(workers, len(requests)) - 1):
                pool.append(ScanProcess(path))
        except OSError:
            for extra in pool[1:]:  # the ones started before one could not be
                extra.close()
            raise
        answers: list[str | None] = [None] * len(requests)
        failures: list[BaseException] = []
        taken = iter(range(len(requests)))
        taking = threading.Lock()

        def serve(worker: ScanProcess) -> None:
            while True:
                with taking:
                    i = next(taken, None)
                if i is None or failures:
                    return
                try:
                    answers[i] = worker.ask(requests[i], timeout)
                except (WorkerFailed, OSError) as exc:
                    failures.append(exc)
                    return

        threads = [threading.Thread(target=serve, args=(w,), daemon=True) for w in pool]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for extra in pool[1:]:
            extra.close()
        if failures or not all(answers) or not all(map(_usable, answers)):
            # or the scanner is missing there: a fresh worker next time (it may have been
            # installed since)
            _forget(path)
        if failures:
            raise failures[0]
        return [a for a in answers if a is not None]


def _usable(line: str | None) -> bool:
    try:
        return bool(json.loads(line or "").get("version"))
    except (ValueError, AttributeError):  # unreadable: the caller says so
        return False


def _forget(path: str) -> None:
    for worker in _workers.pop(path, []):
        worker.close()


@atexit.register
def stop_all() -> None:
    """Stop every kept worker (at exit; a test that wants a fresh one)."""
    with _lock:
        for path in list(_workers):
            _forget(path)
