"""A fresh ``skill-router index`` and a server on its folder with nothing configured: queries
are served by the int8 copy that ``index`` made (``index.query_backend``'s default), for the
CPU the configuration names (this CPU's choice, and the one forced for a CPU without VNNI),
and the gate is calibrated on that copy's vectors. The real packaged model, the bundled demo
catalog, a real server on a loopback port."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from router.cli import main
from router.config import DEFAULT_MODEL, load_config
from router.encoders import int8
from router.engine import Engine
from router.v1 import router_pb2 as pb
from tests.support.servers import serving

MODEL = DEFAULT_MODEL
DEMO = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.mark.parametrize("int8_cpu", ["auto", "no-vnni"])
def test_a_fresh_index_is_served_by_its_int8_copy(tmp_path: Path, int8_cpu: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILL_ROUTER_INDEX_QUERY_BACKEND", raising=False)
    monkeypatch.setenv("SKILL_ROUTER_INDEX_INT8_CPU", int8_cpu)
    out = tmp_path / "index"
    assert main(["index", "--bundled", str(DEMO), "--no-project", "--no-home", "--out",
                 str(out), "--model", MODEL, "--fine-tune-encoder", "off"]) == 0
    meta = json.loads((out / ".onnx" / f"{MODEL}-int8" / "export.json").read_text("utf-8"))
    record = meta[int8.RECORD_KEY]
    assert record["cpu"] == int8.cpu_kind(int8_cpu, int8.cpu_flags()) and record["meets"]
    assert int8_cpu == "auto" or record["weights"] == "QUInt8"
    version = (out / "CURRENT").read_text("utf-8").strip()
    manifest = json.loads((out / "versions" / version / "manifest.json").read_text("utf-8"))
    served = int8.vectors_name(meta, "quantized")
    assert served.startswith(f"int8-{record['weights']}/")
    assert manifest["gate"]["query_vectors"] == served  # calibrated on the copy's vectors

    engine = Engine.open(out, load_config(env=os.environ))
    assert engine.embedder.vectors == served
    with serving(engine) as running:
        reply = running.stub.Route(pb.RouteRequest(message="extract the tables from this PDF "
                                                           "invoice"))
    assert "pdf-extract" in [s.name for s in reply.skills][:3]
