"""Helpers shared by the tests; conftest.py files hold fixtures only and import from here.

- ``ports``: free loopback ports.
- ``servers``: a real gRPC server on port 0 for an Engine, a stub on it.
- ``skills``: SKILL.md writers, in-memory Skill records, the service catalog, the skills tree.
- ``indexes``: indexes built with the hash test embedder, Engines opened on them.
- ``processes``: ``python -c`` and ``python -m router.cli`` in a subprocess.
- ``race``: many threads released at once on one call.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
