"""What this process showed each session, written to the database after the turn has answered.

A turn's reveals are remembered at once in this process and handed to ``ShownWrites``: a
background thread writes them ``WRITE_DELAY_S`` later, every session's in one statement, so
the answer goes out before they do. The session's next turn in this process takes the names
still waiting (``take``) and writes them in its own statement (``router.learning.pg_shown``),
so a conversation's turns never wait for one another; while the thread is writing a session's
names, ``take`` waits for it instead, so they are never written out of order. ``flush``
writes everything waiting now (a recall, a close). Names whose write fails stay in this
process's memory (``router.learning.shown.LocalShown``); the next turn that reaches the
database writes what it shows then. Another replica answering the session's next turn within
the delay may reveal a skill again; none is lost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

WRITE_DELAY_S = 0.05  # the answer's time to go out before its reveals are written
Write = Callable[[dict[str, list[str]], list[str]], None]  # names by session, chores


class ShownWrites:
    """Names waiting to be written, by session, and the thread that writes them."""

    def __init__(self, write: Write, delay: float = WRITE_DELAY_S) -> None:
        self._write, self._delay = write, delay
        self._cond = threading.Condition()
        self._waiting: dict[str, list[str]] = {}
        self._chores: list[str] = []  # other statements for the thread (pruning)
        self._writing: set[str] = set()
        self._busy = False
        self._urgent = False
        self._thread: threading.Thread | None = None

    def add(self, session: str, names: Sequence[str]) -> None:
        """Write ``names`` of ``session`` soon (in order, once each)."""
        with self._cond:
            held = self._waiting.setdefault(session, [])
            held.extend(n for n in dict.fromkeys(names) if n not in held)
            self._wake()

    def chore(self, statement: str) -> None:
        """Run ``statement`` on the thread (its parameters: the write's own)."""
        with self._cond:
            self._chores.append(statement)
            self._wake()

    def take(self, session: str) -> list[str]:
        """The names of ``session`` not written yet, no longer the thread's to write."""
        with self._cond:
            while session in self._writing:
                self._cond.wait()
            return self._waiting.pop(session, [])

    def give_back(self, session: str, names: Sequence[str]) -> None:
        """``names`` taken by a turn that could not write them: the thread's again."""
        if names:
            with self._cond:
                held = self._waiting.setdefault(session, [])
                held[:0] = [n for n in names if n not in held]
                self._wake()

    def flush(self) -> None:
        """Write what waits now and return once nothing is waiting or being written."""
        with self._cond:
            self._urgent = True
            self._cond.notify_all()
            while self._waiting or self._chores or self._busy:
                self._cond.wait()

    def _wake(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="shown-skills", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._waiting or self._chores):
                    self._cond.wait()
                until = time.monotonic() + self._delay
                while not self._urgent and (left := until - time.monotonic()) > 0:
                    self._cond.wait(left)
                batch, chores = self._waiting, self._chores
                self._waiting, self._chores, self._urgent = {}, [], False
                self._writing, self._busy = set(batch), True
            try:
                if batch or chores:
                    self._write(batch, chores)
            except OSError as exc:
                log.debug("shown skills kept in this process: %s", exc)
            finally:
                with self._cond:
                    self._writing, self._busy = set(), False
                    self._cond.notify_all()
