"""The committed generated code in router/v1/ matches protos/ (regenerated with our script)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO

GENERATED = ("__init__.py", "router_pb2.py", "router_pb2.pyi", "router_pb2_grpc.py")


def test_generated_code_is_current(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run(["bash", str(REPO / "scripts" / "gen_proto.sh"), str(tmp_path)],
                   check=True, env=env, cwd=REPO, capture_output=True, text=True)
    stale = [name for name in GENERATED
             if (tmp_path / "router" / "v1" / name).read_bytes()
             != (REPO / "router" / "v1" / name).read_bytes()]
    assert not stale, f"router/v1/{stale} out of date with protos/: run `make proto`"
    extra = {p.name for p in (tmp_path / "router" / "v1").iterdir()} - set(GENERATED)
    assert not extra, f"the generator wrote files not committed: {sorted(extra)}"
