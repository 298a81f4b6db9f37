"""The JSON door's OpenAPI document (protos/router/v1/router.openapi.json): generated from the
proto by our script, current with it, a valid OpenAPI 3.1 document (openapi-spec-validator),
naming every unary method and every field of its messages as the proto3 JSON mapping does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from openapi_spec_validator import validate

from router.v1 import router_pb2 as pb
from tests.support import REPO

DOCUMENT = REPO / "protos" / "router" / "v1" / "router.openapi.json"


def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return loaded


def test_the_document_is_current_with_the_proto(tmp_path: Path) -> None:
    fresh = tmp_path / "router.openapi.json"
    subprocess.run([sys.executable, str(REPO / "scripts" / "gen_openapi.py"), str(fresh)],
                   check=True, cwd=REPO, capture_output=True, text=True,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    assert fresh.read_bytes() == DOCUMENT.read_bytes(), (
        "protos/router/v1/router.openapi.json is out of date with protos/: run `make proto`")


def test_the_document_is_valid_openapi_3_1() -> None:
    document = _document()
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises OpenAPIValidationError naming the fault


def test_every_unary_method_and_field_is_in_the_document() -> None:
    document = _document()
    service = pb.DESCRIPTOR.services_by_name["SkillRouter"]
    paths = {f"/{service.full_name}/{m.name}" for m in service.methods}
    assert set(document["paths"]) == paths
    schemas = document["components"]["schemas"]
    for method in service.methods:
        operation = document["paths"][f"/{service.full_name}/{method.name}"]["post"]
        json_body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert json_body["$ref"].endswith(f"/{method.input_type.name}")
        for message in (method.input_type, method.output_type):
            properties = schemas[message.name]["properties"]
            assert set(properties) == {f.json_name for f in message.fields}, message.name
    route = schemas["RouteRequest"]["properties"]
    assert route["message"]["description"].startswith("The user's latest message")
    assert schemas["connect.Error"]["required"] == ["code", "message"]
