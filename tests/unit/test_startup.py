"""Start-up discipline: what the command line imports before a command runs.

``skill-router serve`` starts loading the query model first and overlaps that with the rest of
its start-up (imports, reading the index). That only pays while building the parser stays
light, so heavy libraries must be imported by the commands that use them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "faiss", "grpc", "onnxruntime", "tokenizers", "torch", "sentence_transformers",
         "bm25s", "scipy", "pathspec", "prometheus_client", "router.engine", "router.index")


def test_building_the_command_line_parser_imports_no_heavy_library() -> None:
    script = (
        "import json, sys\n"
        "from router.cli import build_parser\n"
        "build_parser()\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "                        if any(m == h or m.startswith(h + '.') for h in heavy))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == []
