"""Start-up discipline: what the command line imports before a command runs.

``skill-router serve`` starts loading the query model first and overlaps that with the rest of
its start-up (imports, reading the index). That only pays while building the parser stays
light, so heavy libraries must be imported by the commands that use them.
"""

from __future__ import annotations

import json
import threading

import pytest

from router.encoders.factory import loading_in_background
from tests.support.processes import python_stdout

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
    assert json.loads(python_stdout(script)) == []


# what a Reindex, the console or the JSON door need, never a plain server's start
BUILD_ONLY = ("router.builder.pipeline", "router.builder.admitting", "router.admission.checks",
              "router.skills.registry", "httpx2", "router.console.auth", "router.door.httpd",
              "uvicorn")


def test_a_servers_start_imports_none_of_the_build_the_console_or_the_json_door() -> None:
    script = (
        "import json, sys\n"
        "import router.cli.service, router.engine, router.service.server\n"
        "from router.config import OpsConfig, ServerConfig\n"
        "from router.console.embedded import EmbeddedConsole\n"
        "EmbeddedConsole(ServerConfig(), OpsConfig(), 0)\n"
        f"named = {BUILD_ONLY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules\n"
        "                        if any(m == h or m.startswith(h + '.') for h in named))))\n"
    )
    assert json.loads(python_stdout(script)) == []


class _SlowModel:
    """An embedder whose load waits for the caller's block to signal that it is running."""

    model_id = "fake"
    dimension = 4

    def __init__(self, fail: bool = False) -> None:
        self.block_running = threading.Event()
        self.saw_block = False
        self.fail = fail

    def prepare(self) -> None:
        self.saw_block = self.block_running.wait(timeout=10)
        if self.fail:
            raise RuntimeError("model files are missing")

    def encode(self, texts: object) -> object:
        raise AssertionError("not used")


def test_the_model_loads_while_the_block_runs() -> None:
    model = _SlowModel()
    with loading_in_background(model) as same:
        assert same is model
        model.block_running.set()
    assert model.saw_block


def test_a_failed_load_is_raised_when_the_block_ends() -> None:
    model = _SlowModel(fail=True)
    with pytest.raises(RuntimeError, match="model files are missing"), \
            loading_in_background(model):
        model.block_running.set()


def test_an_error_in_the_block_is_the_one_reported() -> None:
    model = _SlowModel(fail=True)
    with pytest.raises(ValueError, match="bad index"), loading_in_background(model):
        model.block_running.set()
        raise ValueError("bad index")
