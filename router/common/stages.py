"""Stage lines: what a long command (a build, an export) is doing, one line per stage, on the
``router.stages`` logger at INFO. A server's log shows them as any other INFO line; ``skill-router
index`` prints them bare on stderr (``show_stages``), or not at all with ``--quiet``."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

STAGES = logging.getLogger("router.stages")


def stage(message: str, *args: object) -> None:
    """Say that a stage starts (or ended, with its figures)."""
    STAGES.info(message, *args)


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a line is written (as logging's last resort
    does), so a replaced stderr is never written to after it was put back."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


def show_stages(*, quiet: bool = False) -> None:
    """Print stage lines bare on stderr from now on; ``quiet``: none at all."""
    for handler in [h for h in STAGES.handlers if isinstance(h, _Stderr)]:
        STAGES.removeHandler(handler)
    STAGES.setLevel(logging.WARNING if quiet else logging.INFO)
    STAGES.propagate = False
    if not quiet:
        STAGES.addHandler(_Stderr())
