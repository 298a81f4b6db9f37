"""schemathesis against the live JSON door, from the committed OpenAPI document: for every unary
method, a bounded number of generated bodies (valid and invalid ones), sent by an authenticated
caller holding the ``route`` role (so the admin methods answer ``permission_denied`` and change
nothing). No answer is a 5xx, every answer conforms to the document (status, content type,
body schema), and every refusal is a Connect error whose message a person can act on. (Not
checked: that every body off the document is refused; the proto3 JSON mapping itself accepts
some, such as unknown fields, which it ignores.)

The bound is in examples (``max_examples`` per method) and in time (every call carries a
``Connect-Timeout-Ms`` and the client waits at most ``CALL_SECONDS``); no example's speed is
judged (hypothesis' per-example deadline is off), so a busy machine cannot fail it."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from router.engine import Engine
from tests.support import REPO
from tests.support.indexes import build_hash_index, open_engine
from tests.support.principals import entry, write_principals
from tests.support.servers import start_server
from tests.support.skills import DIAGNOSTICS, SKILLS

DOCUMENT = REPO / "protos" / "router" / "v1" / "router.openapi.json"
TOKEN = "tok-schemathesis"
CALL_SECONDS = 30
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Connect-Timeout-Ms": str(CALL_SECONDS * 1000)}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def json_only(document: dict[str, Any]) -> dict[str, Any]:
    """The document with its JSON bodies only (the binary codec is tested elsewhere)."""
    trimmed = copy.deepcopy(document)
    for item in trimmed["paths"].values():
        operation = item["post"]
        operation["requestBody"]["content"].pop("application/proto")
        operation["responses"]["200"]["content"].pop("application/proto")
    return trimmed


@pytest.fixture(scope="module")
def door_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("schemathesis")
    engine: Engine = open_engine(build_hash_index(SKILLS, folder / "index", DIAGNOSTICS))
    principals = write_principals(folder / "principals.yaml",
                                  entry("fuzzer", TOKEN, ["route"]))
    running = start_server(engine, http_port=0, principals_file=str(principals))
    assert running.json_door is not None
    try:
        yield running.json_door.url
    finally:
        running.stop(0)


schema = schemathesis.openapi.from_dict(json_only(json.loads(DOCUMENT.read_text())))


@schema.parametrize()
@settings(max_examples=6, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
def test_the_door_answers_as_its_document_says(case: Any, door_url: str) -> None:
    response = case.call(base_url=door_url, headers=HEADERS, timeout=CALL_SECONDS)
    case.validate_response(response, checks=CHECKS)
    if response.status_code >= 400:
        error = response.json()
        assert set(error) == {"code", "message"}, error
        assert error["code"].islower() and len(error["message"]) > 10, error
