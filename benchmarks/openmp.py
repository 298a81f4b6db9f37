"""The benchmark process's OpenMP wait policy, and the environment of the processes it measures.

torch ships its own libgomp. Left at libgomp's default wait policy (``OMP_WAIT_POLICY`` unset),
each of torch's OpenMP worker threads spin-waits for the next parallel region after every
torch call (``GOMP_SPINCOUNT``, 300,000 spins: tens of ms of a core here), so on a 2-core
machine the call *after* a torch floor encode, an in-process Route or the server's, ran with
a core taken. The benchmark therefore runs with ``OMP_WAIT_POLICY=PASSIVE`` (idle OpenMP
threads sleep), set before torch or faiss is loaded, since libgomp reads it once, at load.
The processes it measures (the server, cold starts) get the environment the benchmark was
started with, not this setting; the torch floor is also timed alone with libgomp's default
(``benchmarks.torch_alone``), so a floor slowed by the passive policy would show.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

POLICY = "OMP_WAIT_POLICY"
SPINCOUNT = "GOMP_SPINCOUNT"
PASSIVE = "PASSIVE"
_LIBRARIES = ("torch", "faiss")  # each loads a libgomp of its own
_started_with: dict[str, str] = {}  # the environment before passive_wait changed it


def passive_wait() -> str:
    """Set this process's OpenMP wait policy to PASSIVE unless the caller chose one (either
    variable set; ``GOMP_SPINCOUNT=300000`` alone is libgomp's default); returns the policy in
    force. Must run before torch or faiss is imported."""
    if not _started_with:
        _started_with.update(os.environ)
    loaded = [name for name in _LIBRARIES if name in sys.modules]
    if loaded:
        raise RuntimeError(f"OMP_WAIT_POLICY must be set before {', '.join(loaded)} loads")
    if POLICY not in os.environ and SPINCOUNT not in os.environ:
        os.environ[POLICY] = PASSIVE
    return policy_of(dict(os.environ))


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a measured process: the one this process started with (as a
    server would be started), plus ``extra``."""
    base = dict(_started_with) if _started_with else dict(os.environ)
    return {**base, **(extra or {})}


def policy_of(env: dict[str, str]) -> str:
    """The wait policy ``env`` gives libgomp ("default" when unset)."""
    spins = f" (GOMP_SPINCOUNT={env[SPINCOUNT]})" if SPINCOUNT in env else ""
    return env.get(POLICY, "default") + spins
