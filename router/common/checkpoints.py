"""Named points of an index build where a fault can be injected on purpose.

``SKILL_ROUTER_BUILD_PAUSE_AT=<point>`` makes a build that reaches ``<point>`` write
``build paused at <point>`` on stderr and then wait until it is killed. Operators use it to
rehearse a crash at a chosen moment (``kill -9`` during discovery must leave the served index
untouched); the test suite uses it to kill a build at an observed point instead of guessing
with a timer. Unset (the default), a checkpoint costs one environment lookup.

Points, in build order: ``starting`` (``skill-router index`` before discovery),
``discovering`` (a root's folders are listed, its skills not yet read), ``fine-tuning`` (the
first step of encoder fine-tuning is done, ``router.builder.fine_tune.stage``), ``writing`` (the new
version's files are in its temporary folder, not yet renamed into place) and ``renaming`` (the
version is in place, ``CURRENT`` not yet switched to it).
"""

from __future__ import annotations

import os
import sys
import threading

PAUSE_ENV = "SKILL_ROUTER_BUILD_PAUSE_AT"
POINTS = ("starting", "discovering", "fine-tuning", "writing", "renaming")


def checkpoint(point: str) -> None:
    """Pause for ever here if ``SKILL_ROUTER_BUILD_PAUSE_AT`` names ``point``."""
    if os.environ.get(PAUSE_ENV, "") != point:
        return
    print(f"build paused at {point}", file=sys.stderr, flush=True)
    threading.Event().wait()
