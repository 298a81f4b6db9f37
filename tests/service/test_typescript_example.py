"""examples/typescript, the TypeScript gateway on the JSON door, run with node against a real
server over the demo catalog: the official Connect client for Node (versions pinned by its
package-lock.json, installed from the npm registry into ``.typescript-example/``, ignored by
git), the committed code protoc-gen-es generates (checked current with the proto), three turns
of one session whose system prompt never changes, and one activation, as a bearer-token caller.

Skipped, with the reason, when node or npm is not on PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from router.service.metrics import ServiceMetrics
from router.service.server import RouterServer
from tests.support import REPO
from tests.support.indexes import index_folder, open_engine
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server

EXAMPLE = REPO / "examples" / "typescript"
WORK = REPO / ".typescript-example"
GENERATED = Path("src") / "gen" / "router" / "v1" / "router_pb.ts"
TOKEN = "tok-typescript"
MISSING = [tool for tool in ("node", "npm") if shutil.which(tool) is None]

pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"{' and '.join(MISSING)} not on PATH")


def _run(*command: str, timeout: float = 300.0, **options: object) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          check=False, **options)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return str(done.stdout)


@pytest.fixture(scope="module")
def built() -> Path:
    """The example copied into WORK, its locked packages installed (again only when the lock
    changed), its code regenerated and compared, compiled."""
    WORK.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json", "tsconfig.json"):
        shutil.copy2(EXAMPLE / name, WORK / name)
    shutil.rmtree(WORK / "src", ignore_errors=True)
    shutil.copytree(EXAMPLE / "src", WORK / "src")
    lock = (EXAMPLE / "package-lock.json").read_bytes()
    installed = WORK / "node_modules" / ".installed-lock.json"
    if not installed.is_file() or installed.read_bytes() != lock:
        _run("npm", "ci", "--no-audit", "--no-fund", cwd=WORK, timeout=600)
        installed.write_bytes(lock)
    fresh = WORK / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    _run(sys.executable, "-m", "grpc_tools.protoc", f"-I{REPO / 'protos'}",
         f"--plugin=protoc-gen-es={WORK / 'node_modules' / '.bin' / 'protoc-gen-es'}",
         f"--es_out={fresh}", "--es_opt=target=ts", "router/v1/router.proto")
    assert (fresh / "router" / "v1" / "router_pb.ts").read_bytes() == (
        EXAMPLE / GENERATED).read_bytes(), (
        "examples/typescript/src/gen is out of date with protos/: run `npm run generate` there")
    _run("node", str(WORK / "node_modules" / "typescript" / "bin" / "tsc"), "-p",
         str(WORK / "tsconfig.json"))
    return WORK / "dist" / "gateway.js"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RouterServer,
                                                                       ServiceMetrics]]:
    folder = tmp_path_factory.mktemp("typescript")
    engine = open_engine(index_folder(REPO / "examples" / "skills", folder / "index"))
    principals = write_principals(folder / "principals.yaml",
                                  entry("ts-gateway", TOKEN, ["route"]))
    metrics = ServiceMetrics(engine)
    running = start_server(engine, http_port=0, principals_file=str(principals),
                           observer=metrics.observe)
    try:
        yield running, metrics
    finally:
        running.stop(0)


def test_the_typescript_gateway_keeps_its_prompt_and_activates_a_skill(
        built: Path, served: tuple[RouterServer, ServiceMetrics]) -> None:
    running, metrics = served
    assert running.json_door is not None
    output = _run("node", str(built), running.json_door.url, timeout=120,
                  env={**os.environ, "SKILL_ROUTER_TOKEN": TOKEN})
    summary = json.loads(output.strip().splitlines()[-1])
    assert summary["turns"] == 3 and summary["stablePrompt"] is True
    assert summary["activated"] in summary["revealed"][0]
    assert summary["activated"].startswith("pdf-")
    calls = {method: metrics.registry.get_sample_value(
        "skill_router_door_calls_total", {"door": "connect", "method": method, "code": "OK"})
        for method in ("Route", "Activate")}
    assert calls == {"Route": 3.0, "Activate": 1.0}


def test_without_its_token_the_gateway_fails_with_the_doors_reason(
        built: Path, served: tuple[RouterServer, ServiceMetrics]) -> None:
    running, _metrics = served
    assert running.json_door is not None
    env = {k: v for k, v in os.environ.items() if k != "SKILL_ROUTER_TOKEN"}
    done = subprocess.run(["node", str(built), running.json_door.url], capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    assert done.returncode == 1
    assert "Unauthenticated: missing or invalid bearer token" in done.stderr
